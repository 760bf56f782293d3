"""The book's weight normalization (lichess-bot ``polyglot.normalization``) and repetitions (BotLi
``allow_repetitions``)."""

from __future__ import annotations

import random

import chess
import pytest

from lichessbot.book import Book
from lichessbot.config import BookConfig, ConfigError, parse_config
from tests.book.test_book import START, write_book


def moves(book: Book, board: chess.Board) -> set[str]:
    return {e.move.uci() for e in book.candidates(board)[1]}


@pytest.mark.parametrize(("normalization", "min_weight", "expected"), [
    ("none", 20, {"e2e4", "d2d4", "a2a3"}),  # raw weights 120, 60, 20
    ("none", 21, {"e2e4", "d2d4"}),
    ("sum", 30, {"e2e4", "d2d4"}),        # 30 % of 200 = 60
    ("sum", 31, {"e2e4"}),
    ("max", 50, {"e2e4", "d2d4"}),        # 50 % of 120 = 60
    ("max", 51, {"e2e4"}),
    ("max", 16, {"e2e4", "d2d4", "a2a3"}),  # 16 % of 120 = 19.2
])
def test_min_weight_reads_as_a_percentage_with_normalization(tmp_path, normalization, min_weight, expected):
    path = write_book(tmp_path / "b.bin", [(START, "e2e4", 120), (START, "d2d4", 60), (START, "a2a3", 20)])
    book = Book.from_config(BookConfig(enabled=True, paths={"standard": [str(path)]}, min_weight=min_weight,
                                       normalization=normalization))
    assert book is not None and moves(book, START) == expected


def test_a_percentage_above_100_is_refused_at_load():
    with pytest.raises(ConfigError, match="book: min_weight 200: with normalization sum it is a percentage"):
        parse_config({"book": {"normalization": "sum", "min_weight": 200}})
    parse_config({"book": {"normalization": "none", "min_weight": 200}})


def test_without_repetitions_a_move_back_to_a_seen_position_is_left_out(tmp_path):
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1"):
        board.push_uci(uci)  # black to move: f6g8 repeats the start position
    path = write_book(tmp_path / "b.bin", [(board, "f6g8", 100), (board, "e7e5", 1)])
    allowed = Book({"standard": [str(path)]}, selection="best_move", rng=random.Random(0))
    assert allowed.choose(board) == chess.Move.from_uci("f6g8")
    cfg = BookConfig(enabled=True, paths={"standard": [str(path)]}, selection="best_move", allow_repetitions=False)
    strict = Book.from_config(cfg)
    assert strict is not None and strict.choose(board) == chess.Move.from_uci("e7e5")
    assert len(board.move_stack) == 3  # the board is left as it was
