"""The one interface of whatever runs the network: :class:`NetworkRunner`, :class:`NetInfo`, :class:`NetOutputs`.

Everything that evaluates positions for the search has this shape: the onnxruntime
:class:`~lichessbot.neural.evaluator.Evaluator` (CPU, CUDA, TensorRT), the Triton client
(:class:`~lichessbot.neural.triton.TritonEvaluator`), the evaluation service that merges the batches of all
games (:class:`~lichessbot.neural.service.EvalService`) and the test and bench stand-ins
(:mod:`lichessbot.diagnostics.fake_net`). The search reads what it needs from :attr:`NetworkRunner.info`
explicitly; nothing is guessed with ``getattr`` defaults.

The network's tensors follow lc0 src/neural/onnx/converter.cc (input ``/input/planes`` [B, 112, 8, 8];
outputs policy logits [B, 1858], WDL [B, 3] or value [B, 1], moves-left [B, 1]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from lichessbot import _core

__all__ = ["COMPACT_BYTES", "NetInfo", "NetOutputs", "NetworkRunner", "empty_outputs"]

#: Bytes of one position in the compact input form (lichessbot/neural/compact.py; the core's
#: ``COMPACT_SIZE``): 112 little-endian u64 masks, then 112 little-endian f32 values.
COMPACT_BYTES = 112 * 12


class NetOutputs(NamedTuple):
    """The network's outputs for B positions (frozen; fields by name).

    ``logits``: float32 [B, 1858] raw policy logits in lc0's policy index order (the search core applies the
    softmax at the policy temperature); ``wdl``: float32 [B, 3] win, draw, loss probabilities from the side
    to move's view (a scalar-value network gives W = (1+q)/2, D = 0, L = (1-q)/2, as lc0
    src/neural/backends/onnx/network_onnx.cc); ``mlh``: float32 [B] moves left (plies) or None.
    """

    logits: np.ndarray
    wdl: np.ndarray
    mlh: np.ndarray | None

    def rows(self, start: int, stop: int) -> NetOutputs:
        """Rows ``start:stop`` of every output (views)."""
        return NetOutputs(self.logits[start:stop], self.wdl[start:stop],
                          None if self.mlh is None else self.mlh[start:stop])

    def copy_into(self, out: NetOutputs | None) -> NetOutputs:
        """These B rows copied into the first B rows of ``out`` (the caller's buffers, no allocation) and
        returned as views of them; into new arrays when ``out`` is None. Without a moves-left buffer in
        ``out`` the copy has no moves-left output."""
        b = len(self.logits)
        if out is None:
            return NetOutputs(self.logits.copy(), self.wdl.copy(), None if self.mlh is None else self.mlh.copy())
        np.copyto(out.logits[:b], self.logits)
        np.copyto(out.wdl[:b], self.wdl)
        if self.mlh is None or out.mlh is None:
            return NetOutputs(out.logits[:b], out.wdl[:b], None)
        np.copyto(out.mlh[:b], self.mlh)
        return NetOutputs(out.logits[:b], out.wdl[:b], out.mlh[:b])


def empty_outputs(batch: int, mlh: bool) -> NetOutputs:
    """Zeroed float32 output buffers for ``batch`` positions (a caller's ``out=`` buffers)."""
    return NetOutputs(np.zeros((batch, 1858), np.float32), np.zeros((batch, 3), np.float32),
                      np.zeros(batch, np.float32) if mlh else None)


@dataclass(frozen=True)
class NetInfo:
    """What a search needs to know about the runner it uses (read once, when the searcher is built).

    ``name``: the network's short name; ``input_format``: lc0's input format of its planes (1, 2, 3, 4, 5,
    132, 133); ``has_wdl``: a WDL head (False: a scalar value head); ``has_mlh``: a moves-left head;
    ``provider``: where it runs (an onnxruntime provider name, "triton", "fake", ...); ``minibatch``: the
    search minibatch when ``MinibatchSize`` is 0 (positions); ``concurrency``: batches the runner evaluates
    at once; ``inflight``: batches one search keeps at the runner (its pipeline depth), >= 1;
    ``max_batch``: the most positions one call should carry (the evaluation service merges up to it);
    ``compact``: the runner takes the compact input (uint8 [B, 1344], :mod:`lichessbot.neural.compact`)
    instead of the float32 planes [B, 112, 8, 8] (:meth:`input_shape`); ``warning``: why the network does not
    run where the user asked (a GPU that did not start or failed; None: it does), shown once by UCI.
    """

    name: str
    input_format: int
    has_wdl: bool
    has_mlh: bool
    provider: str
    minibatch: int
    concurrency: int
    inflight: int
    max_batch: int
    compact: bool = False
    warning: str | None = None

    def input_shape(self) -> tuple[tuple[int, ...], type]:
        """The shape of one position's input and its dtype: ((112, 8, 8), float32), or ((1344,), uint8)
        for the compact form."""
        return ((COMPACT_BYTES,), np.uint8) if self.compact else ((112, 8, 8), np.float32)

    @property
    def gpu(self) -> bool:
        """True on CUDA or TensorRT (onnxruntime's GPU providers) and on the PyTorch runner's CUDA."""
        return self.provider in ("CUDAExecutionProvider", "TensorrtExecutionProvider", "torch-cuda")


@runtime_checkable
class NetworkRunner(Protocol):
    """Runs the network for the search. Thread-safe: many searches call ``run`` at once.

    ``search_cache`` is the process's NN cache (:class:`lichessbot._core.NNCache`), shared by every search
    over this runner.
    """

    search_cache: _core.NNCache

    @property
    def info(self) -> NetInfo:
        """The runner's :class:`NetInfo`."""
        ...

    def run(self, planes: np.ndarray, *, game: str = "", priority: int = 0,
            out: NetOutputs | None = None) -> NetOutputs:
        """The outputs for float32 ``planes`` [B, 112, 8, 8] (or the compact uint8 [B, 1344] when
        ``info.compact``).

        ``game``: who asks (the evaluation service's fairness and stats; others ignore it); ``priority``:
        0 a running clock, 1 pondering. ``out``: buffers of at least B rows to write the outputs into (no
        allocation per call); the returned arrays are then views of their first B rows. Without ``out``
        the returned arrays belong to the caller. Raises ValueError for planes of another shape,
        :class:`~lichessbot.errors.NetworkError` when the network cannot be run.
        """
        ...

    def clear_cache(self) -> None:
        """Empty the NN cache (lc0 clears it on ``ucinewgame``)."""
        ...
