"""Lc0's 1858-entry policy index: moves <-> network policy outputs.

The table is regenerated with the algorithm of ../shared/spec/lc0-facts.md §2.1, which matches lc0's
``kMoveStrs`` (src/neural/encoder.cc) entry by entry; SHA-256 of the entries joined by "\\n" is
``4a901f49851725496e39e34648dd58f240950fa6b72a0bbf6b2816b9af767cc7``. Lookup rules (§2.2): moves are
taken from the mover's view (black: ranks mirrored, ``sq ^ 56``); castling is king-takes-rook (O-O =
e1h1); a knight promotion maps to the plain from-to entry, q/r/b promotions to the suffixed entries;
with a canonical transform the squares are transformed (Flip, Mirror, then the geometric Transpose).
"""

from __future__ import annotations

from collections.abc import Sequence

import chess
import numpy as np

from lichessbot.engine.encoding import Snapshot

__all__ = ["MOVES", "MOVES_SHA256", "move_index", "move_indices", "move_from_index"]

MOVES_SHA256 = "4a901f49851725496e39e34648dd58f240950fa6b72a0bbf6b2816b9af767cc7"
_PROMO_CODE = {None: 0, chess.KNIGHT: 0, chess.QUEEN: 1, chess.ROOK: 2, chess.BISHOP: 3}  # lc0 "nqrb"


def _generate() -> tuple[str, ...]:
    names = chess.SQUARE_NAMES
    out: list[str] = []
    queen_dirs = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]
    knight = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
    for frm in range(64):
        r0, f0 = divmod(frm, 8)
        dests: set[int] = set()
        for dr, df in queen_dirs:
            for d in range(1, 8):
                r, f = r0 + dr * d, f0 + df * d
                if 0 <= r < 8 and 0 <= f < 8:
                    dests.add(r * 8 + f)
        for dr, df in knight:
            r, f = r0 + dr, f0 + df
            if 0 <= r < 8 and 0 <= f < 8:
                dests.add(r * 8 + f)
        out.extend(names[frm] + names[to] for to in sorted(dests))
    for f in range(8):
        for tf in (f - 1, f, f + 1):
            if 0 <= tf < 8:
                for piece in "qrb":
                    out.append(f"{'abcdefgh'[f]}7{'abcdefgh'[tf]}8{piece}")
    return tuple(out)


#: The 1858 UCI strings in lc0's order (from the mover's view; castling as king-takes-rook).
MOVES: tuple[str, ...] = _generate()

# packed = promo_code * 4096 + from * 64 + to -> index (lc0 ``kPackedIdxToNNIdx``); -1 where none.
_PACKED = np.full(4 * 4096, -1, dtype=np.int64)
for _i, _m in enumerate(MOVES):
    _mv = chess.Move.from_uci(_m)
    _PACKED[_PROMO_CODE[_mv.promotion] * 4096 + _mv.from_square * 64 + _mv.to_square] = _i
_PACKED_LIST: list[int] = _PACKED.tolist()
del _i, _m, _mv


def _transform_sq(sq: int, transform: int) -> int:
    r, f = sq >> 3, sq & 7
    if transform & 1:
        f = 7 - f
    if transform & 2:
        r = 7 - r
    if transform & 4:
        r, f = 7 - f, 7 - r
    return r * 8 + f


def _packed(move: chess.Move, s: Snapshot, transform: int) -> int:
    frm, to = move.from_square, move.to_square
    black = not s.turn
    bit = 1 << frm
    if s.kings & bit and (s.black if black else s.white) & bit:
        # python-chess standard castling e1g1/e1c1 -> king takes rook (e1h1/e1a1); e1h1 form kept.
        if abs((to & 7) - (frm & 7)) == 2 and (to >> 3) == (frm >> 3):
            to = (to & 56) | (7 if (to & 7) > (frm & 7) else 0)
    if black:
        frm ^= 56
        to ^= 56
    if transform:
        frm, to = _transform_sq(frm, transform), _transform_sq(to, transform)
    return _PROMO_CODE[move.promotion] * 4096 + frm * 64 + to


def move_index(move: chess.Move, s: Snapshot, transform: int = 0) -> int:
    """The policy index (0..1857) of ``move`` played in position ``s``.

    ``transform`` is :func:`lichessbot.engine.encoding.choose_transform` of ``s``. Raises ValueError
    for a move that has no policy entry (not a chess move of any piece).
    """
    idx = _PACKED_LIST[_packed(move, s, transform)]
    if idx < 0:
        raise ValueError(f"move {move.uci()} has no lc0 policy index")
    return idx


def move_indices(moves: Sequence[chess.Move], s: Snapshot, transform: int = 0) -> np.ndarray:
    """Policy indices of ``moves`` in position ``s``: int64 ``[n]`` (see :func:`move_index`)."""
    table = _PACKED_LIST
    out = np.fromiter((table[_packed(m, s, transform)] for m in moves), dtype=np.int64, count=len(moves))
    if out.size and out.min() < 0:
        bad = next(m for m, i in zip(moves, out) if i < 0)
        raise ValueError(f"move {bad.uci()} has no lc0 policy index")
    return out


def move_from_index(index: int, s: Snapshot) -> chess.Move:
    """The move (absolute squares, king-takes-rook castling, no transform) of policy ``index`` in ``s``."""
    mv = chess.Move.from_uci(MOVES[index])
    if not s.turn:
        mv = chess.Move(mv.from_square ^ 56, mv.to_square ^ 56, mv.promotion)
    return mv
