"""onnxruntime helpers for the GPU: a float16 copy of a network, and runs through I/O binding.

- :func:`float16_model`: the network with float16 weights and float32 inputs and outputs, made by
  onnxconverter-common (``float16.convert_float_to_float16(keep_io_types=True)``), for CUDA with
  ``engine.precision: fp16`` (TensorRT makes its own: its ``trt_fp16_enable`` option).
- :class:`BoundRunner`: a session run through I/O binding. The output buffers are allocated once, for
  ``max_batch`` positions, on the session's device (CUDA device memory, or host arrays on the CPU) and
  bound by pointer with each call's shape, so that no output buffer is allocated per call; on CUDA the
  input is copied to the device by onnxruntime (``bind_cpu_input``), on the CPU it is bound in place.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort

__all__ = ["BoundRunner", "float16_model"]


def float16_model(model: bytes) -> bytes:
    """``model`` (a serialized ONNX network) with float16 weights and compute, float32 inputs and outputs.
    Raises ImportError when onnxconverter-common is not installed."""
    # Deferred on purpose: only fp16 needs the converter, and it pulls in much of onnx's tooling.
    from onnxconverter_common import float16  # noqa: PLC0415

    proto = onnx.load_from_string(model)
    with warnings.catch_warnings():  # it warns for every weight below float16's range (rounded to 1e-7)
        warnings.simplefilter("ignore", UserWarning)
        return float16.convert_float_to_float16(proto, keep_io_types=True).SerializeToString()


class BoundRunner:
    """Runs ``session`` through I/O binding (see the module docs).

    ``outputs``: (name, width) per output, e.g. ``[("/output/policy", 1858), ("/output/wdl", 3)]``;
    ``device``: "cuda" or "cpu"; ``max_batch``: positions per call at most. ``run`` raises ValueError
    past ``max_batch``.
    """

    def __init__(self, session: ort.InferenceSession, input_name: str, outputs: Sequence[tuple[str, int]],
                 device: str, max_batch: int) -> None:
        self.session = session
        self.input_name = input_name
        self.outputs = list(outputs)
        self.device = device
        self.max_batch = max_batch
        if device == "cpu":
            self._host_out = {name: np.empty((max_batch, w), dtype=np.float32) for name, w in self.outputs}
            self._ptr = {name: a.ctypes.data for name, a in self._host_out.items()}
        else:
            self._dev_out = {name: ort.OrtValue.ortvalue_from_shape_and_type((max_batch, w), np.float32, device, 0)
                             for name, w in self.outputs}
            self._ptr = {name: v.data_ptr() for name, v in self._dev_out.items()}

    def run(self, planes: np.ndarray) -> list[np.ndarray]:
        """The outputs for float32 ``planes`` ``[B, 112, 8, 8]``, each float32 ``[B, width]`` (host copies)."""
        b = len(planes)
        if b > self.max_batch:
            raise ValueError(f"{b} positions, the bound buffers hold {self.max_batch}")
        x = np.ascontiguousarray(planes, dtype=np.float32)
        binding = self.session.io_binding()
        if self.device == "cpu":
            binding.bind_input(self.input_name, "cpu", 0, np.float32, list(x.shape), x.ctypes.data)
        else:
            binding.bind_cpu_input(self.input_name, x)
        for name, w in self.outputs:
            binding.bind_output(name, self.device, 0, np.float32, [b, w], self._ptr[name])
        self.session.run_with_iobinding(binding)
        if self.device == "cpu":
            return [self._host_out[name][:b].copy() for name, _ in self.outputs]
        return [v[:b] for v in (o.reshape(-1, w) for o, (_, w) in zip(binding.copy_outputs_to_cpu(), self.outputs))]
