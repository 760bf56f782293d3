"""The values of the move pipeline: what a move may spend (:class:`MoveRequest`) and what to play and why
(:class:`Decision`). Imports point down: search results, the time manager's clock, the book's move."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import chess

from lichessbot.book import BookMove
from lichessbot.score import Score
from lichessbot.search import SearchResult
from lichessbot.timeman import Clock

__all__ = ["Decision", "MoveRequest", "SearchOnly", "Source"]

#: Where a decision came from: the local book, the online books (explorer, cloud eval, chessdb), the local
#: Syzygy tables, the online tables, or the search.
Source = Literal["book", "online_book", "tablebase", "online_tablebase", "search"]
#: The sources whose move is played without a search and with the tables' verdict.
_TABLES = ("tablebase", "online_tablebase")


@dataclass(frozen=True)
class MoveRequest:
    """What one move may spend, as the front end says it (the bot from lichess's clock, UCI from ``go``).

    Attributes:
        clock: our clock (milliseconds; its ``initial`` the game's starting clock, which the online sources'
            ``max_time`` compares), or None without one (UCI ``go movetime``/``nodes``/``infinite``, the bot's
            correspondence games).
        movetime: seconds for this move (UCI ``go movetime``, the bot's ``correspondence.move_time``), or None.
        nodes: a cap on nodes (reused ones included, lc0 VisitsStopper), or None.
        infinite: search until stopped (UCI ``go infinite``): no stopper, no time.
        first_moves_unclocked: lichess's clock does not run yet (each side's first move).
        movetime_overhead_ms: milliseconds kept back from ``movetime`` (UCI MovetimeOverhead); None: the time
            manager's ``move_overhead``.
        searchmoves: the root moves the search may choose from (UCI ``go searchmoves``, legal ones); empty:
            all. With some, no move source is asked.

    Without a clock and a movetime, or with ``infinite``, the time manager sets no time: only ``nodes`` or
    ``stop`` end the search (lc0's ``go infinite`` and ``go nodes``).
    """

    clock: Clock | None = None
    movetime: float | None = None
    nodes: int | None = None
    infinite: bool = False
    first_moves_unclocked: bool = False
    movetime_overhead_ms: int | None = None
    searchmoves: tuple[chess.Move, ...] = ()


@dataclass(frozen=True)
class Decision:
    """What to play and why. Scores are from the mover's (our) point of view.

    Attributes:
        move: the move to play (legal in the board given to the pipeline).
        source: "book", "online_book" (explorer, cloud eval, chessdb: docs/online.md), "tablebase" (the
            Syzygy root probe, no search), "online_tablebase" or "search".
        result: the search behind a "search" decision (None for the others).
        note: where the move came from, for the PGN comment, chat, the eval line and the status page: the
            tables' verdict for tablebase moves ("tablebase win, DTZ 13"), the online source's words
            ("explorer: masters, 1,234 games"; a search kept to the online tables' moves: "tablebase win:
            2 moves keep it"), "fallback" when the engine failed; "" otherwise.
        tablebase_score: the tables' score of a (local or online) tablebase move (a search's score is its
            result's).
        tablebase_wdl: the tables' verdict of that move, our view: 2 win, 1 cursed win, 0 draw, -1 blessed
            loss, -2 loss (lichess-bot's egtb WDL: ``resign_for_egtb_minus_two``, ``offer_draw_for_egtb_zero``);
            None for every other move.
        book: the book entry of a book move (file, weight), None otherwise.
    """

    move: chess.Move
    source: Source
    result: SearchResult | None = None
    note: str = ""
    tablebase_score: Score | None = None
    book: BookMove | None = None
    tablebase_wdl: int | None = None
    #: an online book's centipawns its source's ``trust_eval`` lets count for draws and resignation (BotLi)
    trusted_cp: int | None = None

    @property
    def score(self) -> Score | None:
        """The evaluation of ``move``: the search's or the tables'; None for book moves and fallbacks."""
        return self.result.score if self.result is not None else self.tablebase_score

    @property
    def ponder(self) -> chess.Move | None:
        """The expected reply (second PV move), if any."""
        return self.result.ponder_move if self.result is not None else None

    @property
    def pv(self) -> tuple[chess.Move, ...]:
        """The principal variation, starting with ``move`` (only ``move`` for a tablebase move)."""
        if self.result is not None:
            return tuple(self.result.pv)
        return (self.move,) if self.source in _TABLES else ()

    @property
    def nodes(self) -> int:
        """Nodes of the search (1 for a tablebase probe, local or online; 0 for a book move)."""
        if self.result is not None:
            return self.result.nodes
        return 1 if self.source in _TABLES else 0

    @property
    def reused_nodes(self) -> int:
        """Nodes the search kept from the previous move's tree (tree reuse; 0 without a search)."""
        return self.result.reused_nodes if self.result is not None else 0

    @property
    def nps(self) -> int:
        """lc0's nps of the search (:class:`~lichessbot.search.SearchStats`; 0 without one)."""
        return self.result.nps if self.result is not None else 0

    @property
    def depth(self) -> int:
        """lc0's depth of the search (:class:`~lichessbot.search.SearchStats`; 0 without one)."""
        return self.result.depth if self.result is not None else 0

    @property
    def seldepth(self) -> int:
        """lc0's seldepth of the search (0 without one)."""
        return self.result.seldepth if self.result is not None else 0

    @property
    def time(self) -> float:
        """Seconds spent searching (0 without a search)."""
        return self.result.time if self.result is not None else 0.0

    @property
    def stop_reason(self) -> str:
        """Why the search stopped (from the stopper), or the ``note`` of an unsearched move."""
        return self.result.stop_reason if self.result is not None else self.note

    @property
    def score_cp(self) -> int | None:
        """Centipawns with a mate as +-(100000 - moves) so thresholds compare (None without a score; an online
        book's trusted centipawns, ``trust_eval``)."""
        return self.score.value_cp() if self.score is not None else self.trusted_cp


@dataclass(frozen=True)
class SearchOnly:
    """A move source's answer that is not a move: the search must choose among ``moves`` (the online
    tables' ``suggest``: the moves that keep the tables' result, two or more).

    Attributes:
        moves: the legal moves the search keeps to.
        note: the source's words ("tablebase win: 2 moves keep it"), the decision's ``note``.
        source: the source's name (for logs).
    """

    moves: tuple[chess.Move, ...]
    note: str
    source: str = ""
