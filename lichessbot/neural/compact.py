"""The compact network input: 112 bit-masks and 112 values per position, expanded inside the model.

The search core can write each position as lc0's ``InputPlane`` pairs (src/neural/network.h: a 64-bit mask
and a value per plane; :meth:`lichessbot._core.SearchCore.gather_compact`) instead of 112 x 64 floats:
uint8 [B, 1344] (:data:`COMPACT_BYTES` a position: 112 little-endian u64 masks, then 112 little-endian f32
values) instead of 28,672 bytes. :func:`compact_model` puts a small prologue in front of a
network so that it takes the pairs and expands them itself, on whatever device runs it (lc0's CUDA
backend expands the same pairs on the GPU: src/neural/backends/cuda/common_kernels.cu ``expandPlanes``).

The prologue's inputs: ``/input/masks`` uint8 [B, 112, 8] (each mask's 8 bytes, little-endian: byte r is
rank r of the side to move's view, bit f its file -- the uint64 masks viewed as bytes, no copy) and
``/input/values`` float32 [B, 112]. It looks each byte up in a 256 x 8 table of its bits (Gather, as
the core's own encoder does), multiplies by the plane's value and hands ``/input/planes`` [B, 112, 8, 8]
to the network unchanged. Only ops of ONNX opset 5 and later (Cast, Gather, Reshape, Mul) are used.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from lichessbot.neural.network import INPUT_NAME
from lichessbot.neural.runner import COMPACT_BYTES

__all__ = ["BYTE_BITS", "COMPACT_BYTES", "MASKS_NAME", "VALUES_NAME", "compact_model", "compact_of", "expand",
           "split"]

MASKS_NAME = "/input/masks"
VALUES_NAME = "/input/values"
#: Row b: the 8 bits of byte b as floats, bit 0 first (the core's ``BYTE_ROWS``).
BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float32)


def split(inputs: np.ndarray, masks: np.ndarray | None = None,
          values: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The prologue's two inputs of compact ``inputs`` uint8 [B, 1344]: masks uint8 [B, 112, 8] and values
    float32 [B, 112], contiguous; written into ``masks`` and ``values`` (at least B rows) when given.
    Raises ValueError for another shape."""
    if inputs.ndim != 2 or inputs.shape[1] != COMPACT_BYTES or inputs.dtype != np.uint8:
        raise ValueError(f"compact inputs must be uint8 [B, {COMPACT_BYTES}], got {inputs.dtype} {list(inputs.shape)}")
    b = len(inputs)
    m = inputs[:, :896].reshape(b, 112, 8)
    v = inputs[:, 896:].view("<f4")
    if masks is None or values is None:
        return np.ascontiguousarray(m), np.ascontiguousarray(v, dtype=np.float32)
    masks[:b] = m
    values[:b] = v
    return masks[:b], values[:b]


def compact_of(planes: np.ndarray) -> np.ndarray:
    """The compact form uint8 [B, 1344] of ``planes`` float32 [B, 112, 8, 8] whose planes each hold one
    non-negative value on the squares of a mask, as the encoder writes them (numpy; the inverse of
    :func:`expand`: the same planes, not always the core's bytes: an all-zero plane becomes mask 0, value 1)."""
    b = len(planes)
    flat = planes.reshape(b, 112, 64)
    values = flat.max(axis=2)
    bits = (flat != 0).astype(np.uint8).reshape(b, 112, 8, 8)
    out = np.zeros((b, COMPACT_BYTES), np.uint8)
    out[:, :896] = np.packbits(bits, axis=3, bitorder="little").reshape(b, 896)
    out[:, 896:].view("<f4")[:] = np.where(values == 0, 1.0, values)
    return out


def expand(inputs: np.ndarray) -> np.ndarray:
    """The planes float32 [B, 112, 8, 8] of compact ``inputs`` uint8 [B, 1344] (numpy; what the prologue
    computes)."""
    masks, values = split(inputs)
    planes: np.ndarray = BYTE_BITS[masks] * values.reshape(len(inputs), 112, 1, 1)
    return planes


def compact_model(model: bytes) -> bytes:
    """``model`` (a serialized network with lc0's ``/input/planes``) taking the compact input instead:
    ``/input/masks`` uint8 [B, 112, 8] and ``/input/values`` float32 [B, 112]. Raises ValueError when
    the model has no ``/input/planes`` input."""
    proto = onnx.load_from_string(model)
    graph = proto.graph
    inputs = [i for i in graph.input if i.name == INPUT_NAME]
    if not inputs:
        raise ValueError(f"the model has no input {INPUT_NAME!r}")
    graph.input.remove(inputs[0])
    graph.input.extend([
        helper.make_tensor_value_info(MASKS_NAME, TensorProto.UINT8, ["batch", 112, 8]),
        helper.make_tensor_value_info(VALUES_NAME, TensorProto.FLOAT, ["batch", 112]),
    ])
    graph.initializer.extend([
        numpy_helper.from_array(BYTE_BITS, "/compact/byte_bits"),
        numpy_helper.from_array(np.array([-1, 112, 1, 1], np.int64), "/compact/value_shape"),
    ])
    prologue = [
        helper.make_node("Cast", [MASKS_NAME], ["/compact/bytes"], to=TensorProto.INT32),
        helper.make_node("Gather", ["/compact/byte_bits", "/compact/bytes"], ["/compact/bits"], axis=0),
        helper.make_node("Reshape", [VALUES_NAME, "/compact/value_shape"], ["/compact/values"]),
        helper.make_node("Mul", ["/compact/bits", "/compact/values"], [INPUT_NAME]),
    ]
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(prologue + nodes)
    serialized: bytes = proto.SerializeToString()
    return serialized
