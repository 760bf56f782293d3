"""Correspondence against lila's rules (issue 28): a game stream only for games on our move, opened one at a
time at connect, and a think time within what the correspondence clock leaves."""

from __future__ import annotations

import time

import pytest

from devtools.lila.botrun import StandInEngine, StandInThinker
from lichessbot.bot.games.move_rules import clocks_now
from lichessbot.bot.service.service import CORRESPONDENCE_START_GAP
from lichessbot.thinker.game_thinker import correspondence_think_s
from tests.fake_lichess import BotRun, staller

TOKEN = "lip_correspondence"

pytestmark = pytest.mark.usefixtures("logs")

CORR = {"challenge": {"time_controls": ["bullet", "correspondence"]},
        "correspondence": {"move_time": 60, "checkin_period": 600, "disconnect_time": 600}}


@pytest.mark.parametrize(("move_time", "left", "think"), [
    (60, None, 60.0), (60, 86400.0, 60.0), (60, 30.0, 22.0), (60, 1.0, 0.05)])
def test_the_think_time_is_move_time_or_what_the_correspondence_clock_allows(move_time, left, think):
    assert correspondence_think_s(move_time, left) == pytest.approx(think)


def test_the_correspondence_clock_is_read_from_wtime_btime_and_int_max_is_unlimited():
    assert clocks_now((86_400_000, 5_000, 0, 0), False, 1.0, clocked=False, correspondence=True) == (None, 4.0)
    assert clocks_now((2_147_483_647,) * 2 + (0, 0), True, 0.0, clocked=False, correspondence=True) == (None, None)


class _Recorder(StandInEngine):
    def __init__(self) -> None:
        self.left: list[float | None] = []

    def new_game(self, game_id=None):
        rec = self

        class T(StandInThinker):
            def think(self, board, clock, *, first_moves_unclocked=False, time_left_s=None):
                rec.left.append(time_left_s)
                return super().think(board, clock, first_moves_unclocked=first_moves_unclocked)
        return T()


def test_a_correspondence_move_is_told_the_time_its_clock_leaves(server):
    engine = _Recorder()
    with BotRun(server, engine, CORR):
        with server.lock:  # the bot's game stream waits for the lock: it sees the short clock
            gid = server.start_game(limit=None, days=1, opponent=staller())
            server.games[gid].wtime = 10_000
        assert server.wait_for(lambda: server.games[gid].ply() >= 1, 10)
    assert engine.left and 9.0 < engine.left[0] <= 10.0


@pytest.mark.slow
def test_streams_open_only_for_games_on_our_move_and_one_at_a_time(server):
    with BotRun(server, StandInEngine(), CORR):
        ours = [server.start_game(limit=None, days=3, opponent=staller()) for _ in range(3)]
        theirs = [server.start_game(limit=None, days=3, bot_color="black", opponent=staller()) for _ in range(2)]
        time.sleep(CORRESPONDENCE_START_GAP / 2)
        assert sum(server.games[g].stream_connections for g in ours) <= 1  # paced, not all at once
        assert server.wait_for(lambda: all(server.games[g].ply() == 1 for g in ours), 4 * CORRESPONDENCE_START_GAP + 5)
        time.sleep(2 * CORRESPONDENCE_START_GAP + 0.5)  # time enough for two more paced starts
        assert [server.games[g].stream_connections for g in theirs] == [0, 0]  # not our move: no stream
