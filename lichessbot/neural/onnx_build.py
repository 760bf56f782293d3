"""Build an ONNX graph with lc0's ``leela2onnx`` interface from a decoded lc0 network.

The graph follows lc0 src/neural/onnx/converter.cc (residual tower, SE units, heads):

* input ``/input/planes`` float32 [batch, 112, 8, 8];
* ``/output/policy`` float32 [batch, 1858], raw logits in lc0's 1858-move order;
* ``/output/wdl`` float32 [batch, 3] (softmaxed win/draw/loss, side to move) for WDL nets, or
  ``/output/value`` float32 [batch, 1] (tanh) for scalar-value nets;
* ``/output/mlh`` float32 [batch, 1] (ReLU, plies) when the net has a moves-left head.

Opset 17 and IR version 8 (what leela2onnx writes; onnx >= 1.16 would write a newer IR that
onnxruntime 1.31 cannot read). Batch-norm is already folded by :mod:`lichessbot.neural.lc0_weights`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from lichessbot._core import POLICY_MOVES as MOVES  # the 1858 UCI strings, lc0's order

OPSET = 17
IR_VERSION = 8

# Conv policy planes (AlphaZero's 73x8x8 layout as lc0's conv policy head uses it; checked against the
# Gather table inside leela2onnx output, see tests/neural/test_convert.py). (d_rank, d_file) per plane.
# Planes 0-55: queen-like moves, direction-major N, NE, E, SE, S, SW, W, NW, distance 1..7.
_QUEEN_DIRS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
# Planes 56-63: knight jumps, clockwise from two-up-one-right.
_KNIGHT_JUMPS = ((2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2), (1, -2), (2, -1))
# Planes 64-72: promotions from rank 7, file offset -1, 0, +1, each with pieces r, b, q.
# (A knight promotion is lc0's plain from-to move, i.e. a queen-like plane.)
_PROMO_FILE_STEPS = (-1, 0, 1)
_PROMO_PIECES = "rbq"


@dataclass
class ConvBlock:
    """A convolution with batch-norm folded in: ``weight`` float32 [out, in, k, k], ``bias`` [out]."""

    weight: np.ndarray
    bias: np.ndarray

    @property
    def out_channels(self) -> int:
        return int(self.weight.shape[0])


@dataclass
class Dense:
    """A fully connected layer, ``weight`` float32 [out, in] (lc0's storage order), ``bias`` [out]."""

    weight: np.ndarray
    bias: np.ndarray


@dataclass
class SEUnit:
    """Squeeze-excitation: ``dense1`` [se, C] -> activation -> ``dense2`` [2C, se] (gamma, beta)."""

    dense1: Dense
    dense2: Dense


@dataclass
class Residual:
    """``act(conv2(act(conv1(x))) [-> SE] + x)`` (lc0 converter.cc MakeResidualBlock)."""

    conv1: ConvBlock
    conv2: ConvBlock
    se: SEUnit | None


@dataclass
class Lc0Net:
    """A decoded residual lc0 network, batch-norm folded, ready for :func:`build_model`."""

    input_format: int  # lc0 NetworkFormat.InputFormat (1 classical, ...); not used by the graph
    wdl: bool  # value head: 3 outputs softmaxed (VALUE_WDL), or 1 output through tanh
    mish: bool  # default activation Mish (DEFAULT_ACTIVATION_MISH), else ReLU
    input: ConvBlock
    residual: list[Residual]
    policy: ConvBlock  # conv head: 3x3 -> 73+ planes; classical head: 1x1 -> policy channels
    policy1: ConvBlock | None  # conv head only: the 3x3 C->C conv before `policy`
    policy_dense: Dense | None  # classical head only: [1858, channels*64]
    value: ConvBlock
    value_dense1: Dense
    value_dense2: Dense  # 3 outputs (WDL) or 1 (tanh)
    moves_left: ConvBlock | None = None
    mlh_dense1: Dense | None = None
    mlh_dense2: Dense | None = None

    @property
    def filters(self) -> int:
        return self.input.out_channels



def _square(name: str) -> int:
    return "abcdefgh".index(name[0]) + 8 * (int(name[1]) - 1)


@lru_cache(maxsize=1)
def conv_policy_map() -> np.ndarray:
    """int64 [1858]: for each lc0 policy index (:data:`lichessbot._core.POLICY_MOVES`), the flat index
    ``plane*64 + from_square`` into the conv policy head's [73, 8, 8] output. Read-only (cached)."""
    out = np.empty(len(MOVES), np.int64)
    for i, uci in enumerate(MOVES):
        fr, to, promo = _square(uci[0:2]), _square(uci[2:4]), uci[4:]
        dr, df = to // 8 - fr // 8, to % 8 - fr % 8
        if promo:
            plane = 64 + 3 * _PROMO_FILE_STEPS.index(df) + _PROMO_PIECES.index(promo)
        elif (dr, df) in _KNIGHT_JUMPS:
            plane = 56 + _KNIGHT_JUMPS.index((dr, df))
        else:
            dist = max(abs(dr), abs(df))
            plane = 7 * _QUEEN_DIRS.index((dr // dist, df // dist)) + dist - 1
        out[i] = plane * 64 + fr
    out.flags.writeable = False
    return out


class _Graph:
    """Collects nodes and initializers; every helper returns the name of its output tensor."""

    def __init__(self, mish: bool) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.mish = mish

    def const(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def op(self, op_type: str, inputs: list[str], name: str, **attrs: Any) -> str:  # ONNX attributes: any kind
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attrs))
        return name

    def act(self, x: str, name: str) -> str:
        """The net's default activation: ReLU, or Mish = x * tanh(softplus(x)) (no Mish op below opset 18)."""
        if not self.mish:
            return self.op("Relu", [x], name + "/relu")
        sp = self.op("Softplus", [x], name + "/mish/softplus")
        return self.op("Mul", [self.op("Tanh", [sp], name + "/mish/tanh"), x], name + "/mish")

    def conv(self, x: str, block: ConvBlock, name: str) -> str:
        k = block.weight.shape[2]
        w = self.const(name + "/w/kernel", block.weight)
        b = self.const(name + "/w/bias", block.bias)
        pad = (k - 1) // 2
        return self.op("Conv", [x, w, b], name, kernel_shape=[k, k], pads=[pad] * 4)

    def dense(self, x: str, layer: Dense | None, name: str) -> str:
        """[B, in] -> [B, out]: x @ W.T + b, with W in lc0's [out, in] order. ValueError when the net
        lacks the layer its head needs (``layer`` None)."""
        if layer is None:
            raise ValueError(f"{name}: the network has no weights for this dense layer")
        w = self.const(name + "/w", layer.weight)
        b = self.const(name + "/b", layer.bias)
        return self.op("Gemm", [x, w, b], name, transB=1)

    def se(self, x: str, se: SEUnit, channels: int, name: str) -> str:
        """Squeeze-excitation (lc0 converter.cc MakeSqueezeAndExcite): pooled -> dense -> act ->
        dense -> [gamma, beta]; x * sigmoid(gamma) + beta."""
        pooled = self.op("ReduceMean", [x], name + "/reduce_mean", axes=[2, 3], keepdims=0)
        h = self.act(self.dense(pooled, se.dense1, name + "/dense1"), name + "/dense1")
        h = self.dense(h, se.dense2, name + "/dense2")
        shape = self.const(name + "/shape", np.array([-1, 2 * channels, 1, 1], np.int64))
        h = self.op("Reshape", [h, shape], name + "/reshape")
        gamma, beta = name + "/gamma", name + "/beta"
        self.nodes.append(helper.make_node("Split", [h], [gamma, beta], name=name + "/split", axis=1))  # halves
        scaled = self.op("Mul", [self.op("Sigmoid", [gamma], name + "/sigmoid"), x], name + "/mul")
        return self.op("Add", [scaled, beta], name + "/add")


def build_model(net: Lc0Net) -> onnx.ModelProto:
    """The ONNX model for ``net`` (IR 8, opset 17, dynamic batch), leela2onnx's tensor names."""
    g = _Graph(mish=net.mish)
    c = net.filters
    flow = g.act(g.conv("/input/planes", net.input, "/inputconv"), "/inputconv")
    for i, res in enumerate(net.residual):
        name = f"/block{i}"
        h = g.act(g.conv(flow, res.conv1, name + "/conv1"), name + "/conv1")
        h = g.conv(h, res.conv2, name + "/conv2")
        if res.se is not None:
            h = g.se(h, res.se, c, name + "/conv2/se")
        flow = g.act(g.op("Add", [h, flow], name + "/conv2/mixin"), name + "/conv2")

    if net.policy1 is not None:  # convolutional head: 3x3 conv + act, 3x3 conv to 73+ planes, gather
        p = g.act(g.conv(flow, net.policy1, "/policy/conv1"), "/policy/conv1")
        p = g.op("Flatten", [g.conv(p, net.policy, "/policy/conv2")], "/policy/flatten", axis=1)
        table = g.const("/const/mapping_table", conv_policy_map())
        g.op("Gather", [p, table], "/output/policy", axis=1)
    else:  # classical head: 1x1 conv + act, dense to 1858
        p = g.act(g.conv(flow, net.policy, "/policy/conv"), "/policy/conv")
        p = g.op("Flatten", [p], "/policy/flatten", axis=1)
        g.op("Identity", [g.dense(p, net.policy_dense, "/policy/dense")], "/output/policy")
    outputs = [helper.make_tensor_value_info("/output/policy", TensorProto.FLOAT, ["batch", 1858])]

    v = g.act(g.conv(flow, net.value, "/value/conv"), "/value/conv")
    v = g.op("Flatten", [v], "/value/flatten", axis=1)
    v = g.act(g.dense(v, net.value_dense1, "/value/dense1"), "/value/dense1")
    v = g.dense(v, net.value_dense2, "/value/dense2")
    if net.wdl:
        g.op("Softmax", [v], "/output/wdl", axis=1)
        outputs.append(helper.make_tensor_value_info("/output/wdl", TensorProto.FLOAT, ["batch", 3]))
    else:
        g.op("Tanh", [v], "/output/value")
        outputs.append(helper.make_tensor_value_info("/output/value", TensorProto.FLOAT, ["batch", 1]))

    if net.moves_left is not None:
        m = g.act(g.conv(flow, net.moves_left, "/mlh/conv"), "/mlh/conv")
        m = g.op("Flatten", [m], "/mlh/flatten", axis=1)
        m = g.act(g.dense(m, net.mlh_dense1, "/mlh/dense1"), "/mlh/dense1")
        g.op("Relu", [g.dense(m, net.mlh_dense2, "/mlh/dense2")], "/output/mlh")
        outputs.append(helper.make_tensor_value_info("/output/mlh", TensorProto.FLOAT, ["batch", 1]))

    graph = helper.make_graph(
        g.nodes,
        "lc0",
        [helper.make_tensor_value_info("/input/planes", TensorProto.FLOAT, ["batch", 112, 8, 8])],
        outputs,
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="lichessbot")
    model.ir_version = IR_VERSION
    return model
