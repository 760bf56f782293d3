"""The chat commands lichess-bot users know, asked in a bot game on the test server (a stand-in engine:
no network needed): ``!queue`` reads the service's queue through the game. Each command's answer is a plain
call on the game's core (tests/bot/test_game_core.py)."""

from __future__ import annotations

import time

from lichessbot.bot.chat.lines import WAIT_REFUSAL, WAIT_REPLY
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine, staller


def _said(server: FakeLichess, gid: str, text: str, timeout: float = 5) -> bool:
    return server.wait_for(lambda: any(t == text for _, t in server.games[gid].chat), timeout)


def test_queue_names_the_challengers_waiting_for_a_slot():
    config = {"challenge": {"concurrency": 1, "queue_wait": 30}}
    with FakeLichess() as server, BotRun(server, StandInEngine(), config):
        gid = server.challenge(opponent=staller())
        assert server.wait_for(lambda: gid in server.games and server.games[gid].ply() == 1, 5)
        server.challenge(challenger="dave", opponent=staller())
        server.challenge(challenger="erin", rating=1400, opponent=staller())
        time.sleep(0.5)  # both wait for the slot the first game holds
        server.say(gid, "!queue")
        assert _said(server, gid, "Challenge queue: @dave, @erin")
        server.say(gid, "!wait")
        assert _said(server, gid, WAIT_REPLY)  # the opponent has not moved: the game could still be aborted
    assert WAIT_REFUSAL not in [t for _, t in server.games[gid].chat]
