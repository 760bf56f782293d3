"""What a game asks of its engine: the :class:`Thinker` protocol and the :class:`Decision` it returns.

The game code depends only on these, so games can be driven by any thinker (the real one is
:class:`lichessbot.play.engine_thinker.EngineThinker`; the test server's bots and the bot benchmark use
stand-ins).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

import chess

from lichessbot.score import Score
from lichessbot.search import SearchResult

__all__ = ["ClockMs", "Decision", "Thinker"]


class ClockMs(NamedTuple):
    """Our clock for one move, milliseconds (lichess's wtime/btime/winc/binc seen from our side)."""

    time: int
    inc: int
    opp_time: int
    opp_inc: int


@dataclass(frozen=True)
class Decision:
    """What to play and why. Scores are from the mover's (our) point of view.

    Attributes:
        move: the move to play (legal in the board given to ``think``).
        source: "book", "tablebase" (the Syzygy root probe, no search) or "search".
        result: the search behind a "search" decision (None for the others).
        note: why a move was not searched: the tables' verdict for tablebase moves ("tablebase win,
            DTZ 13"), "fallback" when the engine failed; "" otherwise.
        tablebase_score: the tables' score of a tablebase move (a search's score is its result's).
    """

    move: chess.Move
    source: Literal["book", "tablebase", "search"]
    result: SearchResult | None = None
    note: str = ""
    tablebase_score: Score | None = None

    @property
    def score(self) -> Score | None:
        """The evaluation of ``move``: the search's or the tables'; None for book moves and fallbacks."""
        return self.result.score if self.result is not None else self.tablebase_score

    @property
    def ponder(self) -> chess.Move | None:
        """The expected reply (second PV move), if any."""
        return self.result.ponder_move if self.result is not None else None

    @property
    def pv(self) -> tuple[chess.Move, ...]:
        """The principal variation, starting with ``move`` (only ``move`` for a tablebase move)."""
        if self.result is not None:
            return tuple(self.result.pv)
        return (self.move,) if self.source == "tablebase" else ()

    @property
    def nodes(self) -> int:
        """Nodes of the search (1 for a tablebase probe, 0 for a book move)."""
        if self.result is not None:
            return self.result.nodes
        return 1 if self.source == "tablebase" else 0

    @property
    def nps(self) -> float:
        """Playouts per second of the search (0 without one)."""
        return self.result.nps if self.result is not None else 0.0

    @property
    def depth(self) -> float:
        """Mean playout depth of the search, plies (0 without one)."""
        return self.result.depth if self.result is not None else 0.0

    @property
    def time(self) -> float:
        """Seconds spent searching (0 without a search)."""
        return self.result.time if self.result is not None else 0.0

    @property
    def stop_reason(self) -> str:
        """Why the search stopped (from the stopper), or the ``note`` of an unsearched move."""
        return self.result.stop_reason if self.result is not None else self.note

    @property
    def score_cp(self) -> int | None:
        """Centipawns with a mate as +-(100000 - moves) so thresholds compare (None without a score)."""
        return self.score.value_cp() if self.score is not None else None


class Thinker(Protocol):
    """One game's engine. ``think`` may be slow; ``stop`` may be called from another thread."""

    def think(self, board: chess.Board, clock: ClockMs | None, *, first_moves_unclocked: bool = False) -> Decision:
        """A move for ``board`` (a copy the thinker may keep); ``clock`` None: no clock (correspondence)."""
        ...

    def set_opponent(self, rating: int | None, rated: bool) -> str:
        """The game's opponent, once known: their lichess rating for the game's speed (None: unknown) and
        whether the game is rated. A thinker that plays strength levels picks this game's level from them
        (docs/strength.md). Returns the level as the ``{level}`` of greetings ("1450 Elo", "full strength")."""
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
