"""Value objects of the search API (docs/interfaces.md, "search")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import chess

from lichessbot.errors import LichessbotError
from lichessbot.score import Score

__all__ = ["Limits", "RootLine", "RootMove", "SearchError", "SearchResult", "SearchStats", "Stopper"]


class SearchError(LichessbotError, ValueError):
    """A search that cannot run, e.g. a position without legal moves."""


@dataclass(frozen=True)
class Limits:
    """Hard limits of one search. ``nodes`` counts all nodes, reused ones included (lc0 VisitsStopper);
    ``movetime`` is in seconds; ``infinite`` runs until ``stop()``."""

    nodes: int | None = None
    movetime: float | None = None
    infinite: bool = False


class Stopper(Protocol):
    """Filled by the time manager; consulted after every batch. Returns a reason to stop, or None."""

    def should_stop(self, stats: SearchStats) -> str | None: ...


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
    after every batch)."""

    elapsed: float  # seconds since the search started
    playouts: int  # playouts of this search (reused nodes not counted)
    nodes: int  # visits of the root, reused ones included (lc0 ``nodes``)
    reused_nodes: int  # visits the root had from the previous search (tree reuse)
    nps: float  # playouts per second since the first batch
    depth: float  # mean depth of this search's playouts (plies)
    seldepth: int  # deepest playout (plies)
    root_moves: list[RootMove]  # best first (lc0 ranking)
    legal_moves: int
    remaining_playouts_hint: float | None = None  # playouts left to a node limit (lc0 smart pruning)
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
    nodes: int
    playouts: int
    reused_nodes: int
    nps: float
    depth: float
    seldepth: int
    time: float  # seconds
    stop_reason: str
    root_moves: list[RootMove] = field(default_factory=list)  # best first (lc0 ranking)
    tbhits: int = 0  # Syzygy hits: probes in the search, or 1 for a root probe (UCI tbhits)
    #: Score and PV of each root move, ``lines[i]`` of ``root_moves[i]``: what a choice other than the best
    #: move (strength levels) needs, as values, so nothing reads the tree after the search returned.
    lines: tuple[RootLine, ...] = ()
