"""The PyTorch runner: its ONNX interpreter against onnxruntime (numpy, on any machine), lc0 networks of random
weights, and the runner itself where PyTorch is installed (CPU here; CUDA graphs and fp16 only on a GPU host:
scripts/gpu/check.sh)."""

from __future__ import annotations

import importlib.util

import chess
import numpy as np
import onnxruntime as ort
import pytest

from lichessbot.config import EngineConfig, SearchParams
from lichessbot.diagnostics.bench_nn import bench_positions
from lichessbot.errors import NetworkError
from lichessbot.neural import registry
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.lc0_random import random_net
from lichessbot.neural.network import load_network
from lichessbot.neural.onnx_interp import Graph, NumpyOps, run_graph
from lichessbot.neural.position_eval import encode_boards
from lichessbot.search import Searcher
from lichessbot.timeman import VisitsStopper

HAVE_TORCH = importlib.util.find_spec("torch") is not None
#: The PyTorch runner's fp32 outputs against onnxruntime's fp32 on the CPU, both float32 over the same
#: weights: only the order of the sums differs (measured with numpy: 2.3e-5 on the default network's logits).
TORCH_FP32_MAX_LOGIT_DELTA = 1e-3
TORCH_FP32_MAX_WDL_DELTA = 1e-4


@pytest.fixture(scope="module")
def lc0_net(tmp_path_factory):
    path = tmp_path_factory.mktemp("lc0") / "random-2x16.pb.gz"
    path.write_bytes(random_net(2, 16, seed=3))
    return path


def _planes(net, n=32):
    return encode_boards(bench_positions(n), input_format=net.input_format,
                         history_fill=SearchParams().history_fill)[0]


@pytest.mark.parametrize("which", ["default", "tiny", "lc0"])
def test_the_interpreter_computes_what_onnxruntime_computes(which, tiny_net, lc0_net):
    net = load_network({"default": "default", "tiny": str(tiny_net), "lc0": str(lc0_net)}[which])
    graph = Graph(net.model)
    planes = _planes(net, 16)
    got = run_graph(graph, {graph.inputs[0]: planes}, NumpyOps())
    want = ort.InferenceSession(net.model, providers=["CPUExecutionProvider"]).run(graph.outputs,
                                                                                    {graph.inputs[0]: planes})
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a, np.float32), b, atol=TORCH_FP32_MAX_LOGIT_DELTA / 10, rtol=0)


def test_a_random_lc0_network_has_every_head_and_finite_outputs(lc0_net):
    net = load_network(str(lc0_net))
    assert net.has_wdl and net.has_mlh and net.input_format == 1
    out = Evaluator(net, backend="cpu", threads=1, cache_size=0).run(_planes(net, 8))
    assert np.isfinite(out.logits).all() and np.allclose(out.wdl.sum(axis=1), 1, atol=1e-5)
    assert out.mlh is not None and np.isfinite(out.mlh).all()


def test_an_operator_the_interpreter_does_not_know_is_named(tiny_net):
    import onnx

    model = onnx.load(str(tiny_net))
    model.graph.node[0].op_type = "Einsum"
    with pytest.raises(NetworkError, match="Einsum"):
        Graph(model.SerializeToString())


@pytest.mark.skipif(HAVE_TORCH, reason="PyTorch is installed")
def test_backend_torch_without_pytorch_says_how_to_install_it(tiny_net):
    with pytest.raises(NetworkError, match="pip install torch"):
        registry.build(EngineConfig(backend="torch"), load_network(str(tiny_net)))


# -- the runner itself, where PyTorch is installed -------------------------------------------------------------
@pytest.mark.slow
def test_the_torch_runner_matches_onnxruntime_fp32_on_real_positions():
    pytest.importorskip("torch")
    from lichessbot.neural.torch_runner import TorchRunner

    net = load_network("default")
    runner = TorchRunner(net, cpu=True, precision="fp32", cache_size=0)
    planes = _planes(net, 256)
    got, want = runner.run(planes), Evaluator(net, backend="cpu", threads=1, cache_size=0).run(planes)
    assert float(np.abs(got.logits - want.logits).max()) <= TORCH_FP32_MAX_LOGIT_DELTA
    assert float(np.abs(got.wdl - want.wdl).max()) <= TORCH_FP32_MAX_WDL_DELTA


@pytest.mark.slow
def test_backend_torch_plays_through_the_registry(tiny_net):
    pytest.importorskip("torch")
    runner = registry.build(EngineConfig(backend="torch", network=str(tiny_net)), load_network(str(tiny_net)))
    assert runner.info.provider in ("torch-cpu", "torch-cuda")
    with Searcher(runner, SearchParams()) as searcher:
        assert searcher.search(chess.Board(), VisitsStopper(30)).best_move in chess.Board().legal_moves


@pytest.mark.parametrize(("attr", "value", "want"), [("value_float", 0.5, np.float32(0.5)),
                                                      ("value_ints", [1, 2], np.array([1, 2], np.int64))])
def test_constants_of_every_form_are_read(attr, value, want):
    from onnx import TensorProto, helper

    node = helper.make_node("Constant", [], ["c"], **{attr: value})
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)])
    (got,) = run_graph(Graph(helper.make_model(graph).SerializeToString()), {}, NumpyOps())
    np.testing.assert_array_equal(got, want)


def test_a_forward_pass_holds_a_few_activations_at_a_time():
    """Each value is dropped after its last reader: a 20x256 network at batch 1024 would otherwise keep every
    activation (about 67 MB each in float32) in the CUDA graph's memory pool."""
    net = load_network("default")
    graph = Graph(net.model)
    live: list[int] = []
    run_graph(graph, {graph.inputs[0]: _planes(net, 2)}, NumpyOps(), live=live)
    assert len(live) == len(graph.nodes) > 100 and max(live) <= 12, max(live)
