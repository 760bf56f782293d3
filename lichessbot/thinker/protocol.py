"""What a game asks of its engine: the :class:`Thinker` protocol and the :class:`Decision` it returns
(the move pipeline's value, :class:`lichessbot.thinker.Decision`, the same for the bot and UCI).

The game code depends only on these, so games can be driven by any thinker (the real one is
:class:`lichessbot.thinker.game_thinker.GameThinker`, made by :meth:`lichessbot.thinker.engine.Engine.new_game`; the
test server's bots and the bot benchmark use stand-ins).
"""

from __future__ import annotations

from typing import Protocol

import chess

from lichessbot.config import BotConfig
from lichessbot.thinker.types import Decision
from lichessbot.timeman import Clock

__all__ = ["Clock", "Decision", "Thinker"]


class Thinker(Protocol):
    """One game's engine. ``think`` may be slow; ``stop`` may be called from another thread."""

    def think(self, board: chess.Board, clock: Clock | None, *, first_moves_unclocked: bool = False,
              time_left_s: float | None = None) -> Decision:
        """A move for ``board`` (a copy the thinker may keep); ``clock``: our clock now (ms, from lichess's
        state: :meth:`lichessbot.timeman.Clock.from_lichess`, with the game's measured move overhead); None: no
        clock (correspondence), where
        ``time_left_s`` is what the correspondence clock leaves for this move (seconds; None: unlimited)."""
        ...

    def set_opponent(self, rating: int | None, rated: bool, config: BotConfig | None = None,
                     name: str = "") -> str:
        """The game's opponent, once known: their lichess rating for the game's speed (None: unknown) and
        whether the game is rated. A thinker that plays strength levels picks this game's level from them
        (docs/strength.md). ``config``: the game's own config (``game_overrides`` applied; its engine.search,
        engine.strength, timeman and book are this game's), None: the engine's; ``name``: the opponent's (the
        online explorer's ``anti``). Returns the level as the
        ``{level}`` of greetings ("1450 Elo", "full strength")."""
        ...

    def ponder(self, board: chess.Board, reply: chess.Move | None) -> None:
        """Think on the opponent's time: ``board`` is the position after our move, ``reply`` the expected
        answer (a thinker that does not ponder does nothing)."""
        ...

    def stop(self) -> None:
        """Cut a running ``think`` or ponder short (``think`` still returns a move)."""
        ...

    def close(self) -> None:
        """Stop and release what the thinker holds (its threads end here)."""
        ...
