"""lc0 .pb.gz -> ONNX conversion: lc0's reference outputs, leela2onnx parity, synthetic nets, bad files."""

from __future__ import annotations

import gzip

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from lichessbot.cli import main as cli_main
from lichessbot.neural import protowire as pw
from lichessbot.neural.lc0_weights import convert_pb_gz, decode_layer
from lichessbot.neural.network import NetworkError
from lichessbot.neural.onnx_build import conv_policy_map


def _session(model: bytes | str) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def _run(sess: ort.InferenceSession, x: np.ndarray) -> dict[str, np.ndarray]:
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, {"/input/planes": x})))


# ----------------------------------------------------------------------------- policy map


def test_conv_policy_map_geometry():
    table = conv_policy_map()
    assert len(set(table.tolist())) == 1858 and table.max() < 73 * 64
    assert table[322] == 1 * 64 + 12  # e2e4: north, distance 2 (plane 1), from e2
    assert table[159] == 63 * 64 + 6  # g1f3: knight two up, one left (plane 63), from g1
    assert table[1828] == 69 * 64 + 52  # e7e8q: push promotion to queen (plane 69), from e7
    assert table[1515] == 0 * 64 + 52  # e7e8 (= knight promotion): north, distance 1


# ----------------------------------------------------------------------------- synthetic nets

RNG = np.random.default_rng(7)


def _layer(arr: np.ndarray, enc: str) -> tuple[bytes, np.ndarray]:
    """Encode ``arr`` as a Weights.Layer; returns (message, the values a reader must decode)."""
    arr = np.asarray(arr, np.float32).ravel()
    if enc == "linear16":  # encoding left unset: LINEAR16 is the default
        lo, hi = np.float32(arr.min()), np.float32(arr.max() + 1e-3)
        q = np.round((arr - lo) / (hi - lo) * 65535).astype("<u2")
        msg = pw.message([pw.float_field(1, lo), pw.float_field(2, hi), pw.bytes_field(3, q.tobytes())])
        return msg, lo + (q / 65535.0) * (hi - lo)
    if enc == "f16":
        v = arr.astype("<f2")
        return pw.message([pw.bytes_field(3, v.tobytes()), pw.varint_field(4, 2)]), v.astype(np.float64)
    return pw.message([pw.bytes_field(3, arr.astype("<f4").tobytes()), pw.varint_field(4, 4)]), arr.astype(np.float64)


class _Builder:
    """Writes a tiny lc0 Net and keeps the decoded weights for a numpy reference forward pass."""

    def __init__(self, enc: str) -> None:
        self.enc = enc

    def layer(self, *shape: int, scale: float = 0.3) -> tuple[bytes, np.ndarray]:
        msg, val = _layer(RNG.standard_normal(shape) * scale, self.enc)
        return msg, val.reshape(shape)

    def conv(self, out: int, inp: int, k: int, bn: bool) -> tuple[bytes, dict]:
        (wm, w), (bm, b) = self.layer(out, inp, k, k, scale=0.5 / np.sqrt(inp * k * k)), self.layer(out, scale=0.1)
        parts, ref = [pw.bytes_field(1, wm)], {"w": w, "b": b, "k": k}
        if bn:  # old-style batch-norm with raw statistics: biases, means, variances, gammas, betas
            (mm, mean), (vm, var) = self.layer(out, scale=0.1), _layer(RNG.uniform(0.5, 2.0, out), self.enc)
            (gm, gamma), (em, beta) = _layer(RNG.uniform(0.5, 1.5, out), self.enc), self.layer(out, scale=0.1)
            parts += [pw.bytes_field(2, bm), pw.bytes_field(3, mm), pw.bytes_field(4, vm),
                      pw.bytes_field(5, gm), pw.bytes_field(6, em)]
            ref.update(mean=mean, var=var, gamma=gamma, beta=beta)
        else:
            parts.append(pw.bytes_field(2, bm))
        return pw.message(parts), ref

    def dense(self, out: int, inp: int, wnum: int, bnum: int) -> tuple[list[bytes], dict]:
        (wm, w), (bm, b) = self.layer(out, inp, scale=1 / np.sqrt(inp)), self.layer(out, scale=0.1)
        return [pw.bytes_field(wnum, wm), pw.bytes_field(bnum, bm)], {"w": w, "b": b}


def _make_net(*, c=4, conv_policy=True, wdl=True, mlh=False, mish=False, se=True, enc="linear16",
              network=None, policy=None, input_format=1, extra_weights=b""):
    """A tiny Net (1 residual block, ``c`` filters) as gzip bytes, plus the reference weights."""
    b = _Builder(enc)
    ref: dict = {"mish": mish, "wdl": wdl}
    w = []
    m, ref["input"] = b.conv(c, 112, 3, bn=True)
    w.append(pw.bytes_field(1, m))
    c1, r1 = b.conv(c, c, 3, bn=False)
    c2, r2 = b.conv(c, c, 3, bn=True)
    res = [pw.bytes_field(1, c1), pw.bytes_field(2, c2)]
    ref["block"] = {"conv1": r1, "conv2": r2}
    if se:
        d1, s1 = b.dense(2, c, 1, 2)
        d2, s2 = b.dense(2 * c, 2, 3, 4)
        res.append(pw.bytes_field(3, pw.message(d1 + d2)))
        ref["block"]["se"] = (s1, s2)
    w.append(pw.bytes_field(2, pw.message(res)))
    if conv_policy:
        (m1, ref["policy1"]), (m2, ref["policy"]) = b.conv(c, c, 3, bn=False), b.conv(80, c, 3, bn=False)
        w += [pw.bytes_field(11, m1), pw.bytes_field(3, m2)]
    else:
        m, ref["policy"] = b.conv(8, c, 1, bn=True)
        d, ref["ip_pol"] = b.dense(1858, 8 * 64, 4, 5)
        w += [pw.bytes_field(3, m)] + d
    m, ref["value"] = b.conv(2, c, 1, bn=True)
    d1, ref["ip1_val"] = b.dense(16, 2 * 64, 7, 8)
    d2, ref["ip2_val"] = b.dense(3 if wdl else 1, 16, 9, 10)
    w += [pw.bytes_field(6, m)] + d1 + d2
    if mlh:
        m, ref["mlh"] = b.conv(2, c, 1, bn=False)
        d1, ref["ip1_mov"] = b.dense(8, 2 * 64, 13, 14)
        d2, ref["ip2_mov"] = b.dense(1, 8, 15, 16)
        ref["ip2_mov"]["b"] = ref["ip2_mov"]["b"] + 20  # keep the ReLU output positive
        d2 = [d2[0], pw.bytes_field(16, _layer(ref["ip2_mov"]["b"], "f32")[0])]
        w += [pw.bytes_field(12, m)] + d1 + d2
    nf = pw.message([
        pw.varint_field(1, input_format), pw.varint_field(2, 2 if wdl else 1),
        pw.varint_field(3, 4 if network is None else network),
        pw.varint_field(4, policy or (2 if conv_policy else 1)), pw.varint_field(5, 2 if wdl else 1),
        pw.varint_field(6, 1 if mlh else 0), pw.varint_field(7, 1 if mish else 0),
    ])
    net = pw.message([
        pw.fixed32_field(1, 0x1C0),
        pw.bytes_field(4, pw.bytes_field(2, nf)),
        pw.bytes_field(10, pw.message(w) + extra_weights),
    ])
    return gzip.compress(net), ref


def _np_conv(x, r, act, mish):
    k, pad = r["k"], (r["k"] - 1) // 2
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = sum(np.einsum("bihw,oi->bohw", xp[:, :, i:i + 8, j:j + 8], r["w"][:, :, i, j])
            for i in range(k) for j in range(k)) + r["b"][None, :, None, None]
    if "mean" in r:  # batch-norm from raw statistics, epsilon 1e-5 (lc0 network_legacy.cc)
        s = (r["gamma"] / np.sqrt(r["var"] + 1e-5))[None, :, None, None]
        y = (y - r["mean"][None, :, None, None]) * s + r["beta"][None, :, None, None]
    return _act(y, mish) if act else y


def _act(y, mish):
    return y * np.tanh(np.log1p(np.exp(y))) if mish else np.maximum(y, 0)


def _np_forward(ref, x):
    """Plain numpy forward pass of the synthetic net (float64), lc0's layer semantics."""
    mish = ref["mish"]
    dense = lambda h, d: h @ d["w"].T + d["b"]  # noqa: E731
    flow = _np_conv(x, ref["input"], True, mish)
    blk = ref["block"]
    h = _np_conv(_np_conv(flow, blk["conv1"], True, mish), blk["conv2"], False, mish)
    if "se" in blk:
        s = dense(_act(dense(h.mean(axis=(2, 3)), blk["se"][0]), mish), blk["se"][1])
        c = h.shape[1]
        h = h / (1 + np.exp(-s[:, :c, None, None])) + s[:, c:, None, None]
    flow = _act(h + flow, mish)
    out = {}
    if "policy1" in ref:
        p = _np_conv(_np_conv(flow, ref["policy1"], True, mish), ref["policy"], False, mish)
        out["/output/policy"] = p.reshape(len(x), -1)[:, conv_policy_map()]
    else:
        p = _np_conv(flow, ref["policy"], True, mish).reshape(len(x), -1)
        out["/output/policy"] = dense(p, ref["ip_pol"])
    v = _np_conv(flow, ref["value"], True, mish).reshape(len(x), -1)
    v = dense(_act(dense(v, ref["ip1_val"]), mish), ref["ip2_val"])
    if ref["wdl"]:
        e = np.exp(v - v.max(axis=1, keepdims=True))
        out["/output/wdl"] = e / e.sum(axis=1, keepdims=True)
    else:
        out["/output/value"] = np.tanh(v)
    if "mlh" in ref:
        m = _np_conv(flow, ref["mlh"], True, mish).reshape(len(x), -1)
        out["/output/mlh"] = np.maximum(dense(_act(dense(m, ref["ip1_mov"]), mish), ref["ip2_mov"]), 0)
    return out


@pytest.mark.parametrize("kwargs", [
    dict(),  # SE block, conv policy, WDL, LINEAR16 (Maia-like)
    dict(conv_policy=False, wdl=False, mlh=True, mish=True, se=False, enc="f32", network=3, input_format=4),
    dict(mlh=True, enc="f16", input_format=2),
], ids=["se-conv-wdl-linear16", "classical-value-mlh-mish-f32", "conv-wdl-mlh-f16"])
def test_synthetic_net_converts_and_matches_numpy_forward(tmp_path, kwargs):
    data, ref = _make_net(**kwargs)
    path = tmp_path / "tiny.pb.gz"
    path.write_bytes(data)
    model, input_format = convert_pb_gz(path)
    assert input_format == kwargs.get("input_format", 1)
    proto = onnx.load_from_string(model)
    assert proto.ir_version == 8 and proto.opset_import[0].version == 17
    onnx.checker.check_model(proto)
    x = (RNG.random((3, 112, 8, 8)) < 0.2).astype(np.float32)
    got = _run(_session(model), x)
    want = _np_forward(ref, x.astype(np.float64))
    assert set(got) == set(want)
    shapes = {"/output/policy": (3, 1858), "/output/wdl": (3, 3), "/output/value": (3, 1), "/output/mlh": (3, 1)}
    for key, val in want.items():
        assert got[key].shape == shapes[key]
        np.testing.assert_allclose(got[key], val, rtol=1e-4, atol=1e-4, err_msg=key)


def test_linear16_decoding_uses_min_and_max():
    msg = pw.message([pw.float_field(1, -2.0), pw.float_field(2, 2.0),
                      pw.bytes_field(3, np.array([0, 65535, 32768], "<u2").tobytes())])
    got = decode_layer(pw.decode(msg), "x")
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [-2.0, 2.0, -2.0 + 4.0 * 32768 / 65535], rtol=0, atol=1e-6)


def test_file_without_network_format_is_classical(tmp_path):
    data, _ = _make_net(conv_policy=False, wdl=False, se=False, enc="f32")
    net = pw.decode(gzip.decompress(data))
    raw = pw.message([pw.fixed32_field(1, 0x1C0), pw.bytes_field(10, bytes(net[10][0]))])
    (tmp_path / "old.pb.gz").write_bytes(gzip.compress(raw))
    model, input_format = convert_pb_gz(tmp_path / "old.pb.gz")
    assert input_format == 1
    assert [o.name for o in _session(model).get_outputs()] == ["/output/policy", "/output/value"]


# ----------------------------------------------------------------------------- bad files


def test_truncated_files_raise_network_error(tmp_path):
    data, _ = _make_net()
    cut_gzip = tmp_path / "cut.pb.gz"
    cut_gzip.write_bytes(data[: len(data) // 2])
    with pytest.raises(NetworkError, match="truncated"):
        convert_pb_gz(cut_gzip)
    raw = gzip.decompress(data)
    cut_proto = tmp_path / "cut2.pb.gz"
    cut_proto.write_bytes(gzip.compress(raw[: len(raw) - 100]))
    with pytest.raises(NetworkError, match="corrupt.*truncated"):
        convert_pb_gz(cut_proto)


def test_not_a_weights_file_and_missing_file(tmp_path):
    junk = tmp_path / "junk.pb.gz"
    junk.write_bytes(gzip.compress(b"\x08\x01\x12\x05hello"))  # valid protobuf, no lc0 magic
    with pytest.raises(NetworkError, match="not an lc0 weights file"):
        convert_pb_gz(junk)
    junk.write_bytes(b"hello world, not protobuf")
    with pytest.raises(NetworkError, match="corrupt or not an lc0 weights file"):
        convert_pb_gz(junk)
    with pytest.raises(NetworkError, match="cannot read"):
        convert_pb_gz(tmp_path / "missing.pb.gz")


@pytest.mark.parametrize("kwargs, family", [
    (dict(network=6, extra_weights=pw.bytes_field(27, b"")), "attention-body"),
    (dict(policy=3, extra_weights=pw.bytes_field(17, b"")), "attention policy"),
], ids=["attention-body", "attention-policy"])
def test_attention_families_are_refused_with_a_hint(tmp_path, kwargs, family):
    data, _ = _make_net(**kwargs)
    path = tmp_path / "bt.pb.gz"
    path.write_bytes(data)
    with pytest.raises(NetworkError, match=family) as info:
        convert_pb_gz(path)
    assert "leela2onnx" in str(info.value) and "\n" not in str(info.value)


def test_convert_cli_writes_a_loadable_file_and_fails_in_one_line(tmp_path, capsys):
    data, _ = _make_net(mlh=True)
    src, out = tmp_path / "tiny.pb.gz", tmp_path / "tiny.onnx"
    src.write_bytes(data)
    assert cli_main(["convert", str(src), str(out)]) == 0
    assert "lc0 input format 1" in capsys.readouterr().out
    assert {o.name for o in _session(str(out)).get_outputs()} == {"/output/policy", "/output/wdl", "/output/mlh"}
    src.write_bytes(data[:100])
    assert cli_main(["convert", str(src), str(tmp_path / "x.onnx")]) == 2
    err = capsys.readouterr().err
    assert "truncated" in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
def test_damaged_files_give_network_error_or_a_model(tmp_path):
    """Byte damage anywhere in the protobuf: a NetworkError or a model, never another exception."""
    data, _ = _make_net(c=2, enc="f32")
    raw = bytearray(gzip.decompress(data))
    rng = np.random.default_rng(3)
    path = tmp_path / "damaged.pb.gz"
    outcomes = set()
    for _ in range(150):
        bad = bytearray(raw)
        for pos in rng.integers(0, len(bad), size=3):
            bad[pos] = int(rng.integers(0, 256))
        path.write_bytes(gzip.compress(bytes(bad), compresslevel=1))
        try:
            convert_pb_gz(path)
            outcomes.add("model")
        except NetworkError as err:
            assert "\n" not in str(err)
            outcomes.add("error")
    assert "error" in outcomes


def test_embedded_onnx_model_is_passed_through_and_odd_names_are_refused(tmp_path):
    from tests.tinynet import tiny_model

    onnx_bytes = tiny_model(seed=2).SerializeToString()

    def write(policy_name: str):
        nf = pw.message([pw.varint_field(1, 3), pw.varint_field(3, 5), pw.varint_field(5, 2)])
        om = pw.message([pw.bytes_field(1, onnx_bytes), pw.varint_field(2, 1),
                         pw.bytes_field(3, b"/input/planes"), pw.bytes_field(6, policy_name.encode())])
        raw = pw.message([pw.fixed32_field(1, 0x1C0), pw.bytes_field(4, pw.bytes_field(2, nf)), pw.bytes_field(11, om)])
        (tmp_path / "onnx.pb.gz").write_bytes(gzip.compress(raw))
        return tmp_path / "onnx.pb.gz"

    assert convert_pb_gz(write("/output/policy")) == (onnx_bytes, 3)
    with pytest.raises(NetworkError, match="embedded ONNX model.*leela2onnx"):
        convert_pb_gz(write("policy_out"))
