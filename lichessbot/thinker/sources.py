"""Move sources: where a move can come from before a search, asked in order (docs/interfaces.md, "pipeline";
docs/online.md, "Order of the sources").

The order: the local book (:class:`BookSource`), the online books (:class:`OnlineBookSource`: chessdb, cloud
eval, opening explorer), the local tables (:class:`TablebaseSource`, then :class:`GaviotaSource`), the online
tables (:class:`OnlineTableSource`); the first source with a move decides and nothing is searched. The online
tables' ``suggest`` answers a :class:`~lichessbot.thinker.types.SearchOnly`: the search then keeps to
their moves.
"""

from __future__ import annotations

from typing import Literal, Protocol

import chess

from lichessbot.book import Book
from lichessbot.config import BookConfig
from lichessbot.gaviota import GaviotaTables
from lichessbot.online import OnlineGame, OnlineMove
from lichessbot.tablebase import Tablebases
from lichessbot.thinker.types import Decision, MoveRequest, SearchOnly
from lichessbot.timeman import Clock

__all__ = ["BookSource", "GaviotaSource", "MoveSource", "OnlineBookSource", "OnlineTableSource", "TablebaseSource",
           "move_sources", "online_budget"]

#: The share of a UCI ``go movetime`` that the online lookups of one move may take (seconds x this).
MOVETIME_SHARE = 0.25


class MoveSource(Protocol):
    """A place a move can come from without a search. ``move`` must be thread-safe (the bot's games share
    the sources) and must not raise: a source that cannot answer returns None and the next one is asked.
    ``request`` says what the move may spend (an online source budgets its calls from the clock)."""

    name: str

    def move(self, board: chess.Board, request: MoveRequest) -> Decision | SearchOnly | None:
        """The source's move for ``board`` (legal there), the moves the search must keep to, or None."""
        ...


class BookSource:
    """The polyglot book (:class:`~lichessbot.book.Book`): its move by its selection rule, played at once."""

    name = "book"

    def __init__(self, book: Book, *, max_moves: int | None = None, played: int = 0) -> None:
        self.book, self.max_moves, self.played = book, max_moves, played

    def move(self, board: chess.Board, request: MoveRequest) -> Decision | None:
        if self.max_moves is not None and self.played >= self.max_moves:  # BotLi's max_moves
            return None
        found = self.book.find(board, "chess960" if board.chess960 else "standard")
        return None if found is None else Decision(move=found.move, source="book", book=found)


class TablebaseSource:
    """The Syzygy tables at the root (:meth:`~lichessbot.tablebase.Tablebases.root_move`): the move that
    keeps the best WDL, by DTZ, played at once, or (``move_quality: suggest``) the moves that keep it, for the
    search (docs/tablebases.md)."""

    name = "tablebase"

    def __init__(self, tablebases: Tablebases) -> None:
        self.tablebases = tablebases

    def move(self, board: chess.Board, request: MoveRequest) -> Decision | SearchOnly | None:
        found = self.tablebases.root_move(board)
        if found is None:
            return None
        if self.tablebases.move_quality == "suggest" and len(found.keep) > 1:
            return SearchOnly(moves=found.keep, note=found.describe(), source=self.name)
        return Decision(move=found.move, source="tablebase", tablebase_score=found.score, note=found.describe(),
                        tablebase_wdl=found.wdl)


class GaviotaSource:
    """The Gaviota tables at the root (:meth:`~lichessbot.gaviota.GaviotaTables.root_move`), after the Syzygy
    tables (lichess-bot's order): their move, played at once, or (``suggest``) the moves that keep their
    result, for the search."""

    name = "gaviota"

    def __init__(self, tables: GaviotaTables) -> None:
        self.tables = tables

    def move(self, board: chess.Board, request: MoveRequest) -> Decision | SearchOnly | None:
        found = self.tables.root_move(board)
        if found is None:
            return None
        if len(found.moves) > 1:
            return SearchOnly(moves=found.moves, note=found.describe(), source=self.name)
        return Decision(move=found.moves[0], source="tablebase", tablebase_score=found.score, note=found.describe(),
                        tablebase_wdl=found.wdl)


def online_budget(request: MoveRequest) -> float | None:
    """The caller's budget for the online lookup of ``request``, seconds: None, or :data:`MOVETIME_SHARE` of a
    ``movetime`` without a clock (UCI ``go movetime``, the bot's correspondence ``move_time``)."""
    if request.clock is None and request.movetime is not None:
        return MOVETIME_SHARE * request.movetime
    return None


OnlineName = Literal["online_book", "online_tablebase"]


def _decision(found: OnlineMove, source: OnlineName) -> Decision | SearchOnly:
    if found.move is None:
        return SearchOnly(moves=found.search_moves, note=found.note, source=found.source)
    return Decision(move=found.move, source=source, note=found.note, tablebase_score=found.score,
                    tablebase_wdl=found.wdl, trusted_cp=found.cp if found.trusted else None)


class _OnlineSource:
    """One online lookup of one game, within the budget docs/online.md gives (:func:`online_budget`); never
    raises (the online room counts failures and switches sources off). Subclasses name the lookup."""

    name: str
    _source: OnlineName  # the same as ``name``, typed for Decision.source

    def __init__(self, game: OnlineGame) -> None:
        self.game = game

    def _lookup(self, board: chess.Board, clock: Clock | None, budget: float | None) -> OnlineMove | None:
        raise NotImplementedError

    def move(self, board: chess.Board, request: MoveRequest) -> Decision | SearchOnly | None:
        if request.infinite:
            return None
        found = self._lookup(board, request.clock, online_budget(request))
        return None if found is None else _decision(found, self._source)


class OnlineBookSource(_OnlineSource):
    """The online books of one game (:meth:`lichessbot.online.OnlineGame.book_move`: chessdb, cloud eval,
    opening explorer, by priority); their move is played at once. ``before_book``: those asked before the local
    book (priority above ``book_priority``), or after it (False), or all (None); ``book_moves``: the local
    book's moves in the game so far (``only_without_book``)."""

    name = "online_book"
    _source: OnlineName = "online_book"

    def __init__(self, game: OnlineGame, *, before_book: bool | None = None, book_priority: int = 0,
                 book_moves: int = 0) -> None:
        super().__init__(game)
        self.before_book, self.book_priority, self.book_moves = before_book, book_priority, book_moves

    def _lookup(self, board: chess.Board, clock: Clock | None, budget: float | None) -> OnlineMove | None:
        return self.game.book_move(board, clock, budget, before_book=self.before_book,
                                   book_priority=self.book_priority, book_moves=self.book_moves)


class OnlineTableSource(_OnlineSource):
    """The online tables of one game (:meth:`lichessbot.online.OnlineGame.table_move`): their move, played
    at once, or (``suggest``) the moves that keep their result, for the search."""

    name = "online_tablebase"
    _source: OnlineName = "online_tablebase"

    def _lookup(self, board: chess.Board, clock: Clock | None, budget: float | None) -> OnlineMove | None:
        return self.game.table_move(board, clock, budget)


def move_sources(*, book: Book | None = None, tablebases: Tablebases | None = None,
                 online: OnlineGame | None = None, gaviota: GaviotaTables | None = None,
                 book_config: BookConfig | None = None, book_moves: int = 0) -> tuple[MoveSource, ...]:
    """The sources in the order they are asked: the online books of a priority above the local book's
    (``book.priority``, BotLi), the local book, the other online books, the local tables, the online tables
    (docs/online.md). ``online``: this game's online sources (one :class:`OnlineGame` per game: it counts the
    positions out of book), or None; ``book_config``: the book's max_moves and priority; ``book_moves``: the
    local book's moves in this game so far."""
    sources: list[MoveSource] = []
    priority = book_config.priority if book_config is not None else 0
    books_online = online is not None and bool(online.online.books)
    if online is not None and any(online.online.book_config[b[0].name].priority > priority
                                  for b in online.online.books):
        sources.append(OnlineBookSource(online, before_book=True, book_priority=priority, book_moves=book_moves))
    if book is not None:
        sources.append(BookSource(book, max_moves=book_config.max_moves if book_config is not None else None,
                                  played=book_moves))
    if online is not None and books_online:
        sources.append(OnlineBookSource(online, before_book=False, book_priority=priority, book_moves=book_moves))
    if tablebases is not None:
        sources.append(TablebaseSource(tablebases))
    if gaviota is not None:
        sources.append(GaviotaSource(gaviota))
    if online is not None and online.online.tables:
        sources.append(OnlineTableSource(online))
    return tuple(sources)
