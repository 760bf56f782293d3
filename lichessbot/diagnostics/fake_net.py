"""A zero-cost network with the :class:`~lichessbot.neural.runner.NetworkRunner` interface the search uses.

Used by ``lichessbot bench search`` to measure the tree's own cost per playout (the core still writes
every leaf's planes and maps the priors through the policy map, as for a real network), and by tests.
The logits are all 0 (uniform priors) unless ``logits`` gives one per lc0 policy index, the value is
``value`` (W - L, side to move's view) with draw probability ``draw``.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from lichessbot import _core
from lichessbot.neural.runner import NetInfo, NetOutputs
from lichessbot.score import Score

__all__ = ["FakeEvaluator", "GpuModelEvaluator"]


class FakeEvaluator:
    """``run(planes) -> NetOutputs(logits, wdl, None)`` without a network; ``search_cache`` is a real NN
    cache. ``provider``, ``concurrency`` and ``max_batch`` go into its :attr:`info` (a test may pose as the
    CPU provider to get one evaluation-service worker)."""

    input_format = 1
    provider = "fake"
    concurrency = 1
    max_batch = 1024

    def __init__(self, value: float = 0.0, draw: float = 0.2, cache_size: int = 0,
                 logits: np.ndarray | None = None) -> None:
        self.value = value
        self.draw = draw
        self.search_cache = _core.NNCache(cache_size)
        self.evaluations = 0
        self.batches: list[int] = []
        self._row = np.zeros(1858, dtype=np.float32) if logits is None else np.asarray(logits, np.float32)
        self._logits = np.zeros((0, 1858), dtype=np.float32)
        self._wdl_row = np.array(Score.from_wl_d(value, draw).wdl, dtype=np.float32)

    @property
    def info(self) -> NetInfo:
        """Input format 1, WDL, no moves-left head; minibatch 256 (no batch cost, as on a GPU)."""
        return NetInfo(name="fake", input_format=self.input_format, has_wdl=True, has_mlh=False,
                       provider=self.provider, minibatch=256, concurrency=self.concurrency,
                       inflight=self.concurrency, max_batch=self.max_batch)

    def run(self, planes: np.ndarray, *, game: str = "", priority: int = 0,
            out: NetOutputs | None = None) -> NetOutputs:
        """Logits float32 [B, 1858] (zeros or the fixed row), WDL float32 [B, 3] (constant), no moves-left head
        (``out`` is not written: the fake's arrays are fresh or constant)."""
        b = len(planes)
        if len(self._logits) < b:
            self._logits = np.ascontiguousarray(np.broadcast_to(self._row, (b, 1858)))
        self.evaluations += b
        self.batches.append(b)
        return NetOutputs(self._logits[:b], np.broadcast_to(self._wdl_row, (b, 3)).copy(), None)

    def clear_cache(self) -> None:
        """Empty the NN cache."""
        self.search_cache.clear()


class GpuModelEvaluator(FakeEvaluator):
    """A zero-cost network that models one GPU for ``bench search --games``: calls run one at a time,
    each taking ``fixed`` seconds plus ``per_position`` seconds per position (default 10 ms + 2 µs), up
    to ``max_batch`` (1024) positions a call."""

    provider = "gpu-model"

    def __init__(self, fixed: float = 0.010, per_position: float = 2e-6, max_batch: int = 1024, *,
                 value: float = 0.0, draw: float = 0.2, cache_size: int = 0,
                 logits: np.ndarray | None = None) -> None:
        super().__init__(value=value, draw=draw, cache_size=cache_size, logits=logits)
        self.fixed = fixed
        self.per_position = per_position
        self.max_batch = max_batch
        self._lock = threading.Lock()

    def run(self, planes: np.ndarray, *, game: str = "", priority: int = 0,
            out: NetOutputs | None = None) -> NetOutputs:
        """As :meth:`FakeEvaluator.run`, after holding the one "GPU" for the modelled time.
        Raises ValueError past ``max_batch`` positions."""
        if len(planes) > self.max_batch:
            raise ValueError(f"{len(planes)} positions in one call, the model takes at most {self.max_batch}")
        with self._lock:
            time.sleep(self.fixed + self.per_position * len(planes))
            return super().run(planes)
