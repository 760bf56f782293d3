"""Value objects of the search API (docs/interfaces.md, "search")."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import chess

from lichessbot.errors import LichessbotError
from lichessbot.score import Score

__all__ = ["RootLine", "RootMove", "SearchError", "SearchResult", "SearchStats", "Stopper", "StopperHints"]


class SearchError(LichessbotError, ValueError):
    """A search that cannot run, e.g. a position without legal moves."""


@dataclass
class StopperHints:
    """What the stoppers tell the search after each check (lc0 src/search/classic/stoppers/timemgr.h
    ``StoppersHints``), reset before every check: each stopper may lower them, and the smallest wins.

    Attributes:
        remaining_time_s: seconds to the nearest deadline (inf: no deadline); smart pruning reads it.
        remaining_playouts: playouts left to a node limit (inf: none); the search gathers no batch past it
            (lc0 search.cc ``GatherMinibatch``) and smart pruning reads it.
    """

    remaining_time_s: float = math.inf
    remaining_playouts: float = math.inf

    def reset(self) -> None:
        self.remaining_time_s = math.inf
        self.remaining_playouts = math.inf

    def update_remaining_time(self, seconds: float) -> None:
        self.remaining_time_s = min(self.remaining_time_s, seconds)

    def update_remaining_playouts(self, playouts: float) -> None:
        self.remaining_playouts = min(self.remaining_playouts, playouts)


class Stopper(Protocol):
    """Decides when a search stops (lc0 src/search/classic/stoppers/timemgr.h ``SearchStopper``); the time
    manager builds one chain of them per search (:class:`lichessbot.timeman.stoppers.ChainedStopper`). The
    search asks it after every batch and tells it once when the search is over. Without a stopper a search
    runs until ``stop()`` (``go infinite``, pondering)."""

    def should_stop(self, stats: SearchStats, hints: StopperHints) -> str | None:
        """A reason to stop now, or None to go on; may lower ``hints``."""
        ...

    def on_search_done(self, stats: SearchStats) -> None:
        """The search is over (lc0 ``OnSearchDone``): ``stats`` are its final statistics."""
        ...


@dataclass
class RootMove:
    """One root edge: visits ``n``, prior ``p``, ``q`` (root side to move's view, with draw score),
    exploration term ``u``, draw probability ``d`` and moves left ``m`` (plies)."""

    move: chess.Move
    n: int
    p: float
    q: float
    u: float
    d: float
    m: float
    wl: float = 0.0
    in_flight: int = 0
    proven: int | None = None  # +1 proven win, 0 proven draw, -1 proven loss (root side's view)


@dataclass(frozen=True)
class RootLine:
    """A root move's line at the end of a search: its score from the root side to move's view and its
    principal variation, that move first (lc0 src/search/classic/search.cc ``GetBestChildrenNoTemperature``
    ranks them; the same values as :meth:`lichessbot.search.Searcher.root_pvs`, taken when the search ended)."""

    move: chess.Move
    score: Score
    pv: tuple[chess.Move, ...]


@dataclass
class SearchStats:
    """Live view of a running search, handed to stoppers and info callbacks (the search thread builds one
    after every batch).

    ``nodes``, ``nps``, ``depth`` and ``seldepth`` are lc0's (src/search/classic/search.cc ``SendUciInfo``),
    the same on every surface (UCI info, the bot's log, chat and PGN, the status page, every bench):
    ``nodes = playouts + reused_nodes``; ``nps = playouts / seconds`` since the first check that saw a
    playout of this search, as an integer (lc0 divides by whole milliseconds); ``depth = sum of the playouts'
    depths // playouts`` and ``seldepth`` the deepest, where a playout's depth counts the nodes of its path,
    the root being 1. Tree reuse is ``reused_nodes``.
    """

    elapsed: float  # seconds since the search started
    playouts: int  # playouts of this search (reused nodes not counted)
    nodes: int  # visits of the root, reused ones included (lc0 ``nodes``)
    reused_nodes: int  # visits the root had from the previous search (tree reuse)
    nps: int  # playouts per second since the first playout (lc0's integer)
    depth: int  # mean depth of this search's playouts, floored (lc0's integer; the root is depth 1)
    seldepth: int  # deepest playout (the root is depth 1)
    root_moves: list[RootMove]  # best first (lc0 ranking)
    legal_moves: int
    pv: list[chess.Move] = field(default_factory=list)  # principal variation, root move first
    score: Score = Score(cp=0, wdl=(0.0, 1.0, 0.0))  # of the best move, root side to move's view
    tbhits: int = 0  # Syzygy probes that made a node terminal in this search (UCI tbhits)


@dataclass
class SearchResult:
    """The outcome of one search; values from the root side to move's view."""

    best_move: chess.Move
    ponder_move: chess.Move | None
    pv: list[chess.Move]
    q: float  # Q of the move played: W - L + DrawScore * D
    score: Score  # of the move played
    nodes: int  # lc0's, as in SearchStats: playouts + reused_nodes
    playouts: int
    reused_nodes: int  # tree reuse: visits the root had when the search started
    nps: int  # lc0's (SearchStats)
    depth: int  # lc0's (SearchStats)
    seldepth: int
    time: float  # seconds
    stop_reason: str
    root_moves: list[RootMove] = field(default_factory=list)  # best first (lc0 ranking)
    tbhits: int = 0  # Syzygy hits: probes in the search, or 1 for a root probe (UCI tbhits)
    #: Score and PV of each root move, ``lines[i]`` of ``root_moves[i]``: what a choice other than the best
    #: move (strength levels) needs, as values, so nothing reads the tree after the search returned.
    lines: tuple[RootLine, ...] = ()
