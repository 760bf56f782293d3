"""A bot game learns what its moves cost on lichess's clock beyond its thinking (lila gives bots no lag
compensation), charges that to the time manager, and logs it once per game (docs/timeman.md)."""

from __future__ import annotations

import io
import json

import pytest

from lichessbot.config import parse_config
from lichessbot.logs import configure_logging
from lichessbot.thinker.engine import Engine
from tests.fake_lichess import BotRun, FakeLichess, random_mover, resign_after

LATENCY_S = 0.15  # the server answers every request, our move posts included, this late


def _play(engine, config: dict) -> list[dict]:
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    with FakeLichess() as server:
        server.latency = (LATENCY_S, LATENCY_S)
        with BotRun(server, engine, config) as bot:
            bot.play(timeout=90, opponent=resign_after(14, random_mover(5)), limit=60, increment=1,
                     bot_color="white")
    return [json.loads(line) for line in buf.getvalue().splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_a_game_learns_its_move_overhead_from_lichess_clocks_and_charges_it(engine):
    lines = _play(engine, {"timeman": {"move_overhead": 1000}})
    (learned,) = [e for e in lines if e["event"] == "move overhead"]
    # our moves at plies 2..12 were measured; each cost the post's latency, whatever we thought
    assert learned["samples"] >= 4 and learned["default_ms"] == 1000
    assert LATENCY_S * 1000 - 20 <= learned["median_ms"] <= LATENCY_S * 1000 + 150
    assert learned["estimate_ms"] < 1000
    charged = [e["overhead_ms"] for e in lines if e["event"] == "timeman.budget" and e["clocked"]]
    assert charged[0] == 1000  # the configured start, until a move is measured
    assert charged[-1] == learned["estimate_ms"] or charged[-1] < 1000


@pytest.mark.slow
def test_a_bot_that_does_not_learn_charges_the_configured_overhead(engine):
    lines = _play(engine, {"timeman": {"learn_overhead": False}})
    assert not [e for e in lines if e["event"] == "move overhead"]
    charged = {e["overhead_ms"] for e in lines if e["event"] == "timeman.budget" and e["clocked"]}
    assert charged == {engine.settings.timeman.move_overhead}


def test_new_games_of_the_bot_load_no_network(tmp_path, monkeypatch):
    from lichessbot.thinker import wiring
    from tests.tinynet import build_tiny_onnx

    counts = {"network": 0, "evaluator": 0}
    network_of, evaluator_of = wiring.network_of, wiring.evaluator_of
    monkeypatch.setattr(wiring, "network_of", lambda ec: counts.__setitem__("network", counts["network"] + 1)
                        or network_of(ec))
    monkeypatch.setattr(wiring, "evaluator_of", lambda ec, net: counts.__setitem__("evaluator", counts["evaluator"] + 1)
                        or evaluator_of(ec, net))
    net = build_tiny_onnx(tmp_path / "tiny.onnx", seed=3)
    cfg = parse_config({"engine": {"network": str(net), "backend": "cpu", "threads": 1}})
    with Engine(cfg, nodes=16) as eng, FakeLichess() as server, BotRun(server, eng) as bot:
        for seed in (1, 2, 3):
            game = bot.play(timeout=60, opponent=resign_after(6, random_mover(seed)), limit=60, increment=1)
            assert game.over and game.posts
    assert counts == {"network": 1, "evaluator": 1}  # once per process, never per game
