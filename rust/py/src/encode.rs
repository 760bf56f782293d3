//! The core's input encoder and policy map for Python (`lichessbot eval`, `bench nn`, training): the
//! same code the search runs (lichessbot_core::encoding, ::policy), so there is one encoder and one
//! policy map in the project. Planes come back as numpy float32 arrays; the work runs with the GIL
//! released.

use lichessbot_core::encoding::{self, Fill, INPUT_SIZE};
use lichessbot_core::policy;
use lichessbot_core::position::{PosInfo, replay_game};
use numpy::{PyArray1, PyArray4, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position, PositionError};

use crate::guard;

/// Legal moves of one position with their policy indices: (UCI, index) in shakmaty's move order.
type MoveIndices = Vec<(String, u16)>;

fn options(input_format: u32, history_fill: &str, chess960: bool) -> PyResult<(u32, Fill, CastlingMode)> {
    if !encoding::INPUT_FORMATS.contains(&input_format) {
        return Err(PyValueError::new_err(format!(
            "unknown lc0 input format {input_format} (expected one of {:?})",
            encoding::INPUT_FORMATS
        )));
    }
    let fill = history_fill.parse::<Fill>().map_err(PyValueError::new_err)?;
    Ok((input_format, fill, if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard }))
}

/// The legal moves of `pos` with their policy indices under `transform` (UCI spelled by `mode`:
/// e1g1 in standard chess, king takes rook in Chess960, as python-chess spells them).
fn move_indices(pos: &Chess, transform: u8, mode: CastlingMode) -> MoveIndices {
    pos.legal_moves()
        .iter()
        .filter_map(|m| policy::nn_index(m, pos.turn(), transform).map(|i| (m.to_uci(mode).to_string(), i)))
        .collect()
}

/// Encode position `upto` of `history` (a whole game, oldest first) with the positions before it into
/// `row`; returns the transform. The encoder looks back 8 positions, or for the v2 canonical formats to
/// the last zeroing move (rule50 + 1 positions), so that many are handed over (as the search does).
fn encode_last(history: &[PosInfo], upto: usize, input_format: u32, fill: Fill, row: &mut [f32]) -> u8 {
    let need = (history[upto].rule50 as usize + 1).max(8);
    let refs: Vec<&PosInfo> = history[(upto + 1).saturating_sub(need)..=upto].iter().collect();
    encoding::encode(&refs, input_format, fill, row)
}

fn planes_array<'py>(py: Python<'py>, data: Vec<f32>, rows: usize) -> PyResult<Bound<'py, PyArray4<f32>>> {
    PyArray1::from_vec(py, data).reshape([rows, 112, 8, 8])
}

/// The lc0 input planes of the last position of each game, and the policy index of every legal move
/// there: `games` is a list of (FEN, UCI moves played from it). Returns (planes float32
/// `[B, 112, 8, 8]`, per game a list of (UCI, policy index) in shakmaty's move order). The indices
/// carry the canonical transform of `input_format` (lc0 src/neural/encoder.cc `ChooseTransform`).
/// Raises ValueError naming the game for a bad FEN or move, and for an unknown input format or fill.
#[pyfunction]
#[pyo3(signature = (games, *, input_format, history_fill, chess960=false))]
#[allow(clippy::type_complexity)]
pub fn encode_positions<'py>(
    py: Python<'py>,
    games: Vec<(String, Vec<String>)>,
    input_format: u32,
    history_fill: &str,
    chess960: bool,
) -> PyResult<(Bound<'py, PyArray4<f32>>, Vec<MoveIndices>)> {
    let (input_format, fill, mode) = options(input_format, history_fill, chess960)?;
    let rows = games.len();
    let (data, moves) = guard(|| {
        py.detach(|| {
            let mut data = vec![0f32; rows * INPUT_SIZE];
            let mut moves = Vec::with_capacity(rows);
            for (i, ((fen, played), row)) in games.iter().zip(data.chunks_exact_mut(INPUT_SIZE)).enumerate() {
                let (positions, pos, _) = replay_game(fen, played, mode).map_err(|e| format!("game {i}: {e}"))?;
                let transform = encode_last(&positions, positions.len() - 1, input_format, fill, row);
                moves.push(move_indices(&pos, transform, mode));
            }
            Ok((data, moves))
        })
        .map_err(PyValueError::new_err::<String>)
    })?;
    Ok((planes_array(py, data, rows)?, moves))
}

/// Every position of one game: the FEN's and the one after each UCI move of `moves`. Returns (planes
/// float32 `[len(moves) + 1, 112, 8, 8]`, per position a list of (UCI, policy index) of its legal moves),
/// each position encoded with the game's history before it, as the search encodes it. Raises
/// ValueError for a bad FEN or move, and for an unknown input format or fill.
#[pyfunction]
#[pyo3(signature = (fen, moves, *, input_format, history_fill, chess960=false))]
#[allow(clippy::type_complexity)]
pub fn encode_plies<'py>(
    py: Python<'py>,
    fen: String,
    moves: Vec<String>,
    input_format: u32,
    history_fill: &str,
    chess960: bool,
) -> PyResult<(Bound<'py, PyArray4<f32>>, Vec<MoveIndices>)> {
    let (input_format, fill, mode) = options(input_format, history_fill, chess960)?;
    let rows = moves.len() + 1;
    let (data, indices) = guard(|| {
        py.detach(|| {
            let (positions, _, played) = replay_game(&fen, &moves, mode)?;
            let setup: Fen = fen.parse().map_err(|e| format!("invalid FEN {fen:?}: {e}"))?;
            let mut pos: Chess = setup
                .into_position(mode)
                .or_else(PositionError::ignore_invalid_ep_square)
                .map_err(|e| format!("illegal position {fen:?}: {e}"))?;
            let mut data = vec![0f32; rows * INPUT_SIZE];
            let mut indices = Vec::with_capacity(rows);
            for (ply, row) in data.chunks_exact_mut(INPUT_SIZE).enumerate() {
                let transform = encode_last(&positions, ply, input_format, fill, row);
                indices.push(move_indices(&pos, transform, mode));
                if let Some(mv) = played.get(ply) {
                    pos.play_unchecked(*mv);
                }
            }
            Ok((data, indices))
        })
        .map_err(PyValueError::new_err::<String>)
    })?;
    Ok((planes_array(py, data, rows)?, indices))
}

/// lc0's 1858 policy entries as UCI strings from the mover's view, in policy-index order (castling
/// as king takes rook, knight promotions as the plain move): lc0 src/neural/tables/policy_map.h.
pub fn policy_moves() -> Vec<&'static str> {
    (0..policy::NUM_MOVES as u16).map(policy::move_uci).collect()
}
