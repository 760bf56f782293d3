//! The Rust encoder and policy map against the figures of the Python oracle they replaced: every case of
//! `tests/data/encoding_cases.jsonl` is replayed with shakmaty and compared exactly. The cases were made
//! by `tests/data/make_encoding_cases.py` from the Python encoder and policy map
//! (lichessbot/engine/encoding.py, policy_map.py; both, and the script, are in git history at commit
//! 2923088: the core's encoder is now the project's only one and is checked against lc0's own planes
//! and indices in tests/test_core.py). They stay as a regression fixture: 115 positions, each in several
//! input formats and fill modes.

use std::collections::HashMap;

use lichessbot_core::encoding::{INPUT_SIZE, encode};
use lichessbot_core::policy::nn_index;
use lichessbot_core::position::PosInfo;
use shakmaty::{CastlingMode, Chess, Position};

/// Just enough JSON for the fixture: objects, arrays, strings without escapes, numbers, booleans.
#[derive(Debug, Clone)]
enum Json {
    Num(f64),
    Str(String),
    Bool(bool),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> &Json {
        match self {
            Json::Obj(kv) => &kv.iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no key {key}")).1,
            _ => panic!("not an object"),
        }
    }
    fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(v) => v,
            _ => panic!("not an array"),
        }
    }
    fn str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            _ => panic!("not a string"),
        }
    }
    fn num(&self) -> f64 {
        match self {
            Json::Num(x) => *x,
            _ => panic!("not a number"),
        }
    }
    fn bool(&self) -> bool {
        match self {
            Json::Bool(b) => *b,
            _ => panic!("not a bool"),
        }
    }
}

fn parse(s: &[u8], i: &mut usize) -> Json {
    match s[*i] {
        b'{' => {
            *i += 1;
            let mut kv = Vec::new();
            if s[*i] == b'}' {
                *i += 1;
                return Json::Obj(kv);
            }
            loop {
                let k = parse(s, i);
                assert_eq!(s[*i], b':');
                *i += 1;
                kv.push((k.str().to_string(), parse(s, i)));
                *i += 1;
                if s[*i - 1] == b'}' {
                    return Json::Obj(kv);
                }
            }
        }
        b'[' => {
            *i += 1;
            let mut v = Vec::new();
            if s[*i] == b']' {
                *i += 1;
                return Json::Arr(v);
            }
            loop {
                v.push(parse(s, i));
                *i += 1;
                if s[*i - 1] == b']' {
                    return Json::Arr(v);
                }
            }
        }
        b'"' => {
            let start = *i + 1;
            let end = start + s[start..].iter().position(|&c| c == b'"').unwrap();
            *i = end + 1;
            Json::Str(String::from_utf8(s[start..end].to_vec()).unwrap())
        }
        b't' => {
            *i += 4;
            Json::Bool(true)
        }
        b'f' => {
            *i += 5;
            Json::Bool(false)
        }
        _ => {
            let start = *i;
            while !matches!(s[*i], b',' | b']' | b'}') {
                *i += 1;
            }
            Json::Num(std::str::from_utf8(&s[start..*i]).unwrap().parse().unwrap())
        }
    }
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The game's positions (as lc0 sees them) and the final shakmaty position.
fn replay(fen: &str, moves: &[Json], mode: CastlingMode) -> (Vec<PosInfo>, Chess) {
    let fen = if fen == "startpos" { START } else { fen };
    let moves: Vec<&str> = moves.iter().map(|m| m.str()).collect();
    let (positions, pos, _) = lichessbot_core::position::replay_game(fen, &moves, mode).unwrap();
    (positions, pos)
}

#[test]
fn encoding_and_policy_match_python() {
    let text = include_str!("data/encoding_cases.jsonl");
    let (mut n_pos, mut n_cases, mut n_moves) = (0, 0, 0);
    let mut out = vec![0f32; INPUT_SIZE];
    let mut out8 = vec![0f32; INPUT_SIZE];
    for line in text.lines() {
        let rec = parse(line.as_bytes(), &mut 0);
        let tag = rec.get("tag").str();
        let mode = if rec.get("chess960").bool() { CastlingMode::Chess960 } else { CastlingMode::Standard };
        let (hist, pos) = replay(rec.get("fen").str(), rec.get("moves").arr(), mode);
        let refs: Vec<&PosInfo> = hist.iter().collect();
        for case in rec.get("cases").arr() {
            let fmt = case.get("format").num() as u32;
            let fill = case.get("fill").str().parse().unwrap();
            let mut want = vec![0f32; INPUT_SIZE];
            for row in case.get("planes").arr() {
                let r = row.arr();
                let p = r[0].num() as usize;
                let mask = u64::from_str_radix(r[1].str(), 16).unwrap();
                let v = r[2].num() as f32;
                for k in 0..64 {
                    if mask >> k & 1 != 0 {
                        want[p * 64 + k] = v;
                    }
                }
            }
            out.fill(f32::NAN);
            let t = encode(&refs, fmt, fill, &mut out);
            assert_eq!(u32::from(t), case.get("transform").num() as u32, "{tag} fmt {fmt} transform");
            for p in 0..112 {
                assert_eq!(
                    out[p * 64..(p + 1) * 64],
                    want[p * 64..(p + 1) * 64],
                    "{tag}: format {fmt} fill {} plane {p}",
                    case.get("fill").str()
                );
            }
            // The last 8 positions suffice for formats other than v2.
            if fmt != 5 && fmt != 133 && refs.len() > 8 {
                encode(&refs[refs.len() - 8..], fmt, fill, &mut out8);
                assert_eq!(out8, out, "{tag}: format {fmt}, last 8 positions");
            }
            n_cases += 1;
        }
        let ct = rec.get("canon_t").num() as u8;
        let want: HashMap<&str, (u16, u16)> = rec
            .get("legal")
            .arr()
            .iter()
            .map(|x| {
                let x = x.arr();
                (x[0].str(), (x[1].num() as u16, x[2].num() as u16))
            })
            .collect();
        let legal = pos.legal_moves();
        assert_eq!(legal.len(), want.len(), "{tag}: legal move count");
        for m in &legal {
            let uci = m.to_uci(mode).to_string();
            let &(i0, it) = want.get(uci.as_str()).unwrap_or_else(|| panic!("{tag}: {uci} not in python's moves"));
            assert_eq!(nn_index(m, pos.turn(), 0), Some(i0), "{tag}: {uci}");
            assert_eq!(nn_index(m, pos.turn(), ct), Some(it), "{tag}: {uci} transform {ct}");
            n_moves += 1;
        }
        n_pos += 1;
    }
    eprintln!("{n_pos} positions, {n_cases} encode cases, {n_moves} moves checked");
    assert!(n_pos >= 100 && n_cases >= 1000);
}

/// Timing of `encode` (release: `cargo test --release -p lichessbot-core --test encoding_vs_python
/// -- --ignored --nocapture`).
#[test]
#[ignore]
fn encode_speed() {
    let moves: Vec<Json> = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5", "c2c3", "d7d6"]
        .iter()
        .map(|s| Json::Str(s.to_string()))
        .collect();
    let (hist, pos) = replay("startpos", &moves, CastlingMode::Standard);
    let refs: Vec<&PosInfo> = hist.iter().collect();
    let mut out = vec![0f32; INPUT_SIZE];
    let legal = pos.legal_moves();
    for (fmt, name) in [(1, "classical"), (4, "canonical")] {
        let n = 200_000;
        let t0 = std::time::Instant::now();
        let mut acc = 0u32;
        for _ in 0..n {
            acc +=
                u32::from(encode(std::hint::black_box(&refs), fmt, lichessbot_core::encoding::Fill::FenOnly, &mut out));
            acc += std::hint::black_box(out[5]) as u32;
        }
        let dt = t0.elapsed().as_secs_f64() / n as f64;
        eprintln!("encode ({name}): {:.0} ns/position ({acc})", dt * 1e9);
    }
    let n = 200_000;
    let t0 = std::time::Instant::now();
    let mut acc = 0u32;
    for _ in 0..n {
        for m in std::hint::black_box(&legal) {
            acc += u32::from(nn_index(m, pos.turn(), 0).unwrap());
        }
    }
    let dt = t0.elapsed().as_secs_f64() / n as f64;
    eprintln!("nn_index: {:.1} ns for {} legal moves ({acc})", dt * 1e9, legal.len());
}
