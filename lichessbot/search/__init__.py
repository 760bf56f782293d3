"""The Python face of the PUCT search (lc0's classic search): the tree, selection, expansion, backup and tree
reuse run in the Rust core (``lichessbot._core``); here are the searcher that drives it batch by batch, its
limits, results and statistics. May import config, engine, score and the core; never lichess or clocks.

Public API (docs/interfaces.md): :class:`Searcher`, :class:`SearchHandle`, :class:`Limits`,
:class:`Stopper`, :class:`RootMove`, :class:`SearchStats`, :class:`SearchResult`, :class:`SearchError`.
"""

from lichessbot.search.searcher import Searcher, SearchHandle
from lichessbot.search.types import Limits, RootLine, RootMove, SearchError, SearchResult, SearchStats, Stopper

__all__ = ["Limits", "RootLine", "RootMove", "SearchError", "SearchHandle", "SearchResult", "SearchStats", "Searcher",
           "Stopper"]
