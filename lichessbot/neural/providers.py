"""Starting the network's onnxruntime session: one provider at a time, each with its own options.

onnxruntime's own fallback is never used. Given several providers in one session, its Python layer
(``InferenceSession.__init__`` in onnxruntime/capi/onnxruntime_inference_collection.py, 1.31) retries a
failed creation once with its fallback providers and ``provider_options=None``: CUDA then runs with its
defaults (TF32 on, no workspace, the default algorithm search), a second failure raises instead of running
on the CPU, and the retry is announced with ``print`` on stdout (which would corrupt UCI). So
:func:`start` creates a session for each provider of the backend in turn (``enable_fallback=0``), each
with its options, checks that the provider really took the graph (onnxruntime skips a provider whose
library does not load with only a log line), records each failure with its full reason
(:class:`ProviderFailure`) and always ends on a working provider: the CPU at worst.

Precision (``engine.precision``) is explicit: ``fp32`` on CUDA sets ``use_tf32=0`` (onnxruntime's CUDA
provider defaults to 1, so "fp32" convolutions would run in TF32 on Ampere and later); ``tf32`` sets it
to 1; ``fp16`` runs a float16 copy of the network (CUDA, CPU) or TensorRT's fp16 engines; ``int8`` runs an int8
copy on the CPU (:mod:`lichessbot.neural.quantize`): backend ``auto`` still tries the GPU first, which then
runs fp32 (a note says so), and backends ``cuda`` and ``tensorrt`` refuse it. TensorRT allows
TF32 in its fp32 engines by default (NVIDIA TensorRT developer guide, ``BuilderFlag::kTF32``) and
onnxruntime 1.31's TensorRT provider has no option to clear it, so TensorRT's ``fp32`` runs as ``tf32``
(:attr:`Started.precision` says what ran).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import structlog

from lichessbot.errors import NetworkError
from lichessbot.neural import gpu

__all__ = ["BACKENDS", "CONV_ALGO_ENV", "CPU", "CUDA", "CUDA_OPTIONS", "FP16_MIN_COMPUTE_CAPABILITY",
           "GPU_SESSION_THREADS", "ONNX_BACKENDS", "PRECISIONS", "OnnxBackend", "ProviderFailure", "Started", "TRT",
           "cuda_options", "model_inputs", "reason_of", "resolve_precision", "select_providers", "session_like",
           "shared_initializers", "start", "tensorrt_cache_dir", "tensorrt_cache_path", "tensorrt_may_run",
           "tensorrt_options"]

log = structlog.get_logger("lichessbot.neural")

TRT, CUDA, CPU = "TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"


class OnnxBackend(StrEnum):
    """The ``engine.backend`` names the onnxruntime runner serves (:mod:`lichessbot.neural.registry`):
    ``auto``, the best provider that starts (CUDA, else the CPU); ``tensorrt``; ``cuda``; ``cpu``."""

    AUTO = "auto"
    TENSORRT = "tensorrt"
    CUDA = "cuda"
    CPU = "cpu"


#: The onnxruntime runner's backend names, as the choices of the ``--backend`` flags that run it directly.
ONNX_BACKENDS: tuple[str, ...] = tuple(b.value for b in OnnxBackend)
#: engine.backend -> the providers tried, in order (the CPU always last). ``auto`` leaves TensorRT out until
#: a GPU measurement shows it is worth its start (docs/gpu.md, "TensorRT"): no install brought the TensorRT
#: 10 libraries its provider links, so every launch paid a failed start, and its first start builds
#: engines for minutes.
BACKENDS: dict[str, tuple[str, ...]] = {OnnxBackend.AUTO: (CUDA, CPU), OnnxBackend.TENSORRT: (TRT, CUDA, CPU),
                                        OnnxBackend.CUDA: (CUDA, CPU), OnnxBackend.CPU: (CPU,)}
#: engine.precision values: auto (fp16 on a GPU with tensor cores, fp32 on other GPUs: :func:`resolve_precision`;
#: int8 on the CPU), fp32
#: (no TF32 anywhere it can be switched off), tf32, fp16, int8 (the CPU only).
PRECISIONS = ("auto", "fp32", "tf32", "fp16", "int8")
#: The compute capability from which ``auto`` runs fp16: lc0 src/neural/backends/cuda/network_cuda.cc counts
#: tensor cores from a device major version of 7 on, except the parts whose name holds "GTX 16" (SM 7.5
#: without tensor cores, "very very slow" there), and its ``cuda-auto`` runs fp16 where it finds them.
FP16_MIN_COMPUTE_CAPABILITY = 7.0
#: Intra-op threads of a GPU session when ``engine.threads`` is 0: one. The evaluator makes a session per batch
#: bucket, each with its own onnxruntime thread pool; with onnxruntime's default (a thread per core, spinning
#: while it waits) the eight pools fought for the cores: on the emulated GPU host (CUDA sessions computed by
#: the CPU provider) on this 2-core machine, a search over eight such sessions made 844-1,802 nps against
#: 10,059-13,742 with one thread each (tests/neural/gpu_host.py, tiny network, 2 s searches). On a GPU the
#: network's work is the device's; the pools only run the few nodes left on the CPU.
GPU_SESSION_THREADS = 1
#: Environment variable that overrides ``cudnn_conv_algo_search`` (HEURISTIC, EXHAUSTIVE or DEFAULT), so that
#: the choice can be measured on a GPU host without a code change (``scripts/gpu/check.sh`` measures both).
CONV_ALGO_ENV = "LICHESSBOT_CUDNN_CONV_ALGO_SEARCH"
#: Positions of TensorRT's optimisation profile: the search's usual GPU minibatch, and lc0's ONNX maximum.
TRT_OPT_BATCH, TRT_MAX_BATCH = 256, 1024

#: onnxruntime's CUDA provider options (onnxruntime docs, "CUDA Execution Provider"), ours:
#:
#: - ``cudnn_conv_algo_search`` HEURISTIC: cuDNN picks each convolution's algorithm from its heuristics
#:   instead of timing them all (EXHAUSTIVE). Since onnxruntime 1.20 the CUDA Conv keeps one cuDNN plan per
#:   node and rebuilds it whenever its input shape changes (onnxruntime issue 23006, open); PaddleX PR 5057
#:   measured 300-1300 ms per new shape with EXHAUSTIVE on a 6-conv model against about 2 ms with
#:   HEURISTIC. The evaluator now gives each batch bucket a session of its own
#:   (:class:`~lichessbot.neural.evaluator.Evaluator`), so a session sees one shape and plans once, at
#:   warm-up; EXHAUSTIVE would then cost only start-up time, but what it gains over HEURISTIC on our
#:   networks has not been measured (no GPU run yet), and HEURISTIC bounds the cost of any shape that slips
#:   past the buckets. :data:`CONV_ALGO_ENV` overrides it, for that measurement.
#: - ``cudnn_conv_use_max_workspace``: let cuDNN use the workspace its fastest algorithms want (onnxruntime
#:   otherwise caps it at 32 MiB).
#: - ``do_copy_in_default_stream``: host<->device copies on the compute stream (onnxruntime's default,
#:   stated): a call's input copy, kernels and output copy are ordered without extra synchronisation.
#: - ``arena_extend_strategy`` kSameAsRequested: the device arena grows by what a bucket needs, not by
#:   powers of two (the largest bucket is known in advance).
#:
#: :func:`cuda_options` adds ``device_id`` and ``use_tf32`` (the precision).
CUDA_OPTIONS = {"cudnn_conv_algo_search": "HEURISTIC", "cudnn_conv_use_max_workspace": "1",
                "do_copy_in_default_stream": "1", "arena_extend_strategy": "kSameAsRequested"}


@dataclass(frozen=True)
class ProviderFailure:
    """Why ``provider`` did not start: ``reason`` (one line: the loader's message, onnxruntime's CUDA error,
    ...) and ``detail`` (onnxruntime's full text, for ``doctor`` and bug reports)."""

    provider: str
    reason: str
    detail: str = ""


@dataclass
class Started:
    """The session :func:`start` made: ``provider`` (the one that runs it), ``precision`` (what runs:
    fp32, tf32 or fp16), ``options`` (the provider options it was created with), ``failures`` (every
    provider tried before it, with its reason) and ``notes`` (e.g. a TensorRT cache that is off)."""

    session: ort.InferenceSession
    provider: str
    precision: str
    options: dict[str, str]
    failures: list[ProviderFailure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The serialized model the session runs (the float16 copy for fp16), its providers with their options
    #: as onnxruntime was given them, and its intra-op threads: what :func:`session_like` repeats.
    model: bytes = b""
    providers: list[str | tuple[str, dict[str, str]]] = field(default_factory=list)
    threads: int = 0


def select_providers(backend: str, available: Sequence[str] | None = None) -> list[str]:
    """The providers :func:`start` tries for ``backend``, in order, among those onnxruntime lists
    (``available``; the CPU always). Raises NetworkError for an unknown backend name."""
    if backend not in BACKENDS:
        raise NetworkError(f"unknown engine backend {backend!r} (expected one of {', '.join(BACKENDS)})")
    have = set(ort.get_available_providers() if available is None else available)
    return [p for p in BACKENDS[backend] if p in have or p == CPU]


def tensorrt_may_run(backend: str, available: Sequence[str] | None = None) -> bool:
    """True when ``engine.backend`` may start onnxruntime's TensorRT provider (which writes its engine cache):
    an onnxruntime backend that tries it, among the providers onnxruntime lists (``available``). Any other
    runner's name (``triton``, ``torch``, a plugin's, or one no runner serves) is False, never an error."""
    return backend in BACKENDS and TRT in select_providers(backend, available)


def cuda_options(precision: str = "fp32", device: int = 0) -> dict[str, str]:
    """The CUDA provider's options: :data:`CUDA_OPTIONS` (its algorithm search overridden by
    :data:`CONV_ALGO_ENV` when set), ``device_id`` and ``use_tf32``: "0" for fp32 only (onnxruntime's
    default is 1, which makes fp32 convolutions TF32 on Ampere and later); "1" for tf32 and for fp16, whose
    convolutions must keep the tensor-core engines (onnxruntime's cuDNN Conv reads ``use_tf32=0`` as "no
    tensor-core math" whatever the data type: onnxruntime core/providers/cuda/nn/conv.cc). Raises
    NetworkError for a bad :data:`CONV_ALGO_ENV`."""
    opts = {**CUDA_OPTIONS, "device_id": str(device), "use_tf32": "0" if precision == "fp32" else "1"}
    algo = os.environ.get(CONV_ALGO_ENV, "").strip().upper()
    if algo:
        if algo not in ("HEURISTIC", "EXHAUSTIVE", "DEFAULT"):
            raise NetworkError(f"{CONV_ALGO_ENV} must be HEURISTIC, EXHAUSTIVE or DEFAULT, got {algo!r}")
        opts["cudnn_conv_algo_search"] = algo
    return opts


def resolve_precision(precision: str, provider: str, device: int = 0) -> str:
    """What ``precision`` means on ``provider``: ``auto`` is fp16 on CUDA or TensorRT when GPU ``device``
    has compute capability >= :data:`FP16_MIN_COMPUTE_CAPABILITY` and is no GTX 16xx (lc0's cuda-auto), else
    fp32 (also when the capability cannot be read); int8 is fp32 on a GPU; any other value is itself."""
    if precision == "int8" and provider in (CUDA, TRT):
        return "fp32"
    if precision != "auto":
        return precision
    if provider not in (CUDA, TRT):
        return "fp32"
    cap = gpu.compute_capability(device)
    named = [g.name for g in gpu.nvidia_gpus() if g.index == device]
    no_tensor_cores = bool(named) and "GTX 16" in named[0]
    return "fp16" if cap is not None and cap >= FP16_MIN_COMPUTE_CAPABILITY and not no_tensor_cores else "fp32"


def model_inputs(model: bytes) -> list[tuple[str, tuple[int, ...]]]:
    """The graph inputs of the serialized ONNX ``model``: (name, dims after the batch dimension) each, e.g.
    ``[("/input/planes", (112, 8, 8))]`` or the compact form's masks and values. Raises NetworkError for a
    dimension that is not fixed."""
    graph = onnx.load_from_string(model).graph
    inits = {i.name for i in graph.initializer}
    out = []
    for inp in graph.input:
        if inp.name in inits:
            continue
        dims = inp.type.tensor_type.shape.dim[1:]
        if any(not d.HasField("dim_value") for d in dims):
            raise NetworkError(f"input {inp.name} has a dimension that is not fixed after the batch")
        out.append((inp.name, tuple(d.dim_value for d in dims)))
    return out


def tensorrt_options(inputs: Sequence[tuple[str, tuple[int, ...]]], precision: str = "fp32", device: int = 0,
                     cache: Path | None = None) -> dict[str, str]:
    """The TensorRT provider's options: one optimisation profile over the model's real inputs (``inputs`` as
    :func:`model_inputs` gives them, batch 1 to :data:`TRT_MAX_BATCH`, tuned at :data:`TRT_OPT_BATCH`: one
    engine for every batch size instead of a rebuild per new shape), ``trt_fp16_enable`` for fp16, and the
    engine and timing caches in ``cache`` (none when None)."""
    def shapes(n: int) -> str:
        return ",".join(f"{name}:{'x'.join(map(str, (n, *dims)))}" for name, dims in inputs)

    opts = {"device_id": str(device), "trt_profile_min_shapes": shapes(1),
            "trt_profile_opt_shapes": shapes(TRT_OPT_BATCH), "trt_profile_max_shapes": shapes(TRT_MAX_BATCH),
            "trt_fp16_enable": "1" if precision == "fp16" else "0"}
    if cache is not None:
        opts.update({"trt_engine_cache_enable": "1", "trt_engine_cache_path": str(cache),
                     "trt_timing_cache_enable": "1", "trt_timing_cache_path": str(cache)})
    return opts


def tensorrt_cache_path() -> Path:
    """TensorRT's engine and timing cache folder, ``$XDG_CACHE_HOME/lichessbot/tensorrt`` (XDG Base Directory
    Specification; ``~/.cache`` when unset or relative). Raises RuntimeError or KeyError without a home."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "lichessbot" / "tensorrt"


def tensorrt_cache_dir() -> tuple[Path | None, str | None]:
    """:func:`tensorrt_cache_path`, created and checked writable. Returns (folder, None), or (None, why) when
    it cannot be used: then TensorRT runs without a cache, never fails."""
    where = "the cache folder"
    try:
        path = tensorrt_cache_path()
        where = str(path)
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
        return path, None
    except (OSError, RuntimeError, KeyError) as err:  # RuntimeError/KeyError: no home directory at all
        return None, f"TensorRT runs without its engine cache: {where} is not writable ({err})"


def reason_of(text: str) -> str:
    """One line of onnxruntime's error ``text`` that says why a provider failed: "CUDA failure 100: no
    CUDA-capable device is detected" out of the C++ signatures around it, TensorRT's missing profile
    inputs, or the last line without onnxruntime's prefix (at most 300 characters)."""
    cuda = re.search(r"CUDA failure \d+: [^;]*", text)
    if cuda:
        return cuda.group(0).strip()
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "no reason given"
    missing = [line for line in lines if "has no associated shape profiles" in line]
    line = missing[0] if missing else lines[-1]
    line = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", line)
    if "]" in line and "onnxruntime::" in line:  # "/onnxruntime_src/...cc:729 void onnxruntime::f(...) Text"
        line = line.rsplit(") ", 1)[-1]
    return line[:300]


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """onnxruntime's C++ log off (a failing provider logs errors on stderr) and Python-level prints caught
    (none reach stdout: UCI)."""
    buf = io.StringIO()
    ort.set_default_logger_severity(4)
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            yield
    finally:
        ort.set_default_logger_severity(3)


def _session(model: bytes, providers: list[str | tuple[str, dict[str, str]]], threads: int) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads > 0:
        opts.intra_op_num_threads = threads
    with _quiet():
        # enable_fallback=0: a failure raises here, with its reason, instead of a retry without options
        return ort.InferenceSession(model, opts, providers=providers, enable_fallback=0)


def start(model: bytes, *, backend: str = OnnxBackend.AUTO, precision: str = "fp32", device: int = 0, threads: int = 0,
          float16: Callable[[bytes], bytes], int8: Callable[[bytes], bytes] | None = None,
          source: str = "the network") -> Started:
    """A session for ``model`` (serialized ONNX) on the first provider of ``backend`` that really starts.

    ``precision``: one of :data:`PRECISIONS`; ``device``: the CUDA device number (``engine.device``);
    ``threads``: onnxruntime intra-op threads of a GPU session (0: one, :data:`GPU_SESSION_THREADS`; the
    CPU session always gets 1: the evaluator runs CPU batches side by side instead); ``float16``: makes the
    float16 copy of a model
    (:func:`lichessbot.neural.session.float16_model`), called only for fp16 on CUDA or the CPU; ``int8``:
    makes the int8 copy (:func:`lichessbot.neural.int8_cache.int8_copy`), called only for int8 on the CPU;
    ``source`` names the network in errors.

    Raises NetworkError for an unknown backend or precision, int8 with backend cuda or tensorrt or without
    ``int8``, or when even the CPU refuses the model (the reason in the message).
    """
    if precision == "bf16":
        raise NetworkError("precision bf16 runs on backend torch only (onnxruntime: fp16)")
    if precision not in PRECISIONS:
        raise NetworkError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    wanted = BACKENDS.get(backend)
    if wanted is None:
        raise NetworkError(f"unknown engine backend {backend!r} (expected one of {', '.join(BACKENDS)})")
    if precision == "int8" and int8 is None:
        raise NetworkError("precision int8 needs a maker of the int8 copy (this caller gives none)")
    if precision == "int8" and backend in (OnnxBackend.CUDA, OnnxBackend.TENSORRT):
        raise NetworkError(f"engine.precision int8 runs on the CPU only (engine.backend cpu or auto), not with "
                           f"engine.backend {backend}: on a GPU use precision auto or fp16")
    listed = set(ort.get_available_providers())
    failures: list[ProviderFailure] = []
    notes: list[str] = []
    half: bytes | None = None
    if wanted != (CPU,):
        gpu.preload_cuda()  # CUDA 13 and cuDNN 9 from NVIDIA's wheels, before the first GPU session
    for provider in wanted:
        if provider == CPU:
            break
        if provider not in listed:
            failures.append(ProviderFailure(provider, "onnxruntime does not list it (the CPU-only onnxruntime "
                                                      "package is installed, or an old onnxruntime-gpu)"))
            continue
        want = resolve_precision(precision, provider, device)
        runs = want
        providers: list[str | tuple[str, dict[str, str]]]
        if provider == TRT:
            gpu.preload_tensorrt()
            missing = gpu.provider_library_error(TRT)
            if missing is not None:  # what onnxruntime's own attempt would fail on, without its error spam
                failures.append(ProviderFailure(TRT, f"its libraries do not load: {missing}", missing))
                continue
            cache, why = tensorrt_cache_dir()
            if why:
                notes.append(why)
                log.warning(why)
            options = tensorrt_options(model_inputs(model), want, device, cache)
            providers = [(TRT, options), (CUDA, cuda_options(want, device)), CPU]
            data = model
            runs = "fp16" if want == "fp16" else "tf32"
        else:
            options = cuda_options(want, device)
            providers = [(CUDA, options), CPU]
            if want == "fp16":
                half = float16(model) if half is None else half
            data = half if want == "fp16" and half is not None else model
        try:
            session = _session(data, providers, threads or GPU_SESSION_THREADS)
        except Exception as err:  # noqa: BLE001 - onnxruntime raises RuntimeError subclasses and others
            text = str(err).strip() or type(err).__name__
            failures.append(ProviderFailure(provider, reason_of(text), text[:4000]))
            continue
        if session.get_providers()[0] != provider:  # onnxruntime skipped it with only a log line
            why = gpu.provider_library_error(provider) or "onnxruntime did not register it (no reason given)"
            failures.append(ProviderFailure(provider, why, why))
            del session
            continue
        if precision == "int8":
            notes.append(f"precision int8 is for the CPU: {provider} runs the network in fp32")
            log.warning(notes[-1])
        return Started(session, provider, runs, options, failures, notes, data, providers,
                       threads or GPU_SESSION_THREADS)
    cpu_model = model
    if precision == "fp16":
        cpu_model = float16(model) if half is None else half
    elif precision in ("int8", "auto") and int8 is not None:  # auto is int8 on the CPU (docs/engine.md, int8)
        cpu_model = int8(model)  # the model itself back: auto on a network with no int8 copy (fp32)
    try:
        session = _session(cpu_model, [CPU], 1)
    except Exception as err:  # noqa: BLE001 - a model onnxruntime cannot run
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise NetworkError(f"onnxruntime cannot load network {source}: {first[:300]}") from None
    runs = "fp16" if precision == "fp16" else ("int8" if cpu_model is not model else "fp32")
    return Started(session, CPU, runs, {}, failures, notes, cpu_model, [CPU], 1)


def session_like(started: Started, shared: dict[str, ort.OrtValue] | None = None) -> ort.InferenceSession:
    """Another session of ``started``'s model on its provider with its options (one per batch bucket: each
    sees one input shape, :class:`~lichessbot.neural.evaluator.Evaluator`). ``shared``: the model's
    initializers as host OrtValues, handed to the session with ``SessionOptions.add_initializer`` so that
    every session reads one host copy of the weights instead of deserializing its own (onnxruntime C API,
    ``AddInitializer``: "useful when you want to share the same initializer across sessions"; the values
    must outlive the session). Raises what onnxruntime raises (the provider started once already)."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if started.threads > 0:
        opts.intra_op_num_threads = started.threads
    for name, value in (shared or {}).items():
        opts.add_initializer(name, value)
    with _quiet():
        return ort.InferenceSession(started.model, opts, providers=started.providers, enable_fallback=0)


def shared_initializers(model: bytes) -> dict[str, ort.OrtValue]:
    """The initializers of serialized ONNX ``model`` of 128 bytes or more as host OrtValues (onnxruntime's
    floor for pre-existing memory; smaller ones, shapes and constants, stay in each session), for
    :func:`session_like`. The arrays are kept alive by the OrtValues' owner dict (the caller keeps it)."""
    from onnx import numpy_helper  # noqa: PLC0415 - only the bucketed GPU path needs it

    out: dict[str, ort.OrtValue] = {}
    for init in onnx.load_from_string(model).graph.initializer:
        arr = np.ascontiguousarray(numpy_helper.to_array(init))
        if arr.nbytes >= 128:
            out[init.name] = ort.OrtValue.ortvalue_from_numpy(arr)
    return out
