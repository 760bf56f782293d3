"""The int8 copy of a network for the CPU (``engine.precision: int8``), made by onnxruntime's own tooling.

:func:`quantize_model` runs ``onnxruntime.quantization.quant_pre_process`` (ONNX shape inference and
onnxruntime's basic graph optimisations, which fold each batch norm into its convolution), then
``quantize_static``: per-channel int8 weights, activations quantized with ranges measured by running the
fp32 network on :func:`calibration_planes` (MinMax calibration). :class:`QuantSettings` holds the choices;
:data:`DEFAULT_SETTINGS` are the ones measured best on an AVX2 CPU without VNNI (docs/performance.md, "int8").

The calibration positions come from real games (``lichessbot/data/calibration.pgn``, its source in its
header), encoded by the search's own encoder (:func:`lichessbot._core.encode_plies`), so the planes
calibrated on are exactly what the search feeds. :mod:`lichessbot.neural.int8_cache` keeps the result.

Imports: lichessbot._core, lichessbot.errors; onnx, onnxruntime.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import onnx
import onnxruntime as ort

from lichessbot import _core
from lichessbot.errors import NetworkError

__all__ = ["CALIBRATION_BATCH", "CALIBRATION_FIRST", "CALIBRATION_STRIDE", "DEFAULT_SETTINGS", "QuantSettings",
           "calibration_games", "calibration_planes", "calibration_plies", "output_heads", "planes_digest",
           "quantize_model"]

#: Every this many plies of each calibration game is a calibration position, from ply
#: :data:`CALIBRATION_FIRST` on (not the start position, which every game shares): 1,829 plies in 36 games
#: give 310 positions, calibrated in 5 batches of 62 (ours: enough positions for stable ranges, few enough
#: to quantize in seconds).
CALIBRATION_STRIDE, CALIBRATION_FIRST = 6, 3
#: Positions per calibration run of the fp32 network (ours).
CALIBRATION_BATCH = 64
#: The network's input (lc0 src/neural/onnx/converter.cc; :data:`lichessbot.neural.network.INPUT_NAME`).
_INPUT = "/input/planes"


@dataclass(frozen=True)
class QuantSettings:
    """How ``quantize_static`` quantizes (onnxruntime docs, "Quantize ONNX models"; its docstring,
    "Choosing parameters for CPU inference").

    ``quant_format``: "qdq" (QuantizeLinear/DequantizeLinear pairs around float operators, fused by
    onnxruntime into integer kernels at session start) or "qoperator" (QLinearConv and friends written in the
    model). ``activations``: "u8" (uint8, asymmetric) or "s8" (int8). Weights are int8, one scale per output
    channel (``per_channel``). ``reduce_range``: 7-bit weights, against the saturation of AVX2's
    ``vpmaddubsw`` (u8 x s8 pairs summed into int16) on CPUs without VNNI. ``op_types``: the operators
    quantized (the rest stay float; empty: every operator onnxruntime can quantize). ``keep_float``: nodes
    left in float by name (e.g. ``/inputconv``). ``float_heads``: the last weighted layer of each output (the
    policy's last convolution, the value head's last dense layer) and what follows it stay float
    (:func:`output_heads`). ``calibration``: how activation ranges are read from the
    calibration runs (``percentile``: onnxruntime's default 99.999th percentile of |x|).
    """

    quant_format: Literal["qdq", "qoperator"] = "qdq"
    activations: Literal["u8", "s8"] = "u8"
    per_channel: bool = True
    reduce_range: bool = False
    op_types: tuple[str, ...] = ("Conv", "MatMul", "Gemm")
    keep_float: tuple[str, ...] = ()
    float_heads: bool = False
    calibration: Literal["minmax", "percentile", "entropy"] = "percentile"

    @property
    def tag(self) -> str:
        """The settings in one line, e.g. ``qdq-u8-pc-percentile-Conv.MatMul.Gemm`` (part of the cache key)."""
        parts = [self.quant_format, self.activations, "pc" if self.per_channel else "pt", self.calibration]
        if self.reduce_range:
            parts.append("rr")
        parts.append(".".join(self.op_types) or "all")
        if self.keep_float:
            parts.append("float:" + ",".join(self.keep_float))
        if self.float_heads:
            parts.append("float-heads")
        return "-".join(parts)


#: What ``engine.precision: int8`` runs (measured: docs/performance.md, "int8").
DEFAULT_SETTINGS = QuantSettings()


def _calibration_file() -> Path:
    return Path(str(resources.files("lichessbot") / "data" / "calibration.pgn"))


def calibration_games(path: Path | None = None) -> list[tuple[str, list[str]]]:
    """The games of ``path`` (default ``lichessbot/data/calibration.pgn``) as (start FEN, UCI moves) each,
    main lines only. Raises NetworkError when the file cannot be read."""
    import chess.pgn  # noqa: PLC0415 - python-chess's PGN reader, only needed when a network is quantized

    where = path or _calibration_file()
    try:
        text = where.read_text(encoding="utf-8")
    except OSError as err:
        raise NetworkError(f"cannot read the int8 calibration games {where}: {err.strerror}") from None
    games: list[tuple[str, list[str]]] = []
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append((game.board().fen(), [m.uci() for m in game.mainline_moves()]))
    return games


def calibration_plies(moves: int) -> range:
    """The plies of a calibration game of ``moves`` plies that are calibration positions."""
    return range(CALIBRATION_FIRST, moves + 1, CALIBRATION_STRIDE)


def calibration_planes(input_format: int, *, history_fill: str = "fen_only",
                       path: Path | None = None) -> npt.NDArray[np.float32]:
    """Planes float32 [N, 112, 8, 8]: the positions at :func:`calibration_plies` of each calibration game (with
    its history, as the search encodes it: lc0 input format ``input_format``, ``history_fill``). Raises
    NetworkError as :func:`calibration_games`, ValueError for an unknown input format or history fill."""
    chunks = []
    for fen, moves in calibration_games(path):
        planes, _ = _core.encode_plies(fen, moves, input_format=input_format, history_fill=history_fill)
        chunks.append(planes[list(calibration_plies(len(moves)))])
    return np.ascontiguousarray(np.concatenate(chunks), dtype=np.float32)


def planes_digest(planes: npt.NDArray[np.float32]) -> str:
    """sha256 (hex) of the calibration ``planes``' shape and bytes: the calibration set's part of the cache key."""
    h = hashlib.sha256(repr(planes.shape).encode())
    h.update(np.ascontiguousarray(planes, dtype=np.float32).tobytes())
    return h.hexdigest()


class _Reader:
    """``onnxruntime.quantization.CalibrationDataReader``'s protocol over ``planes`` in equal batches of at most
    ``batch`` positions; the few positions past the last whole batch (fewer than the batches) are left out
    (onnxruntime's histogram calibrators stack the batches' outputs, which must have one shape:
    ``HistogramCollector`` in onnxruntime/quantization/calibrate.py)."""

    def __init__(self, planes: npt.NDArray[np.float32], batch: int) -> None:
        count = -(-len(planes) // batch)
        batch = len(planes) // count
        whole = batch * count
        self._batches: Iterator[npt.NDArray[np.float32]] = (planes[i:i + batch] for i in range(0, whole, batch))

    def get_next(self) -> dict[str, npt.NDArray[np.float32]] | None:
        nxt = next(self._batches, None)
        return None if nxt is None else {_INPUT: nxt}

    def __iter__(self) -> Iterator[dict[str, npt.NDArray[np.float32]]]:
        while (item := self.get_next()) is not None:
            yield item


def output_heads(model: onnx.ModelProto) -> list[str]:
    """The names of the nodes from each graph output of ``model`` back to the first weighted node (Conv, Gemm,
    MatMul) on its path, that one included: e.g. lc0's ``/output/policy`` Gather, ``/policy/flatten`` and
    ``/policy/conv2``, and ``/output/wdl``'s Softmax and ``/value/dense2``'s Gemm."""
    producer = {out: node for node in model.graph.node for out in node.output}
    names: list[str] = []
    for output in model.graph.output:
        node = producer.get(output.name)
        while node is not None:
            names.append(node.name)
            if node.op_type in ("Conv", "Gemm", "MatMul") or not node.input:
                break
            node = producer.get(node.input[0])
    return names


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    """onnxruntime's quantizer logs through ``logging`` and prints progress; both go nowhere (stdout is UCI)."""
    logger = logging.getLogger("onnxruntime")
    level = logger.level
    logger.setLevel(logging.ERROR)
    root = logging.getLogger()
    root_level = root.level
    root.setLevel(max(root_level, logging.ERROR))
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logger.setLevel(level)
        root.setLevel(root_level)


def quantize_model(model: bytes, planes: npt.NDArray[np.float32], settings: QuantSettings = DEFAULT_SETTINGS,
                   *, source: str = "the network") -> bytes:
    """The int8 copy of ``model`` (a serialized fp32 network with lc0's ``/input/planes``) calibrated on
    ``planes`` float32 [N, 112, 8, 8], as serialized ONNX. Takes a few seconds for a 6x64 network (docs/engine.md,
    "int8"; the calibration runs the fp32 network on the planes once). Raises NetworkError naming ``source``
    when onnxruntime's tooling fails on the model."""
    from onnxruntime.quantization import (  # noqa: PLC0415 - the quantization tooling loads only for int8
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quant_pre_process,
        quantize_static,
    )

    method = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile,
              "entropy": CalibrationMethod.Entropy}[settings.calibration]
    if planes.ndim != 4 or planes.shape[1:] != (112, 8, 8) or len(planes) == 0:
        raise ValueError(f"calibration planes must be float32 [N>0, 112, 8, 8], got {list(planes.shape)}")
    with tempfile.TemporaryDirectory(prefix="lichessbot-int8-") as tmp:
        fp32, pre, out = Path(tmp) / "fp32.onnx", Path(tmp) / "pre.onnx", Path(tmp) / "int8.onnx"
        fp32.write_bytes(model)
        try:
            with _quiet_quantizer():
                # skip_symbolic_shape: lc0's networks have fixed shapes after the batch (ONNX's own shape
                # inference suffices), and the symbolic one needs sympy, which onnxruntime does not bring.
                quant_pre_process(str(fp32), str(pre), skip_symbolic_shape=True)
                heads = output_heads(onnx.load(str(pre))) if settings.float_heads else []
                quantize_static(
                    str(pre), str(out), _Reader(planes, CALIBRATION_BATCH),
                    quant_format=QuantFormat.QDQ if settings.quant_format == "qdq" else QuantFormat.QOperator,
                    op_types_to_quantize=list(settings.op_types) or None, per_channel=settings.per_channel,
                    nodes_to_exclude=[*settings.keep_float, *heads],
                    reduce_range=settings.reduce_range,
                    activation_type=QuantType.QUInt8 if settings.activations == "u8" else QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=method,
                    extra_options={"max_intermediate_outputs": 4})
            return out.read_bytes()
        except Exception as err:  # noqa: BLE001 - onnxruntime's tooling raises many kinds
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise NetworkError(f"cannot make the int8 copy of {source} (onnxruntime {ort.__version__}): "
                               f"{first[:300]}") from None
