"""python -m devtools.lc0cmp: TV distance, the VerboseMoveStats parser, the positions (no lc0 needed)."""

from __future__ import annotations

import chess
import pytest

from devtools.lc0cmp import (
    DEFAULT_POSITIONS,
    normalize_move,
    parse_positions,
    parse_verbose_block,
    parse_verbose_line,
    tv_distance,
)

# Captured from lc0 v0.33.0-dev (onnx-cpu, maia-1100, go nodes 1600), as python-chess hands them over
# (without "info string"), and one raw line with it.
LC0_LINES = [
    "e1f1  (101 ) N:       0 (+ 0) (P:  0.07%) (WL:  0.00000) (D: 0.000) (M:  0.0) (Q:  0.00000) "
    "(U: 0.05534) (S:  0.59482) (V:  -.----) ",
    "e1f2  (107 ) N:       1 (+ 2) (P:  0.71%) (WL:  0.72700) (D: 0.247) (M:  0.0) (Q:  0.72700) "
    "(U: 0.14976) (S:  0.87669) (V:  0.7269) ",
    "info string b1a3  (34  ) N:       0 (+ 0) (P:  0.15%) (WL:  0.00000) (D: 0.000) (M:  0.0) (Q:  0.00000) "
    "(U: 0.11628) (S: -0.16440) (V:  -.----) ",
    "e1h1  (103 ) N:     214 (+ 0) (P: 16.77%) (WL:  0.02848) (D: 0.032) (M:  3.9) (Q:  0.02848) "
    "(U: 0.05945) (S:  0.08965) (V:  0.0774) ",
    "a7a8q (1792) N:    1828 (+402) (P: 73.54%) (WL:  0.87545) (D: 0.121) (M: 10.2) (Q:  0.87545) "
    "(U: 0.02780) (S:  0.90243) (V:  0.7888) ",
    "node  (  11) N:    1924 (+430) (P: 98.88%) (WL:  0.86853) (D: 0.127) (M: 10.8) (Q:  0.86853) (V:  0.8359) ",
]


def test_tv_distance():
    assert tv_distance({"a": 10, "b": 30}, {"a": 1, "b": 3}) == pytest.approx(0.0)
    assert tv_distance({"a": 5}, {"b": 7}) == pytest.approx(1.0)
    # (0.5, 0.5, 0) vs (0.25, 0.25, 0.5): 0.5 * (0.25 + 0.25 + 0.5)
    assert tv_distance({"a": 2, "b": 2}, {"a": 1, "b": 1, "c": 2}) == pytest.approx(0.5)
    assert tv_distance({"a": 3, "b": 1, "z": 0}, {"a": 1, "b": 3}) == pytest.approx(0.5)
    assert tv_distance({}, {}) == 0.0
    assert tv_distance({"a": 1}, {}) == 1.0
    a, b = {"x": 7, "y": 2, "w": 1}, {"x": 3, "y": 5, "v": 2}
    assert tv_distance(a, b) == pytest.approx(tv_distance(b, a))


def test_parse_verbose_line():
    s = parse_verbose_line(LC0_LINES[0])
    assert (s.move, s.index, s.n, s.in_flight) == ("e1f1", 101, 0, 0)
    assert s.p == pytest.approx(0.0007) and s.v is None and s.u == pytest.approx(0.05534)
    s = parse_verbose_line(LC0_LINES[1])
    assert (s.move, s.n, s.in_flight) == ("e1f2", 1, 2)
    assert s.wl == pytest.approx(0.727) and s.d == pytest.approx(0.247) and s.v == pytest.approx(0.7269)
    s = parse_verbose_line(LC0_LINES[2])
    assert (s.move, s.index, s.p) == ("b1a3", 34, pytest.approx(0.0015))
    s = parse_verbose_line(LC0_LINES[4])
    assert (s.move, s.n, s.in_flight, s.p, s.q) == ("a7a8q", 1828, 402, pytest.approx(0.7354), pytest.approx(0.87545))
    s = parse_verbose_line(LC0_LINES[5])
    assert (s.move, s.index, s.n, s.in_flight) == ("node", 11, 1924, 430)
    assert parse_verbose_line("info depth 1 seldepth 2 time 9 nodes 2 score cp 184") is None
    assert parse_verbose_line("bestmove a7a8q ponder e8d7") is None


def test_parse_verbose_block_keeps_the_last_block():
    first = ["e2e4  (322 ) N:       3 (+ 0) (P: 50.00%) (Q:  0.10000)", "node  (  20) N:       4 (+ 0) (P: 99.00%)"]
    moves, node = parse_verbose_block(first + ["some other string"] + LC0_LINES)
    assert [m.move for m in moves] == ["e1f1", "e1f2", "b1a3", "e1h1", "a7a8q"]
    assert node.n == 1924
    moves, node = parse_verbose_block(first + LC0_LINES[:2])  # an unfinished block after a complete one
    assert [m.move for m in moves] == ["e2e4"] and node.n == 4


def test_lc0_castling_is_normalized():
    board = chess.Board("r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    assert normalize_move(board, "e1h1") == "e1g1"
    assert normalize_move(board, "e1g1") == "e1g1"
    assert normalize_move(board, "c4f7") == "c4f7"


def test_default_positions_parse():
    positions = parse_positions(DEFAULT_POSITIONS)
    assert len(positions) == 24
    labels = [label for label, _ in positions]
    assert len(set(labels)) == len(labels)
    for _, board in positions:
        assert board.is_valid() and any(board.legal_moves)
    boards = dict(positions)
    assert boards["startpos"] == chess.Board()
    assert len(boards["najdorf"].move_stack) == 10  # move sequences keep their history
    assert boards["ep-alekhine"].has_legal_en_passant() and boards["promotion-ep"].has_legal_en_passant()
    assert any(m.promotion for m in boards["promotion-race"].legal_moves)
    assert any(boards[k].castling_rights for k in boards)


def test_parse_positions_formats():
    text = """
    # a comment
    startpos moves e2e4 e7e5
    mine | fen 8/8/8/4k3/8/8/4P3/4K3 w - - 0 1 moves e1d1
    8/8/8/4k3/8/8/4P3/4K3 w - - 0 1
    4k3/8/8/8/8/8/4P3/4K3 w - - id "epd-one";
    """
    ps = parse_positions(text)
    assert [label for label, _ in ps] == ["pos1", "mine", "pos3", "epd-one"]
    assert ps[0][1].fen() == chess.Board("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2").fen()
    assert ps[1][1].turn == chess.BLACK
    with pytest.raises(ValueError):
        parse_positions("8/8/8/8/8/8/8/8 w - - 0 1")


def test_corner_positions_are_what_their_classes_say():
    """tests/data/lc0_corners.txt (issue 31): 40+ positions; lost ones have 3+ replies that allow a mate in
    one; the rook ones are reached through a repetition with the rule-50 counter above 0, the rook's side
    to move."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "data" / "lc0_corners.txt").read_text(encoding="utf-8")
    positions = parse_positions(text)
    assert len(positions) >= 40
    classes = {label.split("-")[0] for label, _ in positions}
    assert classes == {"lost", "rookrep", "rookmate", "middle"}
    for label, board in positions:
        kind = label.split("-")[0]
        if kind == "lost":
            mated = 0
            for m in board.legal_moves:
                board.push(m)
                mated += _allows_mate(board)
                board.pop()
            assert mated >= 3, label
        elif kind.startswith("rook"):
            assert board.turn == chess.WHITE and board.halfmove_clock > 0, label
            assert any(board.root().piece_type_at(sq) == chess.ROOK for sq in chess.SQUARES), label
            replay = board.root()
            seen = {replay._transposition_key()}
            repeated = False
            for m in board.move_stack:
                replay.push(m)
                key = replay._transposition_key()
                repeated |= key in seen
                seen.add(key)
            assert repeated, label


def _allows_mate(board: chess.Board) -> bool:
    for m in board.legal_moves:
        board.push(m)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return True
    return False
