"""The network evaluator: the onnxruntime session that runs batches of planes, and the search's NN cache.

One :class:`Evaluator` per process is shared by every game and search thread; it is a
:class:`~lichessbot.neural.runner.NetworkRunner`. ``run`` is thread-safe: onnxruntime's
``InferenceSession.run`` may be called concurrently and releases the GIL while it computes, and the bound
path (CUDA) gives every call in flight its own buffers (:class:`~lichessbot.neural.session.BoundRunner`).
It returns the raw outputs; priors (the policy map and the softmax at the policy temperature) are the
search core's, or :mod:`lichessbot.neural.position_eval`'s outside the search. Values follow lc0
src/neural/backends/onnx/network_onnx.cc: W, D, L from the side to move's view; a scalar-value net gives
W = (1+q)/2, D = 0, L = (1-q)/2.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import numpy as np
import structlog

from lichessbot import _core
from lichessbot.config import EngineConfig
from lichessbot.errors import NetworkError
from lichessbot.neural import gpu
from lichessbot.neural.buckets import BucketSessions
from lichessbot.neural.compact import compact_model, compact_of
from lichessbot.neural.int8_cache import int8_copy
from lichessbot.neural.network import (
    INPUT_NAME,
    MLH_NAME,
    POLICY_NAME,
    VALUE_NAME,
    WDL_NAME,
    Network,
)
from lichessbot.neural.providers import (
    BACKENDS,
    CPU,
    CUDA,
    CUDA_OPTIONS,
    PRECISIONS,
    TRT,
    OnnxBackend,
    ProviderFailure,
    Started,
    reason_of,
    select_providers,
    start,
)
from lichessbot.neural.runner import COMPACT_BYTES, NetInfo, NetOutputs
from lichessbot.neural.session import BATCH_BUCKETS, float16_model

__all__ = ["BACKENDS", "CUDA_OPTIONS", "PRECISIONS", "Evaluator", "from_config", "select_providers"]

log = structlog.get_logger("lichessbot.neural")

#: Minibatch on a GPU provider (lc0's CUDA backends suggest 256 and more).
GPU_MINIBATCH = 256
#: On the CPU the default minibatch is what the network evaluates in about this many seconds (ours:
#: keeps ``stop`` -> ``bestmove`` within one small batch while the batch still amortises the calls).
CPU_BATCH_SECONDS = 0.030
#: With ``threads`` 0 on the CPU, batches at once: one per core, at most this many (ours).
CPU_MAX_CONCURRENCY = 8
#: What marks an error of a run as the GPU's (CUDA, cuDNN, cuBLAS, TensorRT, device memory): the network then
#: moves to the CPU (:meth:`Evaluator.run`); any other error of a bound run drops the I/O binding.
_GPU_ERROR = re.compile(r"CUDA|CUDNN|cuDNN|CUBLAS|cuBLAS|TensorRT|\bTRT\b|out of memory", re.IGNORECASE)
#: lc0's maximum batch for the ONNX backend (src/neural/backends/onnx/network_onnx.cc); TensorRT profile.
MAX_BATCH = 1024


class Evaluator:
    """Evaluates positions with one network; shared by all games and threads (thread-safe).

    ``backend``: "auto" (CUDA > CPU), "tensorrt" (TensorRT > CUDA > CPU), "cuda" or "cpu": each provider is
    started on its own with its own options and the first that really starts runs the network, the CPU at
    worst (:func:`lichessbot.neural.providers.start`); :attr:`failures` keeps every provider's reason.
    ``precision``: "auto" (fp16 on a GPU with tensor cores, fp32 on other GPUs:
    :func:`~lichessbot.neural.providers.resolve_precision`; int8 on the CPU: :meth:`_int8_model`), "fp32",
    "tf32", "fp16" or "int8" (the CPU: an int8 copy made at start and cached, :mod:`lichessbot.neural.int8_cache`;
    :attr:`precision_run` is what runs).
    ``device``: the CUDA
    device number (``engine.device``, lc0's ``gpu=``). ``threads``: on the CPU, batches evaluated side by
    side, one thread each (0 = one per core, at most :data:`CPU_MAX_CONCURRENCY`); on a GPU provider,
    onnxruntime intra-op threads of each session (0: one). ``cache_size``: entries of the search's NN cache (0
    disables it). ``io_binding``: run through :class:`~lichessbot.neural.session.BoundRunner` (default: on
    CUDA and TensorRT; True forces it, e.g. to test the path on the CPU). ``buckets``: pad every call to a
    batch bucket (default: on a GPU provider). ``compact``: the session takes the compact input (uint8
    [B, 1344], expanded by an ONNX prologue: :mod:`lichessbot.neural.compact`), and so must every ``run``.

    When a GPU provider was asked for (any backend but "cpu") and did not start, :attr:`gpu_warning` holds
    one warning with every provider's reason and the fix (:func:`lichessbot.neural.gpu.advice`), logged at
    start-up -- in ``auto`` only when an NVIDIA GPU is visible or the process runs in a container made for
    one (:func:`lichessbot.neural.gpu.container_wants_gpu`: Docker without ``--gpus``), so a machine
    without a GPU runs on the CPU quietly (an info line lists the reasons).
    Raises NetworkError when onnxruntime cannot load the model on the CPU either, or for a bad backend or
    precision.
    """

    def __init__(self, network: Network, *, backend: str = OnnxBackend.AUTO, threads: int = 0,
                 cache_size: int = 2_000_000, precision: str = "fp32", device: int = 0, io_binding: bool | None = None,
                 buckets: bool | None = None, compact: bool = False) -> None:
        self.network = network
        #: The precision asked for, and what runs ("tf32" for TensorRT's fp32, "fp32" for tf32 on the CPU).
        self.precision = precision
        #: Where the int8 copy was read from or written to (None: not int8, or no folder took it), and
        #: whether this start quantized it (False: read from the cache).
        self.int8_path: Path | None = None
        self.int8_built = False
        #: The session takes the compact input (uint8 [B, 1344]) instead of the planes.
        self.compact = compact
        self._model = compact_model(network.model) if compact else network.model
        #: The NN cache of every search of the process (the Rust core's, keyed by position hash).
        self.search_cache = _core.NNCache(cache_size)
        started = start(self._model, backend=backend, precision=precision, device=device, threads=threads,
                        float16=float16_model, int8=self._int8_model, source=network.source)
        self._session = started.session
        #: The provider that runs the network, e.g. "CUDAExecutionProvider".
        self.provider: str = started.provider
        self.precision_run = started.precision
        #: The CUDA device number asked for (used by CUDA and TensorRT).
        self.device = device
        #: The options the running provider was created with (onnxruntime's provider options, as strings).
        self.provider_options: dict[str, str] = started.options
        #: Every provider tried before the one that runs, with its reason (empty when the first started).
        self.failures: list[ProviderFailure] = started.failures
        #: Start-up notes that are not failures (e.g. TensorRT running without its cache).
        self.notes: list[str] = started.notes
        #: Network batches evaluated at once. On the CPU, ``threads`` > 1 runs that many batches side by
        #: side on one intra-op thread each (onnxruntime's ``run`` is thread-safe): measured here with
        #: maia-1100 at batch 48 on 2 cores, 2 concurrent single-thread runs gave 2,062 evals/s where one
        #: run over 2 threads gave 1,622 (as lc0 runs one batch per search thread); ``threads`` 0 means one
        #: per core. Elsewhere 1.
        self.concurrency = 1
        if self.provider == CPU:
            self.concurrency = threads or min(CPU_MAX_CONCURRENCY, os.cpu_count() or 1)
        #: Why the GPU the user asked for is not used: every provider's reason and the fix (None: a GPU
        #: provider runs, backend cpu, or auto on a machine with no GPU in sight).
        self.gpu_warning = self._fallback_warning(backend)
        if self.gpu_warning:  # loud in every mode: the user has a GPU (or asked for one) and it is idle
            log.warning(self.gpu_warning, backend=backend)
        elif self.failures:
            log.debug("no GPU provider started; running on the CPU", backend=backend,
                     reasons="; ".join(f"{f.provider}: {f.reason}" for f in self.failures))
        log.info("network ready", network=network.name, provider=self.provider, backend=backend,
                 precision=self.precision_run, device=device, input_format=self.input_format,
                 wdl=network.has_wdl, mlh=network.has_mlh, threads=threads or "default",
                 concurrency=self.concurrency, cache_size=cache_size)
        inp = {i.name: i for i in self._session.get_inputs()}.get(INPUT_NAME)
        self._input_dtype = np.float16 if inp is not None and inp.type == "tensor(float16)" else np.float32
        self._outputs = [POLICY_NAME, WDL_NAME if network.has_wdl else VALUE_NAME]
        if network.has_mlh:
            self._outputs.append(MLH_NAME)
        #: Batch sizes the sessions have been given (after padding: bound or plain runs), and those the
        #: warm-up gave them (:attr:`shapes_planned`).
        self.shapes_sent: set[int] = set()
        on_gpu = self.provider in (CUDA, TRT)
        #: Calls are padded to :data:`~lichessbot.neural.session.BATCH_BUCKETS`, each bucket run by a session
        #: of its own (default: on a GPU; :mod:`lichessbot.neural.buckets`).
        self.buckets = on_gpu if buckets is None else buckets
        binding = bool(io_binding or (io_binding is None and on_gpu) or (self.buckets and io_binding is None))
        self._runs = self._sessions_of(started, binding)
        #: Why the GPU stopped during a run and the network moved to the CPU (None: it did not).
        self.runtime_failure: str | None = None
        self._switch = threading.Lock()
        self._default_minibatch: int | None = None
        self.shapes_planned: frozenset[int] = frozenset()

    def _int8_model(self, model: bytes) -> bytes:
        """The int8 copy of the network (cached: :func:`~lichessbot.neural.int8_cache.int8_copy`), with the
        compact prologue when the session takes the compact input. Precision auto runs int8 on the CPU: at
        10+0.1 with maia-1900 the int8 copy scored 67.5 % against fp32 over 100 games (docs/engine.md, "int8"),
        issue 50's rule for the CPU default; under auto a network onnxruntime cannot quantize gives ``model``
        back (fp32) with a warning, under int8 the NetworkError is raised."""
        try:
            copy = int8_copy(self.network)
        except NetworkError as err:
            if self.precision == "int8":
                raise
            log.warning("precision auto runs fp32 on the CPU: no int8 copy of this network", error=str(err))
            return model
        self.int8_path, self.int8_built = copy.path, copy.built
        return compact_model(copy.model) if self.compact else copy.model

    def _sessions_of(self, started: Started, binding: bool) -> BucketSessions:
        widths = {POLICY_NAME: 1858, WDL_NAME: 3, VALUE_NAME: 1, MLH_NAME: 1}
        return BucketSessions(started, buckets=self.buckets, binding=binding, input_name=INPUT_NAME,
                              outputs=[(o, widths[o]) for o in self._outputs], input_dtype=self._input_dtype,
                              compact=self.compact, max_batch=MAX_BATCH, shapes=self.shapes_sent)

    @property
    def _bound(self) -> BucketSessions | None:
        """The sessions when they run through I/O binding (None: plain runs)."""
        return self._runs if self._runs.binding else None

    def _fallback_warning(self, backend: str) -> str | None:
        if (not self.failures or backend == OnnxBackend.CPU
                or self.provider in (CUDA, TRT) and backend != OnnxBackend.TENSORRT):
            return None
        gpus = gpu.nvidia_gpus()
        container = gpu.in_container()
        if backend == OnnxBackend.AUTO and not gpus and not gpu.container_wants_gpu():
            return None  # a machine without an NVIDIA GPU: the CPU is what the user has
        wanted = BACKENDS[backend][0]
        where = f" ({gpus[0].name})" if gpus else ""
        reasons = "; ".join(f"{f.provider}: {f.reason}" for f in self.failures)
        fix = gpu.advice([f.reason for f in self.failures], gpus=gpus, container=container)
        lead = ("an NVIDIA GPU is present" + where if gpus else "no NVIDIA GPU is visible") + \
            f" but {wanted} did not start, the network runs on {self.provider}"
        return f"{lead}: {reasons}. Fix: {fix}"

    @property
    def input_format(self) -> int:
        """lc0's input format of the network's planes."""
        return self.network.input_format

    @property
    def info(self) -> NetInfo:
        """The :class:`~lichessbot.neural.runner.NetInfo` of this evaluator (its minibatch is timed once on
        the CPU, see :meth:`default_minibatch`)."""
        return NetInfo(name=self.network.name, input_format=self.network.input_format, has_wdl=self.network.has_wdl,
                       has_mlh=self.network.has_mlh, provider=self.provider, minibatch=self.default_minibatch(),
                       concurrency=self.concurrency, inflight=self.concurrency,
                       max_batch=MAX_BATCH if self.provider in (CUDA, TRT) else self.default_minibatch(),
                       compact=self.compact, warning=self.gpu_warning)

    def neutral_inputs(self, n: int) -> np.ndarray:
        """``n`` copies of a neutral position (no pieces, the all-ones and castling planes set) in this
        evaluator's input form: for warm-ups and timings."""
        planes = np.zeros((n, 112, 8, 8), dtype=np.float32)
        planes[:, 104:108] = 1.0
        planes[:, 111] = 1.0
        return compact_of(planes) if self.compact else planes

    def warm_up(self, max_batch: int = MAX_BATCH) -> float:
        """Run every batch shape the evaluator can be sent before the first move needs it: with ``buckets``
        (on a GPU) each bucket up to ``max_batch`` once, in its own session -- cuDNN plans its convolutions
        per input shape (onnxruntime's cuDNN-frontend path, onnxruntime issue #23006),
        TensorRT picks its kernels, the device arena grows -- and the minibatch timing on the CPU.
        :attr:`shapes_planned` holds the shapes run. Logs "network warmed up" with the seconds it took and
        returns them."""
        t = time.perf_counter()
        shapes: list[int] = []
        if self.buckets:
            shapes = [b for b in BATCH_BUCKETS if b <= max_batch]
            planes = self.neutral_inputs(shapes[-1] if shapes else 1)
            for b in shapes:
                self.run(planes[:b])
                if not self.buckets:  # the GPU failed and the network moved to the CPU: no bucket to plan
                    break
        minibatch = self.default_minibatch()
        seconds = time.perf_counter() - t
        self.shapes_planned = frozenset(self.shapes_sent)
        log.info("network warmed up", provider=self.provider, seconds=round(seconds, 3),
                 buckets=shapes or "none", minibatch=minibatch, pinned=self._runs.pinned,
                 sessions=self._runs.sessions, weights_mib=round(self._runs.weight_bytes / 2**20, 1))
        return seconds

    @property
    def sessions(self) -> tuple[int, int]:
        """(sessions made, bytes of the weights they share): a GPU holds at most their product for the
        weights (:mod:`lichessbot.neural.buckets`)."""
        return self._runs.sessions, self._runs.weight_bytes

    def unplanned_shapes(self) -> list[int]:
        """Batch sizes sent to the session since :meth:`warm_up` that it did not run: each cost a plan (cuDNN,
        TensorRT) in the middle of a search on a GPU. [] is the goal."""
        return sorted(self.shapes_sent - self.shapes_planned)

    def default_minibatch(self) -> int:
        """The search minibatch when ``MinibatchSize`` is 0: :data:`GPU_MINIBATCH` on CUDA/TensorRT; on the
        CPU the batch one thread evaluates in about :data:`CPU_BATCH_SECONDS` (timed once, on a batch of
        32 after a warm-up), rounded to a multiple of 8 from 8 to 256."""
        if self._default_minibatch is None:
            if self.provider != CPU:
                self._default_minibatch = GPU_MINIBATCH
            else:
                planes = self.neutral_inputs(32)
                self.run(planes[:8])
                best = float("inf")
                for _ in range(2):
                    t = time.perf_counter()
                    self.run(planes)
                    best = min(best, time.perf_counter() - t)
                rate = 32 / max(best, 1e-6)
                self._default_minibatch = int(min(256, max(8, round(CPU_BATCH_SECONDS * rate / 8) * 8)))
            log.info("default minibatch", provider=self.provider, minibatch=self._default_minibatch)
        return self._default_minibatch

    def clear_cache(self) -> None:
        """Empty the NN cache (lc0 clears its cache on ``ucinewgame``)."""
        self.search_cache.clear()

    # ----------------------------------------------------------------------------------------------
    def run(self, planes: np.ndarray, *, game: str = "", priority: int = 0,
            out: NetOutputs | None = None) -> NetOutputs:
        """Run the network on ``planes`` float32 [B, 112, 8, 8] (``game`` and ``priority`` are the evaluation
        service's; ignored here).

        Returns raw logits float32 [B, 1858], WDL float32 [B, 3] (side to move; computed from the value
        head for scalar nets) and moves-left float32 [B] (plies) or None; into ``out``'s first B rows when
        given (:meth:`lichessbot.neural.runner.NetworkRunner.run`). Thread-safe. Raises ValueError for
        planes of another shape.
        """
        if self.compact:
            if planes.ndim != 2 or planes.shape[1] != COMPACT_BYTES or planes.dtype != np.uint8:
                raise ValueError(f"compact inputs must be uint8 [B, {COMPACT_BYTES}], got {planes.dtype} "
                                 f"{list(planes.shape)}")
        elif planes.ndim != 4 or planes.shape[1:] != (112, 8, 8):
            raise ValueError(f"planes must be [B, 112, 8, 8], got {list(planes.shape)}")
        runs = self._runs
        direct = out if out is not None and runs.binding and self.network.has_wdl else None
        try:
            outs = runs.run(planes, direct)
        except ValueError:
            raise
        except Exception as err:  # noqa: BLE001 - onnxruntime raises RuntimeError subclasses and others
            text = str(err).strip() or type(err).__name__
            if runs is not self._runs:  # another call moved the network meanwhile: run there
                return self.run(planes, game=game, priority=priority, out=out)
            if runs.device == "cuda" and _GPU_ERROR.search(text):
                self._to_cpu(text)
            elif runs.binding:  # onnxruntime refused the binding: plain runs from now on
                runs.binding = False
                log.error("I/O binding failed; the network runs without it from now on", provider=self.provider,
                          error=text.splitlines()[0][:300])
            elif runs.device == "cuda":
                self._to_cpu(text)
            else:
                raise
            return self.run(planes, game=game, priority=priority, out=out)
        logits = np.asarray(outs[0], dtype=np.float32)
        if self.network.has_wdl:
            wdl = np.asarray(outs[1], dtype=np.float32)
        else:
            v = np.asarray(outs[1], dtype=np.float32).reshape(-1)
            wdl = np.stack([(1 + v) / 2, np.zeros_like(v), (1 - v) / 2], axis=1)
        mlh = np.asarray(outs[2], dtype=np.float32).reshape(-1) if self.network.has_mlh else None
        result = NetOutputs(logits, wdl, mlh)
        if out is not None and direct is None:
            return result.copy_into(out)
        return result

    def _to_cpu(self, error: str) -> None:
        """Move the network to the CPU after the GPU failed in a run (``error``: onnxruntime's text): one
        warning names the error and the fix; calls in flight on the GPU retry on the CPU. The old sessions'
        pinned buffers are not freed (a call may still hold one)."""
        with self._switch:
            if self._runs.device != "cuda":
                return
            reason = reason_of(error)
            cpu_precision = "int8" if self.precision in ("int8", "auto") else "fp32"
            started = start(self._model, backend=OnnxBackend.CPU, precision=cpu_precision, threads=1,
                            float16=float16_model, int8=self._int8_model, source=self.network.source)
            gpus = gpu.nvidia_gpus()
            fix = gpu.advice([reason], gpus=gpus, container=gpu.in_container())
            warning = (f"the GPU failed while running the network ({reason}); the network runs on the CPU from "
                       f"now on, the game goes on. Fix: {fix}; then restart")
            self.failures.append(ProviderFailure(self.provider, reason, error[:4000]))
            self.provider, self.precision_run, self.provider_options = CPU, started.precision, {}
            self.concurrency = min(CPU_MAX_CONCURRENCY, os.cpu_count() or 1)
            self.buckets = False
            self.runtime_failure = self.gpu_warning = warning
            self._runs = self._sessions_of(started, False)
            log.warning(warning)

    def close(self) -> None:
        """Free the bound path's page-locked buffers (the evaluator must not be used afterwards)."""
        self._runs.close()



def from_config(engine: EngineConfig, network: Network) -> Evaluator:
    """The onnxruntime runner (backends auto, tensorrt, cuda, cpu: :mod:`lichessbot.neural.registry`) with
    ``engine.threads``, ``engine.nn_cache_size``, ``engine.precision``, ``engine.device`` and
    ``engine.compact_input``, warmed up (:meth:`Evaluator.warm_up`). Raises NetworkError when onnxruntime
    refuses the model."""
    evaluator = Evaluator(network, backend=engine.backend, threads=engine.threads, cache_size=engine.nn_cache_size,
                          precision=engine.precision, device=engine.device, compact=engine.compact_input)
    evaluator.warm_up()  # every batch shape before the first move needs it (GPU: one session a bucket)
    return evaluator
