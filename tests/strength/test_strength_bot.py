"""Adaptive strength in the bot (docs/strength.md): whole games against the test server with the
real engine on a tiny net; the level of each game is read from the bot's JSON log lines."""

from __future__ import annotations

import io
import json

import pytest

from lichessbot.config import parse_config
from lichessbot.strength import Level, StrengthTable, load_table
from lichessbot.thinker.engine import Engine
from tests.fake_lichess import BotRun, resign_after

TOKEN = "lip_Strength0Token1For2Tests"
OFFSET = 100


@pytest.fixture(scope="module")
def table_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("strength") / "table.json"
    StrengthTable("tiny", (Level(elo=1000, nodes=2, temperature=1.0), Level(elo=1300, nodes=6, temperature=0.5),
                           Level(elo=1600, nodes=12, temperature=0.2))).save(path)
    return path


@pytest.fixture(scope="module")
def adaptive_engine(tmp_path_factory, table_path):
    """The tiny net's engine, 40 nodes a move, playing each game at the level of the opponent's rating + OFFSET."""
    from tests.tinynet import build_tiny_onnx

    net = build_tiny_onnx(tmp_path_factory.mktemp("net") / "tiny.onnx", seed=3)
    cfg = parse_config({"engine": {"network": str(net), "backend": "cpu", "threads": 1,
                                   "search": {"minibatch_size": 8},
                                   "strength": {"table": str(table_path), "think_share": 0,
                                                "adaptive": {"enabled": True, "offset": OFFSET}}}})
    with Engine(cfg, nodes=40) as eng:
        yield eng


def _events(logs: io.StringIO, name: str) -> list[dict]:
    out = []
    for line in logs.getvalue().splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            if d.get("event") == name:
                out.append(d)
    return out


GREETING = {"greeting": {"hello": "Hi {opponent}, I play at {level} today."}}


def test_a_casual_game_against_a_1200_human_is_played_at_the_level_of_1200_plus_offset(server, adaptive_engine, logs,
                                                                                       table_path):
    want = load_table(table_path).level_for(1200 + OFFSET)
    with BotRun(server, adaptive_engine, GREETING) as bot:
        game = bot.play(challenger="human1200", rating=1200, rated=False, opponent=resign_after(12))
    assert game.status == "resign"
    [strength] = _events(logs, "strength")
    assert (strength["strength"], strength["opponent_rating"], strength["nodes"]) == ("1300 Elo", 1200, want.nodes)
    moves = _events(logs, "move")
    assert len(moves) == 7 and all(m["nodes"] <= want.nodes for m in moves)  # the level's cap, not the engine's 40
    assert game.chat[0] == ("player", "Hi human1200, I play at 1300 Elo today.")


def test_a_rated_game_is_played_at_full_strength_when_casual_only(server, adaptive_engine, logs):
    with BotRun(server, adaptive_engine, GREETING) as bot:
        game = bot.play(challenger="rated1200", rating=1200, rated=True, opponent=resign_after(12))
    assert game.status == "resign"
    [strength] = _events(logs, "strength")
    assert (strength["strength"], strength["nodes"]) == ("full strength", None)
    moves = _events(logs, "move")
    assert len(moves) == 7 and all("strength" not in m["stop"] for m in moves)
    assert max(m["nodes"] for m in moves) > 12  # above every level's cap: the engine's own 40
    assert game.chat[0] == ("player", "Hi rated1200, I play at full strength today.")


def test_with_the_shipped_table_and_network_1200_plus_offset_150_plays_the_measured_1350_level(server, logs):
    level = load_table("default").level_for(1350)
    assert level.measured is not None  # a level measured against Stockfish, not read off the sweep
    cfg = parse_config({"engine": {"backend": "cpu", "threads": 1,
                                   "strength": {"think_share": 0, "adaptive": {"enabled": True, "offset": 150}}}})
    with Engine(cfg) as engine, BotRun(server, engine) as bot:
        game = bot.play(challenger="human1200", rating=1200, rated=False, opponent=resign_after(8))
    assert game.status == "resign"
    [strength] = _events(logs, "strength")
    assert (strength["strength"], strength["nodes"]) == ("1350 Elo", level.nodes)
    assert all(m["nodes"] <= level.nodes for m in _events(logs, "move"))


def test_a_weakened_bot_plays_the_levels_choice_and_not_always_the_searchs_best_move(server, logs, tiny_net,
                                                                                   tmp_path):
    path = tmp_path / "hot.json"
    StrengthTable("tiny", (Level(elo=1000, nodes=24, temperature=3.0, max_q_loss=2.0),)).save(path)
    cfg = parse_config({"engine": {"network": str(tiny_net), "backend": "cpu", "threads": 1,
                                   "search": {"minibatch_size": 8, "seed": 11},
                                   "strength": {"elo": 1000, "table": str(path), "think_share": 0}},
                        "timeman": {"smart_pruning": False}})
    with Engine(cfg) as engine, BotRun(server, engine) as bot:
        game = bot.play(challenger="human1000", rating=1000, opponent=resign_after(16))
    assert game.status == "resign"
    moves = _events(logs, "move")
    assert len(moves) == 9 and all(m["nodes"] <= 24 for m in moves)
    # The level samples its move from the root visits (docs/strength.md): some moves are not the search's best.
    sampled = [m for m in moves if "; strength temperature " in m["stop"]]
    assert sampled and all(m["stop"].endswith(m["move"]) for m in sampled)
