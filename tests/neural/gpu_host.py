"""onnxruntime's provider layer as on an NVIDIA GPU host, emulated on the CPU (a test double).

Only onnxruntime's C layer (``onnxruntime.capi._pybind_state``) is replaced: its real Python layer
(``InferenceSession`` in onnxruntime_inference_collection.py, with its fallback, option normalisation and
prints) runs on top, as on a GPU host. The emulated host:

- lists TensorRT, CUDA and CPU (what onnxruntime-gpu lists);
- ``tensorrt="missing"``: TensorRT's plugin registration fails with onnxruntime 1.31's text, and its
  library's loader message is "libnvinfer.so.10: cannot open shared object file" (a host without TensorRT
  10); ``"ok"``: TensorRT runs, after checking that its profile names every input of the model (else
  onnxruntime's "Following input(s) has no associated shape profiles provided" error);
- ``cuda="ok"``: CUDA runs; ``"no-device"`` / ``"old-driver"`` / a ``device_id`` past the GPUs: session
  creation raises onnxruntime's ``CUDA failure 100`` / ``35`` / ``101`` text (cuda_call.cc's format, as
  users reported it: onnxruntime issues #11561, insightface #2524); ``"no-libraries"`` / ``"no-driver"``:
  the provider's library does not load, onnxruntime skips it with a log line and the session runs on the
  CPU (``libcublasLt.so.13`` / ``libcuda.so.1: cannot open shared object file``);
- runs an emulated GPU session on the CPU provider with its numerics: TF32 when CUDA's ``use_tf32`` is not
  "0" (onnxruntime's default is 1) and for TensorRT without fp16 (TensorRT's default), i.e. the float32
  weights rounded to TF32's 10-bit mantissa; float16 weights for ``trt_fp16_enable``;
- records every session creation: the providers and options onnxruntime's Python layer passed
  (:attr:`EmulatedGpuHost.created`);
- records the input batch sizes each GPU session runs, in order (:attr:`Created.shapes`), and makes a GPU
  session pay ``replan_s`` seconds whenever its input shape differs from its previous run's, as onnxruntime
  >= 1.20's CUDA Conv re-plans cuDNN then (onnxruntime issue 23006; PaddleX PR 5057 measured 300-1300 ms a
  new shape with EXHAUSTIVE, about 2 ms with HEURISTIC);
- ``fail_after``: every GPU run after that many (all sessions together) raises onnxruntime's ``Fail`` with
  a cuDNN execution failure, as a GPU that faults mid-game would;
- reports ``compute_capability`` for every GPU (an H200: 9.0).
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper
from onnxruntime.capi import _pybind_state as C

from lichessbot.neural import gpu

TRT, CUDA, CPU = "TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"

#: onnxruntime 1.31's error when TensorRT's provider library does not load (seen here, this machine's
#: onnxruntime-gpu without TensorRT).
TRT_PLUGIN_ERROR = (
    "/onnxruntime_src/onnxruntime/python/onnxruntime_pybind_state.cc:729 void onnxruntime::python::"
    "RegisterTensorRTPluginsAsCustomOps(PySessionOptions&, const onnxruntime::ProviderOptions&) Please install "
    "TensorRT libraries as mentioned in the GPU requirements page, make sure they're in the PATH or "
    "LD_LIBRARY_PATH, and that your GPU is supported.")
_CUDA_CALL = (
    "/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:129 std::conditional_t<THRW, void, "
    "onnxruntime::common::Status> onnxruntime::CudaCall(ERRTYPE, const char*, const char*, ERRTYPE, const char*, "
    "const char*, int) [with ERRTYPE = cudaError; bool THRW = true; std::conditional_t<THRW, void, "
    "onnxruntime::common::Status> = void] /onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:121 "
    "std::conditional_t<THRW, void, onnxruntime::common::Status> onnxruntime::CudaCall(ERRTYPE, const char*, "
    "const char*, ERRTYPE, const char*, const char*, int) [with ERRTYPE = cudaError; bool THRW = true; "
    "std::conditional_t<THRW, void, onnxruntime::common::Status> = void] CUDA failure {code}: {text} ; "
    "GPU={gpu} ; hostname=gpuhost ; file=/onnxruntime_src/onnxruntime/core/providers/cuda/"
    "cuda_execution_provider.cc ; line=282 ; expr=cudaSetDevice(info_.device_id); \n\n")
CUDA_NO_DEVICE = _CUDA_CALL.format(code=100, text="no CUDA-capable device is detected", gpu=32712)
CUDA_OLD_DRIVER = _CUDA_CALL.format(code=35, text="CUDA driver version is insufficient for CUDA runtime version",
                                    gpu=0)
CUDA_BAD_ORDINAL = _CUDA_CALL.format(code=101, text="invalid device ordinal", gpu=0)
#: What the dynamic loader says (the reason onnxruntime logs, and gpu.provider_library_error returns).
NO_LIBNVINFER = "libnvinfer.so.10: cannot open shared object file: No such file or directory"
NO_CUBLASLT = "libcublasLt.so.13: cannot open shared object file: No such file or directory"
NO_LIBCUDA = "libcuda.so.1: cannot open shared object file: No such file or directory"
#: onnxruntime 1.31's TensorRT provider when a dynamic input has no profile (strings of its library).
TRT_NO_PROFILE = (
    "[ONNXRuntimeError] : 1 : FAIL : User needs to provide all the dynamic shape inputs with associated profiles "
    "if they want to explicitly set profiles through provider options.\nPlease note that main graph could be "
    "partitioned into TRT/CUDA/CPU subgraphs, in this case, user also needs to provide shape profiles for the "
    "TRT subgraph's input if it's dynamic shape input.\nFollowing input(s) has no associated shape profiles "
    "provided: {names}")

#: onnxruntime's error when a CUDA kernel fails during a run (its Status text around cuDNN's, cudnn_common.h).
RUN_FAILURE = ("[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running Conv node. Name:"
               "'/block0/conv1/conv' Status Message: CUDNN failure 8: CUDNN_STATUS_EXECUTION_FAILED ; GPU=0 ; "
               "hostname=gpuhost ; file=/onnxruntime_src/onnxruntime/core/providers/cuda/nn/conv.cc ; line=455 ; "
               "expr=cudnnConvolutionForward(...);")

H200 = gpu.GpuInfo("NVIDIA H200", 143771, "580.159.03", 0)


def tf32(a: np.ndarray) -> np.ndarray:
    """float32 ``a`` rounded to TF32 (10-bit mantissa, round to nearest even), as tensor cores read it."""
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32)
    lsb = (bits >> 13) & 1
    return ((bits + np.uint32(0x0FFF) + lsb) & np.uint32(0xFFFFE000)).view(np.float32)


def _rounded(model: bytes, how: str) -> bytes:
    proto = onnx.load_from_string(model)
    for init in proto.graph.initializer:
        if init.data_type != onnx.TensorProto.FLOAT:
            continue
        w = numpy_helper.to_array(init)
        w = tf32(w) if how == "tf32" else w.astype(np.float16).astype(np.float32)
        init.CopyFrom(numpy_helper.from_array(w, init.name))
    return proto.SerializeToString()


@dataclass
class Created:
    """One ``initialize_session``: the providers and options onnxruntime's Python layer passed, and what
    happened (the provider that runs it, or "raised: <reason>")."""

    providers: list[str]
    options: list[dict[str, str]]
    outcome: str = ""
    shapes: list[int] = field(default_factory=list)

    @property
    def shape_changes(self) -> int:
        """Runs whose input shape differed from the session's previous run (its first run not counted)."""
        return sum(1 for a, b in zip(self.shapes, self.shapes[1:]) if a != b)

    def options_of(self, provider: str) -> dict[str, str] | None:
        return self.options[self.providers.index(provider)] if provider in self.providers else None


@dataclass
class EmulatedGpuHost:
    """The host (see the module docs). ``gpus``: what the driver shows; ``container`` and
    ``container_gpu``: inside a container / one made for a GPU (NVIDIA_VISIBLE_DEVICES)."""

    tensorrt: str = "missing"
    cuda: str = "ok"
    gpus: list[gpu.GpuInfo] = field(default_factory=lambda: [H200])
    container: bool = False
    container_gpu: bool = False
    created: list[Created] = field(default_factory=list)
    trt_registrations: list[dict[str, str]] = field(default_factory=list)
    replan_s: float = 0.0
    fail_after: int | None = None
    capability: float | None = 9.0
    gpu_runs: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def gpu_sessions(self) -> list[Created]:
        """The sessions that ran on an emulated GPU provider and were run at least once."""
        return [c for c in self.created if c.outcome in (CUDA, TRT) and c.shapes]

    def _ran(self, record: Created, batch: int) -> None:
        with self._lock:
            changed = bool(record.shapes) and record.shapes[-1] != batch
            record.shapes.append(batch)
            self.gpu_runs += 1
            failing = self.fail_after is not None and self.gpu_runs > self.fail_after
        if failing:
            raise C.Fail(RUN_FAILURE)
        if changed and self.replan_s > 0:
            time.sleep(self.replan_s)

    def install(self, mp: pytest.MonkeyPatch) -> EmulatedGpuHost:
        host = self
        real_session, real_binding = C.InferenceSession, C.SessionIOBinding
        listed = [TRT, CUDA, CPU]

        class Session:
            """C.InferenceSession on the emulated host: the real one is made at ``initialize_session``, on the
            CPU provider, from the model as the emulated GPU would compute it."""

            def __init__(self, sess_options: Any, model: Any, is_path: bool, read_config: bool = False) -> None:
                self._args = (sess_options, model, is_path, read_config)
                self._real: Any = None
                self._record: Created | None = None
                self._providers: list[str] = []
                self._options: dict[str, dict[str, str]] = {}

            def initialize_session(self, providers: list[str], options: list[dict[str, str]],
                                   disabled: Any = None) -> None:
                record = Created(list(providers), [dict(o) for o in options])
                host.created.append(record)
                sess_options, model, is_path, read_config = self._args
                data: bytes = Path(model).read_bytes() if is_path else model
                runs: list[str] = []
                numerics = "fp32"
                for name, opts in zip(providers, options):
                    if name == TRT and host.tensorrt == "ok":
                        inputs = [i.name for i in onnx.load_from_string(data).graph.input]
                        named = {part.split(":")[0] for part in opts.get("trt_profile_min_shapes", "").split(",")}
                        missing = [n for n in inputs if n not in named]
                        if missing:
                            record.outcome = "raised: no profile"
                            raise RuntimeError(TRT_NO_PROFILE.format(names=",".join(missing)))
                        runs.append(TRT)
                        numerics = "fp16" if opts.get("trt_fp16_enable") in ("1", "True", "true") else "tf32"
                        break
                    if name == CUDA:
                        if host.cuda in ("no-libraries", "no-driver"):
                            continue  # onnxruntime logs "Failed to load library" and goes on without it
                        if int(opts.get("device_id", "0")) >= max(1, len(host.gpus)):
                            record.outcome = "raised: CUDA failure 101"
                            raise RuntimeError(CUDA_BAD_ORDINAL)
                        if host.cuda in ("no-device", "old-driver"):
                            record.outcome = f"raised: {host.cuda}"
                            raise RuntimeError(CUDA_NO_DEVICE if host.cuda == "no-device" else CUDA_OLD_DRIVER)
                        runs.append(CUDA)
                        numerics = "fp32" if opts.get("use_tf32", "1") == "0" else "tf32"
                        break
                if numerics != "fp32":
                    data = _rounded(data, numerics)
                self._real = real_session(sess_options, data, False, read_config)
                self._real.initialize_session([CPU], [{}], disabled or set())
                self._providers = runs + [CPU]
                self._options = {p: o for p, o in zip(providers, options) if p in runs}
                record.outcome = self._providers[0]
                self._record = record if runs else None

            def run(self, output_names: Any, input_feed: dict[str, Any], run_options: Any = None) -> Any:
                if self._record is not None:
                    host._ran(self._record, len(next(iter(input_feed.values()))))
                return self._real.run(output_names, input_feed, run_options)

            def run_with_iobinding(self, binding: Any, run_options: Any = None) -> Any:
                if self._record is not None:
                    host._ran(self._record, binding.batch)
                return self._real.run_with_iobinding(binding.real, run_options)

            def get_providers(self) -> list[str]:
                return list(self._providers)

            def get_provider_options(self) -> dict[str, dict[str, str]]:
                return {**self._options, CPU: {}}

            def __getattr__(self, name: str) -> Any:
                return getattr(self._real, name)

        def register_trt(session_options: Any, options: dict[str, str]) -> None:
            host.trt_registrations.append(dict(options))
            if host.tensorrt != "ok":
                raise RuntimeError(TRT_PLUGIN_ERROR)

        def library_error(provider: str) -> str | None:
            if provider == TRT and host.tensorrt != "ok":
                return NO_LIBNVINFER
            if provider == CUDA and host.cuda == "no-libraries":
                return NO_CUBLASLT
            if provider == CUDA and host.cuda == "no-driver":
                return NO_LIBCUDA
            return None

        mp.setattr(C, "get_available_providers", lambda: list(listed))
        mp.setattr(ort, "get_available_providers", lambda: list(listed))
        # raising=False: the CPU package (the .[cpu,test] install) has no such function; its Python layer calls it
        mp.setattr(C, "register_tensorrt_plugins_as_custom_ops", register_trt, raising=False)
        mp.setattr(C, "InferenceSession", Session)
        class Binding:
            """C.SessionIOBinding that remembers the batch size of its last bound input."""

            def __init__(self, session: Any) -> None:
                self.real = real_binding(session._real if isinstance(session, Session) else session)
                self.batch = 0

            def bind_input(self, name: str, device: Any, dtype: Any, shape: Any, ptr: int) -> None:
                self.batch = int(shape[0])
                self.real.bind_input(name, device, dtype, shape, ptr)

            def __getattr__(self, name: str) -> Any:
                return getattr(self.real, name)

        mp.setattr(C, "SessionIOBinding", Binding)
        mp.setattr(gpu, "compute_capability", lambda device=0: host.capability if host.gpus else None)
        mp.setattr(gpu, "nvidia_gpus", lambda: list(host.gpus))
        mp.setattr(gpu, "in_container", lambda: host.container)
        mp.setattr(gpu, "container_wants_gpu", lambda: host.container_gpu)
        mp.setattr(gpu, "preload_cuda", lambda: "")
        mp.setattr(gpu, "preload_tensorrt", lambda: {})
        mp.setattr(gpu, "provider_library_error", library_error)
        return self

    def last(self) -> Created:
        return self.created[-1]


def main() -> None:
    """``python -m tests.neural.gpu_host TENSORRT CUDA -- ARGS...``: ``lichessbot ARGS`` on the emulated host (a real
    process, its real stdout), e.g. ``python -m tests.neural.gpu_host missing no-device -- uci``."""
    sep = sys.argv.index("--")
    trt, cuda = sys.argv[1:sep]
    from lichessbot.cli import main as cli_main

    with pytest.MonkeyPatch.context() as mp:
        EmulatedGpuHost(tensorrt=trt, cuda=cuda).install(mp)
        sys.stdout.flush()
        code = cli_main(sys.argv[sep + 1:])
    raise SystemExit(code)


if __name__ == "__main__":
    main()
