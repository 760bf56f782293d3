"""A minimal stand-in for lichessbot.engine.encoding / policy_map (classical format, games from startpos).

Used by dataset.py only while the engine's encoder is not importable; dataset.py re-packs the data with the
engine's encoder as soon as it exists (the packed files record which encoder made them). Follows
../shared/spec/lc0-facts.md §1 (planes) and §2 (policy index); same names as docs/interfaces.md.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import chess
import numpy as np

from model import lc0_moves

_INDEX = {m: i for i, m in enumerate(lc0_moves())}


class Snapshot(NamedTuple):
    pawns: int
    knights: int
    bishops: int
    rooks: int
    queens: int
    kings: int
    white: int
    black: int
    turn: bool
    castling: int
    ep_square: int | None
    rule50: int
    repetitions: int


def snapshot(board: chess.Board, repetitions: int = 0, *, after_move: chess.Move | None = None) -> Snapshot:
    return Snapshot(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                    board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK], board.turn,
                    board.clean_castling_rights(), board.ep_square if board.has_legal_en_passant() else None,
                    board.halfmove_clock, repetitions)


def _same(a: Snapshot, b: Snapshot) -> bool:
    return a[:11] == b[:11]


def count_repetitions(history: Sequence[Snapshot], new: Snapshot) -> int:
    """lc0 rule (lc0-facts §1.4): scan same-side positions 4, 6, ... plies back within the rule-50 window."""
    if new.rule50 < 4:
        return 0
    n = len(history)
    for back in range(4, new.rule50 + 1, 2):
        i = n - back
        if i < 0:
            break
        if _same(history[i], new):
            return 1 + history[i].repetitions
        if history[i].rule50 < 2:
            break
    return 0


def _bits(bb: int, flip: bool) -> np.ndarray:
    if flip:
        bb = chess.flip_vertical(bb)
    return np.unpackbits(np.array([bb], dtype="<u8").view(np.uint8), bitorder="little").astype(np.float32)


def encode(histories, input_format: int = 1, fill: str = "no", out=None) -> np.ndarray:
    """float32 [B,112,8,8], classical format; slots before the game's first position stay zero."""
    assert input_format == 1
    res = np.zeros((len(histories), 112, 64), np.float32)
    for b, hist in enumerate(histories):
        cur = hist[-1]
        us = cur.turn
        flip = us == chess.BLACK
        for t, s in enumerate(reversed(list(hist)[-8:])):
            own, opp = (s.white, s.black) if us == chess.WHITE else (s.black, s.white)
            for k, pbb in enumerate(s[:6]):
                res[b, 13 * t + k] = _bits(pbb & own, flip)
                res[b, 13 * t + 6 + k] = _bits(pbb & opp, flip)
            if s.repetitions:
                res[b, 13 * t + 12] = 1.0
        c = cur.castling
        oq, ok = (chess.BB_A1, chess.BB_H1) if us == chess.WHITE else (chess.BB_A8, chess.BB_H8)
        tq, tk = (chess.BB_A8, chess.BB_H8) if us == chess.WHITE else (chess.BB_A1, chess.BB_H1)
        res[b, 104] = bool(c & oq)
        res[b, 105] = bool(c & ok)
        res[b, 106] = bool(c & tq)
        res[b, 107] = bool(c & tk)
        res[b, 108] = float(us == chess.BLACK)
        res[b, 109] = cur.rule50
        res[b, 111] = 1.0
    return res.reshape(len(histories), 112, 8, 8)


def move_index(move: chess.Move, s: Snapshot, transform: int = 0) -> int:
    frm, to = move.from_square, move.to_square
    king = s.kings & chess.BB_SQUARES[frm]
    if king and chess.square_distance(frm, to) == 2 and chess.square_rank(frm) == chess.square_rank(to):
        to = chess.square(7 if chess.square_file(to) > chess.square_file(frm) else 0, chess.square_rank(to))
    if s.turn == chess.BLACK:
        frm, to = chess.square_mirror(frm), chess.square_mirror(to)
    uci = chess.square_name(frm) + chess.square_name(to)
    if move.promotion and move.promotion != chess.KNIGHT:
        uci += chess.piece_symbol(move.promotion)
    return _INDEX[uci]
