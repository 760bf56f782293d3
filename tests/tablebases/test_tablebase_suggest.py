"""lichess-bot's Syzygy ``move_quality: suggest``: the search keeps to the moves that keep the best WDL."""

from __future__ import annotations

import chess

from lichessbot.config import parse_config
from lichessbot.tablebase import Tablebases
from lichessbot.thinker.sources import TablebaseSource
from lichessbot.thinker.types import Decision, MoveRequest, SearchOnly
from tests.conftest import SYZYGY
from tests.tablebases.test_tablebase import KQK


def test_suggest_hands_the_search_every_move_that_keeps_the_win():
    board = chess.Board(KQK)
    tables = Tablebases.from_config(parse_config({"tablebases": {"syzygy": [str(SYZYGY)],
                                                                 "move_quality": "suggest"}}).tablebases)
    assert tables is not None
    found = tables.root_move(board)
    assert found is not None and found.wdl == 2 and found.move in found.keep
    answer = TablebaseSource(tables).move(board, MoveRequest())
    assert isinstance(answer, SearchOnly) and set(answer.moves) == set(found.keep) and len(answer.moves) > 1
    losing = [m for m in board.legal_moves if m not in found.keep]
    assert losing  # some queen moves give the queen away or stalemate: they are left out


def test_best_plays_the_tables_move():
    tables = Tablebases([str(SYZYGY)])
    answer = TablebaseSource(tables).move(chess.Board(KQK), MoveRequest())
    assert isinstance(answer, Decision) and answer.source == "tablebase"
