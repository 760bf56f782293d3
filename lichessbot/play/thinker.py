"""The engine glue of the bot, in one place: book -> search under the time manager -> a :class:`Decision`.

The game code depends only on the small :class:`Thinker` protocol (``think``, ``stop``, ``close``) and
on :class:`Decision`, so games can be driven by any thinker. :class:`Engine` is the real one: one
network :class:`~lichessbot.engine.evaluator.Evaluator` shared by every game (thread-safe), and per game
a :class:`~lichessbot.search.Searcher` (its own tree) and a :class:`~lichessbot.timeman.TimeManager`.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

import chess

if TYPE_CHECKING:
    from lichessbot.config import BotConfig

__all__ = ["ClockMs", "Decision", "Engine", "EngineThinker", "Thinker", "UNCLOCKED_MOVETIME"]

#: Seconds per move in games without a clock (correspondence, unlimited): lichess gives days, we need seconds.
UNCLOCKED_MOVETIME = 5.0


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
        source: "book" or "search".
        ponder: the expected reply (second PV move), if any.
        cp: centipawns (lc0's formula over Q, computed by the search), None for book moves.
        mate: moves to mate (>0 we mate, <0 we are mated), None when unknown.
        wdl: win/draw/loss probabilities (fractions summing to 1), None for book moves.
        nodes, nps, depth, seldepth: search statistics (nps in nodes per second).
        pv: principal variation starting with ``move``.
        time: seconds spent thinking.
        stop_reason: why the search stopped (from the stopper), "" for book moves.
    """

    move: chess.Move
    source: Literal["book", "search"]
    ponder: chess.Move | None = None
    cp: int | None = None
    mate: int | None = None
    wdl: tuple[float, float, float] | None = None
    nodes: int = 0
    nps: float = 0.0
    depth: float = 0.0
    seldepth: int = 0
    pv: tuple[chess.Move, ...] = field(default_factory=tuple)
    time: float = 0.0
    stop_reason: str = ""

    @property
    def score_cp(self) -> int | None:
        """cp, with a mate turned into +-(100000 - plies) so comparisons with thresholds work."""
        if self.mate is not None:
            return (100_000 - abs(self.mate)) * (1 if self.mate > 0 else -1)
        return self.cp


class Thinker(Protocol):
    """One game's engine. ``think`` may be slow; ``stop`` may be called from another thread."""

    def think(self, board: chess.Board, clock: ClockMs | None, *, first_moves_unclocked: bool = False) -> Decision:
        ...

    def stop(self) -> None:
        ...

    def close(self) -> None:
        ...


class Engine:
    """The shared engine of the bot: network evaluator and book, built once from the config.

    Args:
        config: the bot config (sections engine, timeman, book).
        nodes: optional cap on nodes per move (tests, weaker play); None: the time manager alone decides.

    Raises:
        lichessbot.engine.network.NetworkError: the network cannot be loaded.
        lichessbot.book.BookError: a book file is missing or corrupt.
    """

    def __init__(self, config: BotConfig, *, nodes: int | None = None):
        from lichessbot.book import Book
        from lichessbot.engine.evaluator import Evaluator
        from lichessbot.engine.network import load_network

        ec = config.engine
        self.config = config
        self.nodes = nodes
        self.network = load_network(ec.network, ec.input_format)
        self.evaluator = Evaluator(self.network, backend=ec.backend, threads=ec.threads, cache_size=ec.nn_cache_size,
                                   policy_temperature=ec.search.policy_temperature)
        self.book = Book.from_config(config.book, random.Random())
        self.name = self.network.name

    def new_game(self) -> EngineThinker:
        """A thinker with its own search tree and time manager."""
        return EngineThinker(self)


class EngineThinker:
    """Book move if the book has one, else a search under the time manager (see :class:`Engine`)."""

    def __init__(self, engine: Engine):
        from lichessbot.search import Searcher
        from lichessbot.timeman import TimeManager

        self._engine = engine
        self._searcher = Searcher(engine.evaluator, engine.config.engine.search)
        self._timeman = TimeManager(engine.config.timeman)
        self._handle = None
        self._lock = threading.Lock()
        self._stopped = False

    def think(self, board: chess.Board, clock: ClockMs | None, *, first_moves_unclocked: bool = False) -> Decision:
        from lichessbot.search import Limits
        from lichessbot.timeman import Clock

        book = self._engine.book
        if book is not None:
            move = book.choose(board, "chess960" if board.chess960 else "standard")
            if move is not None:
                return Decision(move=move, source="book")
        tm_clock = None if clock is None else Clock(time=max(0, clock.time), inc=max(0, clock.inc),
                                                    opp_time=clock.opp_time, opp_inc=clock.opp_inc)
        movetime = UNCLOCKED_MOVETIME if clock is None else None
        stopper = self._timeman.stopper(tm_clock, board, movetime, first_moves_unclocked=first_moves_unclocked)
        with self._lock:
            if self._stopped:
                raise RuntimeError("thinker stopped")
            self._handle = self._searcher.start(board, Limits(nodes=self._engine.nodes), stopper=stopper)
        try:
            result = self._handle.wait()
        finally:
            with self._lock:
                self._handle = None
        self._timeman.move_done(result)
        return Decision(move=result.best_move, source="search", ponder=result.ponder_move, cp=result.cp,
                        mate=result.mate, wdl=tuple(result.wdl), nodes=result.nodes, nps=result.nps,
                        depth=result.depth, seldepth=result.seldepth, pv=tuple(result.pv), time=result.time,
                        stop_reason=result.stop_reason)

    def stop(self) -> None:
        """Cut a running search short (its best move so far is still returned)."""
        with self._lock:
            if self._handle is not None:
                self._handle.stop()

    def close(self) -> None:
        with self._lock:
            self._stopped = True
            if self._handle is not None:
                self._handle.stop()
