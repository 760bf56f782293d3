"""`setoption` with the value an option already has, ``ucinewgame`` and a new game load no network: fastchess
and most GUIs send every option before each game (issue 37: 70-160 ms before ``readyok`` otherwise)."""

from __future__ import annotations

import io

import pytest

from lichessbot.thinker import wiring
from lichessbot.uci import UciEngine

#: What fastchess sends before each game (every option, unchanged between games).
GAME_OPTIONS = ("setoption name WeightsFile value {net}", "setoption name Backend value cpu",
                "setoption name Threads value 1", "setoption name Hash value 16",
                "setoption name MoveOverhead value 10", "setoption name MinibatchSize value 8",
                "setoption name CPuct value 1.745")


@pytest.fixture
def loads(monkeypatch) -> dict[str, int]:
    """How many networks and evaluators the UCI engine builds."""
    counts = {"network": 0, "evaluator": 0}
    network_of, evaluator_of = wiring.network_of, wiring.evaluator_of

    def count_network(engine):
        counts["network"] += 1
        return network_of(engine)

    def count_evaluator(engine, net):
        counts["evaluator"] += 1
        return evaluator_of(engine, net)

    monkeypatch.setattr(wiring, "network_of", count_network)
    monkeypatch.setattr(wiring, "evaluator_of", count_evaluator)
    return counts


def _game(eng: UciEngine, out: io.StringIO, net) -> None:
    for line in GAME_OPTIONS:
        eng.handle(line.format(net=net))
    eng.handle("ucinewgame")
    eng.handle("isready")
    eng.handle("position startpos moves e2e4")
    eng.handle("go nodes 30")
    eng.handle("stop")  # waits for the bestmove
    assert out.getvalue().splitlines()[-1].startswith("bestmove")


def test_the_same_options_and_ucinewgame_before_each_game_load_the_network_once(tiny_net, loads):
    out = io.StringIO()
    eng = UciEngine(out=out)
    for _ in range(3):
        _game(eng, out, tiny_net)
    assert loads == {"network": 1, "evaluator": 1}
    # a changed value still applies: a new network is loaded at the next isready
    eng.handle("setoption name WeightsFile value default")
    eng.handle("isready")
    assert loads == {"network": 2, "evaluator": 2}
    eng.handle("quit")

