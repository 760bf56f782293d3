//! lc0's 112-plane network input (lc0 src/neural/encoder.cc `EncodePositionForNN`).
//!
//! One position's input is `112 * 64` f32 values: `planes[p][r][f]` (flat `p * 64 + r * 8 + f`) is
//! square `r*8 + f` of plane `p` in the side to move's view (black to move: ranks mirrored, colours
//! swapped), so row 0 is the side to move's back rank. Every plane holds a single value on the squares
//! of a 64-bit mask and 0 elsewhere (lc0 src/neural/network.h `InputPlane`).
//!
//! Planes `13*t .. 13*t+12` hold history slot `t` (0 = current position): our P N B R Q K, their
//! P N B R Q K, and a repetition plane (all ones when that position had occurred before). Planes
//! 104..111 are the auxiliary planes of the current position (castling, side to move or en passant,
//! rule 50, armageddon colour, all ones). The rules of which positions fill the slots and of the
//! canonical transform are those of lc0 src/neural/encoder.cc (`EncodePositionForNN`,
//! `ChooseTransform`) and src/utils/bititer.h (`BoardTransform`).

use std::str::FromStr;

use shakmaty::{Bitboard, Board, Color, Square};

use crate::position::PosInfo;

/// Number of input planes (lc0 src/neural/encoder.h: 8 history slots of 13 planes + 8 aux planes).
pub const NUM_PLANES: usize = 112;
/// Floats of one encoded position: `112 * 64` (`float32 [112, 8, 8]`).
pub const INPUT_SIZE: usize = NUM_PLANES * 64;
/// lc0 input formats this encoder supports (lc0 proto/net.proto `NetworkFormat.InputFormat`):
/// classical 1, castling-plane 2, canonical 3, canonical + hectoplies 4, canonical v2 5, and the
/// armageddon variants 132 and 133.
pub const INPUT_FORMATS: [u32; 7] = [1, 2, 3, 4, 5, 132, 133];

const HISTORY: usize = 8; // kMoveHistory (lc0 src/neural/encoder.h)
const FLIP: u8 = 1;
const MIRROR: u8 = 2;
const TRANSPOSE: u8 = 4;
const ALL: u64 = u64::MAX;

/// lc0's `HistoryFill` mode (lc0 src/neural/shared_params.cc; UCI default "fen_only"): whether history
/// slots past the game's first position are filled with copies of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fill {
    /// "fen_only": fill unless the game started from the standard start position (lc0's default).
    #[default]
    FenOnly,
    /// "no": never fill, except one made-up slot when the first position's en-passant square tells
    /// what the position before it was.
    No,
    /// "always": always fill.
    Always,
}

impl FromStr for Fill {
    type Err = String;

    /// Parses lc0's option values "fen_only", "no" and "always".
    fn from_str(s: &str) -> Result<Fill, String> {
        match s {
            "fen_only" => Ok(Fill::FenOnly),
            "no" => Ok(Fill::No),
            "always" => Ok(Fill::Always),
            _ => Err(format!("unknown history fill mode {s:?} (expected fen_only, no or always)")),
        }
    }
}

/// Per-byte bit reversal: file f -> 7 - f (lc0 `ReverseBitsInBytes`).
#[inline]
fn flip_bb(v: u64) -> u64 {
    v.reverse_bits().swap_bytes()
}

/// Byte reversal: rank r -> 7 - r (lc0 `ReverseBytesInBytes`, the black-to-move mirror).
#[inline]
fn mirror_bb(v: u64) -> u64 {
    v.swap_bytes()
}

/// Reflection in the a8-h1 anti-diagonal: (r, f) -> (7 - f, 7 - r) (lc0 `TransposeBitsInBytes`).
#[inline]
fn transpose_bb(v: u64) -> u64 {
    Bitboard(v).flip_anti_diagonal().0
}

/// Row of 8 floats (files a..h) for each byte of a plane mask: bit k set -> 1.0 at file k.
static BYTE_ROWS: [[f32; 8]; 256] = byte_rows();

const fn byte_rows() -> [[f32; 8]; 256] {
    let mut out = [[0.0f32; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            if b >> k & 1 != 0 {
                out[b][k] = 1.0;
            }
            k += 1;
        }
        b += 1;
    }
    out
}

/// Flip, then Mirror, then Transpose of `v` per the bits of `t`.
#[inline]
fn transform_bb(mut v: u64, t: u8) -> u64 {
    if t & FLIP != 0 {
        v = flip_bb(v);
    }
    if t & MIRROR != 0 {
        v = mirror_bb(v);
    }
    if t & TRANSPOSE != 0 {
        v = transpose_bb(v);
    }
    v
}

/// The canonical transform of the current position `cur` for `input_format`: bits Flip=1 (files
/// mirrored), Mirror=2 (ranks mirrored), Transpose=4 (a8-h1 anti-diagonal); 0 for formats < 3 and
/// whenever any castling right exists. lc0 src/neural/encoder.cc `ChooseTransform`: Flip when our
/// king is on files a-d; with pawns on the board stop there; Mirror when the king is on ranks 5-8;
/// Transpose when it is on h2, g3, h3, f4, g4, h4, and on the diagonal h1-e4 break the tie by
/// comparing (ours|theirs), ours, kings, queens, rooks, knights, bishops with their transposes.
pub fn choose_transform(cur: &PosInfo, input_format: u32) -> u8 {
    if input_format < 3 || cur.castling.any() {
        return 0;
    }
    let b = &cur.board;
    let black = cur.turn == Color::Black;
    let view = |bb: Bitboard| if black { mirror_bb(bb.0) } else { bb.0 };
    let ours = view(b.by_color(cur.turn));
    let mut king = ours & view(b.kings());
    let mut t = 0;
    if king & 0x0F0F_0F0F_0F0F_0F0F != 0 {
        t |= FLIP;
        king = flip_bb(king);
    }
    if b.pawns().any() {
        return t;
    }
    if king & 0xFFFF_FFFF_0000_0000 != 0 {
        t |= MIRROR;
        king = mirror_bb(king);
    }
    if king & 0xE0C0_8000 != 0 {
        return t | TRANSPOSE;
    }
    if king & 0x1020_4080 != 0 {
        let order = [
            view(b.occupied()),
            ours,
            view(b.kings()),
            view(b.queens()),
            view(b.rooks()),
            view(b.knights()),
            view(b.bishops()),
        ];
        for bb in order {
            let v = transform_bb(bb, t);
            let tv = transpose_bb(v);
            if v < tv {
                return t;
            }
            if v > tv {
                return t | TRANSPOSE;
            }
        }
    }
    t
}

/// True when `p` is the standard start position (pieces, white to move, all four castling rights,
/// no en passant): lc0 `fen_only` compares the game's first board with `ChessBoard::kStartposBoard`.
fn is_start(p: &PosInfo) -> bool {
    p.turn == Color::White && p.ep.is_none() && p.castling == Bitboard(0x8100_0000_0000_0081) && p.board == Board::new()
}

/// (queenside, kingside) castling rook squares of both colours (absolute masks): a rook whose file is
/// left of its king's (e-file when the king is off the back rank) is a queenside rook.
fn castle_masks(p: &PosInfo) -> (u64, u64) {
    let (mut qs, mut ks) = (0u64, 0u64);
    for sq in p.castling {
        let s = u32::from(sq);
        let (back, color) = if s < 8 { (0xFFu64, Color::White) } else { (0xFFu64 << 56, Color::Black) };
        let king = p.board.kings().0 & p.board.by_color(color).0 & back;
        let kfile = if king != 0 { king.trailing_zeros() & 7 } else { 4 };
        if (s & 7) < kfile {
            qs |= 1 << s;
        } else {
            ks |= 1 << s;
        }
    }
    (qs, ks)
}

/// Writes the 12 piece planes and the repetition plane of one slot into `masks[base..base + 13]`.
#[inline]
fn write_slot(masks: &mut [u64; NUM_PLANES], base: usize, pos: &PosInfo, undo_ep: bool, us: Color) {
    let b = &pos.board;
    let mut pawns = b.pawns().0;
    let mut white = b.white().0;
    let mut black = b.black().0;
    if undo_ep {
        // The position before the double push that set the ep square (lc0 encoder.cc: made-up slots
        // undo the push of the first position's ep flag).
        if let Some(ep) = pos.ep {
            let e = u32::from(ep);
            if pos.turn == Color::White {
                // black just pushed: pawn on rank 5 back to rank 7
                let (moved, back) = (1u64 << (e - 8), 1u64 << (e + 8));
                pawns = (pawns & !moved) | back;
                black = (black & !moved) | back;
            } else {
                let (moved, back) = (1u64 << (e + 8), 1u64 << (e - 8));
                pawns = (pawns & !moved) | back;
                white = (white & !moved) | back;
            }
        }
    }
    let (ours, theirs) = if us == Color::White { (white, black) } else { (black, white) };
    let roles = [pawns, b.knights().0, b.bishops().0, b.rooks().0, b.queens().0, b.kings().0];
    let mirror = us == Color::Black;
    for (k, r) in roles.into_iter().enumerate() {
        let (o, t) = (r & ours, r & theirs);
        masks[base + k] = if mirror { mirror_bb(o) } else { o };
        masks[base + 6 + k] = if mirror { mirror_bb(t) } else { t };
    }
    masks[base + 12] = if pos.repetitions >= 1 { ALL } else { 0 };
}

/// Encodes the current position (the last of `history`) as lc0 input planes into `out`, and returns
/// the canonical transform used (see [`choose_transform`]; 0 for formats < 3), which the caller must
/// also pass to [`crate::policy::nn_index`].
///
/// * `history`: oldest first, current position last, not empty. Either it starts at the game's
///   first position (a FEN or the start position), or it holds enough positions: the last 8 for
///   formats 1-4 and 132; for the v2 formats 5 and 133, which skip positions that are not
///   repetitions, every position back to the last zeroing move (the current `rule50 + 1`
///   positions) or to the game's first one. Extra older positions are harmless.
/// * `input_format`: one of [`INPUT_FORMATS`]; panics otherwise.
/// * `fill`: lc0's HistoryFill mode.
/// * `out`: exactly [`INPUT_SIZE`] = `112 * 64` f32 (one `[112, 8, 8]` row, C order), fully
///   overwritten; panics on another length.
///
/// Rules (lc0 src/neural/encoder.cc `EncodePositionForNN`): slots walk back from the current
/// position; past the first position it is copied (fill modes; `no` allows one copy only when its
/// en-passant square is set, `fen_only` none from the start position), with the double push undone
/// when it has an en-passant square. Canonical formats (>= 3) stop at a position whose castling
/// rights differ from the current ones, at an older position with an en-passant square, and after a
/// position with rule50 = 0; v2 formats skip older positions that are not repetitions. Plane 109 is
/// rule50 in plies, divided by 100 for formats >= 4 (hectoplies). No heap allocation.
pub fn encode(history: &[&PosInfo], input_format: u32, fill: Fill, out: &mut [f32]) -> u8 {
    encode_into(history, input_format, fill, InputRow::Planes(out))
}

/// Bytes of one position in the compact form: 112 masks (u64) and 112 values (f32), little-endian.
pub const COMPACT_SIZE: usize = NUM_PLANES * 12;

/// Where one encoded position goes: the float planes (`112 * 64` f32), or the compact form, lc0's
/// `InputPlane` pairs (src/neural/network.h: a 64-bit mask and a value per plane): [`COMPACT_SIZE`]
/// bytes, the 112 masks as little-endian u64 (bit `r*8 + f` set where plane `[r][f]` holds the value)
/// then the 112 values as little-endian f32. 1,344 bytes where the planes are 28,672; lc0's CUDA backend
/// expands the same pairs on the device (src/neural/backends/cuda/common_kernels.cu `expandPlanes`).
pub enum InputRow<'a> {
    /// `112 * 64` f32 per position, fully overwritten.
    Planes(&'a mut [f32]),
    /// [`COMPACT_SIZE`] bytes per position, fully overwritten.
    Compact(&'a mut [u8]),
}

impl InputRow<'_> {
    /// Row `i` of the batch held in `self`.
    pub fn row(&mut self, i: usize) -> InputRow<'_> {
        match self {
            InputRow::Planes(p) => InputRow::Planes(&mut p[i * INPUT_SIZE..(i + 1) * INPUT_SIZE]),
            InputRow::Compact(b) => InputRow::Compact(&mut b[i * COMPACT_SIZE..(i + 1) * COMPACT_SIZE]),
        }
    }

    /// Positions the buffer holds.
    pub fn capacity(&self) -> usize {
        match self {
            InputRow::Planes(p) => p.len() / INPUT_SIZE,
            InputRow::Compact(b) => b.len() / COMPACT_SIZE,
        }
    }
}

/// As [`encode`], into either form of [`InputRow`] (panics unless the row holds exactly one position).
/// No heap allocation.
pub fn encode_into(history: &[&PosInfo], input_format: u32, fill: Fill, out: InputRow<'_>) -> u8 {
    assert!(INPUT_FORMATS.contains(&input_format), "unknown lc0 input format {input_format}");
    match &out {
        InputRow::Planes(p) => assert_eq!(p.len(), INPUT_SIZE, "encode() writes 112 * 64 floats"),
        InputRow::Compact(b) => assert_eq!(b.len(), COMPACT_SIZE, "the compact form is 112 * 12 bytes"),
    }
    let n = history.len();
    assert!(n > 0, "encode() needs at least one position");
    let cur = history[n - 1];
    let us = cur.turn;
    let black = us == Color::Black;
    let canonical = input_format >= 3;
    let v2 = input_format == 5 || input_format == 133;
    let mut masks = [0u64; NUM_PLANES];

    // History slots (lc0-order walk, newest first).
    let oldest = history[0];
    let mut idx = n as isize - 1;
    let mut slot = 0usize;
    while slot < HISTORY {
        let pos = if idx >= 0 { history[idx as usize] } else { oldest };
        if canonical && pos.castling != cur.castling {
            break;
        }
        if canonical && slot > 0 && pos.ep.is_some() {
            break;
        }
        if idx < 0 {
            match fill {
                Fill::No if idx < -1 || oldest.ep.is_none() => break,
                Fill::FenOnly if is_start(oldest) => break,
                _ => {}
            }
        }
        if v2 && slot > 0 && pos.repetitions == 0 {
            // idx < 0: lc0 would loop for ever here; stop instead.
            if pos.rule50 == 0 || idx < 0 {
                break;
            }
            idx -= 1;
            continue;
        }
        write_slot(&mut masks, slot * 13, pos, idx < 0 && pos.ep.is_some(), us);
        slot += 1;
        if canonical && pos.rule50 == 0 {
            break;
        }
        idx -= 1;
    }

    // Auxiliary planes 104..111 (current position only).
    if input_format == 1 {
        let c = cur.castling;
        let has = |sq: Square| if c.contains(sq) { ALL } else { 0 };
        let (wq, wk, bq, bk) = (has(Square::A1), has(Square::H1), has(Square::A8), has(Square::H8));
        masks[104..108].copy_from_slice(&if black { [bq, bk, wq, wk] } else { [wq, wk, bq, bk] });
    } else {
        let (qs, ks) = castle_masks(cur);
        masks[104] = if black { mirror_bb(qs) } else { qs };
        masks[105] = if black { mirror_bb(ks) } else { ks };
    }
    if canonical {
        if let Some(ep) = cur.ep {
            masks[108] = 1u64 << (56 + (u32::from(ep) & 7)); // rank 8 of the side to move's view
        }
        if (input_format == 132 || input_format == 133) && black {
            masks[110] = ALL;
        }
    } else if black {
        masks[108] = ALL;
    }
    masks[109] = ALL;
    masks[111] = ALL;
    let rule50 = if input_format >= 4 { (f64::from(cur.rule50) / 100.0) as f32 } else { cur.rule50 as f32 };

    let transform = choose_transform(cur, input_format);
    if transform != 0 {
        for m in &mut masks[..109] {
            *m = transform_bb(*m, transform);
        }
    }

    match out {
        InputRow::Planes(out) => {
            for (plane, &mask) in out.chunks_exact_mut(64).zip(masks.iter()) {
                for (row, byte) in plane.chunks_exact_mut(8).zip(mask.to_le_bytes()) {
                    row.copy_from_slice(&BYTE_ROWS[usize::from(byte)]);
                }
            }
            if rule50 != 1.0 {
                out[109 * 64..110 * 64].fill(rule50);
            }
        }
        InputRow::Compact(b) => {
            let (m, v) = b.split_at_mut(NUM_PLANES * 8);
            for (chunk, mask) in m.chunks_exact_mut(8).zip(masks.iter()) {
                chunk.copy_from_slice(&mask.to_le_bytes());
            }
            for (p, chunk) in v.chunks_exact_mut(4).enumerate() {
                chunk.copy_from_slice(&(if p == 109 { rule50 } else { 1.0f32 }).to_le_bytes());
            }
        }
    }
    transform
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;

    fn play(fen: &str, moves: &[&str]) -> Vec<PosInfo> {
        crate::position::replay_game(fen, moves, CastlingMode::Standard).unwrap().0
    }

    fn enc(h: &[PosInfo], fmt: u32, fill: Fill) -> (Vec<f32>, u8) {
        let refs: Vec<&PosInfo> = h.iter().collect();
        let mut out = vec![f32::NAN; INPUT_SIZE];
        let t = encode(&refs, fmt, fill, &mut out);
        (out, t)
    }

    /// Mask and value of plane `p` (asserting it holds one value).
    fn plane(out: &[f32], p: usize) -> (u64, f32) {
        let mut mask = 0u64;
        let mut val = 0.0;
        for (k, &v) in out[p * 64..(p + 1) * 64].iter().enumerate() {
            if v != 0.0 {
                assert!(mask == 0 || v == val, "plane {p} holds two values");
                mask |= 1 << k;
                val = v;
            }
        }
        (mask, val)
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn the_compact_form_expands_to_the_planes() {
        let fens = [
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", vec!["e2e4", "c7c5", "g1f3"]),
            ("8/8/4k3/8/2R5/8/4K3/8 b - - 37 80", vec!["e6d5", "c4c8"]),
        ];
        for fmt in INPUT_FORMATS {
            for (fen, moves) in &fens {
                let h = play(fen, moves);
                let refs: Vec<&PosInfo> = h.iter().collect();
                let mut planes = vec![f32::NAN; INPUT_SIZE];
                let t1 = encode(&refs, fmt, Fill::FenOnly, &mut planes);
                let mut bytes = [0xAAu8; COMPACT_SIZE];
                let t2 = encode_into(&refs, fmt, Fill::FenOnly, InputRow::Compact(&mut bytes));
                assert_eq!(t1, t2);
                for p in 0..NUM_PLANES {
                    let m = u64::from_le_bytes(bytes[p * 8..p * 8 + 8].try_into().unwrap());
                    let o = NUM_PLANES * 8 + p * 4;
                    let v = f32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
                    for sq in 0..64 {
                        let want = if m >> sq & 1 == 1 { v } else { 0.0 };
                        assert_eq!(planes[p * 64 + sq], want, "format {fmt} plane {p} square {sq}");
                    }
                }
            }
        }
    }

    #[test]
    fn fill_parses() {
        assert_eq!("fen_only".parse::<Fill>(), Ok(Fill::FenOnly));
        assert_eq!("no".parse::<Fill>(), Ok(Fill::No));
        assert_eq!("always".parse::<Fill>(), Ok(Fill::Always));
        assert!("yes".parse::<Fill>().is_err());
    }

    #[test]
    fn start_position_classical() {
        let (out, t) = enc(&play(START, &[]), 1, Fill::FenOnly);
        assert_eq!(t, 0);
        assert_eq!(plane(&out, 0), (0xFF00, 1.0));
        assert_eq!(plane(&out, 1).0, (1 << 1) | (1 << 6));
        assert_eq!(plane(&out, 3).0, 0x81);
        assert_eq!(plane(&out, 5).0, 1 << 4);
        assert_eq!(plane(&out, 6).0, 0x00FF_0000_0000_0000);
        assert_eq!(plane(&out, 11).0, 1 << 60);
        for p in 13..104 {
            assert_eq!(plane(&out, p).0, 0, "plane {p}");
        }
        for p in 104..108 {
            assert_eq!(plane(&out, p), (ALL, 1.0));
        }
        assert_eq!(plane(&out, 108).0, 0);
        assert_eq!(plane(&out, 109).0, 0);
        assert_eq!(plane(&out, 110).0, 0);
        assert_eq!(plane(&out, 111), (ALL, 1.0));
        // fill "always": slots 1..7 are copies of the start position.
        let (out, _) = enc(&play(START, &[]), 1, Fill::Always);
        assert_eq!(plane(&out, 13 * 7).0, 0xFF00);
    }

    #[test]
    fn start_position_castling_plane_formats() {
        for fmt in [2, 3, 4, 5, 132, 133] {
            let (out, t) = enc(&play(START, &[]), fmt, Fill::No);
            assert_eq!(t, 0);
            assert_eq!(plane(&out, 104).0, (1 << 0) | (1 << 56));
            assert_eq!(plane(&out, 105).0, (1 << 7) | (1 << 63));
            assert_eq!(plane(&out, 106).0, 0);
            assert_eq!(plane(&out, 107).0, 0);
        }
    }

    #[test]
    fn black_to_move_is_mirrored() {
        let h = play(START, &["g1f3"]);
        let (out, _) = enc(&h, 1, Fill::No);
        assert_eq!(plane(&out, 0).0, 0xFF00); // black pawns, mirrored to rank 2
        assert_eq!(plane(&out, 11).0, 1 << 60); // white king e1 -> e8
        assert_eq!(plane(&out, 7).0, (1 << 57) | (1 << (56 + 5 - 16))); // Nb1 -> b8, Nf3 -> f6
        assert_eq!(plane(&out, 108), (ALL, 1.0));
        assert_eq!(plane(&out, 109), (ALL, 1.0));
        // slot 1: the start position, seen from black: white knights on b8, g8.
        assert_eq!(plane(&out, 13 + 7).0, (1 << 57) | (1 << 62));
        // "they" may castle kingside and queenside, both sides' flags set.
        for p in 104..108 {
            assert_eq!(plane(&out, p).0, ALL);
        }
        let (out, _) = enc(&play(START, &["g1f3", "g8f6"]), 1, Fill::No);
        assert_eq!(plane(&out, 108).0, 0);
        assert_eq!(plane(&out, 109), (ALL, 2.0));
        // format 4 scales rule50 by 1/100; formats 132/133 mark black to move on plane 110.
        let (out, _) = enc(&h, 132, Fill::No);
        assert_eq!(plane(&out, 109), (ALL, 0.01));
        assert_eq!(plane(&out, 110).0, ALL);
    }

    #[test]
    fn canonical_transforms_of_lc0_tests() {
        let h = play("3r4/4k3/8/1K6/8/8/8/8 w - - 0 1", &[]);
        let (out, t) = enc(&h, 3, Fill::No);
        assert_eq!(t, 7);
        assert_eq!(plane(&out, 5).0, 1 << 12);
        assert_eq!(plane(&out, 11).0, 1 << 38);
        let h = play("3r4/4k3/2K5/8/8/8/8/8 w - - 0 1", &[]);
        let (out, t) = enc(&h, 3, Fill::No);
        assert_eq!(t, 3);
        assert_eq!(plane(&out, 5).0, 1 << 21);
        assert_eq!(plane(&out, 11).0, 1 << 11);
        // formats < 3: no transform.
        assert_eq!(choose_transform(&h[0], 2), 0);
    }

    #[test]
    fn bit_transforms() {
        let sq = |r: u32, f: u32| 1u64 << (r * 8 + f);
        for r in 0..8 {
            for f in 0..8 {
                assert_eq!(flip_bb(sq(r, f)), sq(r, 7 - f));
                assert_eq!(mirror_bb(sq(r, f)), sq(7 - r, f));
                assert_eq!(transpose_bb(sq(r, f)), sq(7 - f, 7 - r));
            }
        }
    }

    #[test]
    fn ep_fill_undoes_the_double_push() {
        // FEN with ep square: fill "no" allows one made-up slot with the push undone.
        let h = play("4k3/8/8/8/4Pp2/8/8/4K3 b - e3 0 1", &[]);
        let (out, _) = enc(&h, 1, Fill::No);
        // slot 0 from black's view: their pawn e4 -> mirrored e5 (bit 36).
        assert_eq!(plane(&out, 6).0, 1 << 36);
        // slot 1: their pawn back on e2 -> mirrored e7 (bit 52).
        assert_eq!(plane(&out, 13 + 6).0, 1 << 52);
        assert_eq!(plane(&out, 26 + 6).0, 0);
    }

    #[test]
    fn last_eight_equal_the_whole_game() {
        let moves = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "f3g5", "d7d5", "e4d5", "f6d5", "g5f7"];
        let h = play(START, &moves);
        for fmt in [1, 2, 3, 4, 132] {
            let (a, _) = enc(&h, fmt, Fill::FenOnly);
            let (b, _) = enc(&h[h.len() - 8..], fmt, Fill::FenOnly);
            assert_eq!(a, b);
        }
    }
}
