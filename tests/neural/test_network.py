"""Loading networks: lc0 ONNX interface checks and one-line errors for bad files."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from lichessbot.errors import LichessbotError
from lichessbot.neural import network as network_mod
from lichessbot.neural.network import Network, NetworkError, load_network
from tests.tinynet import build_tiny_onnx, tiny_model


def test_tiny_onnx_loads_with_heads_detected(tmp_path):
    net = load_network(str(build_tiny_onnx(tmp_path / "t.onnx", wdl=False, mlh=True)), input_format=3)
    assert isinstance(net, Network) and net.input_format == 3 and not net.has_wdl and net.has_mlh
    assert net.name == "t" and net.source.endswith("t.onnx") and "bytes" in repr(net)


def test_onnx_input_format_defaults_to_classical(tiny_net):
    net = load_network(str(tiny_net))
    assert net.input_format == 1 and net.has_wdl and not net.has_mlh


def test_network_error_is_a_user_error_and_a_value_error():
    assert issubclass(NetworkError, LichessbotError) and issubclass(NetworkError, ValueError)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(NetworkError, match="not found: .*nope.onnx"):
        load_network(str(tmp_path / "nope.onnx"))


def test_unknown_extension_is_refused(tmp_path):
    p = tmp_path / "net.bin"
    p.write_bytes(b"x")
    with pytest.raises(NetworkError, match=r"expected a \.onnx or \.pb\.gz"):
        load_network(str(p))


def test_corrupt_onnx_is_refused(tmp_path):
    p = tmp_path / "bad.onnx"
    p.write_bytes(b"\xff\xfe not a protobuf at all \x00\x01")
    with pytest.raises(NetworkError, match="not a readable ONNX model"):
        load_network(str(p))


def _renamed(tmp_path, old: str, new: str):
    model = tiny_model()
    for node in model.graph.node:
        node.input[:] = [new if x == old else x for x in node.input]
        node.output[:] = [new if x == old else x for x in node.output]
    for vi in [*model.graph.input, *model.graph.output]:
        if vi.name == old:
            vi.name = new
    p = tmp_path / "renamed.onnx"
    onnx.save(model, str(p))
    return p


@pytest.mark.parametrize(("old", "new", "msg"), [
    ("/input/planes", "input_1", "no input '/input/planes'"),
    ("/output/policy", "policy", "no output '/output/policy'"),
    ("/output/wdl", "value_head", "neither '/output/wdl' nor '/output/value'"),
])
def test_wrong_tensor_names_are_refused(tmp_path, old, new, msg):
    with pytest.raises(NetworkError, match=msg):
        load_network(str(_renamed(tmp_path, old, new)))


def test_wrong_shape_is_refused(tmp_path):
    model = tiny_model()
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("/output/policy", TensorProto.FLOAT, ["batch", 1857]))
    p = tmp_path / "shape.onnx"
    onnx.save(model, str(p))
    with pytest.raises(NetworkError, match=r"'/output/policy' has shape \[batch, 1857\], expected \[batch, 1858\]"):
        load_network(str(p))


def test_bad_input_format_is_refused(tiny_net):
    with pytest.raises(NetworkError, match="input format 6"):
        load_network(str(tiny_net), input_format=6)


def test_default_network_missing_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(network_mod, "_default_path", lambda: tmp_path / "default.onnx")
    with pytest.raises(NetworkError, match="the default network is not installed"):
        load_network("default")


def test_default_network_loads_when_present(monkeypatch, tiny_net):
    monkeypatch.setattr(network_mod, "_default_path", lambda: tiny_net)
    net = load_network()
    assert net.source == "default" and net.input_format == 1
