"""lichess-bot's ``fake_think_time``: from the 11th ply on a move waits 2.5 % of the clock left (less the move
overhead), 1 % less per ply after (lichess-bot lib/lichess_bot.py ``fake_think_time``)."""

from __future__ import annotations

import chess
import pytest

from lichessbot.bot.games.move_rules import fake_think_s
from tests.bot.test_game_core import T0, play, started, state

TEN_PLIES = "e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 d2d3 f8c5 b1c3 d7d6"


def test_the_formula_is_lichess_bots():
    assert fake_think_s(60_000, 100, 9) == 0.0
    assert fake_think_s(60_000, 100, 10) == pytest.approx(59.9 * 0.025)
    assert fake_think_s(60_000, 100, 20) == pytest.approx(59.9 * 0.025 * 0.99 ** 10)
    assert fake_think_s(50, 100, 30) == 0.0


@pytest.mark.parametrize(("fake", "moves", "waits"), [(True, TEN_PLIES, True), (False, TEN_PLIES, False),
                                                       (True, "e2e4 e7e5", False)])
def test_the_post_waits_from_the_positions_arrival(fake, moves, waits):
    core, _ = started({"fake_think_time": fake, "timeman": {"learn_overhead": False, "move_overhead": 100}}, moves)
    core.on_event(state(moves, wtime=60_000, btime=60_000), T0)
    post = play(core, T0 + 0.5)[0]
    if waits:
        assert post.not_before == pytest.approx(T0 + fake_think_s(60_000, 100, len(moves.split())))
        assert post.not_before > T0 + 1
    else:
        assert post.not_before is None or post.not_before == T0
    assert isinstance(post.move, chess.Move)
