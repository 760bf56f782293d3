"""A small interpreter of the network's ONNX graph over an array library: numpy (the reference, run by the tests
on any machine) or PyTorch (:mod:`lichessbot.neural.torch_runner`), so the PyTorch runner computes the graph
onnxruntime runs, from the same weights, without a converter.

It knows the operators of lc0's ONNX networks (lc0 src/neural/onnx/converter.cc), of our lc0 converter
(:mod:`lichessbot.neural.onnx_build`) and of PyTorch's exports of the default network: Conv (2-D, stride 1,
group 1), Gemm, MatMul, Add/Sub/Mul/Div, Relu, Sigmoid, Tanh, Softplus, Softmax, ReduceMean, Flatten,
Reshape, Transpose, Gather, Slice, Split, Concat, Unsqueeze, Squeeze, Shape, Constant, Identity, Cast. The
semantics are ONNX's (onnx/docs/Operators.md). Shape arithmetic (Shape, and what is computed from it) stays
in numpy integers on the host, so a captured CUDA graph sees fixed shapes. An operator it does not know
raises NetworkError naming it at load time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from lichessbot.errors import NetworkError

__all__ = ["KNOWN_OPS", "Graph", "NumpyOps", "Ops", "run_graph"]

KNOWN_OPS = frozenset({"Conv", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Softplus",
                       "Softmax", "ReduceMean", "Flatten", "Reshape", "Transpose", "Gather", "Slice", "Split",
                       "Concat", "Unsqueeze", "Squeeze", "Shape", "Constant", "Identity", "Cast"})


class Graph:
    """The nodes of serialized ONNX ``model`` with their attributes, its initializers as numpy arrays, and
    its input and output names. Raises NetworkError for an operator outside :data:`KNOWN_OPS`."""

    def __init__(self, model: bytes) -> None:
        proto = onnx.load_from_string(model)
        g = proto.graph
        self.initializers: dict[str, np.ndarray] = {i.name: numpy_helper.to_array(i) for i in g.initializer}
        self.inputs = [i.name for i in g.input if i.name not in self.initializers]
        self.outputs = [o.name for o in g.output]
        opset = max((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), default=17)
        self.nodes: list[tuple[str, list[str], list[str], dict[str, Any]]] = []
        unknown = sorted({n.op_type for n in g.node} - KNOWN_OPS)
        if unknown:
            raise NetworkError(f"the torch runner does not know the ONNX operator(s) {', '.join(unknown)}: "
                               "use an onnxruntime backend (auto, cuda, cpu)")
        for n in g.node:
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            if n.op_type == "Constant":
                attrs = {"value": _constant(attrs)}
            attrs["_opset"] = opset
            self.nodes.append((n.op_type, list(n.input), list(n.output), attrs))
        # The values each node is the last reader of (not the graph's outputs or weights): dropped after it
        # runs, so a forward pass holds a few activations at a time, not all of them (a 20x256 network at
        # batch 1024 keeps about 67 MB an activation in float32).
        last: dict[str, int] = {}
        for k, (_, ins, _, _) in enumerate(self.nodes):
            for name in ins:
                last[name] = k
        keep = set(self.outputs) | set(self.initializers) | {""}
        self.drop: list[list[str]] = [[] for _ in self.nodes]
        for name, k in last.items():
            if name not in keep:
                self.drop[k].append(name)


def _constant(attrs: dict[str, Any]) -> np.ndarray:
    """The value of a Constant node: its tensor, or one of the scalar and list forms (ONNX opset 12 on)."""
    if "value" in attrs:
        return numpy_helper.to_array(attrs["value"])
    for key, dtype in (("value_float", np.float32), ("value_floats", np.float32), ("value_int", np.int64),
                       ("value_ints", np.int64)):
        if key in attrs:
            return np.asarray(attrs[key], dtype)
    raise NetworkError(f"a Constant node of a form the torch runner does not read ({', '.join(attrs)})")


class Ops:
    """The array library under :func:`run_graph`: device arrays (``is_device``) and the primitives the
    operators need. Host values are numpy arrays (weights before :meth:`weight`, shapes, constants)."""

    def weight(self, arr: np.ndarray) -> Any:
        """``arr`` (an initializer) as this library keeps it (a float weight on the device)."""
        return arr

    def is_device(self, x: Any) -> bool:
        return False

    def to_device(self, arr: np.ndarray, like: Any) -> Any:
        """Host array ``arr`` as a device array of ``like``'s dtype and device (floats) or as is."""
        return arr

    def conv2d(self, x: Any, w: Any, b: Any | None, pads: Sequence[int]) -> Any:
        raise NotImplementedError

    def matmul(self, a: Any, b: Any) -> Any:
        return a @ b

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        return np.transpose(x, perm)

    def relu(self, x: Any) -> Any:
        return np.maximum(x, 0)

    def sigmoid(self, x: Any) -> Any:
        return 1 / (1 + np.exp(-x))

    def tanh(self, x: Any) -> Any:
        return np.tanh(x)

    def softplus(self, x: Any) -> Any:
        return np.logaddexp(0, x)

    def softmax(self, x: Any, axis: int) -> Any:
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def mean(self, x: Any, axes: Sequence[int], keepdims: bool) -> Any:
        return x.mean(axis=tuple(axes), keepdims=keepdims)

    def reshape(self, x: Any, shape: Sequence[int]) -> Any:
        return x.reshape(tuple(shape))

    def take(self, x: Any, idx: np.ndarray, axis: int) -> Any:
        return np.take(x, idx, axis=axis)

    def concat(self, xs: list[Any], axis: int) -> Any:
        return np.concatenate(xs, axis=axis)

    def cast(self, x: Any, to: int) -> Any:
        return x.astype(helper.tensor_dtype_to_np_dtype(to))


class NumpyOps(Ops):
    """numpy in float32 (the reference of the tests; slow)."""

    def conv2d(self, x: Any, w: Any, b: Any | None, pads: Sequence[int]) -> Any:
        kh, kw = w.shape[2], w.shape[3]
        xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
        h, v = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
        out = np.zeros((x.shape[0], w.shape[0], h, v), np.float32)
        for i in range(kh):
            for j in range(kw):
                out += np.einsum("bchw,oc->bohw", xp[:, :, i:i + h, j:j + v], w[:, :, i, j], optimize=True)
        return out if b is None else out + b.reshape(1, -1, 1, 1)


def _ints(x: Any) -> list[int]:
    return [int(v) for v in np.asarray(x).reshape(-1)]


def _axes(at: dict[str, Any], args: list[Any], default: list[int]) -> list[int]:
    """An operator's axes: its attribute (older opsets), else its second input, else ``default``."""
    if "axes" in at:
        return [int(a) for a in at["axes"]]
    if len(args) > 1 and args[1] is not None:
        return _ints(args[1])
    return default


def _binary(ops: Ops, a: Any, b: Any) -> tuple[Any, Any]:
    if ops.is_device(a) and isinstance(b, np.ndarray):
        return a, ops.to_device(b, a)
    if ops.is_device(b) and isinstance(a, np.ndarray):
        return ops.to_device(a, b), b
    return a, b


def run_graph(graph: Graph, feeds: dict[str, Any], ops: Ops, weights: dict[str, Any] | None = None, *,
              live: list[int] | None = None) -> list[Any]:
    """The graph's outputs (in :attr:`Graph.outputs` order) for ``feeds`` (input name -> array of ``ops``).
    ``weights``: the initializers as ``ops`` keeps them (:meth:`Ops.weight`; default the numpy arrays);
    ``live``: a list that gets, before each node, how many values besides the weights are held."""
    env: dict[str, Any] = dict(graph.initializers if weights is None else weights)
    base = len(env) + 1
    env.update(feeds)
    env[""] = None
    for k, (op, ins, outs, at) in enumerate(graph.nodes):
        args = [env[n] for n in ins]
        for name in graph.drop[k]:
            env.pop(name, None)
        if live is not None:
            live.append(len(env) - base)
        host = all(not ops.is_device(a) for a in args if a is not None)
        o: Ops = NumpyOps() if host else ops
        result: Any
        if op == "Constant":
            result = at["value"]
        elif op in ("Identity",):
            result = args[0]
        elif op in ("Add", "Sub", "Mul", "Div"):
            a, b = _binary(o, args[0], args[1])
            result = a + b if op == "Add" else a - b if op == "Sub" else a * b if op == "Mul" else a / b
            if host and op == "Div" and np.issubdtype(np.asarray(args[0]).dtype, np.integer):
                result = np.asarray(args[0]) // np.asarray(args[1])
        elif op == "Conv":
            if at.get("group", 1) != 1 or any(s != 1 for s in at.get("strides", [1, 1])) \
                    or any(d != 1 for d in at.get("dilations", [1, 1])):
                raise NetworkError("the torch runner runs 2-D convolutions of stride 1, dilation 1, group 1 only")
            pads = at.get("pads", [0, 0, 0, 0])
            result = o.conv2d(args[0], args[1], args[2] if len(args) > 2 else None, pads)
        elif op in ("Gemm", "MatMul"):
            a, b = args[0], args[1]
            if op == "Gemm":
                a = o.transpose(a, (1, 0)) if at.get("transA", 0) else a
                b = o.transpose(b, (1, 0)) if at.get("transB", 0) else b
            result = o.matmul(*_binary(o, a, b))
            if op == "Gemm":
                result = result * float(at.get("alpha", 1.0)) if at.get("alpha", 1.0) != 1.0 else result
                if len(args) > 2 and args[2] is not None:
                    c = args[2] * float(at.get("beta", 1.0)) if at.get("beta", 1.0) != 1.0 else args[2]
                    result = result + (o.to_device(c, result) if isinstance(c, np.ndarray) else c)
        elif op in ("Relu", "Sigmoid", "Tanh", "Softplus"):
            result = {"Relu": o.relu, "Sigmoid": o.sigmoid, "Tanh": o.tanh, "Softplus": o.softplus}[op](args[0])
        elif op == "Softmax":
            result = o.softmax(args[0], int(at.get("axis", -1)))
        elif op == "ReduceMean":
            axes = _axes(at, args, list(range(len(args[0].shape))))
            result = o.mean(args[0], axes, bool(at.get("keepdims", 1)))
        elif op == "Flatten":
            axis = int(at.get("axis", 1))
            shape = list(args[0].shape)
            result = o.reshape(args[0], [int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))])
        elif op == "Reshape":
            shape = _ints(args[1])
            shape = [int(args[0].shape[k]) if s == 0 and not at.get("allowzero", 0) else s for k, s in enumerate(shape)]
            result = o.reshape(args[0], shape)
        elif op == "Transpose":
            perm = at.get("perm") or list(reversed(range(len(args[0].shape))))
            result = o.transpose(args[0], perm)
        elif op == "Gather":
            result = o.take(args[0], np.asarray(args[1]), int(at.get("axis", 0)))
        elif op == "Slice":
            x = args[0]
            starts, ends = _ints(args[1]), _ints(args[2])
            axes = _ints(args[3]) if len(args) > 3 and args[3] is not None else list(range(len(starts)))
            steps = _ints(args[4]) if len(args) > 4 and args[4] is not None else [1] * len(starts)
            index: list[slice] = [slice(None)] * len(x.shape)
            for s, e, ax, st in zip(starts, ends, axes, steps):
                if st != 1:
                    raise NetworkError("the torch runner slices with step 1 only")
                n = int(x.shape[ax])
                index[ax] = slice(max(0, min(n, s if s >= 0 else n + s)), max(0, min(n, e if e >= 0 else n + e)))
            result = x[tuple(index)]
        elif op == "Split":
            axis = int(at.get("axis", 0))
            n = int(args[0].shape[axis])
            sizes = _ints(args[1]) if len(args) > 1 and args[1] is not None else \
                list(at.get("split", [n // len(outs)] * len(outs)))
            bounds = [int(v) for v in np.cumsum([0, *sizes])]
            parts = []
            for k in range(len(outs)):
                index = [slice(None)] * len(args[0].shape)
                index[axis] = slice(bounds[k], bounds[k + 1])
                parts.append(args[0][tuple(index)])
            for name, part in zip(outs, parts):
                env[name] = part
            continue
        elif op == "Concat":
            xs = [a for a in args if a is not None]
            if any(o.is_device(a) for a in xs):
                ref = next(a for a in xs if o.is_device(a))
                xs = [o.to_device(a, ref) if isinstance(a, np.ndarray) else a for a in xs]
            result = o.concat(xs, int(at["axis"]))
        elif op in ("Unsqueeze", "Squeeze"):
            x = args[0]
            axes = _axes(at, args, [k for k, d in enumerate(x.shape) if d == 1])
            shape = list(x.shape)
            if op == "Unsqueeze":
                rank = len(shape) + len(axes)
                for ax in sorted(a % rank for a in axes):
                    shape.insert(ax, 1)
            else:
                drop = {a % len(shape) for a in axes}
                shape = [d for k, d in enumerate(shape) if k not in drop]
            result = o.reshape(x, [int(d) for d in shape])
        elif op == "Shape":
            result = np.asarray([int(d) for d in args[0].shape], np.int64)
        elif op == "Cast":
            result = o.cast(args[0], int(at["to"]))
        else:  # pragma: no cover - Graph refuses unknown operators
            raise NetworkError(f"unknown operator {op}")
        env[outs[0]] = result
    return [env[name] for name in graph.outputs]
