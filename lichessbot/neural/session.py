"""onnxruntime helpers for the GPU: a float16 copy of a network, batch buckets, and runs through I/O binding.

- :func:`float16_model`: the network with float16 weights and float32 inputs and outputs, made by
  onnxconverter-common (``float16.convert_float_to_float16(keep_io_types=True)``), for CUDA with
  ``engine.precision: fp16`` (TensorRT makes its own: its ``trt_fp16_enable`` option).
- :func:`bucket_of`: the batch size a call is padded to on a GPU, so that cuDNN tunes (and TensorRT and
  CUDA graphs capture) a handful of shapes once, at warm-up, instead of one per batch size 1..1024.
- :class:`BoundRunner`: a session run through I/O binding with **one set of buffers per concurrent
  call** (a slot): the input planes and every output live in host arrays allocated once per slot, for
  ``max_batch`` positions (page-locked with ``cudaHostAlloc`` on CUDA when the CUDA runtime is loaded, so
  the copies to and from the device run at full speed), and are bound to the session by pointer with each
  call's shape. A slot is taken from a free list for one call and given back after its outputs were
  copied out, so two calls in flight never share a buffer (one shared set of output buffers handed
  concurrent calls each other's outputs: tests/neural/test_gpu_race.py). Nothing is allocated per call on this path.
"""

from __future__ import annotations

import ctypes
import queue
import threading
import warnings
from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import structlog

from lichessbot.errors import NetworkError
from lichessbot.neural.compact import MASKS_NAME, VALUES_NAME, split
from lichessbot.neural.runner import NetOutputs

__all__ = ["BATCH_BUCKETS", "BoundRunner", "bucket_of", "float16_model"]

log = structlog.get_logger("lichessbot.neural")

#: Batch sizes a GPU call is padded to (ours; lc0's CUDA backends also run fixed batch sizes up to their
#: maximum, src/neural/backends/cuda/network_cudnn.cc). The largest is lc0's ONNX maximum, 1024.
BATCH_BUCKETS = (8, 16, 32, 64, 128, 256, 512, 1024)


def bucket_of(n: int, buckets: Sequence[int] = BATCH_BUCKETS) -> int:
    """The smallest bucket that holds ``n`` positions (``n`` itself past the largest)."""
    for b in buckets:
        if n <= b:
            return b
    return n


def float16_model(model: bytes) -> bytes:
    """``model`` (a serialized ONNX network) with float16 weights and compute, float32 inputs and outputs.
    Raises NetworkError when onnxconverter-common is not installed (the gpu extra brings it)."""
    try:  # Deferred on purpose: only fp16 needs the converter (the gpu extra), and it pulls in onnx's tooling.
        from onnxconverter_common import float16  # noqa: PLC0415
    except ModuleNotFoundError:
        raise NetworkError('precision fp16 needs onnxconverter-common, which the gpu extra installs: '
                           'pip install "lichessbot-nn[gpu]" (on a CPU install: pip install onnxconverter-common)'
                           ) from None

    proto = onnx.load_from_string(model)
    with warnings.catch_warnings():  # it warns for every weight below float16's range (rounded to 1e-7)
        warnings.simplefilter("ignore", UserWarning)
        serialized: bytes = float16.convert_float_to_float16(proto, keep_io_types=True).SerializeToString()
        return serialized


class _PinnedHost:
    """Page-locked host memory from the CUDA runtime (``cudaHostAlloc``/``cudaFreeHost``, libcudart), or
    None where the runtime cannot be loaded (then plain numpy memory is used)."""

    _lib: ctypes.CDLL | None = None
    _tried = False
    _lock = threading.Lock()

    @classmethod
    def runtime(cls) -> ctypes.CDLL | None:
        with cls._lock:
            if not cls._tried:
                cls._tried = True
                for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
                    try:
                        lib = ctypes.CDLL(name)
                    except OSError:
                        continue
                    lib.cudaHostAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_uint]
                    lib.cudaHostAlloc.restype = ctypes.c_int
                    lib.cudaFreeHost.argtypes = [ctypes.c_void_p]
                    lib.cudaFreeHost.restype = ctypes.c_int
                    cls._lib = lib
                    break
            return cls._lib

    @classmethod
    def empty(cls, shape: tuple[int, ...], dtype: type) -> tuple[np.ndarray, int | None]:
        """A zeroed array of ``shape`` and ``dtype``; page-locked when possible. Returns the array and
        the pinned pointer to free (None: numpy memory)."""
        lib = cls.runtime()
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        if lib is not None:
            ptr = ctypes.c_void_p()
            if lib.cudaHostAlloc(ctypes.byref(ptr), nbytes, 0) == 0 and ptr.value:
                buf = memoryview((ctypes.c_char * nbytes).from_address(ptr.value)).cast("B")
                arr: np.ndarray = np.frombuffer(buf, dtype=dtype).reshape(shape)
                arr[...] = 0
                return arr, ptr.value
        return np.zeros(shape, dtype=dtype), None

    @classmethod
    def free(cls, ptr: int) -> None:
        lib = cls.runtime()
        if lib is not None:
            lib.cudaFreeHost(ctypes.c_void_p(ptr))


class _Slot:
    """One call's buffers: the inputs (``planes`` [max_batch, 112, 8, 8] in the session's input dtype, or
    for the compact form ``masks`` uint8 [max_batch, 112, 8] and ``values`` float32 [max_batch, 112]) and
    one host array [max_batch, width] per output, bound by pointer through one IOBinding (reused)."""

    def __init__(self, runner: BoundRunner) -> None:
        self.pinned: list[int] = []
        pin = runner.device == "cuda"
        n = runner.max_batch
        if runner.compact:
            self.inputs = {MASKS_NAME: self._array(n, (112, 8), np.uint8, pin),
                           VALUES_NAME: self._array(n, (112,), np.float32, pin)}
        else:
            self.inputs = {runner.input_name: self._array(n, (112, 8, 8), runner.input_dtype, pin)}
        self.outputs = {name: self._array(n, (w,), np.float32, pin) for name, w in runner.outputs}
        self.binding = runner.session.io_binding()

    def _array(self, rows: int, shape: tuple[int, ...], dtype: type, pin: bool) -> np.ndarray:
        if pin:
            arr, ptr = _PinnedHost.empty((rows, *shape), dtype)
            if ptr is not None:
                self.pinned.append(ptr)
            return arr
        return np.zeros((rows, *shape), dtype=dtype)

    def release(self) -> None:
        for ptr in self.pinned:
            _PinnedHost.free(ptr)
        self.pinned = []


class BoundRunner:
    """Runs ``session`` through I/O binding, one slot of buffers per call in flight (see the module docs).

    ``outputs``: (name, width) per output, e.g. ``[("/output/policy", 1858), ("/output/wdl", 3)]``;
    ``device``: "cuda" (the session runs on CUDA or TensorRT: onnxruntime copies the bound host input to the
    device and the outputs back into the bound host arrays) or "cpu" (bound in place); ``max_batch``:
    positions per call at most; ``buckets``: pad each call to a bucket (:func:`bucket_of`) so the session
    sees only those shapes; ``compact``: the session takes the compact input
    (:func:`lichessbot.neural.compact.compact_model`) and ``run`` gets uint8 [B, 1344]; ``shapes``: a set
    that every call adds its bound batch size to (the evaluator's record of what the session was sent).
    ``run`` raises ValueError past ``max_batch``.
    """

    def __init__(self, session: ort.InferenceSession, input_name: str, outputs: Sequence[tuple[str, int]],
                 device: str, max_batch: int, *, input_dtype: type = np.float32, buckets: bool = False,
                 compact: bool = False, shapes: set[int] | None = None) -> None:
        self.compact = compact
        #: Batch sizes bound to the session so far (the caller's set when given).
        self.shapes: set[int] = set() if shapes is None else shapes
        self.session = session
        self.input_name = input_name
        self.outputs = list(outputs)
        self.device = device
        self.max_batch = max_batch
        self.input_dtype = input_dtype
        self.buckets = buckets
        self._free: queue.SimpleQueue[_Slot] = queue.SimpleQueue()
        self._slots: list[_Slot] = []
        self._lock = threading.Lock()

    @property
    def pinned(self) -> bool:
        """True when the slots' buffers are page-locked (CUDA with its runtime loaded)."""
        return any(s.pinned for s in self._slots)

    def _take(self) -> _Slot:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            slot = _Slot(self)
            with self._lock:
                self._slots.append(slot)
            return slot

    def run(self, planes: np.ndarray, out: NetOutputs | None = None) -> list[np.ndarray]:
        """The outputs for ``planes`` [B, 112, 8, 8] (compact: uint8 [B, 1344]), each float32 [B, width]:
        written into ``out`` when it is given (its arrays in output order, at least B rows: the returned
        arrays are its views), or into new arrays. Raises ValueError past ``max_batch`` positions."""
        b = len(planes)
        if b > self.max_batch:
            raise ValueError(f"{b} positions, the bound buffers hold {self.max_batch}")
        rows = min(bucket_of(b), self.max_batch) if self.buckets else b
        slot = self._take()
        try:
            # Into the slot's (page-locked) buffers; the padding rows keep earlier positions.
            if self.compact:
                split(planes, slot.inputs[MASKS_NAME], slot.inputs[VALUES_NAME])
            else:
                slot.inputs[self.input_name][:b] = planes
            binding = slot.binding
            self.shapes.add(rows)  # a set's add is atomic under the GIL
            for name, x in slot.inputs.items():
                binding.bind_input(name, "cpu", 0, x.dtype, [rows, *x.shape[1:]], x.ctypes.data)
            for name, w in self.outputs:
                binding.bind_output(name, "cpu", 0, np.float32, [rows, w], slot.outputs[name].ctypes.data)
            self.session.run_with_iobinding(binding)
            result = []
            for k, (name, _) in enumerate(self.outputs):
                src = slot.outputs[name][:b]
                target = None if out is None else out[k]
                if target is not None:
                    dst = target[:b]
                    dst.reshape(src.shape)[...] = src
                    result.append(dst)
                else:
                    result.append(src.copy())
            return result
        finally:
            self._free.put(slot)

    def close(self) -> None:
        """Free the page-locked buffers (the runner must not be used afterwards)."""
        with self._lock:
            for slot in self._slots:
                slot.release()
            self._slots = []
