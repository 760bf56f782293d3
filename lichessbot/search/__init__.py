"""The PUCT search (lc0's classic search in Python): tree, selection, backup, tree reuse, stats.

Public API (docs/interfaces.md): :class:`Searcher`, :class:`SearchHandle`, :class:`Limits`,
:class:`Stopper`, :class:`RootMove`, :class:`SearchStats`, :class:`SearchResult`, :class:`SearchError`.
"""

from lichessbot.search.searcher import Searcher, SearchHandle
from lichessbot.search.types import Limits, RootLine, RootMove, SearchError, SearchResult, SearchStats, Stopper

__all__ = ["Limits", "RootLine", "RootMove", "SearchError", "SearchHandle", "SearchResult", "SearchStats", "Searcher",
           "Stopper"]
