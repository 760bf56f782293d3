//! One position as lc0's search and input encoder see it ([`PosInfo`]), and the rules around it
//! that shakmaty does not state the lc0 way: the en-passant square, mating material, repetitions.
//!
//! Squares are shakmaty's (a1 = 0, h8 = 63); bitboards are absolute (white's view).

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::{Zobrist64, ZobristValue};
use shakmaty::{
    Bitboard, Board, CastlingMode, CastlingSide, Chess, Color, EnPassantMode, Move, Piece, Position, PositionError,
    Rank, Role, Square,
};

/// A position with lc0's view of the en-passant square, the rule-50 counter and lc0's repetition
/// count. Built from a shakmaty [`Chess`] after every move, or from a FEN for the first position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PosInfo {
    /// Pieces (absolute squares).
    pub board: Board,
    /// Side to move.
    pub turn: Color,
    /// Squares of the rooks that still have castling rights (python-chess `clean_castling_rights`).
    pub castling: Bitboard,
    /// lc0's en-passant square (lc0 src/chess/board.cc `ApplyMove`, `SetFromFen`): after a double push
    /// only when a pawn of the side to move attacks the skipped square; from a FEN as given, after
    /// the checks of [`fen_ep_square`].
    pub ep: Option<Square>,
    /// Halfmove clock (plies since the last capture or pawn move).
    pub rule50: u32,
    /// lc0's repetition count (lc0 src/chess/position.cc `ComputeLastMoveRepetitions`), see
    /// [`repetitions`].
    pub repetitions: u32,
}

impl PosInfo {
    /// The position of `pos`, reached by a move (the en-passant square is lc0's after-move rule,
    /// shakmaty's [`EnPassantMode::PseudoLegal`]). `repetitions` is left 0 for the caller to set.
    pub fn after_move(pos: &Chess) -> PosInfo {
        PosInfo {
            board: pos.board().clone(),
            turn: pos.turn(),
            castling: pos.castles().castling_rights(),
            ep: pos.ep_square(EnPassantMode::PseudoLegal),
            rule50: pos.halfmoves(),
            repetitions: 0,
        }
    }

    /// The first position of a game, given as a FEN whose raw en-passant field is `fen_ep`.
    pub fn from_fen_position(pos: &Chess, fen_ep: Option<Square>) -> PosInfo {
        let mut p = PosInfo::after_move(pos);
        p.ep = fen_ep_square(pos.board(), pos.turn(), fen_ep);
        p
    }

    /// Equal as a position for repetitions: pieces, side to move, castling rights and en-passant
    /// square (lc0 src/chess/board.h `operator==`); not rule50 nor repetitions.
    #[inline]
    pub fn same_position(&self, other: &PosInfo) -> bool {
        self.turn == other.turn && self.castling == other.castling && self.ep == other.ep && self.board == other.board
    }

    /// 64-bit Zobrist hash of the position (shakmaty's keys: pieces, side to move, castling rights,
    /// lc0's en-passant file), not rule50 nor repetitions.
    pub fn hash(&self) -> u64 {
        let mut z = Zobrist64::default();
        for color in Color::ALL {
            for role in Role::ALL {
                let piece = Piece { color, role };
                for sq in self.board.by_piece(piece) {
                    z ^= Zobrist64::zobrist_for_piece(sq, piece);
                }
            }
        }
        if self.turn == Color::White {
            z ^= Zobrist64::zobrist_for_white_turn();
        }
        for sq in self.castling {
            let color = if sq.rank() == Rank::First { Color::White } else { Color::Black };
            let king = (self.board.kings() & self.board.by_color(color)).first();
            let side = match king {
                Some(k) if sq.file() < k.file() => CastlingSide::QueenSide,
                _ => CastlingSide::KingSide,
            };
            z ^= Zobrist64::zobrist_for_castling_right(color, side);
        }
        if let Some(ep) = self.ep {
            z ^= Zobrist64::zobrist_for_en_passant_file(ep.file());
        }
        z.0
    }

    /// NN-cache key: the position hash and the repetition count, not rule50 (lc0
    /// src/neural/memcache.cc keys its cache this way with the default CacheHistoryLength 0).
    #[inline]
    pub fn cache_key(&self) -> u64 {
        // splitmix64 finaliser of the repetition count, so that (hash, reps) pairs stay apart.
        let mut r = (self.repetitions as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
        r = (r ^ (r >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        r = (r ^ (r >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        self.hash() ^ r ^ (r >> 31)
    }
}

/// lc0's en-passant square of a FEN (lc0 src/chess/board.cc `SetFromFen`): kept only when it lies on
/// the right rank (6th for white to move, 3rd for black), is empty, and the opponent's pawn stands in
/// front of it; else None.
pub fn fen_ep_square(board: &Board, turn: Color, ep: Option<Square>) -> Option<Square> {
    let ep = ep?;
    let (rank, pusher) = match turn {
        Color::White => (Rank::Sixth, ep.offset(-8)),
        Color::Black => (Rank::Third, ep.offset(8)),
    };
    let pusher = pusher?;
    if ep.rank() != rank || board.occupied().contains(ep) {
        return None;
    }
    let their_pawns = board.pawns() & board.by_color(!turn);
    their_pawns.contains(pusher).then_some(ep)
}

/// lc0's mating material rule (lc0 src/chess/board.cc `HasMatingMaterial`): any pawn, rook or queen;
/// else at least 4 pieces with a knight, or bishops on both square colours.
pub fn has_mating_material(board: &Board) -> bool {
    if (board.pawns() | board.rooks() | board.queens()).any() {
        return true;
    }
    if board.occupied().count() < 4 {
        return false;
    }
    if board.knights().any() {
        return true;
    }
    let bishops = board.bishops();
    (bishops & Bitboard::DARK_SQUARES).any() && (bishops & Bitboard::LIGHT_SQUARES).any()
}

/// lc0's repetition count and cycle length (plies) of `new`, the position after the last one of
/// `earlier` (oldest first, `new` excluded). lc0 src/chess/position.cc `ComputeLastMoveRepetitions`:
/// 0 when rule50 < 4; else look at the same side's positions 2, 4, ... plies back; at the first equal
/// one return 1 + its count; stop at a position whose rule50 is below 2 (or past `new.rule50` plies).
///
/// `earlier` is indexed from the newest: `earlier(0)` is the position just before `new`. It returns
/// None past the start of the game.
pub fn repetitions<'a, F>(new: &PosInfo, earlier: F) -> (u32, u32)
where
    F: Fn(usize) -> Option<&'a PosInfo>,
{
    if new.rule50 < 4 {
        return (0, 0);
    }
    let mut dist = 2usize;
    while dist as u32 <= new.rule50 {
        let Some(pos) = earlier(dist - 1) else {
            return (0, 0);
        };
        if pos.same_position(new) {
            return (1 + pos.repetitions, dist as u32);
        }
        if pos.rule50 < 2 {
            return (0, 0);
        }
        dist += 2;
    }
    (0, 0)
}

/// A game replayed with shakmaty: the first position from `fen` (its en-passant square by
/// [`fen_ep_square`]), then one position per UCI move of `moves` (python-chess spelling: e1g1 castling
/// in standard chess, king takes rook in Chess960) with lc0's repetition counts. Returns the positions
/// (oldest first), the final position and the moves played.
///
/// Errors: a message naming an invalid FEN, an illegal position or an illegal move (with its ply).
pub fn replay_game<S: AsRef<str>>(
    fen: &str,
    moves: &[S],
    mode: CastlingMode,
) -> Result<(Vec<PosInfo>, Chess, Vec<Move>), String> {
    let setup: Fen = fen.parse().map_err(|e| format!("invalid FEN {fen:?}: {e}"))?;
    let ep = setup.as_setup().ep_square;
    let mut pos: Chess = setup
        .into_position(mode)
        .or_else(PositionError::ignore_invalid_ep_square)
        .map_err(|e| format!("illegal position {fen:?}: {e}"))?;
    let mut positions = Vec::with_capacity(moves.len() + 1);
    positions.push(PosInfo::from_fen_position(&pos, ep));
    let mut played = Vec::with_capacity(moves.len());
    for (ply, text) in moves.iter().enumerate() {
        let text = text.as_ref();
        let uci: UciMove = text.parse().map_err(|e| format!("invalid move {text:?}: {e}"))?;
        let mv = uci
            .to_move(&pos)
            .map_err(|_| format!("illegal move {text:?} at ply {} of the game from {fen:?}", ply + 1))?;
        pos.play_unchecked(mv);
        let mut info = PosInfo::after_move(&pos);
        let (r, _) = repetitions(&info, |i| positions.len().checked_sub(1 + i).map(|j| &positions[j]));
        info.repetitions = r;
        positions.push(info);
        played.push(mv);
    }
    Ok((positions, pos, played))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn play(fen: &str, moves: &[&str]) -> Vec<PosInfo> {
        replay_game(fen, moves, CastlingMode::Standard).unwrap().0
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn knight_shuffle_repeats_twice() {
        let h = play(START, &["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]);
        let reps: Vec<u32> = h.iter().map(|p| p.repetitions).collect();
        assert_eq!(reps, vec![0, 0, 0, 0, 1, 1, 1, 1, 2]);
    }

    #[test]
    fn ep_square_only_when_a_pawn_can_take() {
        let h = play(START, &["e2e4"]);
        assert_eq!(h[1].ep, None);
        let h = play("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1", &["e2e4"]);
        assert_eq!(h[1].ep, Some(Square::E3));
    }

    #[test]
    fn fen_ep_needs_the_pushed_pawn() {
        let h = play("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1", &[]);
        assert_eq!(h[0].ep, Some(Square::E3));
        let h = play("4k3/8/8/8/8/8/8/4K3 b - e3 0 1", &[]);
        assert_eq!(h[0].ep, None);
    }

    #[test]
    fn mating_material() {
        let b = |f: &str| f.parse::<Fen>().unwrap().as_setup().board.clone();
        assert!(!has_mating_material(&b("4k3/8/8/8/8/8/8/4KB2 w - - 0 1")));
        assert!(!has_mating_material(&b("4k3/8/8/8/8/8/4B3/4KB2 w - - 0 1"))); // same colour
        assert!(has_mating_material(&b("4kb2/8/8/8/8/8/8/4KB2 w - - 0 1")));
        assert!(has_mating_material(&b("4kn2/8/8/8/8/8/8/4KB2 w - - 0 1")));
        assert!(has_mating_material(&b("4k3/8/8/8/8/8/8/4KR2 w - - 0 1")));
    }

    #[test]
    fn hash_differs_by_turn_castling_and_ep() {
        let a = play(START, &[]);
        let b = play("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1", &[]);
        let c = play("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w Kkq - 0 1", &[]);
        assert_ne!(a[0].hash(), b[0].hash());
        assert_ne!(a[0].hash(), c[0].hash());
        let mut r = a[0].clone();
        r.repetitions = 1;
        assert_eq!(r.hash(), a[0].hash());
        assert_ne!(r.cache_key(), a[0].cache_key());
    }
}
