"""The operator's extra game handlers (config ``extra_game_handlers``, lichess-bot's extra_game_handlers.py):
imported at start, a challenge filter that declines, callbacks at game start and end, failures contained."""

from __future__ import annotations

import json

import pytest

from lichessbot.bot.challenges.handlers import Handlers, load_handler
from lichessbot.config import ConfigError, ExtraGameHandlersConfig, parse_config
from tests.bot.test_admission import admission
from tests.bot.test_admission import challenge as adm_challenge
from tests.bot.test_bot_games import MATED_IN_ONE
from tests.fake_lichess import BotRun, mate_or_random

pytestmark = pytest.mark.usefixtures("logs")

HANDLERS = '''
import json, pathlib
LOG = pathlib.Path(__file__).with_name("calls.jsonl")

def _note(kind, value):
    with LOG.open("a") as f:
        f.write(json.dumps([kind, value]) + "\\n")

def no_mallory(challenge):
    return challenge.challenger_name.lower() != "mallory"

def boom(challenge):
    raise RuntimeError("bug")

def started(full):
    _note("start", full.id)

def ended(record):
    _note("end", [record.game_id, record.status, record.winner])
'''


def write_handlers(tmp_path) -> str:
    path = tmp_path / "handlers.py"
    path.write_text(HANDLERS)
    return str(path)


def calls(tmp_path) -> list[list]:
    log = tmp_path / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_a_bad_spec_or_a_missing_function_is_reported_with_its_key(tmp_path):
    with pytest.raises(ConfigError, match="extra_game_handlers.challenge_filter: 'nofunction' is not module:function"):
        parse_config({"extra_game_handlers": {"challenge_filter": "nofunction"}})
    with pytest.raises(ConfigError, match="extra_game_handlers.game_end: .*has no function nope"):
        Handlers(ExtraGameHandlersConfig(game_end=f"{write_handlers(tmp_path)}:nope"))
    with pytest.raises(ConfigError, match="game_start: no_such_module_xyz cannot be imported"):
        Handlers(ExtraGameHandlersConfig(game_start="no_such_module_xyz:f"))
    assert load_handler("json:dumps", "k") is json.dumps  # an importable module


def test_the_challenge_filter_declines_and_one_that_raises_declines_too(tmp_path):
    path = write_handlers(tmp_path)
    adm = admission(tmp_path)
    adm.handlers = Handlers(ExtraGameHandlersConfig(challenge_filter=f"{path}:no_mallory"))
    [(_, verdict)] = adm.challenge(adm_challenge("c1", "Mallory"))
    assert not verdict.accept and verdict.reason == "generic" and "challenge_filter" in verdict.why
    assert adm.challenge(adm_challenge("c2", "alice"))[0][1].accept
    adm.handlers = Handlers(ExtraGameHandlersConfig(challenge_filter=f"{path}:boom"))
    [(_, verdict)] = adm.challenge(adm_challenge("c3", "bob"))
    assert not verdict.accept and "RuntimeError" in verdict.why


def test_the_bot_calls_the_handlers_of_its_config(server, engine, tmp_path):
    path = write_handlers(tmp_path)
    hooks = {"challenge_filter": f"{path}:no_mallory", "game_start": f"{path}:started", "game_end": f"{path}:ended"}
    with BotRun(server, engine, {"extra_game_handlers": hooks}) as bot:
        game = bot.play(fen=MATED_IN_ONE, opponent=mate_or_random(), limit=60, increment=1)
        assert server.wait_for(lambda: ["end", [game.id, "mate", "black"]] in calls(tmp_path), 10)
        cid = server.challenge(challenger="mallory", limit=60, increment=1)
        assert server.wait_for(lambda: cid in server.answers, 10)
    assert server.answers[cid] == ("decline", "generic")
    assert calls(tmp_path)[0] == ["start", game.id]


def test_check_config_imports_the_handlers(tmp_path, capsys):
    from lichessbot.cli import main

    path = write_handlers(tmp_path)
    good, bad = tmp_path / "good.yml", tmp_path / "bad.yml"
    good.write_text(f"extra_game_handlers:\n  challenge_filter: {path}:no_mallory\n")
    bad.write_text(f"extra_game_handlers:\n  challenge_filter: {path}:missing\n")
    assert main(["check-config", str(good)]) == 0
    assert main(["check-config", str(bad)]) != 0
    assert "extra_game_handlers.challenge_filter" in capsys.readouterr().err
