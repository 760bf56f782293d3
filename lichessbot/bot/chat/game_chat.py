"""One game's chat: greetings and goodbyes in both rooms, answers to commands, the engine's eval line.

The game's core (:class:`lichessbot.bot.games.core.GameCore`) tells it what happens and gets back the lines
to say (:class:`Say`, no I/O here: the game's shell hands them to the chat sender); what is said, and when,
is decided here (the texts and commands are :mod:`lichessbot.bot.chat.lines`'s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import chess

from lichessbot.bot.chat.lines import WAIT_REPLY, WAIT_S, answer_command, eval_line, render_greeting
from lichessbot.config import BotConfig
from lichessbot.lichess.events import ChatLine
from lichessbot.thinker import Decision

__all__ = ["GameChat", "Room", "Say"]

#: lichess's game chat rooms (the Bot API's ``room``).
Room = Literal["player", "spectator"]


@dataclass(frozen=True)
class Say:
    """A line to say in one room of the game's chat (the sender cuts it to lichess's 140 characters)."""

    room: Room
    text: str


class GameChat:
    """The chat of one game. ``opponent`` and ``level`` (the greeting's ``{opponent}`` and ``{level}``) are set
    by the game once it knows them; ``last_eval`` is the eval line of our last move. ``queued`` reads the
    challengers waiting for a slot (``!queue``; a read of the service's queue, no I/O)."""

    def __init__(self, config: BotConfig, *, username: str, engine_name: str,
                 queued: Callable[[], Sequence[str]]) -> None:
        self.config = config
        self.username, self.engine_name, self.queued = username, engine_name, queued
        self.opponent = "opponent"
        self.level = "full strength"
        self.last_eval: str | None = None
        self._greeted = False
        self._said_goodbye = False

    def _say(self, template: str, room: Room) -> list[Say]:
        if not template:
            return []
        return [Say(room, render_greeting(template, me=self.username, opponent=self.opponent, level=self.level))]

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

    def answer(self, line: ChatLine, *, over: bool, can_wait: bool) -> tuple[list[Say], float]:
        """The answer to a command in ``line`` (never to our own lines), in its room, and the seconds ``!wait``
        adds before an abort (0 otherwise). ``can_wait``: an abort is still possible in this game."""
        room: Room = "spectator" if line.room == "spectator" else "player"
        if line.username.lower() == self.username.lower():
            return [], 0.0
        answer = answer_command(line.text, last_eval=self.last_eval,
                                name=f"{self.username} running lichessbot with the {self.engine_name} network",
                                player_room_in_game=room == "player" and not over, can_wait=can_wait,
                                queue=self.queued())
        return ([Say(room, answer)] if answer else []), (float(WAIT_S) if answer == WAIT_REPLY else 0.0)

    def after_move(self, decision: Decision, board: chess.Board, our_moves: int) -> list[Say]:
        """Keep the eval line of our move in ``board``; say it to the spectators every ``chat.eval_every``
        moves when ``chat.eval_room`` is spectator (never the player room: outside help)."""
        self.last_eval = eval_line(decision, board)
        if self.config.chat.eval_room == "spectator" and our_moves % self.config.chat.eval_every == 0:
            return [Say("spectator", self.last_eval)]
        return []
