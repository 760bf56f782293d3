"""Read lc0 ``.pb.gz`` weight files and convert them to ONNX in-process.

An lc0 weights file is a gzip-compressed protobuf ``Net`` message (lc0 proto/net.proto). This module
decodes the protobuf wire format itself (no generated code), turns every ``Weights.Layer`` into a
float32 numpy array, folds batch-norm into the convolutions the way lc0 does
(lc0 src/neural/network_legacy.cc ``BaseWeights::ConvBlock``), and hands the result to
:mod:`lichessbot.neural.onnx_build`.

Supported: residual and SE-residual towers (``NETWORK_CLASSICAL*``, ``NETWORK_SE*``) with a
convolutional or classical (dense) policy head, a WDL or scalar value head and an optional moves-left
head -- Maia and the T-series. Attention policy heads and attention bodies (BT-series transformers)
are refused with :class:`~lichessbot.neural.network.NetworkError`; ``lc0 leela2onnx`` output for such
nets loads directly.

Public API: :func:`convert_pb_gz` (path -> serialized ONNX + input format), :func:`read_net`
(bytes -> :class:`Lc0Net`).
"""

from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lichessbot.errors import NetworkError
from lichessbot.neural import protowire
from lichessbot.neural.onnx_build import ConvBlock, Dense, Lc0Net, Residual, SEUnit, build_model
from lichessbot.neural.protowire import Fields

# lc0 proto/net.proto field numbers (message.field).
_NET_MAGIC, _NET_FORMAT, _NET_WEIGHTS, _NET_ONNX = 1, 4, 10, 11
_FORMAT_NETWORK_FORMAT = 2
_W_INPUT, _W_RESIDUAL, _W_POLICY, _W_IP_POL_W, _W_IP_POL_B = 1, 2, 3, 4, 5
_W_VALUE, _W_IP1_VAL_W, _W_IP1_VAL_B, _W_IP2_VAL_W, _W_IP2_VAL_B = 6, 7, 8, 9, 10
_W_POLICY1, _W_MOVES_LEFT = 11, 12
_W_IP1_MOV_W, _W_IP1_MOV_B, _W_IP2_MOV_W, _W_IP2_MOV_B = 13, 14, 15, 16
_W_ATTENTION_POLICY = (17, 19, 21, 22)  # ip2_pol_w (wq), ip3_pol_w (wk), pol_encoder, ip4_pol_w (ppo)
_W_ATTENTION_BODY = (25, 27, 35)  # ip_emb_w, encoder, smolgen_w
_W_MULTIHEAD = (44, 45)  # value_heads, policy_heads
_CONV_WEIGHTS, _CONV_BIASES, _CONV_MEANS, _CONV_STDDIVS, _CONV_GAMMAS, _CONV_BETAS = 1, 2, 3, 4, 5, 6
_RES_CONV1, _RES_CONV2, _RES_SE = 1, 2, 3

WEIGHT_MAGIC = 0x1C0  # lc0 src/neural/loader.cc kWeightMagic
BN_EPSILON = 1e-5  # lc0 src/neural/network_legacy.cc kEpsilon

# NetworkFormat enums (lc0 proto/net.proto).
INPUT_FORMATS = {1, 2, 3, 4, 5, 132, 133}
NETWORK_NAMES = {
    0: "NETWORK_UNKNOWN",
    1: "NETWORK_CLASSICAL",
    2: "NETWORK_SE",
    3: "NETWORK_CLASSICAL_WITH_HEADFORMAT",
    4: "NETWORK_SE_WITH_HEADFORMAT",
    5: "NETWORK_ONNX",
    6: "NETWORK_ATTENTIONBODY_WITH_HEADFORMAT",
    7: "NETWORK_ATTENTIONBODY_WITH_MULTIHEADFORMAT",
    134: "NETWORK_AB_LEGACY_WITH_MULTIHEADFORMAT",
}
POLICY_CLASSICAL, POLICY_CONVOLUTION, POLICY_ATTENTION = 1, 2, 3
VALUE_CLASSICAL, VALUE_WDL = 1, 2
MOVES_LEFT_V1 = 1
ACTIVATION_RELU, ACTIVATION_MISH = 0, 1  # NetworkFormat.DefaultActivation

_LEELA2ONNX_HINT = "convert it with `lc0 leela2onnx` and load the .onnx file, which loads directly"


def _fields(buf: memoryview, where: str) -> Fields:
    """One protobuf message level (see :func:`protowire.decode`); NetworkError naming ``where``."""
    try:
        return protowire.decode(buf)
    except protowire.WireError as err:
        raise NetworkError(f"corrupt lc0 weights ({where}): {err}") from None


def _sub(fields: Fields, num: int, where: str) -> Fields | None:
    """The last occurrence of an embedded message field, decoded (protobuf: last one wins)."""
    vals = fields.get(num)
    if not vals:
        return None
    if not isinstance(vals[-1], memoryview):
        raise NetworkError(f"corrupt lc0 weights ({where}): expected a message in field {num}")
    return _fields(vals[-1], where)


def _enum(fields: Fields | None, num: int, default: int = 0) -> int:
    if not fields or num not in fields:
        return default
    val = fields[num][-1]
    return val if isinstance(val, int) else default


def _float32(fields: Fields, num: int) -> np.float32:
    """The little-endian float32 of field ``num`` (0 when absent; its type was checked by the caller)."""
    raw = fields[num][-1] if num in fields else None
    return np.float32(struct.unpack("<f", raw)[0]) if isinstance(raw, memoryview) else np.float32(0)


# --------------------------------------------------------------------------- layers


def decode_layer(fields: Fields | None, where: str) -> np.ndarray:
    """A ``Weights.Layer`` -> float32 array [n] (empty when the layer is absent).

    Encodings (lc0 src/utils/weights_adapter.cc): LINEAR16 (the default when unset) stores uint16 v and
    gives ``min*(1-t) + max*t`` with ``t = v/65535``; FLOAT16, BFLOAT16 and FLOAT32 are plain
    little-endian. Raises NetworkError for an unknown encoding or a byte count that does not fit.
    """
    if not fields:
        return np.zeros(0, np.float32)
    params = fields[3][-1] if 3 in fields else b""  # a memoryview into the file's bytes: no copy
    encoding = _enum(fields, 4, 1)
    size = 4 if encoding == 4 else 2
    if encoding not in (1, 2, 3, 4):
        raise NetworkError(f"unsupported lc0 weights ({where}): unknown layer encoding {encoding}")
    bounds = [fields[n][-1] for n in (1, 2) if n in fields]
    if isinstance(params, int) or any(isinstance(b, int) or len(b) != 4 for b in bounds):
        raise NetworkError(f"corrupt lc0 weights ({where}): a layer field has the wrong type")
    if len(params) % size:
        raise NetworkError(f"corrupt lc0 weights ({where}): {len(params)} bytes is not a whole number of values")
    with np.errstate(all="ignore"):
        if encoding == 1:
            lo, hi = (_float32(fields, n) for n in (1, 2))
            theta = np.frombuffer(params, "<u2").astype(np.float32) / np.float32(0xFFFF)
            values = lo * (np.float32(1) - theta) + hi * theta
        elif encoding == 2:
            values = np.frombuffer(params, "<f2").astype(np.float32)
        elif encoding == 3:
            values = (np.frombuffer(params, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            values = np.frombuffer(params, "<f4").astype(np.float32)
    if not np.isfinite(values).all():
        raise NetworkError(f"corrupt lc0 weights ({where}): non-finite values (NaN or infinity)")
    return values


def _layer(fields: Fields | None, num: int, where: str) -> np.ndarray:
    return decode_layer(_sub(fields, num, where) if fields else None, where)


def _conv_block(fields: Fields | None, where: str, in_channels: int, kernel: int) -> ConvBlock | None:
    """Decode a ``Weights.ConvBlock`` and fold its batch-norm; None when it has no weights.

    Folding follows lc0 src/neural/network_legacy.cc ``BaseWeights::ConvBlock``: missing gammas are 1,
    missing betas and biases 0; ``bn_stddivs`` holds the *variance*; then
    ``g = gamma / sqrt(var + 1e-5)``, ``w' = w * g`` (per output channel),
    ``b' = beta - g * (mean - bias)``. Without ``bn_means`` the weights and biases are used as they are.
    """
    if not fields or _CONV_WEIGHTS not in fields:
        return None
    w = _layer(fields, _CONV_WEIGHTS, where)
    if w.size == 0:
        return None
    bias = _layer(fields, _CONV_BIASES, where)
    means = _layer(fields, _CONV_MEANS, where)
    var = _layer(fields, _CONV_STDDIVS, where)
    gammas = _layer(fields, _CONV_GAMMAS, where)
    betas = _layer(fields, _CONV_BETAS, where)
    out = max(bias.size, means.size, betas.size)
    per_out = in_channels * kernel * kernel
    if out == 0 or w.size != out * per_out:
        raise NetworkError(
            f"unsupported or corrupt lc0 weights ({where}): {w.size} weights, expected "
            f"{out} x {in_channels} x {kernel} x {kernel}"
        )
    if bias.size == 0:
        bias = np.zeros(out, np.float32)
    if means.size:
        gammas = gammas if gammas.size else np.ones(out, np.float32)
        betas = betas if betas.size else np.zeros(out, np.float32)
        for name, arr in (("bn_stddivs", var), ("bn_gammas", gammas), ("bn_betas", betas), ("biases", bias)):
            if arr.size != out:
                raise NetworkError(f"corrupt lc0 weights ({where}): {name} has {arr.size} values, expected {out}")
        with np.errstate(all="ignore"):
            g = gammas / np.sqrt(var + np.float32(BN_EPSILON))
            w = w.reshape(out, per_out) * g[:, None]
            bias = betas - g * (means - bias)
        if not (np.isfinite(g).all() and np.isfinite(w).all() and np.isfinite(bias).all()):
            raise NetworkError(f"corrupt lc0 weights ({where}): batch-norm statistics give non-finite weights")
    elif bias.size != out:
        raise NetworkError(f"corrupt lc0 weights ({where}): biases has {bias.size} values, expected {out}")
    weights = np.ascontiguousarray(w, np.float32).reshape(out, in_channels, kernel, kernel)
    return ConvBlock(weights, bias.astype(np.float32))


def _dense(fields: Fields, wnum: int, bnum: int, where: str, n_in: int, n_out: int | None = None) -> Dense:
    w = _layer(fields, wnum, where + " weights")
    b = _layer(fields, bnum, where + " biases")
    out = b.size if n_out is None else n_out
    if b.size != out or out == 0 or w.size != out * n_in:
        raise NetworkError(
            f"unsupported or corrupt lc0 weights ({where}): {w.size} weights and {b.size} biases "
            f"for {n_in} inputs" + (f" and {n_out} outputs" if n_out else "")
        )
    return Dense(w.reshape(out, n_in), b)


# --------------------------------------------------------------------------- the Net message


@dataclass(frozen=True)
class NetFormat:
    """``format.network_format`` after lc0's fix-ups for older files (lc0 src/neural/loader.cc
    ``FixOlderWeightsFile``): no network_format means classical input/value/policy, and the
    pre-headformat structures NETWORK_CLASSICAL/NETWORK_SE get classical value and policy heads."""

    input: int = 1
    output: int = 1
    network: int = 3
    policy: int = POLICY_CLASSICAL
    value: int = VALUE_CLASSICAL
    moves_left: int = 0
    activation: int = ACTIVATION_RELU


def _net_format(net: Fields) -> NetFormat:
    fmt = _sub(net, _NET_FORMAT, "format")
    nf = _sub(fmt, _FORMAT_NETWORK_FORMAT, "format.network_format") if fmt else None
    if nf is None:
        return NetFormat()
    network, policy, value = _enum(nf, 3), _enum(nf, 4), _enum(nf, 5)
    if network == 1:
        network, policy, value = 3, POLICY_CLASSICAL, VALUE_CLASSICAL
    elif network == 2:
        network, policy, value = 4, POLICY_CLASSICAL, VALUE_CLASSICAL
    return NetFormat(
        input=_enum(nf, 1, 1) or 1,
        output=_enum(nf, 2),
        network=network,
        policy=policy,
        value=value,
        moves_left=_enum(nf, 6),
        activation=_enum(nf, 7),
    )


def _refuse(what: str, fmt: NetFormat, hint: bool = True) -> Exception:
    name = NETWORK_NAMES.get(fmt.network, f"network structure {fmt.network}")
    tail = f"; {_LEELA2ONNX_HINT}" if hint else " (neither by lichessbot nor by lc0's ONNX converter)"
    return NetworkError(f"cannot convert lc0 weights: {what} ({name}) is not supported{tail}")


def _check_family(fmt: NetFormat, weights: Fields) -> None:
    """Refuse every family but the residual/SE-residual ones, naming the family."""
    if fmt.network in (6, 7, 134) or any(n in weights for n in _W_ATTENTION_BODY):
        raise _refuse("an attention-body (transformer, BT-series) network", fmt)
    if any(n in weights for n in _W_MULTIHEAD):
        raise _refuse("a multi-head network", fmt)
    if fmt.policy == POLICY_ATTENTION or any(n in weights for n in _W_ATTENTION_POLICY):
        raise _refuse("an attention policy head", fmt)
    if fmt.network not in (3, 4):
        raise _refuse("this network structure", fmt, hint=False)
    if fmt.policy not in (POLICY_CLASSICAL, POLICY_CONVOLUTION):
        raise _refuse(f"policy format {fmt.policy}", fmt, hint=False)
    if fmt.value not in (VALUE_CLASSICAL, VALUE_WDL):
        raise _refuse(f"value format {fmt.value}", fmt, hint=False)
    if fmt.activation not in (ACTIVATION_RELU, ACTIVATION_MISH):
        raise _refuse(f"default activation {fmt.activation}", fmt, hint=False)
    if fmt.input not in INPUT_FORMATS:
        raise NetworkError(f"cannot convert lc0 weights: unknown input format {fmt.input}")


def _se_unit(fields: Fields | None, where: str, channels: int) -> SEUnit | None:
    if not fields:
        return None
    w1, b1 = _layer(fields, 1, where + ".w1"), _layer(fields, 2, where + ".b1")
    w2, b2 = _layer(fields, 3, where + ".w2"), _layer(fields, 4, where + ".b2")
    se = b1.size
    if se == 0 or w1.size != se * channels or w2.size != 2 * channels * se or b2.size != 2 * channels:
        raise NetworkError(f"corrupt lc0 weights ({where}): SE layer sizes do not fit {channels} filters")
    return SEUnit(Dense(w1.reshape(se, channels), b1), Dense(w2.reshape(2 * channels, se), b2))


def _decode_weights(fmt: NetFormat, w: Fields) -> Lc0Net:
    def conv(num: int, where: str, in_ch: int, k: int, fields: Fields = w) -> ConvBlock | None:
        return _conv_block(_sub(fields, num, where), where, in_ch, k)

    inp = conv(_W_INPUT, "input", 112, 3)
    if inp is None:
        raise NetworkError("corrupt lc0 weights: the input convolution is missing")
    c = inp.out_channels
    residual = []
    for i, raw in enumerate(w.get(_W_RESIDUAL, [])):
        where = f"residual[{i}]"
        if not isinstance(raw, memoryview):
            raise NetworkError(f"corrupt lc0 weights ({where}): expected a message")
        res = _fields(raw, where)
        c1, c2 = conv(_RES_CONV1, where + ".conv1", c, 3, res), conv(_RES_CONV2, where + ".conv2", c, 3, res)
        if c1 is None or c2 is None or c1.out_channels != c or c2.out_channels != c:
            raise NetworkError(f"corrupt lc0 weights ({where}): convolutions missing or not {c} filters")
        residual.append(Residual(c1, c2, _se_unit(_sub(res, _RES_SE, where + ".se"), where + ".se", c)))

    policy1 = conv(_W_POLICY1, "policy1", c, 3)
    policy_dense = None
    if policy1 is not None:  # convolutional head, as lc0's converter decides (policy1 present)
        if policy1.out_channels != c:
            raise NetworkError(f"corrupt lc0 weights (policy1): {policy1.out_channels} filters, expected {c}")
        policy = conv(_W_POLICY, "policy", c, 3)
        if policy is None or policy.out_channels < 73:
            raise NetworkError("corrupt lc0 weights (policy): the 73-plane policy convolution is missing")
    else:
        policy = conv(_W_POLICY, "policy", c, 1)
        if policy is None:
            raise NetworkError("corrupt lc0 weights: the policy head is missing")
        policy_dense = _dense(w, _W_IP_POL_W, _W_IP_POL_B, "ip_pol", policy.out_channels * 64, 1858)

    value = conv(_W_VALUE, "value", c, 1)
    if value is None:
        raise NetworkError("corrupt lc0 weights: the value head is missing")
    v1 = _dense(w, _W_IP1_VAL_W, _W_IP1_VAL_B, "ip1_val", value.out_channels * 64)
    v2 = _dense(w, _W_IP2_VAL_W, _W_IP2_VAL_B, "ip2_val", v1.bias.size, 3 if fmt.value == VALUE_WDL else 1)

    mlh = m1 = m2 = None
    if fmt.moves_left == MOVES_LEFT_V1:
        mlh = conv(_W_MOVES_LEFT, "moves_left", c, 1)
        if mlh is None:
            raise NetworkError("corrupt lc0 weights: the moves-left head is missing")
        m1 = _dense(w, _W_IP1_MOV_W, _W_IP1_MOV_B, "ip1_mov", mlh.out_channels * 64)
        m2 = _dense(w, _W_IP2_MOV_W, _W_IP2_MOV_B, "ip2_mov", m1.bias.size, 1)

    return Lc0Net(
        input_format=fmt.input,
        wdl=fmt.value == VALUE_WDL,
        mish=fmt.activation == ACTIVATION_MISH,
        input=inp,
        residual=residual,
        policy=policy,
        policy1=policy1,
        policy_dense=policy_dense,
        value=value,
        value_dense1=v1,
        value_dense2=v2,
        moves_left=mlh,
        mlh_dense1=m1,
        mlh_dense2=m2,
    )


def _embedded_onnx(net: Fields) -> bytes:
    """The ONNX model stored inside a NETWORK_ONNX weights file, if it uses leela2onnx's tensor names."""
    onnx = _sub(net, _NET_ONNX, "onnx_model") or {}
    names = {k: bytes(onnx[n][-1]).decode("utf-8", "replace") for k, n in
             (("input", 3), ("value", 4), ("wdl", 5), ("policy", 6), ("mlh", 7)) if n in onnx}
    standard = {"input": "/input/planes", "value": "/output/value", "wdl": "/output/wdl",
                "policy": "/output/policy", "mlh": "/output/mlh"}
    if 1 not in onnx or _enum(onnx, 2, 1) != 1 or any(standard[k] != v for k, v in names.items()):
        raise NetworkError(f"cannot use lc0 weights: the embedded ONNX model is not float32 with lc0's "
                             f"default tensor names ({names}); {_LEELA2ONNX_HINT}")
    return bytes(onnx[1][-1])


def read_net(data: bytes) -> tuple[Lc0Net | bytes, int]:
    """Decode an uncompressed lc0 ``Net`` message.

    Returns ``(net, input_format)`` where ``net`` is an :class:`Lc0Net`, or the serialized ONNX model
    itself for NETWORK_ONNX files that carry one. Raises NetworkError for a bad magic number, corrupt
    data, or a family we do not convert (attention policy, attention body, multi-head).
    """
    try:
        net = protowire.decode(data)
    except protowire.WireError as err:
        raise NetworkError(f"corrupt or not an lc0 weights file: {err}") from None
    magic = net.get(_NET_MAGIC, [None])[-1]
    if not isinstance(magic, memoryview) or len(magic) != 4 or struct.unpack("<I", magic)[0] != WEIGHT_MAGIC:
        raise NetworkError("not an lc0 weights file (bad magic number)")
    fmt = _net_format(net)
    if fmt.network == 5:
        return _embedded_onnx(net), fmt.input if fmt.input in INPUT_FORMATS else 1
    weights = _sub(net, _NET_WEIGHTS, "weights")
    if weights is None:
        raise NetworkError("corrupt lc0 weights: the file has no weights")
    _check_family(fmt, weights)
    return _decode_weights(fmt, weights), fmt.input


def read_pb_gz(path: str | Path) -> bytes:
    """The uncompressed bytes of an lc0 weights file (gzip, or raw protobuf as lc0's gzread accepts).

    Raises NetworkError (without the path; :func:`load_pb_gz` adds it) when unreadable or truncated.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise NetworkError(f"cannot read the file: {err.strerror or err}") from None
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except EOFError:
        raise NetworkError("truncated lc0 weights file: the gzip stream ends early") from None
    except (OSError, zlib.error) as err:
        raise NetworkError(f"corrupt lc0 weights file: bad gzip data ({err})") from None


def load_pb_gz(path: str | Path) -> tuple[Lc0Net | bytes, int]:
    """:func:`read_net` of the file at ``path``; NetworkError messages start with the path."""
    try:
        return read_net(read_pb_gz(path))
    except NetworkError as err:
        raise NetworkError(f"{path}: {err}") from None


def convert_pb_gz(path: str | Path) -> tuple[bytes, int]:
    """Convert an lc0 ``.pb.gz`` weights file to ONNX, in-process (about 0.05 s for a Maia net).

    Returns ``(model, input_format)``: the serialized ONNX model (IR 8, opset 17; input
    ``/input/planes`` float32 [batch, 112, 8, 8]; outputs ``/output/policy`` [batch, 1858] raw logits,
    ``/output/wdl`` [batch, 3] softmaxed or ``/output/value`` [batch, 1] tanh, ``/output/mlh``
    [batch, 1] when present -- leela2onnx's interface) and the lc0 input format stored in the file
    (1 when the file has no network_format). Raises NetworkError (one line, starting with the path) for
    a missing, truncated or corrupt file and for families we do not convert.
    """
    net, input_format = load_pb_gz(path)
    if isinstance(net, bytes):
        return net, input_format
    return build_model(net).SerializeToString(), input_format
