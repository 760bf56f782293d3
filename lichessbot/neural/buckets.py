"""The evaluator's sessions: one onnxruntime session per batch bucket on a GPU, one session for every shape on
the CPU.

cuDNN plans a convolution for one input shape. Since onnxruntime 1.20 the CUDA Conv keeps one plan per node
and rebuilds it whenever the node's input shape changes (onnxruntime issue 23006, open: 15x slower when
shapes interleave), so a single session fed batches of 8 and 256 in turn re-plans on almost every call.
lc0's ONNX backend fixes the batch size of a session (src/neural/backends/onnx/network_onnx.cc); here each
bucket of :data:`~lichessbot.neural.session.BATCH_BUCKETS` gets a session of its own, made on first use
(the warm-up makes them all), so each session sees one shape and plans it once. The sessions share one
host copy of the weights (:func:`~lichessbot.neural.providers.shared_initializers`); each GPU session
holds its own device copy, so the device memory of the weights is :attr:`BucketSessions.weight_bytes`
times :attr:`BucketSessions.sessions` at most (reported by the warm-up's log line and ``doctor``).

On the CPU one session runs every batch size (MLAS plans nothing per shape), as before: the bucketed
layout was not measured against it on the CPU.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import onnxruntime as ort

from lichessbot.neural.compact import MASKS_NAME, VALUES_NAME, split
from lichessbot.neural.providers import CUDA, TRT, Started, session_like, shared_initializers
from lichessbot.neural.runner import NetOutputs
from lichessbot.neural.session import BoundRunner, bucket_of

__all__ = ["BucketSessions"]


class BucketSessions:
    """The sessions of ``started`` (:func:`~lichessbot.neural.providers.start`'s result).

    ``buckets``: a session per bucket, each call padded to its bucket (else one session, no padding);
    ``binding``: run through :class:`~lichessbot.neural.session.BoundRunner` (I/O binding);
    ``input_name`` and ``outputs`` ((name, width) each, in output order); ``input_dtype`` of the planes;
    ``compact``: the compact input; ``max_batch``: positions a call may carry; ``shapes``: a set every call
    adds its padded batch size to.
    """

    def __init__(self, started: Started, *, buckets: bool, binding: bool, input_name: str,
                 outputs: Sequence[tuple[str, int]], input_dtype: type, compact: bool, max_batch: int,
                 shapes: set[int]) -> None:
        self.started = started
        self.buckets = buckets
        self.binding = binding
        self.input_name = input_name
        self.outputs = list(outputs)
        self.input_dtype = input_dtype
        self.compact = compact
        self.max_batch = max_batch
        self.shapes = shapes
        self.device = "cuda" if started.provider in (CUDA, TRT) else "cpu"
        self._shared: dict[str, ort.OrtValue] = shared_initializers(started.model) if buckets else {}
        #: The bytes of the shared weights (one host copy; a device copy per GPU session).
        self.weight_bytes = sum(v.numpy().nbytes for v in self._shared.values())
        # Key 0: the one session of every shape (no buckets). The first bucket used gets start()'s session.
        self._sessions: dict[int, ort.InferenceSession] = {} if buckets else {0: started.session}
        self._spare: ort.InferenceSession | None = started.session if buckets else None
        self._bound: dict[int, BoundRunner] = {}
        self._lock = threading.Lock()

    @property
    def sessions(self) -> int:
        """Sessions made so far."""
        return len(self._sessions)

    def rows(self, n: int) -> int:
        """The batch size a call of ``n`` positions is run at: its bucket, or ``n``."""
        return min(bucket_of(n), self.max_batch) if self.buckets else n

    def session(self, rows: int) -> ort.InferenceSession:
        """The session of batch size ``rows`` (made now when it is the first call of that bucket)."""
        key = rows if self.buckets else 0
        found = self._sessions.get(key)
        if found is not None:
            return found
        with self._lock:
            if key not in self._sessions:
                if self._spare is not None:
                    self._sessions[key], self._spare = self._spare, None
                else:
                    self._sessions[key] = session_like(self.started, self._shared)
            return self._sessions[key]

    def _runner(self, rows: int) -> BoundRunner:
        key = rows if self.buckets else 0
        runner = self._bound.get(key)
        if runner is None:
            session = self.session(rows)
            with self._lock:
                runner = self._bound.get(key)
                if runner is None:
                    runner = BoundRunner(session, self.input_name, self.outputs, self.device,
                                         rows if self.buckets else self.max_batch, input_dtype=self.input_dtype,
                                         buckets=self.buckets, compact=self.compact, shapes=self.shapes)
                    self._bound[key] = runner
        return runner

    @property
    def pinned(self) -> bool:
        """True when the bound buffers are page-locked."""
        return any(r.pinned for r in list(self._bound.values()))

    def run(self, planes: np.ndarray, out: NetOutputs | None) -> list[np.ndarray]:
        """The raw outputs (output order, B rows each) for ``planes`` [B, ...]; into ``out`` on the bound path
        when given. Raises ValueError past ``max_batch``; what onnxruntime raises otherwise."""
        b = len(planes)
        if b > self.max_batch:
            raise ValueError(f"{b} positions, a call takes at most {self.max_batch}")
        rows = self.rows(b)
        if self.binding:
            return self._runner(rows).run(planes, out)
        if rows > b:  # the bound path's padding, so the session sees its one shape here too
            planes = np.concatenate([planes, np.zeros((rows - b, *planes.shape[1:]), planes.dtype)])
        self.shapes.add(rows)  # a set's add is atomic under the GIL
        session = self.session(rows)
        names = [name for name, _ in self.outputs]
        if self.compact:
            masks, values = split(planes)
            outs = session.run(names, {MASKS_NAME: masks, VALUES_NAME: values})
        else:
            outs = session.run(names, {self.input_name: np.ascontiguousarray(planes, self.input_dtype)})
        return [np.asarray(o)[:b] for o in outs]

    def close(self) -> None:
        """Free the bound path's page-locked buffers (no call may be in flight)."""
        for runner in list(self._bound.values()):
            runner.close()
