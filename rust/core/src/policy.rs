//! lc0's 1858-entry policy index: moves <-> network policy outputs.
//!
//! The table is generated at compile time with the algorithm that reproduces lc0's `kMoveStrs`
//! (lc0 src/neural/encoder.cc) entry by entry: for every from-square a1..h8, all queen-line and
//! knight destinations in ascending square order (1792 plain moves), then for every file a..h the
//! pawn moves from rank 7 to files f-1, f, f+1 with promotion pieces q, r, b (66 entries).
//! SHA-256 of the entries joined by "\n" is
//! `4a901f49851725496e39e34648dd58f240950fa6b72a0bbf6b2816b9af767cc7`.
//!
//! Lookup (lc0 src/neural/encoder.cc `MoveToNNIndex`, `kPackedIdxToNNIdx`): moves are taken from the
//! mover's view (black: ranks mirrored, `sq ^ 56`); castling is king-takes-rook (O-O = e1h1, lc0
//! src/chess/types.h); a knight promotion maps to the plain from-to entry (promotion code 0), q/r/b
//! promotions to the suffixed entries; with a canonical transform both squares are transformed
//! (Flip, then Mirror, then the geometric anti-diagonal Transpose, as the input planes are).

use shakmaty::{Color, Move, Role};

/// Number of policy outputs of an lc0 network.
pub const NUM_MOVES: usize = 1858;

/// One table entry: from-square, to-square (mover's view, a1 = 0) and lc0 promotion code
/// (0 none/knight, 1 queen, 2 rook, 3 bishop: lc0 src/chess/types.h `PieceType` order "nqrb").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyMove {
    /// Origin square, 0..63 (a1 = 0), from the mover's view.
    pub from: u8,
    /// Destination square, 0..63, from the mover's view (castling: the rook's square).
    pub to: u8,
    /// lc0 promotion code: 0 none (or knight), 1 queen, 2 rook, 3 bishop.
    pub promo: u8,
}

const fn generate() -> [PolicyMove; NUM_MOVES] {
    let mut out = [PolicyMove { from: 0, to: 0, promo: 0 }; NUM_MOVES];
    let queen: [(i32, i32); 8] = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)];
    let knight: [(i32, i32); 8] = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)];
    let mut n = 0;
    let mut from = 0;
    while from < 64 {
        let (r0, f0): (i32, i32) = (from / 8, from % 8);
        let mut dests: u64 = 0;
        let mut k = 0;
        while k < 8 {
            let (dr, df) = queen[k];
            let mut d = 1;
            while d < 8 {
                let (r, f) = (r0 + dr * d, f0 + df * d);
                if r >= 0 && r < 8 && f >= 0 && f < 8 {
                    dests |= 1 << (r * 8 + f);
                }
                d += 1;
            }
            let (dr, df) = knight[k];
            let (r, f) = (r0 + dr, f0 + df);
            if r >= 0 && r < 8 && f >= 0 && f < 8 {
                dests |= 1 << (r * 8 + f);
            }
            k += 1;
        }
        while dests != 0 {
            let to = dests.trailing_zeros() as u8;
            dests &= dests - 1;
            out[n] = PolicyMove { from: from as u8, to, promo: 0 };
            n += 1;
        }
        from += 1;
    }
    let mut f: i32 = 0;
    while f < 8 {
        let mut tf = f - 1;
        while tf <= f + 1 {
            if tf >= 0 && tf < 8 {
                let mut p = 1;
                while p <= 3 {
                    out[n] = PolicyMove { from: (48 + f) as u8, to: (56 + tf) as u8, promo: p };
                    n += 1;
                    p += 1;
                }
            }
            tf += 1;
        }
        f += 1;
    }
    assert!(n == NUM_MOVES);
    out
}

/// The 1858 policy entries in lc0's order (lc0 src/neural/encoder.cc `kMoveStrs`), mover's view.
pub static MOVES: [PolicyMove; NUM_MOVES] = MOVES_CONST;

const fn uci_table() -> [[u8; 5]; NUM_MOVES] {
    let mut out = [[0u8; 5]; NUM_MOVES];
    let mut i = 0;
    while i < NUM_MOVES {
        let m = MOVES_CONST[i];
        out[i][0] = b'a' + m.from % 8;
        out[i][1] = b'1' + m.from / 8;
        out[i][2] = b'a' + m.to % 8;
        out[i][3] = b'1' + m.to / 8;
        out[i][4] = match m.promo {
            1 => b'q',
            2 => b'r',
            3 => b'b',
            _ => b' ',
        };
        i += 1;
    }
    out
}

const MOVES_CONST: [PolicyMove; NUM_MOVES] = generate();
static UCI: [[u8; 5]; NUM_MOVES] = uci_table();

const fn packed_table() -> [i16; 4 * 4096] {
    let mut out = [-1i16; 4 * 4096];
    let mut i = 0;
    while i < NUM_MOVES {
        let m = MOVES_CONST[i];
        out[m.promo as usize * 4096 + m.from as usize * 64 + m.to as usize] = i as i16;
        i += 1;
    }
    out
}

/// `promo_code * 4096 + from * 64 + to` -> policy index, or -1 where lc0 has no entry
/// (lc0 src/neural/encoder.cc `kPackedIdxToNNIdx`). 16384 entries, squares in the mover's view.
pub static PACKED_TO_NN: [i16; 4 * 4096] = packed_table();

/// The UCI string of policy entry `index` (0..1857) from the mover's view, e.g. "e2e4", "a7a8q";
/// castling entries are king-takes-rook ("e1h1"). Panics when `index >= 1858`.
pub fn move_uci(index: u16) -> &'static str {
    let e = &UCI[usize::from(index)];
    let len = if e[4] == b' ' { 4 } else { 5 };
    match std::str::from_utf8(&e[..len]) {
        Ok(s) => s,
        Err(_) => unreachable!("the table is ASCII"),
    }
}

/// Square `sq` (0..63, a1 = 0) under the canonical transform `transform` (bits Flip=1: file
/// f -> 7-f; Mirror=2: rank r -> 7-r; Transpose=4: (r, f) -> (7-f, 7-r), the a8-h1 anti-diagonal),
/// applied Flip, then Mirror, then Transpose (lc0 src/utils/bititer.h `BoardTransform`; the
/// geometric version of lc0 src/neural/encoder.cc `Transform`, matching the input planes).
#[inline]
pub const fn transform_square(sq: u8, transform: u8) -> u8 {
    let (mut r, mut f) = (sq >> 3, sq & 7);
    if transform & 1 != 0 {
        f = 7 - f;
    }
    if transform & 2 != 0 {
        r = 7 - r;
    }
    if transform & 4 != 0 {
        (r, f) = (7 - f, 7 - r);
    }
    r * 8 + f
}

/// lc0 promotion code of a promotion role (lc0 src/chess/types.h `PieceType` "nqrb": knight and no
/// promotion 0, queen 1, rook 2, bishop 3); None for a role lc0 cannot promote to.
#[inline]
const fn promo_code(role: Option<Role>) -> Option<usize> {
    match role {
        None | Some(Role::Knight) => Some(0),
        Some(Role::Queen) => Some(1),
        Some(Role::Rook) => Some(2),
        Some(Role::Bishop) => Some(3),
        Some(_) => None,
    }
}

/// The policy index (0..1857) of move `m` played by `turn`, under the canonical transform
/// `transform` (from [`crate::encoding::choose_transform`] / [`crate::encoding::encode`]; 0 for
/// none). lc0 src/neural/encoder.cc `MoveToNNIndex`: castling as king-takes-rook (shakmaty's
/// `Move::Castle { king, rook }`), black's squares mirrored (`sq ^ 56`), then transformed; a knight
/// promotion is the plain from-to entry. None for a move with no entry (a drop, a king promotion).
/// No allocation: two table reads.
#[inline]
pub fn nn_index(m: &Move, turn: Color, transform: u8) -> Option<u16> {
    let (from, to, promo) = match *m {
        Move::Normal { from, to, promotion, .. } => (from, to, promo_code(promotion)?),
        Move::EnPassant { from, to } => (from, to, 0),
        Move::Castle { king, rook } => (king, rook, 0),
        Move::Put { .. } => return None,
    };
    let flip = if turn == Color::Black { 56 } else { 0 };
    let mut from = u8::from(from) ^ flip;
    let mut to = u8::from(to) ^ flip;
    if transform != 0 {
        from = transform_square(from, transform);
        to = transform_square(to, transform);
    }
    let idx = PACKED_TO_NN[promo * 4096 + usize::from(from) * 64 + usize::from(to)];
    u16::try_from(idx).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::uci::UciMove;
    use shakmaty::{CastlingMode, Chess, Position};

    /// Minimal SHA-256 (FIPS 180-4), enough to check the table's published digest.
    fn sha256(data: &[u8]) -> [u8; 32] {
        const K: [u32; 64] = [
            0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
            0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
            0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
            0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
            0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
            0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
            0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
            0xc67178f2,
        ];
        let mut h: [u32; 8] =
            [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
        let mut msg = data.to_vec();
        msg.push(0x80);
        while msg.len() % 64 != 56 {
            msg.push(0);
        }
        msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
        for block in msg.chunks(64) {
            let mut w = [0u32; 64];
            for i in 0..16 {
                w[i] = u32::from_be_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]]);
            }
            for i in 16..64 {
                let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
                let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
            }
            let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
            for i in 0..64 {
                let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
                let ch = (e & f) ^ (!e & g);
                let t1 = hh.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
                let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
                let maj = (a & b) ^ (a & c) ^ (b & c);
                let t2 = s0.wrapping_add(maj);
                (hh, g, f, e, d, c, b, a) = (g, f, e, d.wrapping_add(t1), c, b, a, t1.wrapping_add(t2));
            }
            for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
                *x = x.wrapping_add(y);
            }
        }
        let mut out = [0u8; 32];
        for (i, x) in h.iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
        }
        out
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn sha256_self_check() {
        assert_eq!(hex(&sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn table_matches_lc0_digest() {
        let joined = (0..NUM_MOVES as u16).map(move_uci).collect::<Vec<_>>().join("\n");
        assert_eq!(hex(&sha256(joined.as_bytes())), "4a901f49851725496e39e34648dd58f240950fa6b72a0bbf6b2816b9af767cc7");
        assert_eq!(move_uci(0), "a1b1");
        assert_eq!(move_uci(1791), "h8g8");
        assert_eq!(move_uci(1792), "a7a8q");
        assert_eq!(move_uci(1857), "h7h8b");
        let plain = PACKED_TO_NN[..4096].iter().filter(|&&i| i >= 0).count();
        let all = PACKED_TO_NN.iter().filter(|&&i| i >= 0).count();
        assert_eq!((plain, all), (1792, NUM_MOVES));
    }

    fn idx(fen: &str, uci: &str, mode: CastlingMode) -> Option<u16> {
        let pos: Chess = fen.parse::<Fen>().unwrap().into_position(mode).unwrap();
        let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        nn_index(&m, pos.turn(), 0)
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn known_indices() {
        let s = CastlingMode::Standard;
        assert_eq!(idx(START, "e2e4", s), Some(322));
        assert_eq!(idx(START, "g1f3", s), Some(159));
        assert_eq!(idx(START, "a2a4", s), Some(207));
        let black = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        assert_eq!(idx(black, "e7e5", s), Some(322));
        assert_eq!(idx(black, "g8f6", s), Some(159));
    }

    #[test]
    fn castling_is_king_takes_rook() {
        let s = CastlingMode::Standard;
        let w = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        assert_eq!(idx(w, "e1g1", s), Some(103));
        assert_eq!(idx(w, "e1c1", s), Some(97));
        assert_eq!(idx(w, "e1f1", s), Some(101));
        let b = "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1";
        assert_eq!(idx(b, "e8g8", s), Some(103));
        assert_eq!(idx(b, "e8c8", s), Some(97));
        // Chess960: king e1, castling rook c1 -> king takes rook = e1c1 (99), not e1a1.
        let c = CastlingMode::Chess960;
        assert_eq!(idx("4k3/8/8/8/8/8/8/2R1K3 w C - 0 1", "e1c1", c), Some(99));
        assert_eq!(idx("4k3/8/8/8/8/8/8/4KR2 w F - 0 1", "e1f1", c), Some(101));
    }

    #[test]
    fn promotions() {
        let s = CastlingMode::Standard;
        let w = "3qk3/4P3/8/8/8/8/8/4K3 w - - 0 1";
        assert_eq!(idx(w, "e7d8q", s), Some(1825));
        assert_eq!(
            idx(w, "e7d8n", s),
            Some(MOVES.iter().position(|m| (m.from, m.to, m.promo) == (52, 59, 0)).unwrap() as u16)
        );
        let b = "4k3/8/8/8/8/8/p7/1R5K b - - 0 1";
        assert_eq!(idx(b, "a2b1r", s), Some(1796));
        let b = "7k/8/8/8/8/8/4p3/K7 b - - 0 1";
        assert_eq!(idx(b, "e2e1q", s), Some(1828));
        assert_eq!(idx(b, "e2e1n", s), Some(1515));
        assert_eq!(move_uci(1515), "e7e8");
    }

    #[test]
    fn transform_squares() {
        // a1 <-> h8 under Transpose; h1 and a8 fixed; b1 -> h7.
        assert_eq!(transform_square(0, 4), 63);
        assert_eq!(transform_square(7, 4), 7);
        assert_eq!(transform_square(56, 4), 56);
        assert_eq!(transform_square(1, 4), 55);
        assert_eq!(transform_square(0, 1), 7);
        assert_eq!(transform_square(0, 2), 56);
        for t in 0..8 {
            for sq in 0..64 {
                assert!(transform_square(sq, t) < 64);
            }
        }
    }
}
