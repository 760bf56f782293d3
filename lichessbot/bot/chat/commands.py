"""The ``!`` chat commands as a table: each command is a function of a frozen per-game :class:`ChatContext` that
returns a :class:`Reply`, its text and its effect on the game (:class:`WaitGrace`: ``!wait``'s grace). No I/O,
no state: who may ask how often, and the grace granted once a game, are :class:`~lichessbot.bot.chat.game_chat.
GameChat`'s.

Adding a command is one entry in :data:`COMMANDS` (and its words in :data:`HELP`), in this file
(docs/contributing.md, "Adding a chat command").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from lichessbot import __version__

__all__ = ["COMMANDS", "EVAL_REFUSAL", "HELP", "HOWTO", "WAIT_GRANTED", "WAIT_REFUSAL", "WAIT_REPLY", "WAIT_S",
           "ChatContext", "Command", "Reply", "Room", "WaitGrace", "command_of", "reply_to"]

#: lichess's game chat rooms (the Bot API's ``room``).
Room = Literal["player", "spectator"]

#: The commands lichess-bot users know (lichess-bot lib/conversation.py: !help/!commands, !wait, !name, !eval,
#: !queue; !howto from its earlier versions), in our words.
HELP = ("Commands: !wait (I wait up to a minute for your first move, once), !name, !eval (spectator chat), !queue "
        "(challenges waiting), !howto, !help")
#: The answer to ``!howto``. No link: lichess drops a bot's chat line with one, silently (lila
#: modules/chat/src/main/ChatApi.scala ``hasLinks`` for bots; "lichess.org/..." counts).
HOWTO = ("How to run a bot: create a BOT account (see the Bot API in lichess's API docs) and run a bot program "
         "on it; I am lichessbot.")
#: Seconds of ``!wait``'s grace: the first move may come until this long after the ``!wait`` (lichess-bot's
#: ``!wait`` waits 60 s too: lib/conversation.py, ``game.ping(60, 120, 120)``). Granted once a game.
WAIT_S = 60
#: The answer to the first ``!wait`` while the game can still be aborted (the game then waits until at least
#: :data:`WAIT_S` seconds after it).
WAIT_REPLY = f"I'll wait up to {WAIT_S} seconds from now for your first move..."
#: The answer to a later ``!wait`` in the same game: the grace is granted once, never extended.
WAIT_GRANTED = "I am already waiting for your first move: one !wait per game."
#: The answer to ``!wait`` once both sides have moved (or in arenas and correspondence: nothing is aborted).
WAIT_REFUSAL = "No need to wait: this game is not aborted any more."
#: The answer to ``!eval`` in the player room while the game is on (an eval there would be outside help;
#: lichess-bot refuses too).
EVAL_REFUSAL = "Sorry, I don't share my evaluation with my opponent during the game. Spectators can ask in their chat."


@dataclass(frozen=True)
class ChatContext:
    """What a command may read of its game when the line arrives.

    Attributes:
        room: the room the line came from (the reply goes there).
        in_game: the game is on (not over).
        name: who we are, e.g. ``"TestBot running lichessbot with the maia-1900 network"``.
        opponent: the opponent's name as lichess shows it.
        last_eval: the eval line of our last move, or None before it.
        can_wait: the game would still be aborted for a missing first move.
        wait_granted: ``!wait``'s grace was granted in this game already.
        queue: the challengers waiting for a slot, next first.
    """

    room: Room = "player"
    in_game: bool = False
    name: str = "lichessbot"
    opponent: str = "opponent"
    last_eval: str | None = None
    can_wait: bool = False
    wait_granted: bool = False
    queue: tuple[str, ...] = ()


@dataclass(frozen=True)
class WaitGrace:
    """The effect of ``!wait``: no abort for a missing first move before ``seconds`` from now."""

    seconds: float


@dataclass(frozen=True)
class Reply:
    """A command's answer (said in the asker's room; empty: none) and its effect on the game (None: none)."""

    text: str
    effect: WaitGrace | None = None


#: A command: the game's context in, the reply and its effect out.
Command = Callable[[ChatContext], Reply]


def _eval(ctx: ChatContext) -> Reply:
    if ctx.room == "player" and ctx.in_game:
        return Reply(EVAL_REFUSAL)
    return Reply(ctx.last_eval or "No evaluation yet.")


def _wait(ctx: ChatContext) -> Reply:
    if not ctx.can_wait:
        return Reply(WAIT_REFUSAL)
    return Reply(WAIT_GRANTED) if ctx.wait_granted else Reply(WAIT_REPLY, WaitGrace(float(WAIT_S)))


def _queue(ctx: ChatContext) -> Reply:
    return Reply(f"Challenge queue: {', '.join('@' + n for n in ctx.queue)}" if ctx.queue else "No challenges queued.")


#: The commands answered, by their first word (lower case); any other line, ``!`` or not, gets no answer.
COMMANDS: dict[str, Command] = {
    "!eval": _eval,
    "!name": lambda ctx: Reply(f"{ctx.name} (lichessbot {__version__})"),
    "!help": lambda ctx: Reply(HELP),
    "!commands": lambda ctx: Reply(HELP),
    "!howto": lambda ctx: Reply(HOWTO),
    "!wait": _wait,
    "!queue": _queue,
}


def command_of(text: str) -> str | None:
    """The command of the chat line ``text`` (its first word, lower case) when :data:`COMMANDS` has it, else
    None."""
    words = text.split(maxsplit=1)
    cmd = words[0].lower() if words else ""
    return cmd if cmd in COMMANDS else None


def reply_to(text: str, ctx: ChatContext) -> Reply | None:
    """The reply to the chat line ``text`` (any case, words after the command ignored) in the game ``ctx``, or
    None for a line that is no command."""
    cmd = command_of(text)
    return None if cmd is None else COMMANDS[cmd](ctx)
