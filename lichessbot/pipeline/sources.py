"""Move sources: where a move can come from before a search, asked in order (docs/interfaces.md, "pipeline").

The order is the one of issue 29: the local book, the online book (opening explorer), the local tables, the
online tables; the first source with a move decides and nothing is searched. Today's sources are the local
ones (:class:`BookSource`, :class:`TablebaseSource`); an online source is one more :class:`MoveSource` put
in its place in the tuple :func:`move_sources` returns.
"""

from __future__ import annotations

from typing import Protocol

import chess

from lichessbot.book import Book
from lichessbot.pipeline.types import Decision, MoveRequest
from lichessbot.tablebase import Tablebases

__all__ = ["BookSource", "MoveSource", "TablebaseSource", "move_sources"]


class MoveSource(Protocol):
    """A place a move can come from without a search. ``move`` must be thread-safe (the bot's games share
    the sources) and must not raise: a source that cannot answer returns None and the next one is asked.
    ``request`` says what the move may spend (an online source budgets its calls from the clock)."""

    name: str

    def move(self, board: chess.Board, request: MoveRequest) -> Decision | None:
        """The source's move for ``board`` (legal there), or None."""
        ...


class BookSource:
    """The polyglot book (:class:`~lichessbot.book.Book`): its move by its selection rule, played at once."""

    name = "book"

    def __init__(self, book: Book) -> None:
        self.book = book

    def move(self, board: chess.Board, request: MoveRequest) -> Decision | None:
        found = self.book.find(board, "chess960" if board.chess960 else "standard")
        return None if found is None else Decision(move=found.move, source="book", book=found)


class TablebaseSource:
    """The Syzygy tables at the root (:meth:`~lichessbot.tablebase.Tablebases.root_move`): the move that
    keeps the best WDL, by DTZ, played at once (docs/tablebases.md)."""

    name = "tablebase"

    def __init__(self, tablebases: Tablebases) -> None:
        self.tablebases = tablebases

    def move(self, board: chess.Board, request: MoveRequest) -> Decision | None:
        found = self.tablebases.root_move(board)
        if found is None:
            return None
        return Decision(move=found.move, source="tablebase", tablebase_score=found.score, note=found.describe())


def move_sources(*, book: Book | None = None, tablebases: Tablebases | None = None) -> tuple[MoveSource, ...]:
    """The sources in the order they are asked: the local book, then the local tables (issue 29's online
    book goes after the local book, its online tables after the local tables)."""
    sources: list[MoveSource] = []
    if book is not None:
        sources.append(BookSource(book))
    if tablebases is not None:
        sources.append(TablebaseSource(tablebases))
    return tuple(sources)
