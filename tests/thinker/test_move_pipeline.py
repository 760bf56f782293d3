"""The move pipeline the bot and UCI share (lichessbot/thinker/pipeline.py): move sources asked in order before any
search, the search under the time manager, and the ponder search going on at a ponderhit."""

from __future__ import annotations

import chess
import pytest

from lichessbot.book import Book
from lichessbot.config import EngineConfig, SearchParams, TimemanConfig
from lichessbot.search import Searcher, SearchResult
from lichessbot.tablebase import Tablebases
from lichessbot.thinker import Decision, MovePipeline, MoveRequest, move_sources, wiring
from lichessbot.timeman import TimeManager
from tests.book.test_book import write_book
from tests.conftest import SYZYGY

KQK = "4k3/8/8/8/8/8/8/3QK3 w - - 0 1"


class _Source:
    def __init__(self, name: str, move: str | None) -> None:
        self.name, self._move, self.asked = name, move, 0

    def move(self, board: chess.Board, request: MoveRequest) -> Decision | None:
        self.asked += 1
        return None if self._move is None else Decision(move=chess.Move.from_uci(self._move), source="book")


def _no_searcher() -> Searcher:
    raise AssertionError("a move source answered: no searcher may be asked for")


def test_the_first_source_with_a_move_decides_and_nothing_is_searched():
    sources = [_Source("out of book", None), _Source("book", "e2e4"), _Source("later", "d2d4")]
    pipeline = MovePipeline(_no_searcher, wiring.timeman_of(TimemanConfig()), sources=sources)
    thinking = pipeline.begin(chess.Board(), MoveRequest(nodes=10))
    assert not thinking.searching and thinking.wait().move == chess.Move.from_uci("e2e4")
    assert [s.asked for s in sources] == [1, 1, 0]


def test_the_local_book_is_asked_before_the_local_tables(tmp_path):
    tables = Tablebases([str(SYZYGY)])
    board = chess.Board(KQK)
    with Book({"standard": [str(write_book(tmp_path / "b.bin", [(board, "d1d7", 1)]))]}) as book:
        sources = move_sources(book=book, tablebases=tables)
        assert [s.name for s in sources] == ["book", "tablebase"]
        pipeline = MovePipeline(_no_searcher, wiring.timeman_of(TimemanConfig()), sources=sources)
        first = pipeline.think(board, MoveRequest())
        after = pipeline.think(chess.Board("4k3/3Q4/8/8/8/8/8/4K3 b - - 1 1"), MoveRequest())
    assert (first.source, first.move.uci(), first.book is not None) == ("book", "d1d7", True)
    assert after.source == "tablebase" and after.note.startswith("tablebase ") and after.score is not None


@pytest.fixture
def searcher(tiny_net):
    ec = EngineConfig.model_validate({"network": str(tiny_net), "backend": "cpu", "threads": 1})
    evaluator = wiring.evaluator_of(ec, wiring.network_of(ec))
    with wiring.searcher_of(evaluator, SearchParams(minibatch_size=8)) as s:
        yield s


def test_a_ponderhit_goes_on_with_the_ponder_search_and_a_miss_searches_afresh(searcher):
    pipeline = MovePipeline(lambda: searcher, wiring.timeman_of(TimemanConfig()))
    expected = chess.Board()
    expected.push_uci("e2e4")
    assert pipeline.ponder(expected.copy()) and pipeline.pondering
    hit = pipeline.begin(expected, MoveRequest(nodes=60))
    assert hit.ponderhit and not pipeline.pondering
    decision = hit.wait()
    assert decision.source == "search" and decision.nodes >= 60 and decision.move in expected.legal_moves
    after = expected.copy()
    after.push(decision.move)
    pipeline.ponder(after)
    other = chess.Board()
    other.push_uci("d2d4")
    miss = pipeline.begin(other, MoveRequest(nodes=30))
    assert not miss.ponderhit and miss.wait().move in other.legal_moves


def test_a_stopped_ponder_search_still_gives_its_move(searcher):
    pipeline = MovePipeline(lambda: searcher, wiring.timeman_of(TimemanConfig()))
    assert pipeline.stop_ponder() is None
    pipeline.ponder(chess.Board(), nodes=40)
    thinking = pipeline.stop_ponder()
    assert thinking is not None and thinking.wait().move in chess.Board().legal_moves
    pipeline.close()
    assert not pipeline.ponder(chess.Board())
    with pytest.raises(RuntimeError, match="closed"):
        pipeline.begin(chess.Board(), MoveRequest(nodes=10))


class _BrokenTimeman(TimeManager):
    def move_done(self, result: SearchResult) -> None:
        raise ZeroDivisionError("bookkeeping")


def test_a_failing_time_manager_does_not_cost_the_searched_move(searcher, capsys):
    pipeline = MovePipeline(lambda: searcher, _BrokenTimeman(TimemanConfig()))
    decision = pipeline.think(chess.Board(), MoveRequest(nodes=20))
    assert decision.source == "search" and decision.nodes >= 20 and decision.move in chess.Board().legal_moves
    captured = capsys.readouterr()
    assert "time manager failed; the move stands" in captured.out + captured.err
