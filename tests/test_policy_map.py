"""The 1858-entry policy map: lc0's order and check values, a bijection over legal moves, lc0's indices."""

from __future__ import annotations

import hashlib
import json
import random

import chess
import pytest

from lichessbot.engine.encoding import choose_transform, game_history, snapshot
from lichessbot.engine.policy_map import MOVES, MOVES_SHA256, move_from_index, move_index, move_indices
from tests.conftest import shared_file
from tests.test_encoding import board_from_uci_position


def test_table_has_lc0_order_and_hash():
    assert len(MOVES) == 1858 and len(set(MOVES)) == 1858
    assert hashlib.sha256("\n".join(MOVES).encode()).hexdigest() == MOVES_SHA256
    assert MOVES[:3] == ("a1b1", "a1c1", "a1d1") and MOVES[-1] == "h7h8b"


@pytest.mark.parametrize(
    ("uci", "index"),
    [("a1b1", 0), ("b1c3", 36), ("e1c1", 99), ("g1f3", 159), ("a2a4", 207), ("c2c4", 264), ("d2d4", 293),
     ("e2e3", 317), ("e2e4", 322), ("e7e8", 1515), ("h8g8", 1791), ("a7a8q", 1792), ("e7e8q", 1828),
     ("e7e8r", 1829), ("e7e8b", 1830), ("h7h8b", 1857)],
)
def test_check_indices_from_the_spec(uci, index):
    assert MOVES.index(uci) == index


def test_castling_is_king_takes_rook_for_both_colours_and_both_notations():
    b = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    s = snapshot(b)
    assert move_index(chess.Move.from_uci("e1g1"), s) == 103 and move_index(chess.Move.from_uci("e1h1"), s) == 103
    assert move_index(chess.Move.from_uci("e1c1"), s) == 97 and move_index(chess.Move.from_uci("e1a1"), s) == 97
    b.turn = chess.BLACK
    s = snapshot(b)
    assert move_index(chess.Move.from_uci("e8g8"), s) == 103 and move_index(chess.Move.from_uci("e8c8"), s) == 97


def test_black_moves_are_mirrored_and_knight_promotion_is_plain():
    s = snapshot(chess.Board("4k3/8/8/8/8/8/p3p3/4K3 b - - 0 1"))
    assert move_index(chess.Move.from_uci("e2e1q"), s) == 1828
    assert move_index(chess.Move.from_uci("e2e1n"), s) == 1515
    assert move_index(chess.Move.from_uci("a2b1r"), s) == 1796
    s = snapshot(chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"))
    assert move_index(chess.Move.from_uci("e7e5"), s) == 322 and move_index(chess.Move.from_uci("g8f6"), s) == 159


def test_every_legal_move_of_random_games_maps_to_a_distinct_index_and_back():
    rng = random.Random(7)
    positions = 0
    for _ in range(40):
        b = chess.Board()
        while not b.is_game_over() and b.ply() < 160:
            s = snapshot(b)
            legal = list(b.legal_moves)
            idx = move_indices(legal, s)
            assert len(set(idx.tolist())) == len(legal)
            for mv, i in zip(legal, idx.tolist()):
                back = move_from_index(i, s)
                if b.is_castling(mv):
                    assert back.from_square == mv.from_square
                    assert b.piece_at(back.to_square) == chess.Piece(chess.ROOK, b.turn)
                else:
                    assert back.from_square == mv.from_square and back.to_square == mv.to_square
                    assert back.promotion == (None if mv.promotion == chess.KNIGHT else mv.promotion)
            positions += 1
            # prefer promotions and captures now and then to reach those cases
            promos = [m for m in legal if m.promotion]
            b.push(rng.choice(promos) if promos and rng.random() < 0.7 else rng.choice(legal))
    assert positions > 3000


def test_canonical_transform_keeps_indices_distinct():
    b = chess.Board("8/8/8/8/8/2k5/8/K1Q5 w - - 0 1")
    s = snapshot(b)
    t = choose_transform(s, 3)
    assert t != 0
    idx = move_indices(list(b.legal_moves), s, t)
    assert len(set(idx.tolist())) == b.legal_moves.count()


def test_every_reference_position_has_lc0_indices():
    for name in ("ref/lc0ref_maia1100.jsonl", "ref/lc0ref_maia1100_fen.jsonl"):
        path = shared_file(name)
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            board = board_from_uci_position(rec["uci_position"])
            s = game_history(board)[-1]
            moves = [chess.Move.from_uci(u) for u in rec["moves_nn_index"]]
            assert set(moves) == set(board.legal_moves), rec["tag"]
            assert move_indices(moves, s).tolist() == list(rec["moves_nn_index"].values()), rec["tag"]


def test_a_move_without_an_entry_is_refused():
    with pytest.raises(ValueError, match="a1b4"):
        move_index(chess.Move.from_uci("a1b4"), snapshot(chess.Board()))
