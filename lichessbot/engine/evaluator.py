"""The network evaluator: the onnxruntime session that runs batches of planes, and the search's NN cache.

One :class:`Evaluator` per process is shared by every game and search thread; it is a
:class:`~lichessbot.engine.runner.NetworkRunner`. ``run`` is thread-safe: onnxruntime's
``InferenceSession.run`` may be called concurrently and releases the GIL while it computes, and the bound
path (CUDA) gives every call in flight its own buffers (:class:`~lichessbot.engine.session.BoundRunner`).
It returns the raw outputs; priors (the policy map and the softmax at the policy temperature) are the
search core's, or :mod:`lichessbot.engine.position_eval`'s outside the search. Values follow lc0
src/neural/backends/onnx/network_onnx.cc: W, D, L from the side to move's view; a scalar-value net gives
W = (1+q)/2, D = 0, L = (1-q)/2.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
import structlog

from lichessbot import _core
from lichessbot.config import Backend
from lichessbot.engine import gpu
from lichessbot.engine.compact import MASKS_NAME, VALUES_NAME, compact_model, compact_of, split
from lichessbot.engine.network import (
    INPUT_NAME,
    MLH_NAME,
    POLICY_NAME,
    VALUE_NAME,
    WDL_NAME,
    Network,
    NetworkError,
)
from lichessbot.engine.runner import COMPACT_BYTES, NetInfo, NetOutputs
from lichessbot.engine.session import BATCH_BUCKETS, BoundRunner, float16_model

__all__ = ["BACKENDS", "CUDA_OPTIONS", "Evaluator", "select_providers"]

log = structlog.get_logger("lichessbot.engine")

#: engine.backend -> onnxruntime execution providers, best first (CPU is always the last resort).
_TRT, _CUDA, _CPU = "TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"
BACKENDS: dict[str, tuple[str, ...]] = {Backend.AUTO: (_TRT, _CUDA, _CPU), Backend.TENSORRT: (_TRT, _CUDA, _CPU),
                                        Backend.CUDA: (_CUDA, _CPU), Backend.CPU: (_CPU,)}
#: Minibatch on a GPU provider (lc0's CUDA backends suggest 256 and more).
GPU_MINIBATCH = 256
#: On the CPU the default minibatch is what the network evaluates in about this many seconds (ours:
#: keeps ``stop`` -> ``bestmove`` within one small batch while the batch still amortises the calls).
CPU_BATCH_SECONDS = 0.030
#: With ``threads`` 0 on the CPU, batches at once: one per core, at most this many (ours).
CPU_MAX_CONCURRENCY = 8
#: lc0's maximum batch for the ONNX backend (src/neural/backends/onnx/network_onnx.cc); TensorRT profile.
MAX_BATCH = 1024


def select_providers(backend: str, available: Sequence[str] | None = None) -> list[str]:
    """The providers to ask onnxruntime for, best first, among those it lists (``available``).

    Raises NetworkError for an unknown backend name.
    """
    if backend not in BACKENDS:
        raise NetworkError(f"unknown engine backend {backend!r} (expected one of {', '.join(BACKENDS)})")
    have = set(ort.get_available_providers() if available is None else available)
    chosen = [p for p in BACKENDS[backend] if p in have or p == _CPU]
    return chosen


#: onnxruntime's CUDA provider options (onnxruntime docs, "CUDA Execution Provider"), ours:
#:
#: - ``cudnn_conv_algo_search`` EXHAUSTIVE: cuDNN times every convolution algorithm for each new input
#:   shape and keeps the fastest. It runs once per shape; the evaluator pads every call to one of
#:   :data:`~lichessbot.engine.session.BATCH_BUCKETS` and runs each bucket at start
#:   (:meth:`Evaluator.warm_up`), so the search is paid before the first move, never during a game.
#: - ``cudnn_conv_use_max_workspace``: let cuDNN use the workspace its fastest algorithms want (onnxruntime
#:   otherwise caps it at 32 MiB).
#: - ``do_copy_in_default_stream``: host<->device copies on the compute stream (onnxruntime's default,
#:   stated): a call's input copy, kernels and output copy are ordered without extra synchronisation.
#: - ``arena_extend_strategy`` kSameAsRequested: the device arena grows by what a bucket needs, not by
#:   powers of two (the largest bucket is known in advance).
CUDA_OPTIONS = {"cudnn_conv_algo_search": "EXHAUSTIVE", "cudnn_conv_use_max_workspace": "1",
                "do_copy_in_default_stream": "1", "arena_extend_strategy": "kSameAsRequested"}


def _provider_options(provider: str, precision: str = "fp32") -> dict:
    if provider == _TRT:  # one engine for every batch size instead of a rebuild per new shape
        shape = f"{INPUT_NAME}:{{}}x112x8x8"
        return {"trt_profile_min_shapes": shape.format(1), "trt_profile_opt_shapes": shape.format(256),
                "trt_profile_max_shapes": shape.format(MAX_BATCH), "trt_engine_cache_enable": True,
                "trt_engine_cache_path": str(_trt_cache_dir()), "trt_fp16_enable": precision == "fp16",
                "trt_timing_cache_enable": True, "trt_timing_cache_path": str(_trt_cache_dir())}
    if provider == _CUDA:
        return dict(CUDA_OPTIONS)
    return {}


def _trt_cache_dir():
    path = Path.home() / ".cache" / "lichessbot" / "tensorrt"
    path.mkdir(parents=True, exist_ok=True)
    return path


class Evaluator:
    """Evaluates positions with one network; shared by all games and threads (thread-safe).

    ``backend``: "auto" (TensorRT > CUDA > CPU, the first that really starts), "tensorrt", "cuda" or
    "cpu". ``threads``: on the CPU, batches evaluated side by side, one thread each (0 = one per core,
    at most :data:`CPU_MAX_CONCURRENCY`); on a GPU provider, onnxruntime intra-op threads (0: its default).
    ``cache_size``: entries of the search's NN cache (0 disables it). ``io_binding``: run through
    :class:`~lichessbot.engine.session.BoundRunner` (default: on CUDA and TensorRT; True forces it, e.g. to
    test the path on the CPU). ``buckets``: pad every call to a batch bucket (default: on a GPU provider).
    ``compact``: the session takes the compact input (uint8 [B, 1344], expanded by an ONNX prologue:
    :mod:`lichessbot.engine.compact`), and so must every ``run``.
    When an NVIDIA GPU is present but onnxruntime starts on the CPU, a warning names the reason and the fix
    (:func:`lichessbot.engine.gpu.fallback_warning`), whatever the backend.
    Raises NetworkError when onnxruntime cannot load the model.
    """

    def __init__(self, network: Network, *, backend: str = Backend.AUTO, threads: int = 0, cache_size: int = 200_000,
                 precision: str = "fp32", io_binding: bool | None = None, buckets: bool | None = None,
                 compact: bool = False) -> None:
        if precision not in ("fp32", "fp16"):
            raise NetworkError(f"precision must be fp32 or fp16, got {precision!r}")
        self.precision = precision
        self.network = network
        #: The session takes the compact input (uint8 [B, 1344]) instead of the planes.
        self.compact = compact
        self._model = compact_model(network.model) if compact else network.model
        #: The NN cache of every search of the process (the Rust core's, keyed by position hash).
        self.search_cache = _core.NNCache(cache_size)
        wanted = select_providers(backend)
        if wanted != [_CPU]:
            gpu.preload_cuda()  # CUDA 13 and cuDNN 9 from NVIDIA's wheels, before the first GPU session
        self._session = self._create_session(wanted, threads, precision)
        self.provider: str = self._session.get_providers()[0]
        if precision == "fp16" and self.provider in (_CUDA, _CPU):
            # TensorRT builds fp16 engines itself (trt_fp16_enable); CUDA runs a float16 copy of the model.
            self._session = self._create_session([self.provider], threads, "fp16", float16=True)
        #: Network batches evaluated at once. On the CPU, ``threads`` > 1 runs that many batches side by
        #: side on one intra-op thread each (onnxruntime's ``run`` is thread-safe): measured here with
        #: maia-1100 at batch 48 on 2 cores, 2 concurrent single-thread runs gave 2,062 evals/s where one
        #: run over 2 threads gave 1,622 (as lc0 runs one batch per search thread); ``threads`` 0 means one
        #: per core. Elsewhere 1.
        self.concurrency = 1
        if self.provider == _CPU:
            self.concurrency = threads or min(CPU_MAX_CONCURRENCY, os.cpu_count() or 1)
            if threads != 1:
                self._session = self._create_session([_CPU], 1, precision, float16=precision == "fp16")
        want = BACKENDS[backend][0]
        fallback = None
        #: Why the GPU is not used although one is present (None: no GPU, or it is used).
        self.gpu_warning = gpu.fallback_warning(self.provider) if backend != Backend.CPU else None
        if self.gpu_warning:  # loud in every mode, "auto" included: the user has a GPU and it is idle
            log.warning(self.gpu_warning, backend=backend)
        elif self.provider != want:
            fallback = ("onnxruntime does not list it" if want not in wanted
                        else "it failed to start (no usable GPU or missing CUDA/TensorRT libraries)")
            if backend != Backend.AUTO:  # the user asked for this provider: say clearly that it is not used
                log.warning(f"{want} is not usable, running on {self.provider}: {fallback}", backend=backend)
        log.info("network ready", network=network.name, provider=self.provider, backend=backend,
                 input_format=self.input_format, wdl=network.has_wdl, mlh=network.has_mlh,
                 threads=threads or "default", concurrency=self.concurrency, cache_size=cache_size,
                 **({"not_used": want} if fallback and backend == Backend.AUTO else {}))
        inp = {i.name: i for i in self._session.get_inputs()}.get(INPUT_NAME)
        self._input_dtype = np.float16 if inp is not None and inp.type == "tensor(float16)" else np.float32
        self._outputs = [POLICY_NAME, WDL_NAME if network.has_wdl else VALUE_NAME]
        if network.has_mlh:
            self._outputs.append(MLH_NAME)
        on_gpu = self.provider in (_CUDA, _TRT)
        #: Calls are padded to :data:`~lichessbot.engine.session.BATCH_BUCKETS` (default: on a GPU).
        self.buckets = on_gpu if buckets is None else buckets
        #: Runs through I/O binding (default: on CUDA and TensorRT; ``io_binding=True`` forces it).
        self._bound: BoundRunner | None = None
        if io_binding or (io_binding is None and on_gpu) or (self.buckets and io_binding is None):
            widths = {POLICY_NAME: 1858, WDL_NAME: 3, VALUE_NAME: 1, MLH_NAME: 1}
            self._bound = BoundRunner(self._session, INPUT_NAME, [(o, widths[o]) for o in self._outputs],
                                      "cuda" if on_gpu else "cpu", MAX_BATCH, input_dtype=self._input_dtype,
                                      buckets=self.buckets, compact=compact)
        self._default_minibatch: int | None = None

    @property
    def input_format(self) -> int:
        """lc0's input format of the network's planes."""
        return self.network.input_format

    @property
    def info(self) -> NetInfo:
        """The :class:`~lichessbot.engine.runner.NetInfo` of this evaluator (its minibatch is timed once on
        the CPU, see :meth:`default_minibatch`)."""
        return NetInfo(name=self.network.name, input_format=self.network.input_format, has_wdl=self.network.has_wdl,
                       has_mlh=self.network.has_mlh, provider=self.provider, minibatch=self.default_minibatch(),
                       concurrency=self.concurrency, inflight=self.concurrency,
                       max_batch=MAX_BATCH if self.provider in (_CUDA, _TRT) else self.default_minibatch(),
                       compact=self.compact)

    def neutral_inputs(self, n: int) -> np.ndarray:
        """``n`` copies of a neutral position (no pieces, the all-ones and castling planes set) in this
        evaluator's input form: for warm-ups and timings."""
        planes = np.zeros((n, 112, 8, 8), dtype=np.float32)
        planes[:, 104:108] = 1.0
        planes[:, 111] = 1.0
        return compact_of(planes) if self.compact else planes

    def warm_up(self, max_batch: int = MAX_BATCH) -> float:
        """Run every batch shape the evaluator will see before the first move needs it: on a GPU (or with
        ``buckets``) each bucket up to ``max_batch`` once (cuDNN's algorithm search, TensorRT's engine, the
        device arena), on the CPU the minibatch timing. Logs "network warmed up" with the seconds it took
        and returns them."""
        t = time.perf_counter()
        shapes: list[int] = []
        if self.buckets:
            shapes = [b for b in BATCH_BUCKETS if b <= max_batch]
            planes = self.neutral_inputs(shapes[-1] if shapes else 1)
            for b in shapes:
                self.run(planes[:b])
        minibatch = self.default_minibatch()
        seconds = time.perf_counter() - t
        log.info("network warmed up", provider=self.provider, seconds=round(seconds, 3),
                 buckets=shapes or "none", minibatch=minibatch, pinned=bool(self._bound and self._bound.pinned))
        return seconds

    def _create_session(self, providers: list[str], threads: int, precision: str = "fp32",
                        float16: bool = False) -> ort.InferenceSession:
        """A session for the network (with the compact prologue when :attr:`compact`; ``float16``: its
        float16 copy, :func:`session.float16_model`). Raises NetworkError when onnxruntime refuses it."""
        network = self.network
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads > 0:
            opts.intra_op_num_threads = threads
        prov = [(p, _provider_options(p, precision)) for p in providers]
        model = self._model
        if float16:
            model = float16_model(model)
        # onnxruntime-gpu lists CUDA/TensorRT even without a GPU and then prints a stack of errors (C++
        # log at ERROR level, Python prints on stdout -- which would corrupt UCI): silence both here.
        quiet = providers != [_CPU]
        buf = io.StringIO()
        try:
            if quiet:
                ort.set_default_logger_severity(4)
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                return ort.InferenceSession(model, opts, providers=prov)
        except Exception as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise NetworkError(f"onnxruntime cannot load network {network.source}: {first[:300]}") from None
        finally:
            ort.set_default_logger_severity(3)

    def default_minibatch(self) -> int:
        """The search minibatch when ``MinibatchSize`` is 0: :data:`GPU_MINIBATCH` on CUDA/TensorRT; on the
        CPU the batch one thread evaluates in about :data:`CPU_BATCH_SECONDS` (timed once, on a batch of
        32 after a warm-up), rounded to a multiple of 8 from 8 to 256."""
        if self._default_minibatch is None:
            if self.provider != _CPU:
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
        given (:meth:`lichessbot.engine.runner.NetworkRunner.run`). Thread-safe. Raises ValueError for
        planes of another shape.
        """
        if self.compact:
            if planes.ndim != 2 or planes.shape[1] != COMPACT_BYTES or planes.dtype != np.uint8:
                raise ValueError(f"compact inputs must be uint8 [B, {COMPACT_BYTES}], got {planes.dtype} "
                                 f"{list(planes.shape)}")
        elif planes.ndim != 4 or planes.shape[1:] != (112, 8, 8):
            raise ValueError(f"planes must be [B, 112, 8, 8], got {list(planes.shape)}")
        bound = self._bound
        if bound is not None:
            direct = out if out is not None and self.network.has_wdl else None
            try:
                outs = bound.run(planes, direct)
            except ValueError:
                raise
            except Exception as err:  # noqa: BLE001 - onnxruntime refused the binding: plain runs from now on
                if self._bound is not None:
                    self._bound = None
                    log.error("I/O binding failed; the network runs without it from now on", provider=self.provider,
                              error=str(err).splitlines()[0][:300] if str(err) else type(err).__name__)
                return self.run(planes, game=game, priority=priority, out=out)
        elif self.compact:
            masks, values = split(planes)
            outs = self._session.run(self._outputs, {MASKS_NAME: masks, VALUES_NAME: values})
        else:
            outs = self._session.run(self._outputs, {INPUT_NAME: np.ascontiguousarray(planes, self._input_dtype)})
        logits = np.asarray(outs[0], dtype=np.float32)
        if self.network.has_wdl:
            wdl = np.asarray(outs[1], dtype=np.float32)
        else:
            v = np.asarray(outs[1], dtype=np.float32).reshape(-1)
            wdl = np.stack([(1 + v) / 2, np.zeros_like(v), (1 - v) / 2], axis=1)
        mlh = np.asarray(outs[2], dtype=np.float32).reshape(-1) if self.network.has_mlh else None
        result = NetOutputs(logits, wdl, mlh)
        if out is not None and not (bound is not None and self.network.has_wdl):
            return result.copy_into(out)
        return result

    def close(self) -> None:
        """Free the bound path's page-locked buffers (the evaluator must not be used afterwards)."""
        if self._bound is not None:
            self._bound.close()

