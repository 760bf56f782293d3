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


def test_a_greeting_with_a_link_is_never_posted_and_lines_fit_lilas_140_units():
    """lila drops a bot's chat line with a link silently, with 200 (chat ChatApi.makeLine, hasLinks), and refuses a
    line over 140 UTF-16 units with a 400 (issue 40, point 5): the bot never posts the first, and cuts the second."""
    config = {"greeting": {"hello": "Hi! My rules: lichess.org/@/TestBot", "hello_spectators": "😀" * 90}}
    with FakeLichess() as server, BotRun(server, StandInEngine(), config) as bot:
        gid = server.challenge(opponent=staller(), bot_color="black")
        assert server.wait_for(lambda: any(r == "spectator" for r, _ in server.games.get(gid).chat)
                               if gid in server.games else False, 10)
        # The server logs a request once it has answered it, a moment after the game has the line.
        assert server.wait_for(lambda: any(p.endswith("/chat") for _, p, _ in server.requests), 5)
        chats = [(m, p, st) for m, p, st in server.requests if p.endswith("/chat")]
        assert bot.service.chat is not None and bot.service.chat.refused == 1
    assert all(st == 200 for _, _, st in chats) and len(chats) == 1  # the spectator greeting only, no 400
    (room, text), = server.games[gid].chat
    assert room == "spectator" and len(text.encode("utf-16-le")) // 2 <= 140 and text.endswith("…")
