"""The raw network's view of positions, outside the search: ``lichessbot eval``, ``bench nn`` and training.

One path, the search's own pieces: the Rust core's 112-plane encoder and 1858-move policy map
(:func:`lichessbot._core.encode_positions`), one network run, and the priors as the softmax of the legal
moves' logits at the policy temperature (lc0 src/neural/wrapper.cc ``SoftmaxPolicy``: the logits minus
their maximum, divided by the temperature, exponentiated and normalised; here with the exact ``exp``,
where lc0 and the search use an approximation). Values follow lc0 src/neural/backends/onnx/network_onnx.cc:
W, D, L for the side to move, Q = W - L. There is no cache here: the search has its own in the core.

Imports: lichessbot._core, lichessbot.config; the network is anything with ``run(planes)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import chess
import numpy as np
import numpy.typing as npt

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.neural.runner import NetOutputs

__all__ = ["PositionEval", "encode_boards", "evaluate_boards", "softmax_priors"]


class _Runs(Protocol):
    def run(self, planes: np.ndarray) -> NetOutputs: ...


@dataclass(frozen=True, slots=True)
class PositionEval:
    """The network's view of one position, side to move's view."""

    moves: tuple[chess.Move, ...]  #: the legal moves, in python-chess's order
    priors: npt.NDArray[np.float32]  #: float32 [len(moves)], in the order of ``moves``, sums to 1; read-only
    wdl: tuple[float, float, float]  #: win, draw, loss probabilities
    q: float  #: W - L
    m: float | None  #: moves left (plies); None without a moves-left head


def _outputs(runner: _Runs, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """logits float32 [B, 1858], wdl float32 [B, 3], mlh float32 [B] or None of one network run."""
    logits, wdl, mlh = runner.run(planes)
    return logits, wdl, mlh


def encode_boards(boards: Sequence[chess.Board], *, input_format: int,
                  history_fill: str) -> tuple[npt.NDArray[np.float32], list[dict[str, int]]]:
    """Planes float32 [B, 112, 8, 8] of each board (its whole move stack is the history, as the search
    sees it) and per board {UCI of a legal move: lc0 policy index}. Raises ValueError for an unknown input
    format or history fill, or a board the core refuses (the message names it)."""
    if not boards:
        return np.zeros((0, 112, 8, 8), np.float32), []
    games = [(b.root().fen(), [m.uci() for m in b.move_stack]) for b in boards]
    chess960 = {b.chess960 for b in boards}
    if len(chess960) > 1:
        raise ValueError("encode_boards: Chess960 and standard boards in one call")
    planes, indices = _core.encode_positions(games, input_format=input_format, history_fill=history_fill,
                                             chess960=chess960.pop())
    return planes, [dict(ix) for ix in indices]


def softmax_priors(logits: npt.NDArray[np.float32], temperature: float) -> npt.NDArray[np.float32]:
    """float32 [n]: softmax of ``logits`` (float32 [n], the legal moves' raw logits) at ``temperature``
    (lc0 src/neural/wrapper.cc ``SoftmaxPolicy``, exact exp in float64). Empty for n = 0."""
    if len(logits) == 0:
        return np.zeros(0, dtype=np.float32)
    x = logits.astype(np.float64)
    x = np.exp((x - x.max()) / temperature)
    priors: npt.NDArray[np.float32] = (x / x.sum()).astype(np.float32)
    return priors


def evaluate_boards(runner: _Runs, boards: Sequence[chess.Board], *, input_format: int,
                    params: SearchParams | None = None) -> list[PositionEval]:
    """The network's view of each board in one run of ``runner`` (``run(planes) -> (logits, wdl, mlh)``),
    with the policy temperature and history fill of ``params`` (default: the search's defaults) and the
    network's lc0 ``input_format``. Raises ValueError as :func:`encode_boards`."""
    params = params or SearchParams()
    planes, indices = encode_boards(boards, input_format=input_format, history_fill=params.history_fill)
    if not boards:
        return []
    logits, wdl, mlh = _outputs(runner, planes)
    out = []
    for row, (board, idx) in enumerate(zip(boards, indices)):
        moves = tuple(board.legal_moves)
        cols = np.fromiter((idx[m.uci()] for m in moves), dtype=np.intp, count=len(moves))
        pri = softmax_priors(logits[row, cols], params.policy_temperature)
        pri.flags.writeable = False
        w, d, l_ = (float(v) for v in wdl[row])
        out.append(PositionEval(moves=moves, priors=pri, wdl=(w, d, l_), q=w - l_,
                                m=None if mlh is None else float(mlh[row])))
    return out
