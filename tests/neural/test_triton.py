"""The Triton backend: a model repository Triton can serve, and the client against a server speaking
Triton's gRPC protocol.

No Triton server can be installed from the package registries here (it ships as a container image),
so the client is tested against a stand-in: a gRPC server built on tritonclient's own service
definitions (``GRPCInferenceService``: ServerLive, ModelReady, ModelMetadata, ModelInfer) that runs the
exported ONNX model with onnxruntime. The real server is checked on a machine that has one
(docs/scaling.md).
"""

from __future__ import annotations

from concurrent import futures

import chess
import numpy as np
import onnxruntime as ort
import pytest

grpc = pytest.importorskip("grpc")
pytest.importorskip("tritonclient.grpc")
from tritonclient.grpc import service_pb2, service_pb2_grpc  # noqa: E402

from lichessbot import _core  # noqa: E402
from lichessbot.neural.evaluator import Evaluator  # noqa: E402
from lichessbot.neural.network import NetworkError, load_network  # noqa: E402
from lichessbot.neural.service import EvalService  # noqa: E402
from lichessbot.neural.triton import TritonEvaluator, export_model_repository  # noqa: E402
from lichessbot.search import Searcher  # noqa: E402
from lichessbot.timeman import VisitsStopper  # noqa: E402


class StandInTriton(service_pb2_grpc.GRPCInferenceServiceServicer):
    """Serves ``repo/NAME/1/model.onnx`` with onnxruntime; counts the positions it evaluated."""

    def __init__(self, repo, name):
        self.name = name
        self.session = ort.InferenceSession(str(repo / name / "1" / "model.onnx"), providers=["CPUExecutionProvider"])
        self.positions = 0

    def ServerLive(self, request, context):
        return service_pb2.ServerLiveResponse(live=True)

    def ModelReady(self, request, context):
        return service_pb2.ModelReadyResponse(ready=request.name == self.name)

    def ModelMetadata(self, request, context):
        outs = [service_pb2.ModelMetadataResponse.TensorMetadata(name=o.name, datatype="FP32", shape=[-1, 1])
                for o in self.session.get_outputs()]
        inp = service_pb2.ModelMetadataResponse.TensorMetadata(name="/input/planes", datatype="FP32",
                                                               shape=[-1, 112, 8, 8])
        return service_pb2.ModelMetadataResponse(name=self.name, versions=["1"], platform="onnxruntime_onnx",
                                                 inputs=[inp], outputs=outs)

    def ModelInfer(self, request, context):
        shape = list(request.inputs[0].shape)
        x = np.frombuffer(request.raw_input_contents[0], dtype=np.float32).reshape(shape)
        names = [o.name for o in request.outputs]
        outs = self.session.run(names, {"/input/planes": x})
        self.positions += shape[0]
        resp = service_pb2.ModelInferResponse(model_name=self.name, model_version="1")
        for n, o in zip(names, outs):
            resp.outputs.add(name=n, datatype="FP32", shape=list(o.shape))
            resp.raw_output_contents.append(np.ascontiguousarray(o, dtype=np.float32).tobytes())
        return resp


@pytest.fixture
def triton(tiny_net, tmp_path):
    net = load_network(str(tiny_net))
    export_model_repository(tmp_path, net, "tiny")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    servicer = StandInTriton(tmp_path, "tiny")
    service_pb2_grpc.add_GRPCInferenceServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}", servicer, net
    server.stop(0)


def test_the_repository_is_what_triton_serves(tiny_net, tmp_path):
    folder = export_model_repository(tmp_path, load_network(str(tiny_net)), "tiny", max_batch=512)
    cfg = (folder / "config.pbtxt").read_text()
    assert (folder / "1" / "model.onnx").read_bytes() == load_network(str(tiny_net)).model
    for part in ('name: "tiny"', 'platform: "onnxruntime_onnx"', "max_batch_size: 512", '"/input/planes"',
                 "dims: [ 112, 8, 8 ]", '"/output/policy"', "dims: [ 1858 ]", '"/output/wdl"', "dynamic_batching"):
        assert part in cfg


def test_triton_gives_the_outputs_of_the_local_session(triton):
    url, servicer, net = triton
    remote = TritonEvaluator(url, "tiny", input_format=net.input_format)
    local = Evaluator(net, backend="cpu", threads=1, cache_size=0)
    games = [(chess.STARTING_FEN, m) for m in ([], ["e2e4"], ["d2d4", "d7d5"])]
    planes = _core.encode_positions(games, input_format=1, history_fill="fen_only")[0]
    a, b = local.run(planes), remote.run(planes)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5, atol=1e-5)
    assert b[2] is None and remote.has_wdl and servicer.positions == 3


def test_searches_run_on_triton_through_the_evaluation_service(triton):
    url, servicer, net = triton
    svc = EvalService(TritonEvaluator(url, "tiny", input_format=net.input_format))
    result = Searcher(svc, game="g").search(chess.Board(), VisitsStopper(200))
    assert result.nodes == 200 and servicer.positions > 50
    svc.close()


def test_an_unreachable_server_or_model_is_a_clear_error(triton):
    url, _, _ = triton
    with pytest.raises(NetworkError, match="does not serve a ready model 'other'"):
        TritonEvaluator(url, "other")
    with pytest.raises(NetworkError, match="127.0.0.1:1"):
        TritonEvaluator("127.0.0.1:1", "tiny", timeout=2)


def test_export_triton_command_writes_the_repository(tiny_net, tmp_path, capsys):
    from lichessbot.cli import main

    assert main(["export-triton", str(tmp_path / "repo"), "--network", str(tiny_net), "--name", "m"]) == 0
    model = tmp_path / "repo" / "m"
    assert (model / "config.pbtxt").exists() and (model / "1" / "model.onnx").exists()
    assert "tritonserver --model-repository" in capsys.readouterr().out
