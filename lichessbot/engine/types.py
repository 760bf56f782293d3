"""Value objects of the evaluation side shared by the evaluator and its cache (docs/interfaces.md, "engine")."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import chess
import numpy as np

from lichessbot.engine.encoding import Snapshot

__all__ = ["EvalRequest", "Evaluation"]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The network's view of one position."""

    priors: np.ndarray  #: float32 [n], in the order of the request's moves, sums to 1 (n = 0: empty)
    wdl: tuple[float, float, float]  #: win, draw, loss for the side to move
    q: float  #: W - L, side to move's view
    m: float  #: moves left (plies), 0.0 without an MLH head


@dataclass(frozen=True, slots=True)
class EvalRequest:
    """One position to evaluate: its history (oldest first, current last) and its legal moves."""

    history: Sequence[Snapshot]
    moves: Sequence[chess.Move]
    key: Hashable  #: position_key(history[-1])
