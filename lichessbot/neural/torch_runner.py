"""The PyTorch runner (``engine.backend: torch``): the network's ONNX graph computed with PyTorch, on CUDA when
PyTorch sees a GPU, with one CUDA graph per batch bucket.

Why PyTorch beside onnxruntime: a host with PyTorch for CUDA already has everything a GPU needs (the CUDA
runtime, cuBLAS and cuDNN come with PyTorch's wheels), where onnxruntime-gpu is a second 255 MB stack built
against its own CUDA and cuDNN versions. The GPU machines this project is measured on have PyTorch and no
onnxruntime-gpu; a user with PyTorch installed needs nothing else either (docs/gpu.md).

The graph is the one onnxruntime runs, from the same weights: :mod:`lichessbot.neural.onnx_interp` interprets
the ONNX nodes with PyTorch's operators (and with numpy in the tests, against onnxruntime). On CUDA:

- precision ``auto`` is fp16 where the GPU has tensor cores (compute capability >= 7.0 and no GTX 16xx: lc0
  src/neural/backends/cuda/network_cuda.cc), else fp32; ``fp16`` and ``bf16`` cast the weights and inputs
  (outputs come back as float32); ``fp32`` turns TF32 off (``torch.backends.cudnn.allow_tf32``), ``tf32``
  on;
- every call is padded to a bucket of :data:`~lichessbot.neural.session.BATCH_BUCKETS`, and each bucket is
  captured once as a CUDA graph (PyTorch docs, "CUDA Graphs": warm-up runs on a side stream, then
  ``torch.cuda.graph``), replayed with its fixed input buffer: one launch per call, one cuDNN plan per shape
  (``torch.backends.cudnn.benchmark`` picks it at the warm-up).

On the CPU it runs the graph eagerly in fp32 (a fallback and what the tests run where torch is installed).
"""

from __future__ import annotations

import importlib
import threading
import time
from typing import Any

import numpy as np
import structlog

from lichessbot import _core
from lichessbot.config import EngineConfig
from lichessbot.errors import NetworkError
from lichessbot.neural.network import MLH_NAME, POLICY_NAME, VALUE_NAME, WDL_NAME, Network
from lichessbot.neural.onnx_interp import Graph, Ops, run_graph
from lichessbot.neural.providers import FP16_MIN_COMPUTE_CAPABILITY
from lichessbot.neural.runner import NetInfo, NetOutputs
from lichessbot.neural.session import BATCH_BUCKETS, bucket_of

__all__ = ["TORCH_CPU", "TORCH_CUDA", "TorchRunner", "from_config"]

log = structlog.get_logger("lichessbot.neural")

#: :attr:`NetInfo.provider` of the runner on CUDA and on the CPU.
TORCH_CUDA, TORCH_CPU = "torch-cuda", "torch-cpu"
#: Positions a call may carry at most (lc0's ONNX maximum, as the onnxruntime runner).
MAX_BATCH = 1024
#: The search minibatch on CUDA (as the onnxruntime runner's GPU_MINIBATCH).
GPU_MINIBATCH = 256


def _import_torch() -> Any:
    try:  # Deferred on purpose: only this backend needs PyTorch (not a dependency of the project).
        return importlib.import_module("torch")
    except ModuleNotFoundError:
        raise NetworkError("backend torch needs PyTorch: pip install torch (or choose backend auto)") from None


class _TorchOps(Ops):
    """PyTorch under :func:`~lichessbot.neural.onnx_interp.run_graph`: float weights and activations on
    ``device`` in ``dtype``; host constants moved to the device once and kept (so a CUDA graph capture makes
    no host-to-device copy)."""

    def __init__(self, torch: Any, device: Any, dtype: Any) -> None:
        self.torch, self.device, self.dtype = torch, device, dtype
        self.f = torch.nn.functional
        self._moved: dict[tuple[str, tuple[int, ...], bytes], Any] = {}

    def weight(self, arr: np.ndarray) -> Any:
        if np.issubdtype(arr.dtype, np.floating):
            # a writable copy: torch.from_numpy warns on a read-only array (the initializers onnx hands out are)
            return self.torch.from_numpy(np.array(arr, np.float32, order="C")).to(self.device, self.dtype)
        return arr

    def is_device(self, x: Any) -> bool:
        return isinstance(x, self.torch.Tensor)

    def to_device(self, arr: np.ndarray, like: Any) -> Any:
        key = (arr.dtype.str, tuple(arr.shape), arr.tobytes())
        found = self._moved.get(key)
        if found is None:
            t = self.torch.from_numpy(np.array(arr))
            found = t.to(like.device, like.dtype if t.is_floating_point() else t.dtype)
            self._moved[key] = found
        return found

    def conv2d(self, x: Any, w: Any, b: Any | None, pads: Any) -> Any:
        if pads[0] != pads[2] or pads[1] != pads[3]:
            x = self.f.pad(x, (pads[1], pads[3], pads[0], pads[2]))
            return self.f.conv2d(x, w, b)
        return self.f.conv2d(x, w, b, padding=(pads[0], pads[1]))

    def transpose(self, x: Any, perm: Any) -> Any:
        return x.permute(*perm)

    def relu(self, x: Any) -> Any:
        return self.torch.relu(x)

    def sigmoid(self, x: Any) -> Any:
        return self.torch.sigmoid(x)

    def tanh(self, x: Any) -> Any:
        return self.torch.tanh(x)

    def softplus(self, x: Any) -> Any:
        return self.f.softplus(x)

    def softmax(self, x: Any, axis: int) -> Any:
        return self.torch.softmax(x.float(), dim=axis).to(x.dtype)  # in float32, as lc0's fp16 heads

    def mean(self, x: Any, axes: Any, keepdims: bool) -> Any:
        return x.mean(dim=tuple(axes), keepdim=keepdims)

    def reshape(self, x: Any, shape: Any) -> Any:
        return x.reshape(tuple(shape))

    def take(self, x: Any, idx: np.ndarray, axis: int) -> Any:
        axis %= x.dim()
        flat = self.to_device(np.asarray(idx, np.int64).reshape(-1), x)
        out = self.torch.index_select(x, axis, flat)
        shape = list(x.shape[:axis]) + list(np.shape(idx)) + list(x.shape[axis + 1:])
        return out.reshape(shape)

    def concat(self, xs: list[Any], axis: int) -> Any:
        return self.torch.cat(xs, dim=axis)

    def cast(self, x: Any, to: int) -> Any:
        return x  # the runner's precision decides the dtype of every float tensor


class TorchRunner:
    """A :class:`~lichessbot.neural.runner.NetworkRunner` over PyTorch (see the module docs).

    ``device``: the CUDA device number (``engine.device``); ``precision``: auto, fp32, tf32, fp16 or bf16;
    ``cache_size``: NN cache entries; ``cpu``: run on the CPU even where CUDA is available. Raises
    NetworkError without PyTorch, for an operator the interpreter does not know, or a bad precision.
    """

    def __init__(self, network: Network, *, device: int = 0, precision: str = "auto", cache_size: int = 2_000_000,
                 cpu: bool = False) -> None:
        torch = self._torch = _import_torch()
        self.network = network
        self.search_cache = _core.NNCache(cache_size)
        self.cuda = bool(torch.cuda.is_available()) and not cpu
        self.device = torch.device(f"cuda:{device}" if self.cuda else "cpu")
        self.precision = self._precision(precision, device)
        dtype = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
                 "bf16": torch.bfloat16}[self.precision]
        if self.cuda:
            torch.backends.cudnn.allow_tf32 = self.precision == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = self.precision == "tf32"
            torch.backends.cudnn.benchmark = True  # one shape per CUDA graph: cuDNN tunes it once
        self._graph = Graph(network.model)
        if len(self._graph.inputs) != 1:
            raise NetworkError("the torch runner takes networks with one input, the planes (not the compact form)")
        self._ops = _TorchOps(torch, self.device, dtype)
        self._weights = {k: self._ops.weight(v) for k, v in self._graph.initializers.items()}
        self._dtype = dtype
        wanted = [POLICY_NAME, WDL_NAME if network.has_wdl else VALUE_NAME] + ([MLH_NAME] if network.has_mlh else [])
        missing = [n for n in wanted if n not in self._graph.outputs]
        if missing:
            raise NetworkError(f"network {network.name} lacks the output(s) {', '.join(missing)}")
        self._picks = [self._graph.outputs.index(n) for n in wanted]
        self._lock = threading.Lock()
        self._captured: dict[int, tuple[Any, Any, list[Any]]] = {}  # bucket -> (graph, input, outputs)
        self._minibatch: int | None = None
        self.shapes_sent: set[int] = set()
        log.info("network ready", network=network.name, provider=self.provider, precision=self.precision,
                 torch=torch.__version__)

    def _precision(self, precision: str, device: int) -> str:
        if precision not in ("auto", "fp32", "tf32", "fp16", "bf16"):
            raise NetworkError(f"precision must be auto, fp32, tf32, fp16 or bf16, got {precision!r}")
        if precision != "auto":
            return precision
        if not self.cuda:
            return "fp32"
        major, minor = self._torch.cuda.get_device_capability(device)
        name = str(self._torch.cuda.get_device_name(device))
        cap = major + minor / 10
        return "fp16" if cap >= FP16_MIN_COMPUTE_CAPABILITY and "GTX 16" not in name else "fp32"

    @property
    def provider(self) -> str:
        return TORCH_CUDA if self.cuda else TORCH_CPU

    @property
    def info(self) -> NetInfo:
        mb = self.default_minibatch()
        return NetInfo(name=self.network.name, input_format=self.network.input_format,
                       has_wdl=self.network.has_wdl, has_mlh=self.network.has_mlh, provider=self.provider,
                       minibatch=mb, concurrency=1, inflight=1, max_batch=MAX_BATCH if self.cuda else mb)

    def clear_cache(self) -> None:
        self.search_cache.clear()

    def _forward(self, x: Any) -> list[Any]:
        outs = run_graph(self._graph, {self._graph.inputs[0]: x}, self._ops, self._weights)
        return [outs[k] for k in self._picks]

    def _capture(self, rows: int) -> tuple[Any, Any, list[Any]]:
        torch = self._torch
        static_in = torch.zeros((rows, 112, 8, 8), dtype=self._dtype, device=self.device)
        side = torch.cuda.Stream(device=self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.inference_mode(), torch.cuda.stream(side):
            for _ in range(2):  # PyTorch docs, "CUDA Graphs": warm up on a side stream before capturing
                self._forward(static_in)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.inference_mode(), torch.cuda.graph(graph):
            static_out = self._forward(static_in)
        return graph, static_in, static_out

    def run(self, planes: np.ndarray, *, game: str = "", priority: int = 0,
            out: NetOutputs | None = None) -> NetOutputs:
        """The network's outputs for float32 ``planes`` [B, 112, 8, 8] (see
        :meth:`~lichessbot.neural.runner.NetworkRunner.run`). Raises ValueError for planes of another shape or
        more than 1024 positions on CUDA."""
        if planes.ndim != 4 or planes.shape[1:] != (112, 8, 8):
            raise ValueError(f"planes must be [B, 112, 8, 8], got {list(planes.shape)}")
        b = len(planes)
        torch = self._torch
        x = torch.from_numpy(np.ascontiguousarray(planes, np.float32))
        with self._lock:
            if self.cuda:
                if b > MAX_BATCH:
                    raise ValueError(f"{b} positions, a call takes at most {MAX_BATCH}")
                rows = min(bucket_of(b), MAX_BATCH)
                captured = self._captured.get(rows)
                if captured is None:
                    captured = self._captured[rows] = self._capture(rows)
                graph, static_in, static_out = captured
                static_in[:b].copy_(x, non_blocking=False)
                graph.replay()
                raw = [o[:b].float().cpu().numpy() for o in static_out]
            else:
                rows = b
                with torch.inference_mode():
                    raw = [o.float().numpy() for o in self._forward(x.to(self._dtype))]
            self.shapes_sent.add(rows)
        logits = np.ascontiguousarray(raw[0].reshape(b, -1), np.float32)
        if self.network.has_wdl:
            wdl = np.ascontiguousarray(raw[1].reshape(b, 3), np.float32)
        else:
            v = raw[1].reshape(-1).astype(np.float32)
            wdl = np.stack([(1 + v) / 2, np.zeros_like(v), (1 - v) / 2], axis=1)
        mlh = raw[2].reshape(-1).astype(np.float32) if self.network.has_mlh else None
        result = NetOutputs(logits, wdl, mlh)
        return result.copy_into(out) if out is not None else result

    def warm_up(self) -> float:
        """Capture every bucket's CUDA graph (CUDA) and time the CPU minibatch; logs and returns the seconds."""
        t = time.perf_counter()
        if self.cuda:
            planes = np.zeros((MAX_BATCH, 112, 8, 8), np.float32)
            for b in BATCH_BUCKETS:
                self.run(planes[:b])
        minibatch = self.default_minibatch()
        seconds = time.perf_counter() - t
        log.info("network warmed up", provider=self.provider, seconds=round(seconds, 3),
                 graphs=sorted(self._captured), minibatch=minibatch, precision=self.precision)
        return seconds

    def default_minibatch(self) -> int:
        """256 on CUDA; on the CPU the batch it evaluates in about 30 ms (as the onnxruntime runner)."""
        if self._minibatch is None:
            if self.cuda:
                self._minibatch = GPU_MINIBATCH
            else:
                planes = np.zeros((32, 112, 8, 8), np.float32)
                self.run(planes[:8])
                t = time.perf_counter()
                self.run(planes)
                rate = 32 / max(time.perf_counter() - t, 1e-6)
                self._minibatch = int(min(256, max(8, round(0.030 * rate / 8) * 8)))
        return self._minibatch

    def close(self) -> None:
        """Drop the captured graphs and give their memory back to the device."""
        with self._lock:
            self._captured.clear()
            if self.cuda:
                self._torch.cuda.empty_cache()


def from_config(engine: EngineConfig, network: Network) -> TorchRunner:
    """The PyTorch runner of backend ``torch`` (:mod:`lichessbot.neural.registry`) with ``engine.device``,
    ``engine.precision`` and ``engine.nn_cache_size``, warmed up. Raises NetworkError without PyTorch."""
    if engine.compact_input:
        raise NetworkError("backend torch takes the planes: set engine.compact_input to false")
    runner = TorchRunner(network, device=engine.device, precision=engine.precision, cache_size=engine.nn_cache_size)
    runner.warm_up()
    return runner
