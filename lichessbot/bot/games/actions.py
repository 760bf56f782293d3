"""What a game's core asks its shell to do (:class:`~lichessbot.bot.games.core.GameCore`): frozen values, one
per thing the bot can do in a game on lichess (the Bot API's game endpoints) or ask of its engine.

The shell (:class:`~lichessbot.bot.games.shell.Game`) carries them out in order; where the outcome matters
to the game (a move post, a takeback answer, the strength level), it tells the core how it went. The core does
no I/O: even the takeback ledger's file is written by the shell (:class:`CountTakeback`, :class:`ForgetTakebacks`).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from lichessbot.bot.chat.game_chat import Say
from lichessbot.config import BotConfig
from lichessbot.thinker.protocol import Clock, Decision

__all__ = ["Abandon", "Abort", "Action", "AnswerTakeback", "Claim", "CountTakeback", "ForgetTakebacks", "Ponder",
           "PostMove", "Resign", "Resync", "Say", "SetOpponent", "ThinkRequest"]


@dataclass(frozen=True)
class PostMove:
    """Post ``move`` for ``ply`` (``POST /api/bot/game/{id}/move/{uci}``); ``offer_draw``: with
    ``offeringDraw=true`` (an offer, or the acceptance of the opponent's, lila BotPlayer); ``deadline``: the
    monotonic time (seconds) the post may wait until (retries, 429 pauses), None without a clock; ``not_before``:
    the monotonic time the post waits for first (``fake_think_time``), None: at once. The shell reports the
    outcome: :meth:`~lichessbot.bot.games.core.GameCore.move_posted` or ``move_refused``."""

    ply: int
    move: chess.Move
    offer_draw: bool
    deadline: float | None
    not_before: float | None = None


@dataclass(frozen=True)
class Resign:
    """Resign the game (``/resign``)."""


@dataclass(frozen=True)
class Abort:
    """Abort the game (``/abort``; lichess allows it before both sides moved, never in an arena)."""


@dataclass(frozen=True)
class Abandon:
    """Leave a game the engine cannot play: abort it (``abort``) or resign, once; the shell logs the outcome."""

    abort: bool
    why: str


@dataclass(frozen=True)
class Claim:
    """Claim the game while the opponent is gone (``/claim-draw`` when ``draw``, else ``/claim-victory``);
    lila may refuse it (400: too early), which costs nothing: the core asks again a second later."""

    draw: bool


@dataclass(frozen=True)
class AnswerTakeback:
    """Answer the opponent's takeback offer (``/takeback/yes`` or ``/no``) in the position of ``ply`` plies;
    the shell reports the outcome (:meth:`~lichessbot.bot.games.core.GameCore.takeback_posted`)."""

    accept: bool
    ply: int


@dataclass(frozen=True)
class Ponder:
    """Think on the opponent's time: ``board`` is the position after our move, ``reply`` the expected answer."""

    board: chess.Board
    reply: chess.Move


@dataclass(frozen=True)
class SetOpponent:
    """Tell the engine the opponent (lichess rating for the game's speed, None: unknown; whether rated); the
    shell hands the level's text it answers to :meth:`~lichessbot.bot.games.core.GameCore.level_chosen`."""

    rating: int | None
    rated: bool
    #: The game's own config (``game_overrides`` applied), None when no entry matches the game.
    config: BotConfig | None = None
    #: The opponent's name (the online explorer's ``anti``).
    name: str = ""


@dataclass(frozen=True)
class CountTakeback:
    """One more takeback accepted in this game: the shell adds it to the takeback ledger
    (:meth:`~lichessbot.bot.games.takeback.TakebackLedger.add`, a file write), so a restart keeps the count."""


@dataclass(frozen=True)
class ForgetTakebacks:
    """The game is over: the shell drops its count from the takeback ledger
    (:meth:`~lichessbot.bot.games.takeback.TakebackLedger.forget`, a file write)."""


@dataclass(frozen=True)
class Resync:
    """Drop the game stream: its reconnection brings a fresh ``gameFull``, the server's state."""


#: Everything a core can ask of its shell.
Action = (PostMove | Resign | Abort | Abandon | Claim | AnswerTakeback | CountTakeback | ForgetTakebacks | Ponder
          | SetOpponent | Resync | Say)


@dataclass(frozen=True)
class ThinkRequest:
    """The position the game must answer now (:meth:`~lichessbot.bot.games.core.GameCore.to_play`).

    Attributes:
        ply: plies played before it.
        board: a copy the engine may keep.
        clock: our clock now (milliseconds), None without a real-time clock.
        time_left_s: in correspondence, the seconds the clock leaves us (None: unlimited or not known).
        decided: the move decided here already (its post is retried): nothing to think.
    """

    ply: int
    board: chess.Board
    clock: Clock | None
    time_left_s: float | None
    decided: Decision | None = None

    @property
    def first_moves_unclocked(self) -> bool:
        """lichess's clock does not run yet (each side's first move)."""
        return self.ply < 2
