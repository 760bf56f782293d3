"""The evaluator: onnxruntime providers, the raw outputs of a run, bad input and models onnxruntime refuses.
(Priors over the legal moves and lc0's exact outputs on the Maia nets: tests/neural/test_position_eval.py.)"""

from __future__ import annotations

import chess
import numpy as np
import pytest

from lichessbot.neural.evaluator import Evaluator, select_providers
from lichessbot.neural.network import NetworkError, load_network
from lichessbot.neural.position_eval import encode_boards
from tests.tinynet import build_tiny_onnx


@pytest.fixture(scope="module")
def mlh_eval(tmp_path_factory):
    net = load_network(str(build_tiny_onnx(tmp_path_factory.mktemp("ev") / "tiny.onnx", seed=3, mlh=True)))
    return Evaluator(net, backend="cpu", threads=1, cache_size=4)


def test_a_run_gives_raw_logits_wdl_and_moves_left_of_every_row(mlh_eval):
    boards = [chess.Board(), chess.Board(), chess.Board("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1")]
    planes = encode_boards(boards, input_format=1, history_fill="fen_only")[0]
    logits, wdl, mlh = mlh_eval.run(planes)
    assert logits.shape == (3, 1858) and logits.dtype == np.float32 and wdl.shape == (3, 3) and mlh.shape == (3,)
    np.testing.assert_allclose(logits[0], logits[1], atol=1e-6)
    assert not np.allclose(logits[0], logits[2]) and np.allclose(wdl.sum(axis=1), 1.0, atol=1e-5)
    assert mlh_eval.provider == "CPUExecutionProvider"


def test_scalar_value_net_gives_wdl_from_q(tmp_path):
    net = load_network(str(build_tiny_onnx(tmp_path / "v.onnx", wdl=False)))
    ev = Evaluator(net, backend="cpu")
    _, wdl, _ = ev.run(encode_boards([chess.Board()], input_format=1, history_fill="fen_only")[0])
    assert wdl.shape == (1, 3) and wdl[0, 1] == 0.0 and wdl[0, 0] + wdl[0, 2] == pytest.approx(1.0)


def test_backend_selection_prefers_gpu_then_cpu_and_refuses_unknown():
    assert select_providers("auto", ["CUDAExecutionProvider", "CPUExecutionProvider"]) == [
        "CUDAExecutionProvider", "CPUExecutionProvider"]
    assert select_providers("tensorrt", ["CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    assert select_providers("cpu", ["TensorrtExecutionProvider", "CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    with pytest.raises(NetworkError, match="unknown engine backend"):
        select_providers("opencl")


def test_bad_planes_shape_is_refused(mlh_eval):
    with pytest.raises(ValueError, match=r"\[B, 112, 8, 8\]"):
        mlh_eval.run(np.zeros((1, 104, 8, 8), np.float32))


def test_model_onnxruntime_cannot_run_is_a_network_error(tmp_path):
    import dataclasses

    from tests.tinynet import tiny_model

    model = tiny_model()
    model.graph.node[1].op_type = "NoSuchOp"
    net = load_network(str(build_tiny_onnx(tmp_path / "ok.onnx")))
    bad = dataclasses.replace(net, model=model.SerializeToString(), source="bad.onnx")
    with pytest.raises(NetworkError, match="onnxruntime cannot load network bad.onnx"):
        Evaluator(bad, backend="cpu")
