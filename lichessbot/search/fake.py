"""A zero-cost evaluator with the :class:`~lichessbot.engine.evaluator.Evaluator` interface.

Used by ``lichessbot bench search`` to measure the tree's own overhead per playout, and by tests.
Priors are uniform (or given by ``prior_fn``), the value is ``value`` (W - L, side to move's view).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import chess
import numpy as np

from lichessbot.engine.cache import NNCache
from lichessbot.engine.evaluator import EvalRequest, Evaluation

__all__ = ["FakeEvaluator"]


class FakeEvaluator:
    """``evaluate(requests) -> list[Evaluation]`` without a network; ``cache`` is a real NNCache."""

    def __init__(self, value: float = 0.0, draw: float = 0.2, cache_size: int = 0,
                 prior_fn: Callable[[Sequence[chess.Move]], np.ndarray] | None = None) -> None:
        self.value = value
        self.draw = draw
        self.cache = NNCache(cache_size)
        self.prior_fn = prior_fn
        self.evaluations = 0
        self.batches: list[int] = []

    def evaluate(self, requests: Sequence[EvalRequest], *, lookup: bool = True) -> list[Evaluation]:
        """Every request evaluated (the cache is written, never read: ``lookup`` changes nothing)."""
        out = []
        q, d = self.value, self.draw
        wdl = ((1 + q - d) / 2, d, (1 - q - d) / 2)
        for req in requests:
            n = len(req.moves)
            pri = self.prior_fn(req.moves) if self.prior_fn else np.full(n, 1.0 / n if n else 0.0, np.float32)
            ev = Evaluation(priors=pri, wdl=wdl, q=q, m=0.0)
            self.cache.put(req.key, ev)
            out.append(ev)
        self.evaluations += len(requests)
        self.batches.append(len(requests))
        return out
