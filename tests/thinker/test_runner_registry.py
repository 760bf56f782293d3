"""The runner seam: every engine builds its network runner through the registry by backend name (lc0's
REGISTER_NETWORK), so a new runner is one module plus its registration (docs/engine.md, "Adding a runner")."""

from __future__ import annotations

import io

import chess
import pytest

from lichessbot.config import BotConfig, EngineConfig
from lichessbot.diagnostics.fake_net import FakeEvaluator
from lichessbot.errors import ConfigError
from lichessbot.neural import registry
from lichessbot.neural.network import Network
from lichessbot.neural.runner import NetworkRunner
from lichessbot.thinker.engine import Engine
from lichessbot.timeman import VisitsStopper
from lichessbot.uci import UciEngine


def test_a_toy_runner_registered_by_name_plays(monkeypatch, tiny_net):
    built: list[tuple[EngineConfig, Network]] = []

    def toy(engine: EngineConfig, network: Network) -> NetworkRunner:
        built.append((engine, network))
        return FakeEvaluator(value=0.1)

    monkeypatch.setattr(registry, "_registered", {})
    registry.register("cpu", toy)
    config = BotConfig.model_validate({"engine": {"network": str(tiny_net), "backend": "cpu"}})
    engine = Engine(config, shared=False)
    try:
        assert isinstance(engine.evaluator, FakeEvaluator) and built[0][1].name == "tiny"
        with engine.searcher() as searcher:
            assert searcher.search(chess.Board(), VisitsStopper(20)).best_move in chess.Board().legal_moves
    finally:
        engine.close()


def test_an_unregistered_backend_is_named(tiny_net):
    from lichessbot.neural.network import load_network

    with pytest.raises(ConfigError, match="no network runner is registered for backend 'toy'"):
        registry.build(EngineConfig(), load_network(str(tiny_net)), backend="toy")


def test_every_builtin_factory_resolves():
    for name, target in registry.BUILTIN.items():
        if name == "torch":
            continue  # imports PyTorch, which this install may lack (tests/neural/test_torch_runner.py)
        assert callable(registry._factory(name)), target


def test_a_runner_registered_in_a_test_is_chosen_by_config_and_uci_with_no_other_file(monkeypatch, tiny_net):
    """Adding a runner is its module plus its registration: the name "toy" exists nowhere but here, and the
    config, UCI's Backend option (advertised and set) and the engine all take it."""
    made: list[str] = []

    def toy(engine: EngineConfig, network: Network) -> NetworkRunner:
        made.append(engine.backend)
        return FakeEvaluator(value=0.1)

    monkeypatch.setattr(registry, "_registered", {})
    registry.register("toy", toy)
    config = BotConfig.model_validate({"engine": {"network": str(tiny_net), "backend": "toy"}})
    engine = Engine(config, shared=False)
    try:
        assert isinstance(engine.evaluator, FakeEvaluator) and made == ["toy"]
    finally:
        engine.close()
    out = io.StringIO()
    uci = UciEngine(out=out)
    for line in ("uci", f"setoption name WeightsFile value {tiny_net}", "setoption name Backend value toy",
                 "isready", "position startpos", "go nodes 20", "stop"):
        uci.handle(line)
    lines = out.getvalue().splitlines()
    (backend,) = [line for line in lines if line.startswith("option name Backend ")]
    assert backend.endswith(" var toy") and not [line for line in lines if "error" in line]
    assert made == ["toy", "toy"] and lines[-1].startswith("bestmove")
    uci.handle("quit")


def test_a_backend_no_runner_serves_is_refused_at_start_naming_the_key_and_the_names(tiny_net):
    config = BotConfig.model_validate({"engine": {"network": str(tiny_net), "backend": "toy"}})
    with pytest.raises(ConfigError, match=r"engine\.backend: .*'toy' \(registered: auto, tensorrt, cuda, cpu, "
                       r"triton, torch\)"):
        Engine(config, shared=False)


def test_only_an_onnxruntime_backend_may_start_tensorrt_and_no_other_name_is_an_error():
    """``lichessbot play`` asks before starting whether TensorRT's cache directory will be written: a runner of
    another name (torch, triton, a plugin's) answers no instead of raising onnxruntime's unknown-backend error."""
    from lichessbot.neural.providers import CPU, CUDA, TRT, tensorrt_may_run

    gpu = [TRT, CUDA, CPU]
    assert tensorrt_may_run("tensorrt", gpu) and not tensorrt_may_run("tensorrt", [CPU])
    assert not any(tensorrt_may_run(name, gpu) for name in ("auto", "cuda", "cpu", "torch", "triton", "toy"))
