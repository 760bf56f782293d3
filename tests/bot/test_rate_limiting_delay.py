"""lichess-bot's ``rate_limiting_delay``: a game waits that long after each move it posts."""

from __future__ import annotations

import time

import pytest

from tests.fake_lichess import BotRun, resign_after

pytestmark = [pytest.mark.usefixtures("logs"), pytest.mark.slow]


def test_each_posted_move_is_followed_by_the_delay(server, engine):
    with BotRun(server, engine, {"rate_limiting_delay": 500}) as bot:
        started = time.monotonic()
        game = bot.play(opponent=resign_after(6), limit=60, increment=0)
        took = time.monotonic() - started
    assert len(game.posts) == 4 and took >= 3 * 0.5  # the game ends during the last wait
