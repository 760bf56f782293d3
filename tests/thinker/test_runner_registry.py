"""The runner seam: every engine builds its network runner through the registry by backend name (lc0's
REGISTER_NETWORK), so a new runner is one module plus its registration."""

from __future__ import annotations

import chess
import pytest

from lichessbot.config import BotConfig, EngineConfig
from lichessbot.diagnostics.fake_net import FakeEvaluator
from lichessbot.engine import registry
from lichessbot.engine.network import Network
from lichessbot.engine.runner import NetworkRunner
from lichessbot.errors import NetworkError
from lichessbot.thinker.engine import Engine
from lichessbot.timeman import VisitsStopper


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
    from lichessbot.engine.network import load_network

    with pytest.raises(NetworkError, match="no network runner is registered for backend 'toy'"):
        registry.build(EngineConfig(), load_network(str(tiny_net)), backend="toy")


def test_every_builtin_factory_resolves():
    for name, target in registry.BUILTIN.items():
        if name == "torch":
            continue  # imports PyTorch, which this install may lack (tests/engine/test_torch_runner.py)
        assert callable(registry._factory(name)), target
