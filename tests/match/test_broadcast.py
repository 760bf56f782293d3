"""`lichessbot match --broadcast`: each game pushed live to a lichess broadcast round on the fake server,
move by move, with clocks and evals; a failing server never stops the match."""

from __future__ import annotations

import sys
from pathlib import Path

import chess.pgn
import pytest

from devtools.lila.server import FakeLichess
from lichessbot.cli import main
from lichessbot.match import Adjudication, EngineSpec, MatchConfig, TimeControl, run_match
from lichessbot.match.broadcast import BroadcastPusher
from lichessbot.match.cli import BROADCAST_TOKEN_ENV

TOKEN = "lip_BROADCASTTOKEN0123456789"
SCRIPTED = [sys.executable, str(Path(__file__).resolve().parents[1] / "scripted_engine.py")]
PLIES = 24


def _config(tmp_path: Path, games: int = 2) -> MatchConfig:
    return MatchConfig(EngineSpec("alpha", SCRIPTED + ["seed=1", "sleep=0.1"]),
                       EngineSpec("beta", SCRIPTED + ["seed=2", "sleep=0.1"]), games=games,
                       tc=TimeControl.parse("60+0.5"), adjudication=Adjudication(max_plies=PLIES),
                       pgn_path=str(tmp_path / "m.pgn"))


def _counts(server: FakeLichess, rid: str, round_tag: str) -> list[int]:
    """Moves of game ``round_tag`` in each push that carried it, in order."""
    return [moves for r, games in server.broadcast_pushes if r == rid
            for (rnd, _w, _b, moves) in games if rnd == round_tag]


@pytest.mark.slow
def test_a_local_match_pushes_its_games_move_by_move(server, tmp_path):
    rid = server.add_broadcast_round()
    with BroadcastPusher(server.url, TOKEN, rid, min_interval=0.0) as pusher:
        result = run_match(_config(tmp_path), on_move=pusher.update)
    assert pusher.failures == 0 and pusher.stopped is None
    for record in result.games:
        counts = _counts(server, rid, str(record.number))
        assert counts == sorted(counts) and counts[-1] == PLIES  # pushed as it grew, to its end
        # move by move: a push carries the moves made since the last one (lichess's pacing, 3 requests a
        # second, lets through fewer pushes than the 10 plies a second these engines make at times)
        assert len(set(counts)) >= PLIES // 3, counts
    pushed = server.broadcast_games(rid)
    assert [g.headers["Round"] for g in pushed] == ["1", "2"]
    for game, record in zip(pushed, result.games):
        assert game.headers["Result"] == record.result == "1/2-1/2"  # max_plies adjudication
        assert [m.uci() for m in game.mainline_moves()] == [m.uci() for m in record.pgn.mainline_moves()]
        nodes = list(game.mainline())
        assert all(n.clock() is not None for n in nodes) and any(n.eval() is not None for n in nodes)
    first_push = server.broadcast_pushes[0][1][0]
    assert first_push[3] == 1  # the first push carries the first move, with Result "*"


@pytest.mark.parametrize("fault", [503, 429, "unreachable"])
@pytest.mark.slow
def test_failed_pushes_never_stop_the_match(server, tmp_path, fault):
    rid = server.add_broadcast_round()
    url = server.url
    if fault == "unreachable":
        url = "http://127.0.0.1:9"  # nothing listens there
    else:
        server.fail_next("broadcast", fault, 3)
    with BroadcastPusher(url, TOKEN, rid, min_interval=0.0, rate_limit_pause=0.2, timeout=1.0,
                         final_wait=5.0) as pusher:
        result = run_match(_config(tmp_path, games=1), on_move=pusher.update)
    assert len(result.games) == 1 and result.games[0].plies == PLIES  # the match was played to its end
    assert pusher.failures >= (3 if fault != 429 else 1)
    if fault != "unreachable":
        (game,) = server.broadcast_games(rid)  # the pushes went on after the failures, to the end
        assert len(list(game.mainline_moves())) == PLIES and game.headers["Result"] == "1/2-1/2"


@pytest.mark.parametrize("refusal", ["unknown round", "no study:write"])
@pytest.mark.slow
def test_a_refused_push_stops_the_pushing_and_the_match_goes_on(server, tmp_path, refusal):
    rid = server.add_broadcast_round()
    if refusal == "unknown round":
        rid = "nosuchrd"
    else:
        server.broadcast_scopes.clear()
    with BroadcastPusher(server.url, TOKEN, rid, min_interval=0.0) as pusher:
        result = run_match(_config(tmp_path, games=1), on_move=pusher.update)
    assert result.games[0].plies == PLIES
    assert pusher.stopped is not None and pusher.stopped.startswith("404" if refusal == "unknown round" else "403")
    assert server.broadcast_pushes == []


@pytest.mark.slow
def test_the_cli_pushes_with_the_token_from_the_environment(server, tmp_path, monkeypatch, capsys):
    rid = server.add_broadcast_round()
    engine = ["--engine", f"cmd={' '.join(SCRIPTED)} seed=1", "name=alpha", "--engine",
              f"cmd={' '.join(SCRIPTED)} seed=2", "name=beta"]
    argv = ["match", *engine, "--tc", "60+0.5", "--games", "1", "--max-plies", "10", "--pgn",
            str(tmp_path / "m.pgn"), "--broadcast", rid, "--broadcast-server", server.url]
    monkeypatch.delenv(BROADCAST_TOKEN_ENV, raising=False)
    assert main(argv) == 2
    assert BROADCAST_TOKEN_ENV in capsys.readouterr().err
    monkeypatch.setenv(BROADCAST_TOKEN_ENV, TOKEN)
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "broadcast: " in out.out and TOKEN not in out.out + out.err
    (game,) = server.broadcast_games(rid)
    assert len(list(game.mainline_moves())) == 10
    with open(tmp_path / "m.pgn", encoding="utf-8") as f:
        written = chess.pgn.read_game(f)
    assert [m.uci() for m in written.mainline_moves()] == [m.uci() for m in game.mainline_moves()]
