"""One game's way from a position to a move, the same for the bot and ``lichessbot uci``.

:meth:`MovePipeline.begin` asks the move sources in order (book, tables: :mod:`lichessbot.thinker.sources`);
when none answers it takes the searcher, makes the time manager's stopper, caps the nodes at the strength
level's, and starts the search (or continues the ponder search on a ponderhit). :meth:`Thinking.wait` then
takes the search's result, lets the strength level choose the move from the result alone, and tells the time
manager the move is done (lc0's ``OnSearchDone``). Front ends differ only in how they say what a move may
spend (:class:`~lichessbot.thinker.types.MoveRequest`) and how they show the outcome.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import chess
import structlog

from lichessbot.search import Limits, Searcher, SearchHandle, SearchResult, SearchStats
from lichessbot.strength import LevelPlayer
from lichessbot.thinker.sources import MoveSource
from lichessbot.thinker.types import Decision, MoveRequest, SearchOnly
from lichessbot.timeman import Budget, TimeManager

__all__ = ["InfoCallback", "MovePipeline", "SearchCallback", "Thinking", "keep_to"]

_log = structlog.get_logger(__name__)

#: Receives the live statistics of the search (from the search thread).
InfoCallback = Callable[[SearchStats], None]
#: Called once before a search starts (or a ponder search goes on) with the time manager's budget, None when
#: the search has no stopper (``go infinite``, ``go nodes``).
SearchCallback = Callable[[Budget | None], None]


class _Relay:
    """The info callback of a ponder search: forwards to ``target``, which becomes the move's own callback
    at a ponderhit."""

    def __init__(self, target: InfoCallback) -> None:
        self.target = target

    def __call__(self, stats: SearchStats) -> None:
        self.target(stats)


@dataclass
class _Ponder:
    board: chess.Board
    handle: SearchHandle
    relay: _Relay | None


def _drop(pondered: _Ponder | None) -> None:
    """Stop a ponder search and wait for it (its result is not played)."""
    if pondered is not None:
        pondered.handle.stop()
        try:
            pondered.handle.wait()
        except Exception:  # noqa: BLE001 - a failed ponder search loses nothing: the move is searched afresh
            pass


def keep_to(result: SearchResult, only: SearchOnly) -> SearchResult:
    """``result`` with its move among ``only.moves``: unchanged when it already is, else the search's
    best-ranked root move of ``only.moves`` (lc0's ranking, ``result.root_moves`` best first) with its line,
    or ``only.moves[0]`` when the search did not reach any of them. The search itself visits only
    ``only.moves`` (lc0's ``searchmoves``); this keeps a ponder search that went on (a ponderhit searched
    every move) to them too."""
    allowed = set(only.moves)
    if result.best_move in allowed:
        return result
    complete = len(result.lines) == len(result.root_moves)
    for i, rm in enumerate(result.root_moves):
        if rm.move in allowed:
            line = result.lines[i] if complete else None
            pv = list(line.pv) if line is not None else [rm.move]
            return replace(result, best_move=rm.move, ponder_move=pv[1] if len(pv) > 1 else None, pv=pv, q=rm.q,
                           score=line.score if line is not None else result.score,
                           stop_reason=f"{result.stop_reason}; kept to the tables' moves")
    move = only.moves[0]
    return replace(result, best_move=move, ponder_move=None, pv=[move],
                   stop_reason=f"{result.stop_reason}; kept to the tables' moves")


class Thinking:
    """A move being decided (:meth:`MovePipeline.begin`): a move source's decision, ready at once, or a search
    under way. ``ponderhit`` is True when the search is the ponder search going on."""

    def __init__(self, pipeline: MovePipeline, *, decision: Decision | None = None,
                 handle: SearchHandle | None = None, timeman: TimeManager | None = None,
                 strength: LevelPlayer | None = None, ponderhit: bool = False,
                 only: SearchOnly | None = None) -> None:
        self._pipeline = pipeline
        self._only = only
        self._handle = handle
        self._timeman = timeman
        self._strength = strength
        #: The move source's decision, when no search was needed.
        self.decision = decision
        self.ponderhit = ponderhit

    @property
    def searching(self) -> bool:
        """True when the move comes from a search (:meth:`wait` waits for it)."""
        return self._handle is not None

    def stop(self) -> None:
        """Cut the search short; :meth:`wait` still returns its best move so far."""
        if self._handle is not None:
            self._handle.stop()

    def wait(self) -> Decision:
        """The decision (call once): the source's, or the search's once it stops, with the strength level's
        choice read from the result (:meth:`~lichessbot.strength.LevelPlayer.choose`), kept to the online
        tables' moves when a source said so (:func:`keep_to`), and the move recorded by the time manager
        (:meth:`~lichessbot.timeman.TimeManager.move_done`; should that fail, the error is logged and the move
        still stands).

        Raises:
            lichessbot.search.SearchError: the search failed.
        """
        if self._handle is None or self._timeman is None or self._strength is None:
            assert self.decision is not None, "a Thinking holds a decision or a search"
            return self.decision
        try:
            result = self._handle.wait()
        finally:
            self._pipeline._finished(self._handle)
        result = self._strength.choose(result)
        if self._only is not None:
            result = keep_to(result, self._only)
        try:
            self._timeman.move_done(result)
        except Exception as err:  # noqa: BLE001 - the bookkeeping of the next move must not cost this one
            _log.error("time manager failed; the move stands", move=result.best_move.uci(), error=repr(err))
        return Decision(move=result.best_move, source="search", result=result,
                        note=self._only.note if self._only is not None else "")


class MovePipeline:
    """The move pipeline of one game (one UCI session): move sources, then search under the time manager
    with the strength level, and the ponder search between moves.

    Args:
        searcher: gives this game's searcher when a search starts (the bot's returns the one it built; UCI's
            loads the network on first use and raises when it cannot, after saying why).
        timeman: this game's time manager (it keeps state between moves).
        sources: asked in this order before any search (:func:`~lichessbot.thinker.sources.move_sources`).
        strength: the strength level (default: full strength).

    ``timeman``, ``sources`` and ``strength`` are attributes a front end may replace between moves (the bot
    sets the level once it knows the opponent; UCI follows ``setoption`` and ``ucinewgame``); a search under
    way keeps the ones it started with. ``stop`` may be called from any thread.
    """

    def __init__(self, searcher: Callable[[], Searcher], timeman: TimeManager, *,
                 sources: Sequence[MoveSource] = (), strength: LevelPlayer | None = None) -> None:
        self.searcher = searcher
        self.timeman = timeman
        self.sources = tuple(sources)
        self.strength = strength if strength is not None else LevelPlayer(None)
        self._lock = threading.Lock()  # guards _current, _ponder, _closed
        self._current: SearchHandle | None = None
        self._ponder: _Ponder | None = None
        self._closed = False

    def begin(self, board: chess.Board, request: MoveRequest, *, on_info: InfoCallback | None = None,
              on_search: SearchCallback | None = None) -> Thinking:
        """Start deciding the move in ``board`` (a copy the pipeline may keep): the first source's move, else a
        search started here (or the ponder search, if it pondered ``board``, going on under ``request``). A
        source that answers :class:`~lichessbot.thinker.types.SearchOnly` ends the asking: the search visits
        only its moves at the root (``searchmoves``), and its move is one of them (:func:`keep_to`).

        Raises:
            RuntimeError: the pipeline was closed.
            lichessbot.search.SearchError: ``board`` cannot be searched (no legal moves).
            Whatever ``searcher`` raises when it cannot give a searcher.
        """
        pondered = self._take_ponder()
        only: SearchOnly | None = None
        if request.searchmoves:  # the user chose the moves to search (UCI go searchmoves): no source is asked
            only = SearchOnly(moves=request.searchmoves, note="", source="searchmoves")
        for source in self.sources if only is None else ():
            answer = source.move(board, request)
            if isinstance(answer, SearchOnly):
                only = answer
                break
            if answer is not None:
                _drop(pondered)
                return Thinking(self, decision=answer)
        try:
            searcher = self.searcher()
        except BaseException:
            _drop(pondered)
            raise
        timeman, strength = self.timeman, self.strength
        stopper = None
        if request.timed:
            stopper = timeman.stopper(request.clock, board, request.movetime,
                                      first_moves_unclocked=request.first_moves_unclocked,
                                      movetime_overhead_ms=request.movetime_overhead_ms)
        if on_search is not None:
            on_search(timeman.budget if stopper is not None else None)
        limits = strength.limits(Limits(nodes=request.nodes, infinite=request.infinite))
        with self._lock:
            if self._closed:
                _drop(pondered)
                raise RuntimeError("the move pipeline is closed")
            hit = pondered is not None and pondered.board == board and pondered.board.move_stack == board.move_stack
            if pondered is not None and hit:
                if pondered.relay is not None and on_info is not None:
                    pondered.relay.target = on_info
                handle = pondered.handle
                handle.ponderhit(stopper, limits)
            else:
                _drop(pondered)
                handle = searcher.start(board, limits, stopper=stopper, on_info=on_info,
                                        searchmoves=only.moves if only is not None else ())
            self._current = handle
        return Thinking(self, handle=handle, timeman=timeman, strength=strength, ponderhit=hit, only=only)

    def think(self, board: chess.Board, request: MoveRequest, *, on_info: InfoCallback | None = None,
              on_search: SearchCallback | None = None) -> Decision:
        """``begin(...).wait()``: the decision for ``board``, once made (see :meth:`begin`, :meth:`Thinking.wait`)."""
        return self.begin(board, request, on_info=on_info, on_search=on_search).wait()

    def ponder(self, board: chess.Board, *, nodes: int | None = None, on_info: InfoCallback | None = None) -> bool:
        """Search ``board`` (the position after the expected reply) until the next :meth:`begin` (a ponderhit
        when it asks for ``board``) or :meth:`stop_ponder`; no move source is asked. False when closed.

        Raises:
            lichessbot.search.SearchError: ``board`` cannot be searched.
            Whatever ``searcher`` raises when it cannot give a searcher.
        """
        searcher = self.searcher()
        relay = _Relay(on_info) if on_info is not None else None
        with self._lock:
            if self._closed:
                return False
            _drop(self._ponder)
            self._ponder = None
            handle = searcher.start(board, Limits(nodes=nodes, infinite=True), ponder=True, on_info=relay)
            self._ponder = _Ponder(board, handle, relay)
        return True

    def stop_ponder(self) -> Thinking | None:
        """Stop the ponder search (the reply was not the expected one, or UCI ``stop`` during ``go ponder``) and
        give it as a :class:`Thinking` whose :meth:`~Thinking.wait` returns its move; None when not pondering."""
        pondered = self._take_ponder()
        if pondered is None:
            return None
        pondered.handle.stop()
        return Thinking(self, handle=pondered.handle, timeman=self.timeman, strength=self.strength)

    @property
    def pondering(self) -> bool:
        """True while a ponder search waits for its ponderhit."""
        with self._lock:
            return self._ponder is not None

    def stop(self) -> None:
        """Cut the search under way and the ponder search short (a waiting :meth:`Thinking.wait` still returns
        its best move). Any thread."""
        with self._lock:
            if self._current is not None:
                self._current.stop()
            if self._ponder is not None:
                self._ponder.handle.stop()

    def close(self) -> None:
        """Stop every search and refuse new ones; the searcher itself belongs to the caller."""
        with self._lock:
            self._closed = True
            if self._current is not None:
                self._current.stop()
        _drop(self._take_ponder())

    def _take_ponder(self) -> _Ponder | None:
        with self._lock:
            pondered, self._ponder = self._ponder, None
        return pondered

    def _finished(self, handle: SearchHandle) -> None:
        with self._lock:
            if self._current is handle:
                self._current = None
