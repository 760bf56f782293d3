"""The Python face of the PUCT search (lc0's classic search): the tree, selection, expansion, backup and tree
reuse run in the Rust core (``lichessbot._core``); here are the searcher that drives it batch by batch, the
stopper it asks (the time manager builds it), its results and statistics. May import config, engine, score and
the core; never lichess or clocks.

Public API (docs/interfaces.md): :class:`Searcher`, :class:`SearchHandle`, :class:`Stopper`,
:class:`StopperHints`, :class:`RootMove`, :class:`SearchStats`, :class:`SearchResult`, :class:`SearchError`.
"""

from lichessbot.search.searcher import Searcher, SearchHandle
from lichessbot.search.types import RootLine, RootMove, SearchError, SearchResult, SearchStats, Stopper, StopperHints

__all__ = ["RootLine", "RootMove", "SearchError", "SearchHandle", "SearchResult", "SearchStats", "Searcher", "Stopper",
           "StopperHints"]
