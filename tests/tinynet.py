"""Tiny random-weight networks with Lc0's ONNX interface, built inside the tests.

``build_tiny_onnx`` writes a model with input ``/input/planes`` float32 [batch, 112, 8, 8] and outputs
``/output/policy`` float32 [batch, 1858] (raw logits), ``/output/wdl`` float32 [batch, 3] (softmaxed,
win/draw/loss for the side to move) or ``/output/value`` float32 [batch, 1] (tanh), and optionally
``/output/mlh`` float32 [batch, 1] (ReLU, plies) -- the layout ``lc0 leela2onnx`` writes
(docs/lc0-conventions.md §4). The weights are random but fixed by the seed, so results repeat.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def tiny_model(*, seed: int = 0, wdl: bool = True, mlh: bool = False, channels: int = 4) -> onnx.ModelProto:
    """An ONNX model (IR 8, opset 17): 1x1 conv 112->channels, ReLU, then dense policy and value heads."""
    rng = np.random.default_rng(seed)
    flat = channels * 64
    inits = [
        numpy_helper.from_array((rng.standard_normal((channels, 112, 1, 1)) * 0.3).astype(np.float32), "conv_w"),
        numpy_helper.from_array((rng.standard_normal(channels) * 0.1).astype(np.float32), "conv_b"),
        numpy_helper.from_array((rng.standard_normal((flat, 1858)) * 0.2).astype(np.float32), "pol_w"),
        numpy_helper.from_array((rng.standard_normal(1858) * 0.5).astype(np.float32), "pol_b"),
        numpy_helper.from_array((rng.standard_normal((flat, 3)) * 0.05).astype(np.float32), "val_w"),
        numpy_helper.from_array(np.array([0.1, 0.3, 0.0], np.float32), "val_b"),
        numpy_helper.from_array(np.array([0, -1], np.int64), "flat_shape"),
    ]
    nodes = [
        helper.make_node("Conv", ["/input/planes", "conv_w", "conv_b"], ["c"]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Reshape", ["r", "flat_shape"], ["f"]),
        helper.make_node("Gemm", ["f", "pol_w", "pol_b"], ["/output/policy"]),
        helper.make_node("Gemm", ["f", "val_w", "val_b"], ["v3"]),
    ]
    outputs = [helper.make_tensor_value_info("/output/policy", TensorProto.FLOAT, ["batch", 1858])]
    if wdl:
        nodes.append(helper.make_node("Softmax", ["v3"], ["/output/wdl"], axis=1))
        outputs.append(helper.make_tensor_value_info("/output/wdl", TensorProto.FLOAT, ["batch", 3]))
    else:
        inits.append(numpy_helper.from_array(np.array([0], np.int64), "sl_start"))
        inits.append(numpy_helper.from_array(np.array([1], np.int64), "sl_end"))
        inits.append(numpy_helper.from_array(np.array([1], np.int64), "sl_axes"))
        nodes.append(helper.make_node("Slice", ["v3", "sl_start", "sl_end", "sl_axes"], ["v1"]))
        nodes.append(helper.make_node("Tanh", ["v1"], ["/output/value"]))
        outputs.append(helper.make_tensor_value_info("/output/value", TensorProto.FLOAT, ["batch", 1]))
    if mlh:
        inits.append(numpy_helper.from_array((rng.standard_normal((flat, 1)) * 0.05).astype(np.float32), "mlh_w"))
        inits.append(numpy_helper.from_array(np.array([30.0], np.float32), "mlh_b"))
        nodes.append(helper.make_node("Gemm", ["f", "mlh_w", "mlh_b"], ["m1"]))
        nodes.append(helper.make_node("Relu", ["m1"], ["/output/mlh"]))
        outputs.append(helper.make_tensor_value_info("/output/mlh", TensorProto.FLOAT, ["batch", 1]))
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("/input/planes", TensorProto.FLOAT, ["batch", 112, 8, 8])],
        outputs,
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="lichessbot-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def build_tiny_onnx(path: str | Path, **kwargs) -> Path:
    """Write :func:`tiny_model` to ``path`` and return the path."""
    path = Path(path)
    onnx.save(tiny_model(**kwargs), str(path))
    return path
