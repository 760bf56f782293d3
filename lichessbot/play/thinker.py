"""The engine glue of the bot, in one place: book -> search under the time manager -> a :class:`Decision`.

The game code depends only on the small :class:`Thinker` protocol (``think``, ``stop``, ``close``) and
on :class:`Decision`, so games can be driven by any thinker. :class:`Engine` is the real one: one
network :class:`~lichessbot.engine.evaluator.Evaluator` shared by every game (thread-safe), and per game
a :class:`~lichessbot.search.Searcher` (its own tree) and a :class:`~lichessbot.timeman.TimeManager`.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

import chess

if TYPE_CHECKING:
    from lichessbot.config import BotConfig

__all__ = ["ClockMs", "Decision", "Engine", "EngineThinker", "Thinker"]


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
        ponder: the expected reply (second PV move), if any.
        cp: centipawns (lc0's formula over Q, computed by the search), None for book moves.
        mate: moves to mate (>0 we mate, <0 we are mated), None when unknown.
        wdl: win/draw/loss probabilities (fractions summing to 1), None for book moves.
        nodes, nps, depth, seldepth: search statistics (nps in nodes per second).
        pv: principal variation starting with ``move``.
        time: seconds spent thinking.
        stop_reason: why the search stopped (from the stopper), "" for book moves; for tablebase moves
            the tables' verdict ("tablebase win, DTZ 13").
    """

    move: chess.Move
    source: Literal["book", "tablebase", "search"]
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
        lichessbot.tablebase.TablebaseError: a tablebase directory is missing or holds no tables.
    """

    def __init__(self, config: BotConfig, *, nodes: int | None = None):
        from lichessbot.book import Book
        from lichessbot.engine.evaluator import Evaluator
        from lichessbot.engine.service import EvalService
        from lichessbot.engine.network import load_network

        ec = config.engine
        self.config = config
        self.nodes = nodes
        self.network = load_network(ec.network, ec.input_format)
        if ec.backend == "triton":
            from lichessbot.engine.triton import TritonEvaluator

            self.evaluator = TritonEvaluator(ec.triton_url, ec.triton_model, input_format=self.network.input_format,
                                             cache_size=ec.nn_cache_size,
                                             policy_temperature=ec.search.policy_temperature)
        else:
            self.evaluator = Evaluator(self.network, backend=ec.backend, threads=ec.threads,
                                       cache_size=ec.nn_cache_size, policy_temperature=ec.search.policy_temperature,
                                       precision=ec.precision)
        #: One evaluation service for every game of the process: their batches merge into one call.
        self.service = EvalService(self.evaluator)
        self.book = Book.from_config(config.book, random.Random())
        from lichessbot.tablebase import Tablebases

        #: The Syzygy tables (root probe here, search probes in the core), or None.
        self.tablebases = Tablebases.from_config(config.tablebases)
        sc = ec.strength
        #: The strength table of engine.strength (docs/strength.md), read when a level may be played.
        self.strength_table = None
        if sc.elo is not None or sc.adaptive.enabled:
            from lichessbot.strength import table_from_config, table_mismatch

            self.strength_table = table_from_config(sc.table)
            mismatch = table_mismatch(self.strength_table, ec.network)
            if mismatch:
                import structlog

                structlog.get_logger(__name__).warning("strength table", problem=mismatch)
        self.name = self.network.name
        self.ponders = 0      # ponder searches started (all games)
        self.ponder_hits = 0  # of which the opponent played the expected move

    def new_game(self, game_id: str | None = None) -> EngineThinker:
        """A thinker with its own search tree and time manager; ``game_id`` goes on its log lines."""
        return EngineThinker(self, game_id)


class _LiveSink:
    """Turns one search's info callbacks (search thread) into :class:`~lichessbot.status.LiveSearch`
    snapshots for ``publish``. ``ply``: plies of the game before the searched position."""

    def __init__(self, publish: Callable[[Any], None], ply: int, pondering: bool) -> None:
        self.publish, self.ply, self.pondering = publish, ply, pondering
        self.last: Any = None

    def __call__(self, stats: Any) -> None:
        from lichessbot.status import LiveSearch, SearchLine

        lines = tuple(SearchLine(move=rm.move.uci(), visits=int(rm.n), policy=float(rm.p), q=float(rm.q),
                                 draw=float(rm.d),
                                 pv=tuple(m.uci() for m in stats.pv[:10]) if i == 0 else (rm.move.uci(),))
                      for i, rm in enumerate(stats.root_moves[:LiveSearch.LINES]))
        self.last = LiveSearch(ply=self.ply, pondering=self.pondering, done=False, elapsed=float(stats.elapsed),
                               nodes=int(stats.nodes), nps=float(stats.nps), depth=float(stats.depth),
                               seldepth=int(stats.seldepth), cp=stats.cp, mate=stats.mate,
                               wdl=tuple(float(x) for x in stats.wdl), lines=lines)
        self.publish(self.last)

    def finish(self) -> None:
        if self.last is not None:
            self.publish(replace(self.last, done=True, pondering=False))


class EngineThinker:
    """Book move if the book has one, else a search under the time manager (see :class:`Engine`).

    ``on_live``, when set (by the game, for the status page), receives a
    :class:`~lichessbot.status.LiveSearch` from the search thread as the search goes on.
    """

    def __init__(self, engine: Engine, game_id: str | None = None):
        from lichessbot.search import Searcher
        from lichessbot.timeman import TimeManager

        self._engine = engine
        tb = engine.tablebases
        self._searcher = Searcher(engine.service, engine.config.engine.search, game=game_id or "",
                                  tablebases=tb.core if tb is not None else None)
        self._timeman = TimeManager(engine.config.timeman, context={"game_id": game_id} if game_id else None)
        self._handle = None
        self._ponder: tuple[chess.Board, Any] | None = None  # (position pondered, its running search)
        self._lock = threading.Lock()
        self._stopped = False
        self.on_live: Callable[[Any], None] | None = None
        self._sink: _LiveSink | None = None
        self.strength = self._level_player(None, False)

    def _level_player(self, rating: int | None, rated: bool) -> Any:
        from lichessbot.strength import LevelPlayer, level_for_game

        sc = self._engine.config.engine.strength
        level = level_for_game(sc, self._engine.strength_table, rating, rated)
        return LevelPlayer(level, seed=self._engine.config.engine.search.seed, think_share=sc.think_share)

    def set_opponent(self, rating: int | None, rated: bool) -> Any:
        """Choose this game's strength level from the opponent's rating for the game's speed and whether the
        game is rated (engine.strength, docs/strength.md); returns the level (None: full strength)."""
        self.strength = self._level_player(rating, rated)
        return self.strength.level

    def _live(self, board: chess.Board, pondering: bool) -> _LiveSink | None:
        return None if self.on_live is None else _LiveSink(self.on_live, len(board.move_stack), pondering)

    def think(self, board: chess.Board, clock: ClockMs | None, *, first_moves_unclocked: bool = False) -> Decision:
        """A move for ``board``; ``clock`` None (no clock: correspondence, unlimited) thinks the config's
        ``correspondence.move_time`` seconds."""
        from lichessbot.search import Limits
        from lichessbot.timeman import Clock

        started = time.monotonic()
        pondered = self._take_ponder()
        book = self._engine.book
        if book is not None:
            move = book.choose(board, "chess960" if board.chess960 else "standard")
            if move is not None:
                self._drop(pondered)
                return Decision(move=move, source="book")
        tb = self._engine.tablebases
        found = tb.root_move(board) if tb is not None else None
        if found is not None:  # played at once, without searching
            self._drop(pondered)
            return Decision(move=found.move, source="tablebase", cp=found.cp, mate=found.mate,
                            wdl=found.wdl_triple, nodes=1, pv=(found.move,), stop_reason=found.describe())
        tm_clock = None if clock is None else Clock(time=max(0, clock.time), inc=max(0, clock.inc),
                                                    opp_time=clock.opp_time, opp_inc=clock.opp_inc)
        movetime = float(self._engine.config.correspondence.move_time) if clock is None else None
        stopper = self._timeman.stopper(tm_clock, board, movetime, first_moves_unclocked=first_moves_unclocked)
        with self._lock:
            if self._stopped:
                raise RuntimeError("thinker stopped")
            if pondered is not None and pondered[0] == board and pondered[0].move_stack == board.move_stack:
                self._engine.ponder_hits += 1
                self._handle = pondered[1]
                if self._sink is not None:
                    self._sink.pondering = False
                self._handle.ponderhit(stopper, self.strength.limits(Limits(nodes=self._engine.nodes)))
            else:
                self._drop(pondered)
                self._sink = self._live(board, False)
                self._handle = self._searcher.start(board, self.strength.limits(Limits(nodes=self._engine.nodes)),
                                                    stopper=stopper, on_info=self._sink)
        try:
            result = self._handle.wait()
        finally:
            with self._lock:
                self._handle = None
                sink, self._sink = self._sink, None
        if sink is not None:
            sink.finish()
        result = self.strength.choose(result, self._searcher)
        if clock is not None and self._timeman.budget is not None:  # a weakened bot still takes its time
            self.strength.wait(self.strength.min_think_s(self._timeman.budget.target) - (time.monotonic() - started))
        self._timeman.move_done(result)
        return Decision(move=result.best_move, source="search", ponder=result.ponder_move, cp=result.cp,
                        mate=result.mate, wdl=tuple(result.wdl), nodes=result.nodes, nps=result.nps,
                        depth=result.depth, seldepth=result.seldepth, pv=tuple(result.pv), time=result.time,
                        stop_reason=result.stop_reason)

    def ponder(self, board: chess.Board, reply: chess.Move | None) -> None:
        """Think on the opponent's time (``engine.ponder``): search ``board`` after the expected ``reply``.

        ``board`` is the position after our move. The next ``think`` continues that search if the
        opponent played ``reply`` (lc0's ponderhit), else stops it and searches afresh.
        """
        if not self._engine.config.engine.ponder or reply is None or reply not in board.legal_moves:
            return
        if self.strength.active:  # pondering would search past the level's node limit
            return
        from lichessbot.search import Limits

        target = board.copy()
        target.push(reply)
        tb = self._engine.tablebases
        if target.is_game_over() or (tb is not None and tb.root_probe and tb.covers(target)):
            return
        with self._lock:
            if self._stopped:
                return
            self._drop(self._ponder)
            self._sink = self._live(target, True)
            self._ponder = (target, self._searcher.start(target, Limits(infinite=True), ponder=True,
                                                         on_info=self._sink))
            self._engine.ponders += 1

    def _take_ponder(self) -> tuple[chess.Board, Any] | None:
        with self._lock:
            pondered, self._ponder = self._ponder, None
        return pondered

    @staticmethod
    def _drop(pondered: tuple[chess.Board, Any] | None) -> None:
        if pondered is not None:
            pondered[1].stop()
            pondered[1].wait()

    def stop(self) -> None:
        """Cut a running search (or ponder) short; a running ``think`` still returns its best move so far."""
        self.strength.interrupt()
        with self._lock:
            if self._handle is not None:
                self._handle.stop()
            if self._ponder is not None:
                self._ponder[1].stop()

    def close(self) -> None:
        self.strength.interrupt()
        with self._lock:
            self._stopped = True
            if self._handle is not None:
                self._handle.stop()
        self._drop(self._take_ponder())
