"""The evaluation service: one per process, it merges the network batches of every search into one call.

Every game's :class:`~lichessbot.search.Searcher` submits its leaf batches (planes already written by
the search core) through :meth:`EvalService.run`, which blocks until that batch's rows come back. The
service is a :class:`~lichessbot.neural.runner.NetworkRunner` over another one (the process's evaluator),
so a search cannot tell it from the evaluator itself. Worker
threads (one per batch the evaluator runs at once, :attr:`Evaluator.concurrency`) take what is waiting,
merge it into one network call of at most ``max_batch`` positions, run it and hand every search its
rows. With one search running nothing waits: a batch runs as soon as a worker is free.

Order of service: games whose clock runs (priority 0) before pondering games (priority 1); among equals
the game served longest ago first, so no game's batches wait behind another game's twice in a row; then
arrival order. A request is never split.

Stats (:meth:`EvalService.stats`): batches run, mean fill (positions per call), mean games per call, mean
queue wait (milliseconds) and each game's share of the positions, for logs, ``bench`` and the status page.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from lichessbot import _core
from lichessbot.neural.runner import NetInfo, NetOutputs, NetworkRunner, empty_outputs

__all__ = ["EvalService", "GPU_MAX_BATCH", "GPU_WORKERS", "ServiceStats"]


class ServiceStats(TypedDict):
    """The evaluation service's counters (:meth:`EvalService.stats`)."""

    batches: int            # network calls
    mean_fill: float        # positions per call
    mean_games: float       # games per call
    mean_wait_ms: float     # queue wait per request, milliseconds
    share: dict[str, float]  # game -> its fraction of the positions
    max_batch: int          # positions a call takes at most
    workers: int            # calls at once

#: Positions per merged call on CUDA/TensorRT (lc0's onnx backend maximum; our TensorRT profile).
GPU_MAX_BATCH = 1024
#: Worker threads on a GPU (or any runner that is not the CPU): one call runs while the next is staged.
GPU_WORKERS = 2


@dataclass(eq=False)
class _Request:
    planes: np.ndarray
    game: str
    priority: int
    seq: int
    t: float
    out: NetOutputs | None
    done: threading.Event = field(default_factory=threading.Event)
    result: NetOutputs | None = None
    error: BaseException | None = None


class EvalService:
    """Merges the batches of every search in the process into network calls (see the module docs).

    ``evaluator``: the :class:`~lichessbot.neural.runner.NetworkRunner` that runs the merged calls (the
    process's evaluator). ``max_batch``: positions per merged call (default: :data:`GPU_MAX_BATCH` on a GPU
    provider, else the runner's ``info.max_batch`` -- on the CPU its minibatch: a merged call runs on one
    core while the other workers wait, so calls of one ~30 ms minibatch keep every core busy, and a bigger
    batch is no faster per position).
    """

    def __init__(self, evaluator: NetworkRunner, *, max_batch: int | None = None) -> None:
        self.evaluator = evaluator
        inner = evaluator.info
        #: The NN cache of the runner (every search over the service shares it).
        self.search_cache: _core.NNCache = evaluator.search_cache
        cpu = inner.provider == "CPUExecutionProvider"
        self.max_batch = int(max_batch or (GPU_MAX_BATCH if inner.gpu else inner.max_batch))
        #: Worker threads. On the CPU one per batch the evaluator runs at once (each runs on a core); on a
        #: GPU two, so that the next call's positions are staged while the current call runs (a worker
        #: stages only when half a call is waiting or no other worker is busy).
        self.concurrency = max(1, inner.concurrency) if cpu else GPU_WORKERS
        #: Batches one search keeps at the service: one more than the workers, so that while a call runs
        #: every game already has its next batch waiting to be merged into the following call.
        self.inflight = self.concurrency + 1
        self._info = NetInfo(name=inner.name, input_format=inner.input_format, has_wdl=inner.has_wdl,
                             has_mlh=inner.has_mlh, provider=inner.provider, minibatch=inner.minibatch,
                             concurrency=self.concurrency, inflight=self.inflight, max_batch=self.max_batch,
                             compact=inner.compact)
        self._busy = 0
        self._cv = threading.Condition()
        self._queue: list[_Request] = []
        self._seq = itertools.count()
        self._served = itertools.count(1)
        self._last_served: dict[str, int] = {}
        self._closed = False
        self._stats_lock = threading.Lock()
        self._batches = 0
        self._rows = 0
        self._requests = 0
        self._games_sum = 0
        self._wait_sum = 0.0
        self._share: Counter[str] = Counter()
        self._workers = [threading.Thread(target=self._loop, name=f"lichessbot-eval-{k}", daemon=True)
                         for k in range(self.concurrency)]
        for w in self._workers:
            w.start()

    @property
    def info(self) -> NetInfo:
        """The runner's :class:`~lichessbot.neural.runner.NetInfo`, with the service's workers as
        ``concurrency``, its ``inflight`` and its ``max_batch``."""
        return self._info

    def clear_cache(self) -> None:
        """Empty the NN cache (the runner's)."""
        self.evaluator.clear_cache()

    # ----------------------------------------------------------------------------------------------
    def run(self, planes: np.ndarray, *, game: str = "", priority: int = 0,
            out: NetOutputs | None = None) -> NetOutputs:
        """The network's outputs for ``planes`` float32 ``[B, 112, 8, 8]``: logits float32 ``[B, 1858]``,
        wdl float32 ``[B, 3]``, mlh float32 ``[B]`` or None; into ``out``'s first B rows when given (no
        allocation per call). Blocks until the merged call returns; re-raises its error. ``game``: who asks
        (fairness, stats); ``priority``: 0 a running clock, 1 pondering.
        Raises RuntimeError once the service is closed."""
        req = _Request(planes, game, priority, next(self._seq), time.perf_counter(), out)
        with self._cv:
            if self._closed:
                raise RuntimeError("the evaluation service is closed")
            self._queue.append(req)
            self._cv.notify()
        req.done.wait()
        if req.error is not None:
            raise req.error
        return req.result  # type: ignore[return-value]

    def close(self) -> None:
        """Stop the workers (requests still queued fail with RuntimeError)."""
        with self._cv:
            self._closed = True
            waiting, self._queue = self._queue, []
            self._cv.notify_all()
        for req in waiting:
            req.error = RuntimeError("the evaluation service is closed")
            req.done.set()
        for w in self._workers:
            w.join(timeout=5)

    # ----------------------------------------------------------------------------------------------
    def _take(self) -> list[_Request]:
        """The requests of the next call (the caller holds the lock and the queue is not empty)."""
        order = sorted(self._queue, key=lambda r: (r.priority, self._last_served.get(r.game, 0), r.seq))
        taken: list[_Request] = []
        rows = 0
        for r in order:
            if taken and rows + len(r.planes) > self.max_batch:
                continue
            taken.append(r)
            rows += len(r.planes)
        served = next(self._served)
        for r in taken:
            self._queue.remove(r)
            self._last_served[r.game] = served
        return taken

    def _loop(self) -> None:
        staging: np.ndarray | None = None
        # This worker's output buffers: the merged call's outputs land here, then each request's rows are
        # copied into its own buffers (no buffer is shared between two calls in flight).
        outs = empty_outputs(self.max_batch, self._info.has_mlh)
        while True:
            with self._cv:
                while not self._closed and (not self._queue or (
                        self._busy and sum(len(r.planes) for r in self._queue) < self.max_batch // 2)):
                    self._cv.wait()
                if self._closed:
                    return
                taken = self._take()
                self._busy += 1
            now = time.perf_counter()
            sizes = [len(r.planes) for r in taken]
            total = sum(sizes)
            try:
                if len(taken) == 1:
                    planes = taken[0].planes
                else:
                    first = taken[0].planes
                    if staging is None or len(staging) < total or staging.shape[1:] != first.shape[1:]:
                        staging = np.empty((max(total, self.max_batch), *first.shape[1:]), dtype=first.dtype)
                    np.concatenate([r.planes for r in taken], axis=0, out=staging[:total])
                    planes = staging[:total]
                if len(taken) == 1 and taken[0].out is not None:
                    taken[0].result = self.evaluator.run(planes, out=taken[0].out)
                else:
                    merged = self.evaluator.run(planes, out=outs)
                    at = 0
                    for r, n in zip(taken, sizes):
                        r.result = merged.rows(at, at + n).copy_into(r.out)
                        at += n
            except BaseException as err:  # noqa: BLE001 - every waiting search gets the error
                for r in taken:
                    r.error = err
            with self._stats_lock:
                self._batches += 1
                self._rows += total
                self._requests += len(taken)
                self._games_sum += len({r.game for r in taken})
                self._wait_sum += sum(now - r.t for r in taken)
                for r, n in zip(taken, sizes):
                    self._share[r.game] += n
            for r in taken:
                r.done.set()
            with self._cv:
                self._busy -= 1
                self._cv.notify_all()

    def stats(self) -> ServiceStats:
        """batches, mean_fill (positions per call), mean_games (games per call), mean_wait_ms (queue wait
        per request, milliseconds), share ({game: fraction of the positions}), max_batch, workers."""
        with self._stats_lock:
            b, rows, reqs = self._batches, self._rows, self._requests
            return {
                "batches": b,
                "mean_fill": rows / b if b else 0.0,
                "mean_games": self._games_sum / b if b else 0.0,
                "mean_wait_ms": 1000.0 * self._wait_sum / reqs if reqs else 0.0,
                "share": {g: n / rows for g, n in self._share.items()} if rows else {},
                "max_batch": self.max_batch,
                "workers": self.concurrency,
            }

    def reset_stats(self) -> None:
        """Zero the counters."""
        with self._stats_lock:
            self._batches = self._rows = self._requests = self._games_sum = 0
            self._wait_sum = 0.0
            self._share.clear()

