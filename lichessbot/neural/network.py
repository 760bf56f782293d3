"""Loading Lc0 networks: ``lc0 leela2onnx`` ONNX files, lc0 ``.pb.gz`` weights, the shipped default.

The ONNX interface (lc0 src/neural/onnx/converter.cc): input
``/input/planes`` [batch, 112, 8, 8]; outputs ``/output/policy`` [batch, 1858] raw logits, ``/output/wdl``
[batch, 3] softmaxed (win, draw, loss for the side to move) or ``/output/value`` [batch, 1] (tanh), and
optionally ``/output/mlh`` [batch, 1] (plies). An ONNX file does not record the input format: it is
given by the caller (config ``engine.input_format``), 1 (classical) by default. A ``.pb.gz`` file
records it and is converted in-process (:mod:`lichessbot.neural.lc0_weights`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import onnx

from lichessbot import _core
from lichessbot.errors import NetworkError
from lichessbot.neural.lc0_weights import convert_pb_gz

__all__ = [
    "INPUT_NAME",
    "MLH_NAME",
    "POLICY_NAME",
    "VALUE_NAME",
    "WDL_NAME",
    "Network",
    "NetworkError",
    "inspect_onnx",
    "load_network",
]

INPUT_NAME = "/input/planes"
POLICY_NAME = "/output/policy"
WDL_NAME = "/output/wdl"
VALUE_NAME = "/output/value"
MLH_NAME = "/output/mlh"
_EXPECTED = {INPUT_NAME: (112, 8, 8), POLICY_NAME: (1858,), WDL_NAME: (3,), VALUE_NAME: (1,), MLH_NAME: (1,)}


@dataclass(frozen=True)
class Network:
    """A network ready for :class:`lichessbot.neural.evaluator.Evaluator`."""

    model: bytes  #: serialized ONNX model with lc0's tensor names
    input_format: int  #: lc0 input format (1, 2, 3, 4, 5, 132, 133)
    has_wdl: bool  #: True: ``/output/wdl``; False: ``/output/value``
    has_mlh: bool  #: ``/output/mlh`` present
    name: str  #: short name for logs, e.g. "maia-1100"
    source: str  #: where it came from: a path or "default"

    def __repr__(self) -> str:  # the model bytes would flood logs
        return (f"Network(name={self.name!r}, source={self.source!r}, input_format={self.input_format}, "
                f"has_wdl={self.has_wdl}, has_mlh={self.has_mlh}, model=<{len(self.model)} bytes>)")


def _dims(value_info: onnx.ValueInfoProto) -> list[int | str]:
    shape = value_info.type.tensor_type.shape
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in shape.dim]


def inspect_onnx(model_bytes: bytes, where: str) -> tuple[bool, bool]:
    """Check lc0's tensor names and shapes in a serialized ONNX model; return (has_wdl, has_mlh).

    ``where`` names the file in error messages. Raises NetworkError for an unreadable model, a missing
    tensor, or a shape other than [batch, 112, 8, 8] / [batch, 1858] / [batch, 3] / [batch, 1].
    """
    try:
        model = onnx.load_model_from_string(model_bytes)
    except Exception as err:  # protobuf DecodeError and friends
        raise NetworkError(f"{where}: not a readable ONNX model ({type(err).__name__})") from None
    graph = model.graph
    inits = {i.name for i in graph.initializer}
    inputs = {v.name: v for v in graph.input if v.name not in inits}
    outputs = {v.name: v for v in graph.output}
    if INPUT_NAME not in inputs:
        raise NetworkError(f"{where}: the model has no input {INPUT_NAME!r} (inputs: {sorted(inputs)}); "
                           "expected an lc0 leela2onnx model")
    if POLICY_NAME not in outputs:
        raise NetworkError(f"{where}: the model has no output {POLICY_NAME!r} (outputs: {sorted(outputs)})")
    if WDL_NAME not in outputs and VALUE_NAME not in outputs:
        raise NetworkError(f"{where}: the model has neither {WDL_NAME!r} nor {VALUE_NAME!r} "
                           f"(outputs: {sorted(outputs)})")
    for name, info in [(INPUT_NAME, inputs[INPUT_NAME]), *outputs.items()]:
        if name not in _EXPECTED:
            continue
        dims = _dims(info)
        want = _EXPECTED[name]
        if dims and (len(dims) != len(want) + 1 or any(
                isinstance(d, int) and d != w for d, w in zip(dims[1:], want))):
            shown = "[" + ", ".join(str(d) for d in dims) + "]"
            raise NetworkError(f"{where}: {name!r} has shape {shown}, expected [batch, "
                               + ", ".join(map(str, want)) + "]")
    return WDL_NAME in outputs, MLH_NAME in outputs


def _default_path() -> Path:
    return Path(str(resources.files("lichessbot") / "data" / "default.onnx"))


def load_network(spec: str = "default", input_format: int | None = None) -> Network:
    """Load a network: "default" (lichessbot/data/default.onnx), a ``.onnx`` file or a ``.pb.gz`` file.

    ``input_format`` applies to ONNX files, which do not record it (default 1, classical); a ``.pb.gz``
    file's own format is used. Raises NetworkError for a missing, unreadable or unsuitable file.
    """
    if input_format is not None and input_format not in _core.INPUT_FORMATS:
        raise NetworkError(f"input format {input_format} is not an lc0 input format {_core.INPUT_FORMATS}")
    if spec == "default":
        path = _default_path()
        if not path.is_file():
            raise NetworkError("the default network is not installed (lichessbot/data/default.onnx); "
                               "set engine.network to a .onnx or .pb.gz file")
        source, name = "default", "default"
    else:
        path = Path(spec).expanduser()
        source, name = str(path), path.name.removesuffix(".gz").removesuffix(".pb").removesuffix(".onnx")
        if not path.exists():
            raise NetworkError(f"network file not found: {path}")
        if not path.is_file():
            raise NetworkError(f"network path is not a file: {path}")
    lower = path.name.lower()
    if lower.endswith(".pb.gz") or lower.endswith(".pb"):
        model, fmt = convert_pb_gz(path)
        where = str(path)
    elif lower.endswith(".onnx"):
        try:
            model = path.read_bytes()
        except OSError as err:
            raise NetworkError(f"cannot read network file {path}: {err.strerror}") from None
        fmt = input_format or 1
        where = str(path)
    else:
        raise NetworkError(f"unsupported network file {path}: expected a .onnx or .pb.gz file")
    has_wdl, has_mlh = inspect_onnx(model, where)
    return Network(model=model, input_format=fmt, has_wdl=has_wdl, has_mlh=has_mlh, name=name, source=source)
