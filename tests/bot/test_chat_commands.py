"""The chat commands lichess-bot users know, asked in a bot game on the test server (a stand-in engine:
no network needed): ``!queue`` reads the service's queue through the game. Each command's answer is a plain
call on the game's core (tests/bot/test_game_core.py)."""

from __future__ import annotations

import time

import pytest
import structlog

from lichessbot.bot.chat.commands import (
    COMMANDS,
    HELP,
    WAIT_GRANTED,
    WAIT_REFUSAL,
    WAIT_REPLY,
    WAIT_S,
    ChatContext,
    Reply,
    WaitGrace,
)
from lichessbot.bot.games.actions import Abort
from lichessbot.lichess.events import ChatLine
from tests.bot.test_game_core import T0, play, said, started, state
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine, staller


def _said(server: FakeLichess, gid: str, text: str, timeout: float = 5) -> bool:
    return server.wait_for(lambda: any(t == text for _, t in server.games[gid].chat), timeout)


def test_queue_names_the_challengers_waiting_for_a_slot():
    config = {"challenge": {"concurrency": 1, "queue_wait": 30}, "chat": {"command_interval": 0}}
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


# Flood and stall (issue 48, point 5): plain calls on the game's core with a clock of our own (``now``).

def test_forty_commands_in_a_third_of_a_second_get_one_answer_then_one_more_after_the_interval():
    with structlog.testing.capture_logs() as logs:
        core, _ = started()  # chat.command_interval: 5 s (the default)
        burst = [said(core.on_event(ChatLine("player", "alice", "!help"), T0 + i * 0.3 / 40)) for i in range(40)]
        assert [lines for lines in burst if lines] == [[("player", HELP)]]  # the first only
        assert said(core.on_event(ChatLine("player", "alice", "!help"), T0 + 4.9)) == []
        assert said(core.on_event(ChatLine("player", "alice", "!name"), T0 + 5)) != []  # the interval is over
        assert said(core.on_event(ChatLine("player", "alice", "!help"), T0 + 5.1)) == []  # a new interval
    dropped = [e for e in logs if e["event"] == "chat command dropped"]
    assert len(dropped) == 41 and core.talk.dropped == 41  # 39 in the burst, 1 at 4.9 s, 1 at 5.1 s
    assert all(e["game_id"] == "g1" and e["user"] == "alice" for e in dropped)
    assert [e["dropped"] for e in dropped] == [*range(1, 41), 1]  # counted since the last answer
    assert [e["log_level"] for e in dropped[:2]] == ["info", "debug"]


def test_the_interval_is_per_user_and_room_and_other_lines_cost_nothing():
    core, _ = started()
    assert said(core.on_event(ChatLine("player", "alice", "!help"), T0)) == [("player", HELP)]
    assert said(core.on_event(ChatLine("spectator", "alice", "!help"), T0)) == [("spectator", HELP)]
    assert said(core.on_event(ChatLine("spectator", "watcher", "!help"), T0)) == [("spectator", HELP)]
    fresh, _ = started()
    for text in ("hello", "!nonsense", "good luck!"):
        assert fresh.on_event(ChatLine("player", "alice", text), T0) == []
    assert said(fresh.on_event(ChatLine("player", "alice", "!help"), T0 + 0.1)) == [("player", HELP)]


def test_a_command_interval_of_zero_answers_every_command():
    core, _ = started({"chat": {"command_interval": 0}})
    answers = [said(core.on_event(ChatLine("player", "alice", "!help"), T0)) for _ in range(3)]
    assert answers == [[("player", HELP)]] * 3


def test_ten_waits_extend_the_abort_deadline_once():
    """The first ``!wait`` grants WAIT_S seconds from then; the next nine, each past the command interval, are told
    so and move nothing."""
    core, _ = started({"abort_time": 30})
    play(core, T0)
    core.on_event(state("e2e4"), T0 + 1)  # the opponent's first move is due by T0 + 31
    answers = [said(core.on_event(ChatLine("player", "alice", "!wait"), T0 + 2 + 6 * i)) for i in range(10)]
    assert answers == [[("player", WAIT_REPLY)]] + [[("player", WAIT_GRANTED)]] * 9
    assert core.tick(T0 + 2 + WAIT_S) == []
    assert core.tick(T0 + 2 + WAIT_S + 0.1) == [Abort()]  # not T0 + 56 + WAIT_S, the last !wait's


def test_a_wait_dropped_by_the_interval_grants_nothing():
    core, _ = started({"abort_time": 30})
    play(core, T0)
    core.on_event(state("e2e4"), T0 + 1)
    assert said(core.on_event(ChatLine("player", "alice", "!help"), T0 + 2)) == [("player", HELP)]
    assert core.on_event(ChatLine("player", "alice", "!wait"), T0 + 3) == []
    assert core.tick(T0 + 31.1) == [Abort()]


@pytest.mark.slow
def test_a_burst_of_commands_on_the_test_server_gets_one_answer():
    """The whole path (the game stream, the core, the sender, lila's chat endpoint): 40 commands as fast as the
    test server takes them (well under the default 5 s interval) make one line."""
    with FakeLichess() as server, BotRun(server, StandInEngine()):
        gid = server.challenge(opponent=staller())
        assert server.wait_for(lambda: gid in server.games and server.games[gid].ply() == 1, 5)
        started_at = time.monotonic()
        for _ in range(40):
            server.say(gid, "!help")
        burst_s = time.monotonic() - started_at
        assert _said(server, gid, HELP)
        time.sleep(1.0)  # any more answers would be posted by now (the sender posts in order, at once)
        answers = [line for line in server.games[gid].chat if line[1] == HELP]
    assert burst_s < 2.5 and answers == [("player", HELP)]


def test_a_command_added_to_the_table_is_answered_through_the_game_with_its_effect(monkeypatch):
    """docs/contributing.md, "Adding a chat command": one entry in COMMANDS (lichessbot/bot/chat/commands.py) is a
    command of every game: a toy ``!grace`` reads the game's context (the opponent's name, whether an abort is still
    possible) and its effect, not its words, moves the abort deadline."""
    def grace(ctx: ChatContext) -> Reply:
        return Reply(f"{ctx.opponent}, take 90 s", WaitGrace(90) if ctx.can_wait else None)

    monkeypatch.setitem(COMMANDS, "!grace", grace)
    core, _ = started({"abort_time": 20})
    play(core, T0)
    core.on_event(state("e2e4"), T0 + 1)
    assert said(core.on_event(ChatLine("player", "alice", "!Grace please"), T0 + 2)) == [("player", "alice, take 90 s")]
    assert core.tick(T0 + 2 + 89) == []  # abort_time (T0 + 21) is past: the effect holds the abort back
    assert core.tick(T0 + 2 + 90.1) == [Abort()]
    assert core.talk.wait_granted  # a grace is a grace: a later !wait grants none
