"""A search seen live: one search's statistics (from its info callbacks, on the search thread) as the status
page's :class:`~lichessbot.status.LiveSearch` snapshots. Imports point down: the search's values, the status
page's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from lichessbot.search import SearchStats
from lichessbot.status import LiveSearch, SearchLine

__all__ = ["LiveSink"]


class LiveSink:
    """Turns one search's info callbacks into :class:`~lichessbot.status.LiveSearch` snapshots for ``publish``.
    ``ply``: plies of the game before the searched position; ``pondering``: a search on the opponent's time."""

    def __init__(self, publish: Callable[[LiveSearch], None], ply: int, pondering: bool) -> None:
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
        """The search is over: its last snapshot, marked done."""
        if self.last is not None:
            self.publish(replace(self.last, done=True, pondering=False))
