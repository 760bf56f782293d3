"""The bot's engine: the move pipeline (book -> online books -> tablebase root probe -> online tables ->
search under the time manager -> strength level, :mod:`lichessbot.pipeline`) behind the game's
:class:`~lichessbot.bot.games.thinker.Thinker`.

:class:`Engine` is built once per process from the config (through :mod:`lichessbot.wiring`): one network
evaluator and one :class:`~lichessbot.engine.service.EvalService` shared by every game (thread-safe), the
book and the tablebases (the move sources), and the online sources once the service knows the account
(:meth:`Engine.use_online`). Per game, :class:`EngineThinker` has its own
:class:`~lichessbot.search.Searcher` (its own tree), :class:`~lichessbot.timeman.TimeManager`,
:class:`~lichessbot.online.OnlineGame` and :class:`~lichessbot.pipeline.MovePipeline`.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import chess
import structlog

from lichessbot import wiring
from lichessbot.book import Book
from lichessbot.bot.games.rules import correspondence_think_s
from lichessbot.bot.games.thinker import ClockMs
from lichessbot.config import BotConfig
from lichessbot.engine.service import EvalService
from lichessbot.gaviota import gaviota_tables
from lichessbot.online import OnlineMoves
from lichessbot.pipeline import Decision, MovePipeline, MoveRequest, MoveSource, move_sources
from lichessbot.search import SearchStats
from lichessbot.status import LiveSearch, SearchLine
from lichessbot.strength import LevelPlayer, level_for_game, level_text, table_from_config, table_mismatch
from lichessbot.strength.levels import Level, StrengthTable
from lichessbot.tablebase import Tablebases
from lichessbot.timeman import Clock

__all__ = ["Engine", "EngineThinker"]

log = structlog.get_logger("lichessbot.engine")


class Engine:
    """The shared engine of the bot: network evaluator, evaluation service, book and tablebases.

    Args:
        config: the bot config (sections engine, timeman, book, tablebases, correspondence).
        nodes: optional cap on nodes per move (tests, weaker play); None: the time manager alone decides.

    Raises:
        lichessbot.engine.network.NetworkError: the network cannot be loaded.
        lichessbot.book.BookError: a book file is missing or corrupt.
        lichessbot.tablebase.TablebaseError: a tablebase directory is missing or holds no tables.
    """

    def __init__(self, config: BotConfig, *, nodes: int | None = None):
        ec = config.engine
        self.config = config
        self.nodes = nodes
        self.network = wiring.network_of(ec)
        self.evaluator = wiring.evaluator_of(ec, self.network)
        self.book = Book.from_config(config.book, random.Random())
        #: The Syzygy tables (root probe here, search probes in the core), or None.
        self.tablebases = Tablebases.from_config(config.tablebases)
        #: The Gaviota tables at the root (tablebases.gaviota), or None.
        self.gaviota = gaviota_tables(config.tablebases.gaviota)
        #: Book, then tables: the move sources every game asks before searching (thread-safe); a game with
        #: online sources asks its own tuple (:meth:`sources_for`).
        self.sources = move_sources(book=self.book, tablebases=self.tablebases, gaviota=self.gaviota)
        #: The online sources (docs/online.md), set by :meth:`use_online`; None: none.
        self.online: OnlineMoves | None = None
        sc = ec.strength
        #: The strength table of engine.strength (docs/strength.md), read when a level may be played.
        self.strength_table: StrengthTable | None = None
        if sc.elo is not None or sc.adaptive.enabled:
            self.strength_table = table_from_config(sc.table)
            mismatch = table_mismatch(self.strength_table, ec.network)
            if mismatch:
                log.warning("strength table", problem=mismatch)
        #: One evaluation service for every game of the process: their batches merge into one call. Made
        #: last, so that a bad book, table or tablebase path leaves no worker thread behind.
        self.service = EvalService(self.evaluator)
        self.name = self.network.name
        self._counts_lock = threading.Lock()
        self.ponders = 0      # ponder searches started (all games); guarded by _counts_lock
        self.ponder_hits = 0  # of which the opponent played the expected move; guarded by _counts_lock

    def new_game(self, game_id: str | None = None) -> EngineThinker:
        """A thinker with its own search tree and time manager; ``game_id`` goes on its log lines."""
        return EngineThinker(self, game_id)

    def use_online(self, online: OnlineMoves | None) -> None:
        """Ask ``online`` (built by the service with the bot's token, pacer and account; closed by it) in the
        games started from now on; None or one with no source on: none."""
        self.online = online if online is not None and online.enabled else None

    def sources_for(self, game_id: str | None) -> tuple[MoveSource, ...]:
        """The move sources of a new game: the shared ones, with this game's online sources in their places
        (local book, online books, local tables, online tables)."""
        if self.online is None:
            return self.sources
        return move_sources(book=self.book, tablebases=self.tablebases, online=self.online.game(game_id or ""),
                            gaviota=self.gaviota)

    def count_ponder(self, hit: bool) -> None:
        """Count a ponder search started (``hit`` False) or one the opponent's move confirmed (True)."""
        with self._counts_lock:
            if hit:
                self.ponder_hits += 1
            else:
                self.ponders += 1

    def close(self) -> None:
        """Stop the evaluation service's worker threads (every game's thinker must be closed first)."""
        self.service.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _LiveSink:
    """Turns one search's info callbacks (search thread) into :class:`~lichessbot.status.LiveSearch`
    snapshots for ``publish``. ``ply``: plies of the game before the searched position."""

    def __init__(self, publish: Callable[[Any], None], ply: int, pondering: bool) -> None:
        self.publish, self.ply, self.pondering = publish, ply, pondering
        self.last: LiveSearch | None = None

    def __call__(self, stats: SearchStats) -> None:
        lines = tuple(SearchLine(move=rm.move.uci(), visits=int(rm.n), policy=float(rm.p), q=float(rm.q),
                                 draw=float(rm.d),
                                 pv=tuple(m.uci() for m in stats.pv[:10]) if i == 0 else (rm.move.uci(),))
                      for i, rm in enumerate(stats.root_moves[:LiveSearch.LINES]))
        score = stats.score
        self.last = LiveSearch(ply=self.ply, pondering=self.pondering, done=False, elapsed=float(stats.elapsed),
                               nodes=int(stats.nodes), nps=float(stats.nps), depth=float(stats.depth),
                               seldepth=int(stats.seldepth), cp=score.cp, mate=score.mate,
                               wdl=score.wdl, lines=lines)
        self.publish(self.last)

    def finish(self) -> None:
        if self.last is not None:
            self.publish(replace(self.last, done=True, pondering=False))


class EngineThinker:
    """The bot's thinker: this game's :class:`~lichessbot.pipeline.MovePipeline` (book, tables, search under
    the time manager, strength level) over its own searcher, plus what only the bot does: the clock from
    lichess, pondering by the config, the level from the opponent, the weakened bot's pace, the status page.

    ``on_live``, when set (by the game, for the status page), receives a
    :class:`~lichessbot.status.LiveSearch` from the search thread as the search goes on.
    """

    def __init__(self, engine: Engine, game_id: str | None = None):
        self._engine = engine
        self._game_id = game_id
        #: This game's searcher: its own tree, the process's evaluation service, and the tables probed inside
        #: the search (lc0's rule, docs/tablebases.md).
        self._searcher = searcher = wiring.searcher_of(engine.service, engine.config.engine.search,
                                                       game=game_id or "", tablebases=engine.tablebases)
        #: This game's move pipeline; its strength level is full strength until :meth:`set_opponent` says
        #: otherwise (or engine.strength.elo / preset sets a level for every game), docs/strength.md.
        self.pipeline = MovePipeline(lambda: searcher, wiring.timeman_of(engine.config.timeman, game_id),
                                     sources=engine.sources_for(game_id), strength=self._level_player(None, False))
        self.on_live: Callable[[Any], None] | None = None

    @property
    def strength(self) -> LevelPlayer:
        """This game's strength level and its move choice."""
        return self.pipeline.strength

    def _level_player(self, rating: int | None, rated: bool) -> LevelPlayer:
        sc = self._engine.config.engine.strength
        level = level_for_game(sc, self._engine.strength_table, rating, rated)
        return LevelPlayer(level, seed=self._engine.config.engine.search.seed, think_share=sc.think_share)

    def set_opponent(self, rating: int | None, rated: bool) -> str:
        """Choose this game's strength level from the opponent's rating for the game's speed and whether the
        game is rated (engine.strength, docs/strength.md); returns the level's text for greetings."""
        self.pipeline.strength = self._level_player(rating, rated)
        level: Level | None = self.strength.level
        log.info("strength", game_id=self._game_id, strength=level_text(level), opponent_rating=rating,
                 rated=rated, nodes=None if level is None else level.nodes)
        return level_text(level)

    def _live(self, board: chess.Board, pondering: bool) -> _LiveSink | None:
        return None if self.on_live is None else _LiveSink(self.on_live, len(board.move_stack), pondering)

    def think(self, board: chess.Board, clock: ClockMs | None, *, first_moves_unclocked: bool = False,
              time_left_s: float | None = None) -> Decision:
        """A move for ``board``; ``clock`` None (no clock: correspondence, unlimited) thinks the config's
        ``correspondence.move_time`` seconds, or less when the correspondence clock leaves less
        (``time_left_s``: :func:`lichessbot.bot.games.rules.correspondence_think_s`).

        Raises:
            RuntimeError: the thinker was closed.
            lichessbot.search.SearchError: the search failed (the game plays a fallback move).
        """
        started = time.monotonic()
        tm_clock = None if clock is None else Clock(time=max(0, clock.time), inc=max(0, clock.inc),
                                                    opp_time=clock.opp_time, opp_inc=clock.opp_inc)
        movetime = (correspondence_think_s(self._engine.config.correspondence.move_time, time_left_s)
                    if clock is None else None)
        request = MoveRequest(clock=tm_clock, movetime=movetime, nodes=self._engine.nodes,
                              first_moves_unclocked=first_moves_unclocked,
                              clock_initial=None if clock is None or clock.initial is None else clock.initial / 1000)
        sink = self._live(board, False)
        thinking = self.pipeline.begin(board, request, on_info=sink)
        if thinking.ponderhit:
            self._engine.count_ponder(hit=True)
        decision = thinking.wait()
        if not thinking.searching:
            return decision
        if sink is not None:
            sink.finish()
        budget = self.pipeline.timeman.budget
        if clock is not None and budget is not None:  # a weakened bot still takes its time
            self.strength.wait(self.strength.min_think_s(budget.target) - (time.monotonic() - started))
        return decision

    def ponder(self, board: chess.Board, reply: chess.Move | None) -> None:
        """Think on the opponent's time (``engine.ponder``): search ``board`` after the expected ``reply``.

        ``board`` is the position after our move. The next ``think`` continues that search if the
        opponent played ``reply`` (lc0's ponderhit), else stops it and searches afresh.
        """
        if not self._engine.config.engine.ponder or reply is None or reply not in board.legal_moves:
            return
        if self.strength.active:  # pondering would search past the level's node limit
            return
        target = board.copy()
        target.push(reply)
        tb = self._engine.tablebases
        if target.is_game_over() or (tb is not None and tb.root_probe and tb.covers(target)):
            return
        if self.pipeline.ponder(target, on_info=self._live(target, True)):
            self._engine.count_ponder(hit=False)

    def stop(self) -> None:
        """Cut a running search (or ponder) short; a running ``think`` still returns its best move so far."""
        self.strength.interrupt()
        self.pipeline.stop()

    def close(self) -> None:
        """Stop any search and ponder, then close the searcher (its network worker thread ends here)."""
        self.strength.interrupt()
        self.pipeline.close()
        self._searcher.close()
