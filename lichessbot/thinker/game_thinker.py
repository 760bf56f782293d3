"""One game's thinker (one bot game, or ``lichessbot uci``'s session): its own searcher, time manager and move
pipeline over the process's engine (:class:`~lichessbot.thinker.engine.Engine`).

The bot asks it through the game's :class:`~lichessbot.thinker.protocol.Thinker` (:meth:`GameThinker.think`
from lichess's clock, :meth:`~GameThinker.ponder` by ``engine.ponder``, :meth:`~GameThinker.set_opponent` for
the level); UCI drives its :attr:`~GameThinker.pipeline` from ``go`` and follows ``setoption`` through
:meth:`~GameThinker.refresh`. Its searcher is built at the first search (``eager``: at once) and again when the
engine's settings changed what a searcher is made of; a searcher replaced while a search may still use it is
closed by :meth:`~GameThinker.settle` (or :meth:`~GameThinker.close`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

import chess
import structlog

from lichessbot.config import BookConfig, BotConfig, SearchParams, TimemanConfig
from lichessbot.online import OnlineGame, OnlineMoves
from lichessbot.search import Searcher
from lichessbot.status import LiveSearch
from lichessbot.strength import LevelPlayer, level_for_game, level_text, table_from_config
from lichessbot.strength.levels import StrengthTable
from lichessbot.tablebase import Tablebases
from lichessbot.thinker.live import LiveSink
from lichessbot.thinker.pipeline import MovePipeline
from lichessbot.thinker.settings import ThinkerSettings
from lichessbot.thinker.sources import MoveSource
from lichessbot.thinker.types import Decision, MoveRequest
from lichessbot.timeman import Clock, TimeManager

__all__ = ["CORRESPONDENCE_KEEP", "CORRESPONDENCE_KEEP_S", "EngineParts", "GameThinker", "correspondence_think_s"]

log = structlog.get_logger("lichessbot.neural")


class EngineParts(Protocol):
    """What a game thinker takes from the process's engine (:class:`~lichessbot.thinker.engine.Engine`)."""

    settings: ThinkerSettings
    generation: int
    tablebases: Tablebases | None
    strength_table: StrengthTable | None
    online: OnlineMoves | None

    def searcher(self, game_id: str | None = None, search: SearchParams | None = None) -> Searcher: ...

    def timeman(self, game_id: str | None = None, config: TimemanConfig | None = None) -> TimeManager: ...

    def move_sources(self, online: OnlineGame | None = None, book: BookConfig | None = None,
                     book_moves: int = 0) -> tuple[MoveSource, ...]: ...

    def count_ponder(self, hit: bool) -> None: ...

    def clear_cache(self) -> None: ...


#: Share of a correspondence clock a move never spends, and the seconds kept besides (ours: the post and
#: its retries, lichess's lag).
CORRESPONDENCE_KEEP = 0.1
CORRESPONDENCE_KEEP_S = 5.0


def correspondence_think_s(move_time: float, time_left_s: float | None) -> float:
    """Seconds to think in a correspondence game: ``move_time`` (``correspondence.move_time``), or what the
    clock allows when that is less: ``time_left_s`` (seconds lichess's correspondence clock leaves us;
    None: unlimited) less a tenth and 5 s, at least 0.05 s."""
    if time_left_s is None:
        return float(move_time)
    allowed = time_left_s * (1 - CORRESPONDENCE_KEEP) - CORRESPONDENCE_KEEP_S
    return max(0.05, min(float(move_time), allowed))


class GameThinker:
    """The thinker of game ``game_id`` (None: UCI's session; it names the searcher, the time manager's log lines
    and, with ``online_name``, this game's online sources).

    ``on_live``, when set (by the bot's game, for the status page), receives a
    :class:`~lichessbot.status.LiveSearch` from the search thread as the search goes on.
    """

    def __init__(self, engine: EngineParts, game_id: str | None = None, *, online_name: str | None = None,
                 eager: bool = True) -> None:
        self.engine, self.game_id = engine, game_id
        self._online_name = game_id or "" if online_name is None else online_name
        self._lock = threading.Lock()  # guards _searcher, _built and _retired
        self._searcher: Searcher | None = None
        self._built = -1  # the engine's generation the searcher was built in
        self._retired: list[Searcher] = []  # replaced, closed by settle()
        self._online_of: OnlineMoves | None = None
        self._online: OnlineGame | None = None  # this game's online sources (of the engine's, _online_of)
        self._own: BotConfig | None = None  # this game's own config (game_overrides), set with the opponent
        self.book_moves = 0  # moves of the local book in this game (book.max_moves, only_without_book)
        self.opponent_name = ""  # the opponent's name, once known (the online explorer's anti)
        if eager:
            self.searcher()
        self._timeman_config: TimemanConfig = engine.settings.timeman
        #: This game's move pipeline; its strength level is full strength until :meth:`set_opponent` says
        #: otherwise (or engine.strength.elo / preset sets a level for every game), docs/strength.md.
        self.pipeline = MovePipeline(self.searcher, engine.timeman(game_id), sources=self._sources(),
                                     strength=self.level_player(None, False))
        self.on_live: Callable[[LiveSearch], None] | None = None

    # the searcher ------------------------------------------------------------------------------
    def searcher(self) -> Searcher:
        """This game's searcher (its own tree, the process's network runner, the tables probed inside the
        search: lc0's rule, docs/tablebases.md), built when needed. Raises what
        :meth:`~lichessbot.thinker.engine.Engine.runner` raises when the network does not load."""
        with self._lock:
            if self._searcher is not None and self._built == self.engine.generation:
                return self._searcher
            built = self.engine.generation
        searcher = self.engine.searcher(self.game_id, None if self._own is None else self._own.engine.search)
        with self._lock:
            if self._searcher is not None:
                self._retired.append(self._searcher)
            self._searcher, self._built = searcher, built
            return searcher

    @property
    def current_searcher(self) -> Searcher | None:
        """The searcher of the latest search (None before one)."""
        return self._searcher

    def settle(self) -> None:
        """No search runs now: close the searchers replaced meanwhile, and one the settings made stale."""
        with self._lock:
            if self._searcher is not None and self._built != self.engine.generation:
                self._retired.append(self._searcher)
                self._searcher = None
            retired, self._retired = self._retired, []
        for searcher in retired:
            searcher.close()

    # what a move is chosen with ----------------------------------------------------------------
    def _sources(self) -> tuple[MoveSource, ...]:
        online = self.engine.online
        if online is not self._online_of:  # this game's own online sources (their count of positions out of book)
            self._online_of = online
            self._online = None if online is None else online.game(self._online_name)
            if self._online is not None:
                self._online.opponent = self.opponent_name
        return self.engine.move_sources(self._online, None if self._own is None else self._own.book,
                                        self.book_moves)

    def refresh(self) -> None:
        """Follow the engine's settings (UCI ``setoption``) before a move: the move sources, the time manager
        (a new one when its settings changed)."""
        self.pipeline.sources = self._sources()
        timeman = self.engine.settings.timeman if self._own is None else self._own.timeman
        if timeman != self._timeman_config:
            self._timeman_config = timeman
            self.pipeline.timeman = self.engine.timeman(self.game_id, timeman)

    def new_game(self) -> None:
        """A new game (UCI ``ucinewgame``): new online sources, a fresh tree, no cached evaluation, a new time
        manager."""
        self._online_of = None
        self.pipeline.sources = self._sources()
        if self._searcher is not None:
            self._searcher.new_game()
        self.engine.clear_cache()
        self._timeman_config = self.engine.settings.timeman
        self.pipeline.timeman = self.engine.timeman(self.game_id)

    # the strength level ------------------------------------------------------------------------
    @property
    def strength(self) -> LevelPlayer:
        """This game's strength level and its move choice."""
        return self.pipeline.strength

    def level_player(self, rating: int | None, rated: bool) -> LevelPlayer:
        """The strength level of ``engine.strength`` for an opponent of lichess ``rating`` (None: unknown) in a
        ``rated`` game or not (docs/strength.md), with its sampler seeded by the search's seed."""
        engine = self.engine.settings.engine if self._own is None else self._own.engine
        sc, table = engine.strength, self.engine.strength_table
        if table is None and (sc.elo is not None or sc.adaptive.enabled):  # a level for this game only
            table = table_from_config(sc.table, "game_overrides: engine.strength.table")
        level = level_for_game(sc, table, rating, rated)
        return LevelPlayer(level, seed=engine.search.seed, think_share=sc.think_share)

    def set_opponent(self, rating: int | None, rated: bool, config: BotConfig | None = None,
                     name: str = "") -> str:
        """Choose this game's strength level from the opponent's rating for the game's speed and whether the
        game is rated (engine.strength, docs/strength.md); returns the level's text for greetings. ``config``:
        the game's own config (``game_overrides`` applied): its engine.search, engine.strength, timeman and book
        are this game's from now on; ``name``: the opponent's (the online explorer's ``anti``)."""
        self.opponent_name = name
        if self._online is not None:
            self._online.opponent = name
        if config is not None:
            self._own = config
            with self._lock:
                self._built = -1  # the next search builds a searcher with the game's own parameters
            self.refresh()
        self.pipeline.strength = self.level_player(rating, rated)
        level = self.strength.level
        log.info("strength", game_id=self.game_id, strength=level_text(level), opponent_rating=rating,
                 rated=rated, nodes=None if level is None else level.nodes)
        return level_text(level)

    # the bot's moves ---------------------------------------------------------------------------
    def _live(self, board: chess.Board, pondering: bool) -> LiveSink | None:
        return None if self.on_live is None else LiveSink(self.on_live, len(board.move_stack), pondering)

    def think(self, board: chess.Board, clock: Clock | None, *, first_moves_unclocked: bool = False,
              time_left_s: float | None = None) -> Decision:
        """A move for ``board``; ``clock`` None (no clock: correspondence, unlimited) thinks the config's
        ``correspondence.move_time`` seconds, or less when the correspondence clock leaves less
        (``time_left_s``: :func:`correspondence_think_s`).

        Raises:
            RuntimeError: the thinker was closed.
            lichessbot.search.SearchError: the search failed (the game plays a fallback move).
        """
        started = time.monotonic()
        settings = self.engine.settings
        movetime = (correspondence_think_s(settings.correspondence_move_time, time_left_s)
                    if clock is None else None)
        request = MoveRequest(clock=clock, movetime=movetime, nodes=settings.nodes,
                              first_moves_unclocked=first_moves_unclocked)
        sink = self._live(board, False)
        thinking = self.pipeline.begin(board, request, on_info=sink)
        if thinking.ponderhit:
            self.engine.count_ponder(hit=True)
        decision = thinking.wait()
        if decision.source == "book":
            self.book_moves += 1
            self.pipeline.sources = self._sources()  # max_moves and only_without_book count this move
        if not thinking.searching:
            return decision
        if sink is not None:
            sink.finish()
        budget = self.pipeline.timeman.budget
        if clock is not None and budget is not None:  # a weakened bot still takes its time
            self.strength.wait(self.strength.min_think_s(budget.target) - (time.monotonic() - started))
        return decision

    def ponder(self, board: chess.Board, reply: chess.Move | None) -> None:
        """Think on the opponent's time: search ``board`` after the expected ``reply``. The caller decides
        whether the game ponders (the bot's game core: ``engine.ponder``, or ``correspondence.ponder`` in a
        correspondence game).

        ``board`` is the position after our move. The next ``think`` continues that search if the
        opponent played ``reply`` (lc0's ponderhit), else stops it and searches afresh.
        """
        if reply is None or reply not in board.legal_moves:
            return
        if self.strength.active:  # pondering would search past the level's node limit
            return
        target = board.copy()
        target.push(reply)
        tb = self.engine.tablebases
        if target.is_game_over() or (tb is not None and tb.root_probe and tb.covers(target)):
            return
        if self.pipeline.ponder(target, on_info=self._live(target, True)):
            self.engine.count_ponder(hit=False)

    def stop(self) -> None:
        """Cut a running search (or ponder) short; a running ``think`` still returns its best move so far."""
        self.strength.interrupt()
        self.pipeline.stop()

    def close(self) -> None:
        """Stop any search and ponder, then close the searchers (their network worker threads end here)."""
        self.strength.interrupt()
        self.pipeline.close()
        with self._lock:
            searchers = [*self._retired, *([self._searcher] if self._searcher is not None else [])]
            self._retired, self._searcher = [], None
        for searcher in searchers:
            searcher.close()
