"""The network evaluator: the onnxruntime session that runs batches of planes, and the search's NN cache.

One :class:`Evaluator` per process is shared by every game and search thread. ``run`` is thread-safe:
onnxruntime's ``InferenceSession.run`` may be called concurrently and releases the GIL while it computes.
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
from lichessbot.engine.network import (
    INPUT_NAME,
    MLH_NAME,
    POLICY_NAME,
    VALUE_NAME,
    WDL_NAME,
    Network,
    NetworkError,
)
from lichessbot.engine.session import BoundRunner, float16_model

__all__ = ["BACKENDS", "Evaluator", "select_providers"]

log = structlog.get_logger("lichessbot.engine")

#: engine.backend -> onnxruntime execution providers, best first (CPU is always the last resort).
_TRT, _CUDA, _CPU = "TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"
BACKENDS = {"auto": (_TRT, _CUDA, _CPU), "tensorrt": (_TRT, _CUDA, _CPU), "cuda": (_CUDA, _CPU), "cpu": (_CPU,)}
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


def _provider_options(provider: str, precision: str = "fp32") -> dict:
    if provider == _TRT:  # one engine for every batch size instead of a rebuild per new shape
        shape = f"{INPUT_NAME}:{{}}x112x8x8"
        return {"trt_profile_min_shapes": shape.format(1), "trt_profile_opt_shapes": shape.format(256),
                "trt_profile_max_shapes": shape.format(MAX_BATCH), "trt_engine_cache_enable": True,
                "trt_engine_cache_path": str(_trt_cache_dir()), "trt_fp16_enable": precision == "fp16"}
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
    ``cache_size``: entries of the search's NN cache (0 disables it).
    Raises NetworkError when onnxruntime cannot load the model.
    """

    def __init__(self, network: Network, *, backend: str = "auto", threads: int = 0, cache_size: int = 200_000,
                 precision: str = "fp32", io_binding: bool | None = None) -> None:
        if precision not in ("fp32", "fp16"):
            raise NetworkError(f"precision must be fp32 or fp16, got {precision!r}")
        self.precision = precision
        self.network = network
        self.input_format = network.input_format
        #: The NN cache of every search of the process (the Rust core's, keyed by position hash).
        self.search_cache = _core.NNCache(cache_size)
        wanted = select_providers(backend)
        self._session = self._create_session(network, wanted, threads, precision)
        self.provider: str = self._session.get_providers()[0]
        if precision == "fp16" and self.provider in (_CUDA, _CPU):
            # TensorRT builds fp16 engines itself (trt_fp16_enable); CUDA runs a float16 copy of the model.
            self._session = self._create_session(network, [self.provider], threads, "fp16", float16=True)
        #: Network batches evaluated at once. On the CPU, ``threads`` > 1 runs that many batches side by
        #: side on one intra-op thread each (onnxruntime's ``run`` is thread-safe): measured here with
        #: maia-1100 at batch 48 on 2 cores, 2 concurrent single-thread runs gave 2,062 evals/s where one
        #: run over 2 threads gave 1,622 (as lc0 runs one batch per search thread); ``threads`` 0 means one
        #: per core. Elsewhere 1.
        self.concurrency = 1
        if self.provider == _CPU:
            self.concurrency = threads or min(CPU_MAX_CONCURRENCY, os.cpu_count() or 1)
            if threads != 1:
                self._session = self._create_session(network, [_CPU], 1, precision, float16=precision == "fp16")
        want = BACKENDS[backend][0]
        fallback = None
        if self.provider != want:
            fallback = ("onnxruntime does not list it" if want not in wanted
                        else "it failed to start (no usable GPU or missing CUDA/TensorRT libraries)")
            if backend != "auto":  # the user asked for this provider: say clearly that it is not used
                log.warning(f"{want} is not usable, running on {self.provider}: {fallback}", backend=backend)
        log.info("network ready", network=network.name, provider=self.provider, backend=backend,
                 input_format=self.input_format, wdl=network.has_wdl, mlh=network.has_mlh,
                 threads=threads or "default", concurrency=self.concurrency, cache_size=cache_size,
                 **({"not_used": want} if fallback and backend == "auto" else {}))
        inp = self._session.get_inputs()[0]
        self._input_dtype = np.float16 if inp.type == "tensor(float16)" else np.float32
        self._outputs = [POLICY_NAME, WDL_NAME if network.has_wdl else VALUE_NAME]
        if network.has_mlh:
            self._outputs.append(MLH_NAME)
        #: Runs through I/O binding (default: on CUDA; ``io_binding=True`` forces it, e.g. on the CPU).
        self._bound = None
        if io_binding or (io_binding is None and self.provider == _CUDA):
            widths = {POLICY_NAME: 1858, WDL_NAME: 3, VALUE_NAME: 1, MLH_NAME: 1}
            device = "cuda" if self.provider in (_CUDA, _TRT) else "cpu"
            self._bound = BoundRunner(self._session, INPUT_NAME, [(o, widths[o]) for o in self._outputs], device,
                                      MAX_BATCH)
        self._default_minibatch: int | None = None

    @staticmethod
    def _create_session(network: Network, providers: list[str], threads: int, precision: str = "fp32",
                        float16: bool = False) -> ort.InferenceSession:
        """A session for ``network`` (``float16``: its float16 copy, :func:`session.float16_model`).
        Raises NetworkError when onnxruntime refuses it."""
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads > 0:
            opts.intra_op_num_threads = threads
        prov = [(p, _provider_options(p, precision)) for p in providers]
        model = network.model
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
                planes = np.zeros((32, 112, 8, 8), dtype=np.float32)
                planes[:, 104:108] = 1.0
                planes[:, 111] = 1.0
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
    def run(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Run the network on ``planes`` float32 [B, 112, 8, 8].

        Returns raw logits float32 [B, 1858], WDL float32 [B, 3] (side to move; computed from the value
        head for scalar nets) and moves-left float32 [B] (plies) or None. Thread-safe.
        """
        if planes.ndim != 4 or planes.shape[1:] != (112, 8, 8):
            raise ValueError(f"planes must be [B, 112, 8, 8], got {list(planes.shape)}")
        x = np.ascontiguousarray(planes, dtype=self._input_dtype)
        if self._bound is not None:
            outs = self._bound.run(x)
        else:
            outs = self._session.run(self._outputs, {INPUT_NAME: x})
        logits = np.asarray(outs[0], dtype=np.float32)
        if self.network.has_wdl:
            wdl = np.asarray(outs[1], dtype=np.float32)
        else:
            v = np.asarray(outs[1], dtype=np.float32).reshape(-1)
            wdl = np.stack([(1 + v) / 2, np.zeros_like(v), (1 - v) / 2], axis=1)
        mlh = np.asarray(outs[2], dtype=np.float32).reshape(-1) if self.network.has_mlh else None
        return logits, wdl, mlh
