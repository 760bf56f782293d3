"""One game's chat: greetings and goodbyes in both rooms, answers to commands, the engine's eval line.

Commands cannot flood the chat nor stall the game: each asker gets at most one answer per room every
``chat.command_interval`` seconds (the commands between are dropped, and logged), and ``!wait``'s grace is
granted once a game (:meth:`GameChat.answer`).

The game's core (:class:`lichessbot.bot.games.core.GameCore`) tells it what happens and gets back the lines
to say (:class:`Say`, no I/O here: the game's shell hands them to the chat sender); what is said, and when,
is decided here (the commands are :mod:`lichessbot.bot.chat.commands`'s table, each a function of a frozen
:class:`~lichessbot.bot.chat.commands.ChatContext` of the game; the other texts :mod:`lichessbot.bot.chat.lines`'s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import assert_never

import chess
import structlog
from structlog.typing import FilteringBoundLogger

from lichessbot.bot.chat.commands import ChatContext, Room, WaitGrace, command_of, reply_to
from lichessbot.bot.chat.lines import eval_line, render_greeting
from lichessbot.bot.chat.machine import cpu_text, engine_text, ram_text
from lichessbot.config import BotConfig
from lichessbot.lichess.events import ChatLine
from lichessbot.thinker import Decision

__all__ = ["GameChat", "Room", "Say"]

@dataclass(frozen=True)
class Say:
    """A line to say in one room of the game's chat (the sender cuts it to lichess's 140 characters)."""

    room: Room
    text: str


class GameChat:
    """The chat of one game. ``opponent`` and ``level`` (the greeting's ``{opponent}`` and ``{level}``) are set
    by the game once it knows them; ``last_eval`` is the eval line of our last move. ``queued`` reads the
    challengers waiting for a slot (``!queue``; a read of the service's queue, no I/O). ``log``: the game's
    logger (bound with its ``game_id``)."""

    def __init__(self, config: BotConfig, *, username: str, engine_name: str,
                 queued: Callable[[], Sequence[str]], log: FilteringBoundLogger | None = None) -> None:
        self.config = config
        self.log: FilteringBoundLogger = log if log is not None else structlog.get_logger("lichessbot.chat")
        self.username, self.engine_name, self.queued = username, engine_name, queued
        self.opponent = "opponent"
        self.level = "full strength"
        self.last_eval: str | None = None
        self._greeted = False
        self._said_goodbye = False
        self._answered_at: dict[tuple[Room, str], float] = {}  # (room, asker): monotonic time of the last answer
        self._dropped: dict[tuple[Room, str], int] = {}  # (room, asker): commands dropped since that answer
        self.dropped = 0  # commands dropped in this game
        self.wait_granted = False  # !wait's grace was given in this game

    def _say(self, template: str, room: Room) -> list[Say]:
        if not template:
            return []
        return [Say(room, render_greeting(template, me=self.username, opponent=self.opponent, level=self.level,
                                          engine=engine_text(self.engine_name), cpu=cpu_text(), ram=ram_text()))]

    def hello(self) -> list[Say]:
        """The greetings of both rooms, once a game."""
        if self._greeted:
            return []
        self._greeted = True
        return self._say(self.config.greeting.hello, "player") + self._say(self.config.greeting.hello_spectators,
                                                                           "spectator")

    def goodbye(self) -> list[Say]:
        """The goodbyes of both rooms, once a game."""
        if self._said_goodbye:
            return []
        self._said_goodbye = True
        return self._say(self.config.greeting.goodbye, "player") + self._say(self.config.greeting.goodbye_spectators,
                                                                             "spectator")

    def answer(self, line: ChatLine, *, now: float, over: bool, can_wait: bool) -> tuple[list[Say], float]:
        """The answer to a command in ``line`` (never to our own lines), in its room, and the seconds of
        ``!wait``'s grace (the reply's :class:`~lichessbot.bot.chat.commands.WaitGrace`, the first time only; 0
        otherwise).

        ``now``: monotonic seconds. ``can_wait``: an abort is still possible in this game. One asker (a user in
        one room) gets at most one answer every ``chat.command_interval`` seconds: a command within that time of
        the last one answered is dropped, unanswered and without effect (a ``!wait`` too), and logged (``chat
        command dropped``, with the count since the last answer: info for the first, debug after). A later
        ``!wait`` once the grace was granted gets :data:`~lichessbot.bot.chat.commands.WAIT_GRANTED` and no grace.
        """
        room: Room = "spectator" if line.room == "spectator" else "player"
        asker = line.username.lower()
        if asker == self.username.lower() or command_of(line.text) is None:
            return [], 0.0
        key = (room, asker)
        interval = self.config.chat.command_interval
        last = self._answered_at.get(key)
        if last is not None and now - last < interval:
            dropped = self._dropped[key] = self._dropped.get(key, 0) + 1
            self.dropped += 1
            (self.log.info if dropped == 1 else self.log.debug)(
                "chat command dropped", room=room, user=line.username, dropped=dropped, command_interval_s=interval,
                reason="one answer per user and room every chat.command_interval seconds")
            return [], 0.0
        self._answered_at[key] = now
        self._dropped.pop(key, None)
        reply = reply_to(line.text, ChatContext(
            room=room, in_game=not over, name=f"{self.username} running lichessbot with the {self.engine_name} network",
            opponent=self.opponent, last_eval=self.last_eval, can_wait=can_wait, wait_granted=self.wait_granted,
            queue=tuple(self.queued())))
        if reply is None:
            return [], 0.0
        grace = 0.0
        match reply.effect:
            case WaitGrace(seconds=seconds):
                self.wait_granted = True
                grace = seconds
            case None:
                pass
            case _:
                assert_never(reply.effect)  # mypy: an effect with no case here
        return ([Say(room, reply.text)] if reply.text else []), grace

    def after_move(self, decision: Decision, board: chess.Board, our_moves: int) -> list[Say]:
        """Keep the eval line of our move in ``board``; say it to the spectators every ``chat.eval_every``
        moves when ``chat.eval_room`` is spectator (never the player room: outside help)."""
        self.last_eval = eval_line(decision, board)
        if self.config.chat.eval_room == "spectator" and our_moves % self.config.chat.eval_every == 0:
            return [Say("spectator", self.last_eval)]
        return []
