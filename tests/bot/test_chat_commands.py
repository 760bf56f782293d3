"""The chat commands lichess-bot users know (``!help``, ``!wait``, ``!name``, ``!howto``, ``!eval``,
``!queue``), asked in bot games on the test server (a stand-in engine: no network needed)."""

from __future__ import annotations

import time

from lichessbot.bot.chat import game_chat as game_module
from lichessbot.bot.chat.lines import HOWTO, WAIT_REFUSAL, WAIT_REPLY
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine, scripted, staller


def _said(server: FakeLichess, gid: str, text: str, timeout: float = 5) -> bool:
    return server.wait_for(lambda: any(t == text for _, t in server.games[gid].chat), timeout)


def test_wait_gives_the_opponent_more_time_before_the_abort(monkeypatch):
    monkeypatch.setattr(game_module, "WAIT_S", 2)  # lichess-bot's minute, shortened
    with FakeLichess() as server, BotRun(server, StandInEngine(), {"abort_time": 1}):
        gid = server.challenge(opponent=staller())
        assert server.wait_for(lambda: gid in server.games and server.games[gid].ply() == 1, 5)
        started = time.monotonic()
        server.say(gid, "!wait")
        assert _said(server, gid, WAIT_REPLY)
        assert server.wait_for(lambda: server.games[gid].over, 10)
        waited = time.monotonic() - started
    assert server.games[gid].status == "aborted" and waited > 2  # abort_time 1 s + 2 s asked for


def test_wait_after_both_sides_moved_is_refused_and_howto_answered():
    with FakeLichess() as server, BotRun(server, StandInEngine()):
        gid = server.challenge(opponent=scripted(["e7e5"]))  # then it sits
        assert server.wait_for(lambda: gid in server.games and server.games[gid].ply() == 3, 5)
        server.say(gid, "!wait")
        server.say(gid, "!howto", room="spectator", username="watcher")
        assert _said(server, gid, WAIT_REFUSAL) and _said(server, gid, HOWTO)
    assert ("spectator", HOWTO) in server.games[gid].chat


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
