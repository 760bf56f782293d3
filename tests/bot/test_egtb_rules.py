"""lichess-bot's tablebase rules for resigning and draws (issue 40): ``resign_for_egtb_minus_two`` resigns as soon
as the tables say the game is lost, ``offer_draw_for_egtb_zero`` offers a draw with a move the tables call a
draw; both only with their ``resign_enabled`` / ``offer_draw_enabled``. Real Syzygy tables (tests/data/syzygy),
the real engine on the tiny network, the test server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lichessbot.bot.games.move_rules import ScoreRules
from lichessbot.config import DrawOrResignConfig, parse_config
from lichessbot.thinker.engine import Engine
from tests.fake_lichess import BotRun, resign_after

TABLES = str(Path(__file__).resolve().parents[1] / "data" / "syzygy")
#: White (the bot, to move): K h8 against K f6 and Q d4: lost (WDL -2).
LOST = "7K/8/5k2/8/3q4/8/8/8 w - - 0 1"
#: Black (the bot, to move): the lone king against K and P: drawn (WDL 0).
DRAWN = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"


@pytest.fixture(scope="module")
def tb_engine(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The real engine on the tiny network with the Syzygy tables of tests/data/syzygy."""
    from tests.tinynet import build_tiny_onnx

    net = build_tiny_onnx(tmp_path_factory.mktemp("net") / "tiny.onnx", seed=3)
    cfg = parse_config({"engine": {"network": str(net), "backend": "cpu", "threads": 1,
                                   "search": {"minibatch_size": 8}}, "tablebases": {"syzygy": [TABLES]}})
    with Engine(cfg, nodes=24) as eng:
        yield eng


def test_a_position_the_tables_call_lost_is_resigned_at_once(server, tb_engine):
    with BotRun(server, tb_engine, {"draw_or_resign": {"resign_enabled": True}}) as bot:
        game = bot.play(fen=LOST, opponent=resign_after(40), limit=60)
    # before both sides moved lila turns a resignation into an abort (round BotPlayer.resign: abortable)
    assert (game.status, game.posts) == ("aborted", [])


def test_a_move_the_tables_call_a_draw_carries_a_draw_offer(server, tb_engine):
    with BotRun(server, tb_engine, {"draw_or_resign": {"offer_draw_enabled": True}}) as bot:
        game = bot.play(fen=DRAWN, bot_color="black", opponent=resign_after(3), limit=60)
    assert game.posts and game.posts[0][2] is True  # offeringDraw with the tables' move


def test_the_rules_keep_to_their_keys():
    rules = ScoreRules(DrawOrResignConfig(resign_enabled=True, resign_for_egtb_minus_two=False))
    rules.add(None, -2)
    assert not rules.should_resign()
    rules = ScoreRules(DrawOrResignConfig(resign_enabled=False))
    rules.add(None, -2)
    assert not rules.should_resign()
    rules = ScoreRules(DrawOrResignConfig(offer_draw_enabled=True, offer_draw_for_egtb_zero=False))
    rules.add(None, 0)
    assert not rules.should_offer_draw()
    rules = ScoreRules(DrawOrResignConfig(offer_draw_enabled=True))
    rules.add(None, 0)
    assert rules.should_offer_draw()
    rules.add(35, None)  # a searched move after it: the tables' verdict no longer holds
    assert not rules.should_offer_draw()
