"""Lc0 input encoding: game histories -> float32 planes ``[B, 112, 8, 8]``.

Facts from lc0 (src/neural/encoder.cc ``EncodePositionForNN``,
src/chess/position.cc ``ComputeLastMoveRepetitions``). A position is held as a :class:`Snapshot` of
absolute bitboards (a1 = bit 0); :func:`encode` turns batches of histories into planes with numpy
(``np.unpackbits`` on the uint64 masks), with no per-square Python loop.

Tensor layout: ``planes[b, p, r, f]`` is square ``r*8 + f`` of plane ``p`` in the side to move's view
(black to move: ranks mirrored, colours swapped), so row 0 is the side to move's back rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import chess
import numpy as np

__all__ = [
    "FILL_MODES",
    "INPUT_FORMATS",
    "Snapshot",
    "choose_transform",
    "count_repetitions",
    "encode",
    "game_history",
    "position_key",
    "snapshot",
]

#: Lc0 input formats (lc0 proto/net.proto ``NetworkFormat.InputFormat``).
INPUT_FORMATS = (1, 2, 3, 4, 5, 132, 133)
#: lc0 ``HistoryFill`` modes (src/neural/shared_params.cc; UCI default "fen_only").
FILL_MODES = ("fen_only", "no", "always")
_HISTORY = 8  # kMoveHistory (src/neural/encoder.h)
_ALL = 0xFFFF_FFFF_FFFF_FFFF
_U64 = np.uint64


class Snapshot(NamedTuple):
    """One position, cheap to build from a python-chess board. Bitboards are absolute, a1 = bit 0."""

    pawns: int
    knights: int
    bishops: int
    rooks: int
    queens: int
    kings: int
    white: int
    black: int
    turn: bool  #: chess.WHITE (True) or chess.BLACK
    castling: int  #: python-chess clean castling rights (bitmask of rook squares)
    ep_square: int | None  #: lc0 semantics (docs/lc0-conventions.md §0)
    rule50: int  #: halfmove clock (plies)
    repetitions: int  #: lc0 rule (docs/lc0-conventions.md §1)


def _start_snapshot() -> Snapshot:
    b = chess.Board()
    return Snapshot(b.pawns, b.knights, b.bishops, b.rooks, b.queens, b.kings, b.occupied_co[True],
                    b.occupied_co[False], True, b.castling_rights, None, 0, 0)


_START = _start_snapshot()
_START_BOARD = _START[:11]


def _lc0_ep(board: chess.Board, from_move: bool) -> int | None:
    """The ep square as lc0 keeps it (lc0 src/chess/board.cc ``ApplyMove``, ``SetFromFen``; docs/lc0-conventions.md
    §0)."""
    ep = board.ep_square
    if ep is None:
        return None
    turn = board.turn
    if from_move:
        # After a double push: only if an enemy pawn (of the side to move) attacks the skipped square.
        return ep if board.pawns & board.occupied_co[turn] & chess.BB_PAWN_ATTACKS[not turn][ep] else None
    # From a FEN: right rank, empty, the opponent's pawn in front of it.
    rank = chess.square_rank(ep)
    pusher = ep - 8 if turn else ep + 8
    if rank != (5 if turn else 2) or board.piece_at(ep) is not None:
        return None
    if not (board.pawns & board.occupied_co[not turn] & chess.BB_SQUARES[pusher]):
        return None
    return ep


def snapshot(board: chess.Board, repetitions: int = 0, *, after_move: chess.Move | None = None) -> Snapshot:
    """The :class:`Snapshot` of ``board``'s current position.

    ``repetitions`` is lc0's count (:func:`count_repetitions`). The ep square follows lc0: when the
    position was reached by a move (``after_move`` given, or ``board.move_stack`` not empty) it is kept
    only if a pawn of the side to move attacks the skipped square; for a bare FEN it is kept as given
    after lc0's sanity checks (docs/lc0-conventions.md §0).
    """
    from_move = after_move is not None or bool(board.move_stack)
    return Snapshot(
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
        board.occupied_co[True], board.occupied_co[False], board.turn, board.clean_castling_rights(),
        _lc0_ep(board, from_move), board.halfmove_clock, repetitions,
    )


def count_repetitions(history: Sequence[Snapshot], new: Snapshot) -> int:
    """lc0's repetition count of ``new`` (``history`` is oldest first and excludes ``new``).

    0 when ``new.rule50 < 4``; otherwise scans same-side positions 2, 4, 6, ... plies back and returns
    1 + the repetitions of the first equal board (pieces, castling, ep, side to move); the scan stops at
    a position whose rule50 is below 2 (lc0 src/chess/position.cc ``ComputeLastMoveRepetitions``).
    """
    if new.rule50 < 4:
        return 0
    board = new[:11]
    for idx in range(len(history) - 2, -1, -2):
        pos = history[idx]
        if pos[:11] == board:
            return 1 + pos.repetitions
        if pos.rule50 < 2:
            return 0
    return 0


def game_history(board: chess.Board) -> list[Snapshot]:
    """Snapshots of the game on ``board``: the root position and one per move played, oldest first."""
    b = board.root()
    out = [snapshot(b)]
    for move in board.move_stack:
        b.push(move)
        s = snapshot(b, after_move=move)
        reps = count_repetitions(out, s)
        out.append(s._replace(repetitions=reps) if reps else s)
    return out


def position_key(s: Snapshot) -> tuple:
    """NN-cache key: the position and its repetition count, not rule50 (as lc0's NN cache keys it)."""
    return (*s[:11], s.repetitions)


# --------------------------------------------------------------------------------------------------
# Canonical transform (docs/lc0-conventions.md §3; lc0 src/neural/encoder.cc ``ChooseTransform``)
# --------------------------------------------------------------------------------------------------
_FLIP, _MIRROR, _TRANSPOSE = 1, 2, 4


def _flip_bb(v: int) -> int:  # file f -> 7 - f
    return int.from_bytes(bytes(_REV8[x] for x in v.to_bytes(8, "little")), "little")


def _mirror_bb(v: int) -> int:  # rank r -> 7 - r
    return int.from_bytes(v.to_bytes(8, "little"), "big")


def _transpose_bb(v: int) -> int:  # (r, f) -> (7 - f, 7 - r), the a8-h1 anti-diagonal
    out = 0
    while v:
        sq = (v & -v).bit_length() - 1
        v &= v - 1
        r, f = sq >> 3, sq & 7
        out |= 1 << ((7 - f) * 8 + 7 - r)
    return out


_REV8 = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


def choose_transform(s: Snapshot, input_format: int) -> int:
    """Canonical transform of the current position: bits Flip=1, Mirror=2, Transpose=4; 0 for formats < 3."""
    if input_format < 3 or s.castling:
        return 0
    view = _mirror_bb if not s.turn else (lambda v: v)
    ours = view(s.white if s.turn else s.black)
    occupied = view(s.white | s.black)
    king = ours & view(s.kings)
    t = 0
    if king & 0x0F0F0F0F0F0F0F0F:
        t |= _FLIP
        king = _flip_bb(king)
    if s.pawns:
        return t
    if king & 0xFFFFFFFF00000000:
        t |= _MIRROR
        king = _mirror_bb(king)
    if king & 0xE0C08000:
        return t | _TRANSPOSE
    if king & 0x10204080:
        for bb in (occupied, ours, view(s.kings), view(s.queens), view(s.rooks), view(s.knights),
                   view(s.bishops)):
            if t & _FLIP:
                bb = _flip_bb(bb)
            if t & _MIRROR:
                bb = _mirror_bb(bb)
            tv = _transpose_bb(bb)
            if bb < tv:
                return t
            if bb > tv:
                return t | _TRANSPOSE
    return t


# --------------------------------------------------------------------------------------------------
# Which positions fill the 8 slots (docs/lc0-conventions.md §2)
# --------------------------------------------------------------------------------------------------
def _slots(history: Sequence[Snapshot], input_format: int, fill: str) -> list[tuple[Snapshot, bool]]:
    """(snapshot, undo-ep) per written slot, newest first. Orientation is handled by the caller."""
    n = len(history)
    canonical = input_format >= 3
    if not canonical and n >= _HISTORY:  # the common case: 8 real positions, nothing to decide
        return [(pos, False) for pos in history[-1:-_HISTORY - 1:-1]]
    v2 = input_format in (5, 133)
    cur = history[-1]
    oldest = history[0]
    out: list[tuple[Snapshot, bool]] = []
    idx = n - 1
    while len(out) < _HISTORY:
        pos = history[idx] if idx >= 0 else oldest
        if canonical and pos.castling != cur.castling:
            break
        if canonical and out and pos.ep_square is not None:
            break
        if idx < 0:
            if fill == "no" and (idx < -1 or oldest.ep_square is None):
                break
            if fill == "fen_only" and oldest[:11] == _START_BOARD:
                break
        if v2 and out and pos.repetitions == 0:
            if pos.rule50 == 0 or idx < 0:  # idx < 0: lc0 would loop forever (docs/lc0-conventions.md §2)
                break
            idx -= 1
            continue
        out.append((pos, idx < 0 and pos.ep_square is not None))
        if canonical and pos.rule50 == 0:
            break
        idx -= 1
    return out


def _undo_ep(s: Snapshot) -> Snapshot:
    """The position before the double push that set ``s.ep_square`` (absolute squares)."""
    ep = s.ep_square
    assert ep is not None, "only called for a position with an en-passant square"
    if s.turn:  # black just pushed: ep on rank 6, pawn on rank 5 back to rank 7
        moved, back = 1 << (ep - 8), 1 << (ep + 8)
        return s._replace(pawns=(s.pawns & ~moved) | back, black=(s.black & ~moved) | back)
    moved, back = 1 << (ep + 8), 1 << (ep - 8)
    return s._replace(pawns=(s.pawns & ~moved) | back, white=(s.white & ~moved) | back)


def _castle_masks(s: Snapshot) -> tuple[int, int]:
    """(queenside, kingside) castling rook squares of both colours (absolute)."""
    qs = ks = 0
    rights = s.castling
    while rights:
        sq = (rights & -rights).bit_length() - 1
        rights &= rights - 1
        back = 0xFF if sq < 8 else 0xFF << 56
        color = s.white if sq < 8 else s.black
        king = s.kings & color & back
        kfile = ((king & -king).bit_length() - 1) & 7 if king else 4
        if (sq & 7) < kfile:
            qs |= 1 << sq
        else:
            ks |= 1 << sq
    return qs, ks


def encode(histories: Sequence[Sequence[Snapshot]], input_format: int = 1, fill: str = "fen_only",
           out: np.ndarray | None = None) -> np.ndarray:
    """Encode a batch of histories as lc0 input planes.

    Each history is oldest first, current position last; it holds at least 8 positions or starts at the
    game's first position (a FEN or the start position). ``fill`` is lc0's HistoryFill mode ("fen_only",
    "no", "always"). Returns float32 ``[B, 112, 8, 8]`` (written into ``out`` when given, which must be
    a C-contiguous float32 array of at least that shape). Raises ValueError for an unknown input format,
    fill mode or an empty history.
    """
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"unknown lc0 input format {input_format} (expected one of {INPUT_FORMATS})")
    if fill not in FILL_MODES:
        raise ValueError(f"unknown history fill mode {fill!r} (expected one of {FILL_MODES})")
    nb = len(histories)
    hecto = input_format >= 4
    rows: list[tuple] = []  # per written slot: (pawns, knights, bishops, rooks, queens, kings, white, black)
    reps: list[bool] = []  # per slot: repetition plane set
    where: list[int] = []  # per slot: b * 8 + slot
    black_rows: list[bool] = []  # per slot: the current side to move is black
    aux_rows: list[list[int]] = []  # per position: masks of planes 104..111
    rule50: list[float] = []
    transforms: list[int] = []
    for b, hist in enumerate(histories):
        if not hist:
            raise ValueError("encode() needs at least one position per history")
        cur = hist[-1]
        black = not cur.turn
        slots = _slots(hist, input_format, fill)
        for pos, undo in slots:
            rows.append((_undo_ep(pos) if undo else pos)[:8])
            reps.append(pos.repetitions >= 1)
        where.extend(range(b * _HISTORY, b * _HISTORY + len(slots)))
        black_rows.extend([black] * len(slots))
        aux_rows.append(_aux(cur, input_format))
        rule50.append(cur.rule50 / 100.0 if hecto else float(cur.rule50))
        if input_format >= 3:
            transforms.append(choose_transform(cur, input_format))
    masks = np.zeros((nb, 112), dtype=_U64)
    if rows:
        raw = np.array(rows, dtype=_U64)  # [R, 8]
        blk = np.array(black_rows)
        ours = np.where(blk, raw[:, 7], raw[:, 6])[:, None]
        theirs = np.where(blk, raw[:, 6], raw[:, 7])[:, None]
        pieces = np.empty((len(rows), 13), dtype=_U64)
        np.bitwise_and(raw[:, :6], ours, out=pieces[:, :6])
        np.bitwise_and(raw[:, :6], theirs, out=pieces[:, 6:12])
        pieces[:, 12] = np.where(np.array(reps), _U64(_ALL), _U64(0))
        if blk.any():
            pieces[blk] = pieces[blk].byteswap()  # vertical mirror: rank r -> 7 - r
        pos_idx = np.array(where)
        masks[:, :104].reshape(nb, _HISTORY, 13)[pos_idx // _HISTORY, pos_idx % _HISTORY] = pieces
    masks[:, 104:] = np.array(aux_rows, dtype=_U64).reshape(nb, 8)
    bits = np.unpackbits(masks.view(np.uint8).reshape(nb, 112, 8), axis=-1, bitorder="little")
    if out is None:
        out = np.empty((nb, 112, 8, 8), dtype=np.float32)
    else:
        out = out[:nb]
    flat_out = out.reshape(nb, 112, 64)
    np.copyto(flat_out, bits.reshape(nb, 112, 64), casting="unsafe")
    flat_out[:, 109, :] *= np.array(rule50, dtype=np.float32)[:, None]
    for b, t in enumerate(transforms):
        if t:
            out[b, :109] = _apply_transform(out[b, :109], t)
    return out


def _aux(cur: Snapshot, input_format: int) -> list[int]:
    """Masks of the auxiliary planes 104..111 for the current position (docs/lc0-conventions.md §1)."""
    black = not cur.turn
    aux = [0] * 8
    if input_format == 1:
        c = cur.castling
        rights = [c & chess.BB_A1, c & chess.BB_H1, c & chess.BB_A8, c & chess.BB_H8]
        if black:
            rights = rights[2:] + rights[:2]
        aux[0:4] = [_ALL if x else 0 for x in rights]
    else:
        qs, ks = _castle_masks(cur)
        aux[0], aux[1] = (_mirror_bb(qs), _mirror_bb(ks)) if black else (qs, ks)
    if input_format >= 3:
        if cur.ep_square is not None:
            aux[4] = 1 << (56 + (cur.ep_square & 7))  # rank 8 of the side to move's view
        if input_format in (132, 133) and black:
            aux[6] = _ALL
    elif black:
        aux[4] = _ALL
    aux[5] = aux[7] = _ALL
    return aux


def _apply_transform(planes: np.ndarray, t: int) -> np.ndarray:
    """Flip, then Mirror, then Transpose the [P, 8, 8] planes (rows = ranks, columns = files)."""
    if t & _FLIP:
        planes = planes[:, :, ::-1]
    if t & _MIRROR:
        planes = planes[:, ::-1, :]
    if t & _TRANSPOSE:  # new[r, f] = old[7 - f, 7 - r]
        planes = planes[:, ::-1, ::-1].transpose(0, 2, 1)
    return planes.copy()
