"""Which games think on the opponent's time: ``engine.ponder`` for games with a clock, lichess-bot's
``correspondence.ponder`` for correspondence games."""

from __future__ import annotations

import dataclasses

import chess
import pytest

from lichessbot.bot.games.actions import Ponder
from tests.bot.test_game_core import T0, play, started, state
from tests.fake_lichess import stand_in_decision


def with_reply():
    d = stand_in_decision(chess.Move.from_uci("e2e4"), cp=10, nodes=1, nps=1.0, depth=1.0, seconds=0.0, reason="x")
    assert d.result is not None
    return dataclasses.replace(d, result=dataclasses.replace(d.result, ponder_move=chess.Move.from_uci("e7e5")))


CORRESPONDENCE = {"clock": None, "speed": "correspondence", "days_per_turn": 3}


@pytest.mark.parametrize(("engine_ponder", "corr_ponder", "game", "ponders"), [
    (True, False, {}, True),
    (False, True, {}, False),
    (False, True, CORRESPONDENCE, True),
    (True, False, CORRESPONDENCE, False),
])
def test_pondering_follows_the_setting_of_the_games_kind(engine_ponder, corr_ponder, game, ponders):
    core, _ = started({"engine": {"ponder": engine_ponder}, "correspondence": {"ponder": corr_ponder}}, **game)
    if game:
        core.on_event(state("", wtime=3 * 86_400_000, btime=3 * 86_400_000), T0)
    actions = play(core, T0 + 1, with_reply())
    assert any(isinstance(a, Ponder) for a in actions) is ponders
