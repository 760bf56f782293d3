"""Polyglot book: the tests write small .bin files themselves (16-byte big-endian entries)."""

from __future__ import annotations

import random
import struct
from collections import Counter
from pathlib import Path

import chess
import chess.polyglot
import pytest

from lichessbot.book import Book, BookError, BookMove
from lichessbot.config import BookConfig
from lichessbot.errors import LichessbotError

PROMO = {None: 0, chess.KNIGHT: 1, chess.BISHOP: 2, chess.ROOK: 3, chess.QUEEN: 4}


def raw(uci: str) -> int:
    """Polyglot's 16-bit move: to 0-5, from 6-11, promotion 12-14 (castling written king-takes-rook)."""
    m = chess.Move.from_uci(uci)
    return m.to_square | (m.from_square << 6) | (PROMO[m.promotion] << 12)


def write_book(path: Path, entries: list[tuple[chess.Board | str, str, int]]) -> Path:
    """entries: (board or FEN, raw polyglot move in UCI letters, weight); written sorted by key."""
    rows = []
    for pos, uci, weight in entries:
        board = pos if isinstance(pos, chess.Board) else chess.Board(pos)
        rows.append((chess.polyglot.zobrist_hash(board), raw(uci), weight, 0))
    rows.sort(key=lambda r: r[0])  # stable: equal keys keep their order
    path.write_bytes(b"".join(struct.pack(">QHHI", *r) for r in rows))
    return path


START = chess.Board()
CASTLE_FEN = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 8"


def test_best_move_is_exact_and_first_on_ties(tmp_path):
    path = write_book(tmp_path / "b.bin", [(START, "d2d4", 5), (START, "e2e4", 9), (START, "c2c4", 9)])
    book = Book({"standard": [str(path)]}, selection="best_move")
    found = book.find(START)
    assert found == BookMove(chess.Move.from_uci("e2e4"), 9, 23, 0, str(path))
    assert "weight 9" in str(found)


def test_weighted_random_follows_the_weights_with_a_seed(tmp_path):
    path = write_book(tmp_path / "b.bin", [(START, "e2e4", 6), (START, "d2d4", 3), (START, "g1f3", 1)])
    book = Book({"standard": [str(path)]}, selection="weighted_random", rng=random.Random(7))
    counts = Counter(book.choose(START).uci() for _ in range(6000))
    assert set(counts) == {"e2e4", "d2d4", "g1f3"}
    assert counts["e2e4"] / 6000 == pytest.approx(0.6, abs=0.03)
    assert counts["d2d4"] / 6000 == pytest.approx(0.3, abs=0.03)
    assert counts["g1f3"] / 6000 == pytest.approx(0.1, abs=0.02)
    again = Book({"standard": [str(path)]}, rng=random.Random(7))
    first = Book({"standard": [str(path)]}, rng=random.Random(7))
    assert [again.choose(START) for _ in range(50)] == [first.choose(START) for _ in range(50)]


def test_uniform_random_ignores_the_weights(tmp_path):
    path = write_book(tmp_path / "b.bin", [(START, "e2e4", 100), (START, "d2d4", 1)])
    book = Book({"standard": [str(path)]}, selection="uniform_random", rng=random.Random(3))
    counts = Counter(book.choose(START).uci() for _ in range(4000))
    assert counts["d2d4"] / 4000 == pytest.approx(0.5, abs=0.04)


def test_castling_king_takes_rook_comes_back_in_python_chess_form(tmp_path):
    board = chess.Board(CASTLE_FEN)
    black = chess.Board(CASTLE_FEN.replace(" w ", " b "))
    path = write_book(tmp_path / "b.bin", [(board, "e1h1", 3), (board, "e1a1", 1), (black, "e8a8", 2)])
    book = Book({"standard": [str(path)]}, selection="best_move")
    assert book.choose(board) == chess.Move.from_uci("e1g1")
    assert book.choose(black) == chess.Move.from_uci("e8c8")
    path, entries = book.candidates(board)
    assert sorted(e.move.uci() for e in entries) == ["e1c1", "e1g1"]
    assert all(board.is_legal(e.move) for e in entries)


def test_chess960_uses_its_own_files_and_keeps_king_takes_rook(tmp_path):
    b960 = chess.Board(CASTLE_FEN, chess960=True)
    std = write_book(tmp_path / "std.bin", [(START, "e2e4", 1)])
    c960 = write_book(tmp_path / "960.bin", [(b960, "e1h1", 1)])
    book = Book({"standard": [str(std)], "chess960": [str(c960)]})
    assert book.choose(b960, "chess960") == chess.Move.from_uci("e1h1")
    assert book.choose(START, "chess960") is None
    assert book.choose(START, "fromPosition") == chess.Move.from_uci("e2e4")
    assert book.choose(START, "atomic") is None


def test_files_are_tried_in_order(tmp_path):
    after_e4 = chess.Board()
    after_e4.push_uci("e2e4")
    first = write_book(tmp_path / "a.bin", [(after_e4, "c7c5", 1)])
    second = write_book(tmp_path / "b.bin", [(START, "d2d4", 1), (after_e4, "e7e5", 1)])
    book = Book({"standard": [str(first), str(second)]})
    assert book.choose(after_e4) == chess.Move.from_uci("c7c5")  # first file wins
    found = book.find(START)  # only in the second file
    assert found is not None and found.move == chess.Move.from_uci("d2d4") and found.path == str(second)


def test_max_depth_in_full_moves(tmp_path):
    board = chess.Board()
    entries = []
    for uci in ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]:
        entries.append((board.copy(), uci, 1))
        board.push_uci(uci)
    path = write_book(tmp_path / "b.bin", entries)
    book = Book({"standard": [str(path)]}, max_depth=2)
    game = chess.Board()
    played = []
    while (move := book.choose(game)) is not None:
        played.append(move.uci())
        game.push(move)
    assert played == ["e2e4", "e7e5", "g1f3", "b8c6"]  # move 3 (f1b5) is past max_depth 2


def test_min_weight_drops_light_entries_and_zero_weights(tmp_path):
    path = write_book(tmp_path / "b.bin", [(START, "e2e4", 4), (START, "d2d4", 10), (START, "a2a3", 0)])
    heavy = Book({"standard": [str(path)]}, selection="uniform_random", min_weight=5, rng=random.Random(1))
    assert {heavy.choose(START).uci() for _ in range(200)} == {"d2d4"}
    default = Book({"standard": [str(path)]}, selection="uniform_random", rng=random.Random(1))
    assert {default.choose(START).uci() for _ in range(200)} == {"d2d4", "e2e4"}
    none_left = Book({"standard": [str(path)]}, min_weight=11)
    assert none_left.find(START) is None


def test_illegal_and_unknown_positions_give_none(tmp_path):
    path = write_book(tmp_path / "b.bin", [(START, "e2e5", 5)])  # not a legal move
    book = Book({"standard": [str(path)]})
    assert book.choose(START) is None
    assert book.choose(chess.Board("8/8/8/8/8/8/k7/K7 w - - 0 1")) is None


def test_from_config_disabled_and_enabled(tmp_path):
    path = write_book(tmp_path / "b.bin", [(START, "e2e4", 1)])
    assert Book.from_config(BookConfig()) is None
    assert Book.from_config(BookConfig(enabled=False, paths={"standard": [str(path)]})) is None
    book = Book.from_config(
        BookConfig(enabled=True, paths={"standard": [str(path)]}, selection="best_move"), rng=random.Random(0)
    )
    assert book is not None and book.choose(START) == chess.Move.from_uci("e2e4")
    book.close()


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "not found"), (b"", "empty"), (b"\0" * 20, "not a multiple of 16"), ("unsorted", "not sorted")],
)
def test_bad_files_are_refused_at_startup_by_name(tmp_path, content, reason):
    good = write_book(tmp_path / "good.bin", [(START, "e2e4", 1)])
    bad = tmp_path / "bad.bin"
    if content == "unsorted":
        rows = [struct.pack(">QHHI", key, raw("e2e4"), 1, 0) for key in (9, 3)]
        bad.write_bytes(b"".join(rows))
    elif content is not None:
        bad.write_bytes(content)
    cfg = BookConfig(enabled=True, paths={"standard": [str(good)], "chess960": [str(bad)]})
    with pytest.raises(BookError, match=reason) as info:
        Book.from_config(cfg)
    assert str(bad) in str(info.value)
    assert isinstance(info.value, LichessbotError) and isinstance(info.value, ValueError)


def _uci(engine, *lines: str) -> list[str]:
    out = engine._out
    start = len(out.getvalue().splitlines())
    for line in lines:
        engine.handle(line)
    return out.getvalue().splitlines()[start:]


def test_uci_ownbook_answers_from_the_book_without_searching(tmp_path, tiny_net):
    import io

    from lichessbot.uci import UciEngine

    after_e4 = chess.Board()
    after_e4.push_uci("e2e4")
    path = write_book(tmp_path / "b.bin", [(START, "e2e4", 1), (after_e4, "c7c5", 1)])
    engine = UciEngine(out=io.StringIO())
    assert any("option name OwnBook type check default false" in x for x in _uci(engine, "uci"))
    lines = _uci(engine, f"setoption name BookFile value {tmp_path / 'missing.bin'}")
    assert any("error" in x and "missing.bin" in x and "not found" in x for x in lines)
    _uci(engine, f"setoption name BookFile value {path}", "setoption name OwnBook value true",
         "position startpos moves e2e4")
    lines = _uci(engine, "go wtime 1000 btime 1000")  # answered at once: no network is loaded
    assert lines[-1] == "bestmove c7c5" and any(x.startswith("info string book c7c5") for x in lines)
    assert engine.engine.evaluator is None
    _uci(engine, f"setoption name WeightsFile value {tiny_net}", "setoption name OwnBook value false",
         "position startpos")
    lines = _uci(engine, "go nodes 2", "quit")  # book off: a search answers
    assert not any("book" in x for x in lines) and lines[-1].startswith("bestmove")
