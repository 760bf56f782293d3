"""One game's chat: greetings and goodbyes in both rooms, answers to commands, the engine's eval line.

The game (:class:`lichessbot.bot.games.game.Game`) tells it what happens; what is said, and when, is decided
here (the texts and commands are :mod:`lichessbot.bot.chat.lines`'s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import chess

from lichessbot.bot.chat.lines import WAIT_REPLY, WAIT_S, ChatSender, answer_command, eval_line, render_greeting
from lichessbot.config import BotConfig
from lichessbot.lichess.events import ChatLine
from lichessbot.pipeline import Decision

__all__ = ["GameChat"]


class GameChat:
    """The chat of game ``game_id``. ``opponent`` and ``level`` (the greeting's ``{opponent}`` and
    ``{level}``) are set by the game once it knows them; ``last_eval`` is the eval line of our last move."""

    def __init__(self, game_id: str, sender: ChatSender, config: BotConfig, *, username: str, engine_name: str,
                 queued: Callable[[], Sequence[str]]) -> None:
        self.id, self.sender, self.config = game_id, sender, config
        self.username, self.engine_name, self.queued = username, engine_name, queued
        self.opponent = "opponent"
        self.level = "full strength"
        self.last_eval: str | None = None
        self._greeted = False
        self._said_goodbye = False

    def _say(self, template: str, room: str) -> None:
        if template:
            self.sender.send(self.id, room, render_greeting(template, me=self.username, opponent=self.opponent,
                                                            level=self.level))

    def hello(self) -> None:
        """The greetings of both rooms, once a game."""
        if not self._greeted:
            self._greeted = True
            self._say(self.config.greeting.hello, "player")
            self._say(self.config.greeting.hello_spectators, "spectator")

    def goodbye(self) -> None:
        """The goodbyes of both rooms, once a game."""
        if not self._said_goodbye:
            self._said_goodbye = True
            self._say(self.config.greeting.goodbye, "player")
            self._say(self.config.greeting.goodbye_spectators, "spectator")

    def answer(self, line: ChatLine, *, over: bool, can_wait: bool) -> float:
        """Answer a command in ``line`` (never our own lines) in its room; returns the seconds ``!wait``
        adds before an abort (0 otherwise). ``can_wait``: an abort is still possible in this game."""
        room = "spectator" if line.room == "spectator" else "player"
        if line.username.lower() == self.username.lower():
            return 0.0
        answer = answer_command(line.text, last_eval=self.last_eval,
                                name=f"{self.username} running lichessbot with the {self.engine_name} network",
                                player_room_in_game=room == "player" and not over, can_wait=can_wait,
                                queue=self.queued())
        if answer:
            self.sender.send(self.id, room, answer)
        return float(WAIT_S) if answer == WAIT_REPLY else 0.0

    def after_move(self, decision: Decision, board: chess.Board, our_moves: int) -> None:
        """Keep the eval line of our move in ``board``; send it to the spectators every ``chat.eval_every``
        moves when ``chat.eval_room`` is spectator (never the player room: outside help)."""
        self.last_eval = eval_line(decision, board)
        if self.config.chat.eval_room == "spectator" and our_moves % self.config.chat.eval_every == 0:
            self.sender.send(self.id, "spectator", self.last_eval)
