"""The core's 1858-entry policy map: lc0's order and check values, castling and promotions, a bijection over
the legal moves of random games, the canonical transform."""

from __future__ import annotations

import hashlib
import random

import chess
import pytest

from lichessbot import _core
from lichessbot.neural.position_eval import encode_boards

MOVES = _core.POLICY_MOVES
#: sha256 of "\n".join(lc0's 1858 policy moves): the table as lc0 src/neural/tables/policy_map.h orders it.
MOVES_SHA256 = "4a901f49851725496e39e34648dd58f240950fa6b72a0bbf6b2816b9af767cc7"


def indices(board: chess.Board, input_format: int = 1) -> dict[str, int]:
    return encode_boards([board], input_format=input_format, history_fill="fen_only")[1][0]


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
    assert indices(b)["e1g1"] == 103 and indices(b)["e1c1"] == 97
    b960 = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", chess960=True)
    assert indices(b960)["e1h1"] == 103 and indices(b960)["e1a1"] == 97
    b.turn = chess.BLACK
    assert indices(b)["e8g8"] == 103 and indices(b)["e8c8"] == 97


def test_chess960_castling_when_the_king_moves_two_files_is_still_king_takes_rook():
    # King on d1, rooks on b1 and h1: castling is king takes rook (d1h1, d1b1) though the king lands on g1/c1.
    b = chess.Board("1r1k3r/8/8/8/8/8/8/1R1K3R w HBhb - 0 1", chess960=True)
    got = indices(b)
    assert got["d1h1"] == MOVES.index("d1h1") and got["d1b1"] == MOVES.index("d1b1")


def test_black_moves_are_mirrored_and_knight_promotion_is_plain():
    got = indices(chess.Board("4k3/8/8/8/8/8/p3p3/1N5K b - - 0 1"))
    assert got["e2e1q"] == 1828 and got["e2e1n"] == 1515 and got["a2b1r"] == 1796 and got["a2a1n"] == MOVES.index(
        "a7a8")
    got = indices(chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"))
    assert got["e7e5"] == 322 and got["g8f6"] == 159


@pytest.mark.slow
def test_every_legal_move_of_random_games_maps_to_a_distinct_index_of_its_own_move():
    rng = random.Random(7)
    positions = 0
    for _ in range(40):
        b = chess.Board()
        while not b.is_game_over() and b.ply() < 160:
            got = indices(b)
            assert set(got) == {m.uci() for m in b.legal_moves}
            assert len(set(got.values())) == len(got)
            for mv in b.legal_moves:
                entry = MOVES[got[mv.uci()]]
                if b.is_castling(mv):  # king takes rook, from the mover's view
                    rook = chess.square_name(chess.H1 if chess.square_file(mv.to_square) > 4 else chess.A1)
                    assert entry == "e1" + rook
                else:
                    m = mv if b.turn == chess.WHITE else chess.Move(chess.square_mirror(mv.from_square),
                                                                     chess.square_mirror(mv.to_square), mv.promotion)
                    want = m.uci()[:4] + ("" if m.promotion in (None, chess.KNIGHT) else m.uci()[4:])
                    assert entry == want, (b.fen(), mv)
            positions += 1
            legal = list(b.legal_moves)
            promos = [m for m in legal if m.promotion]  # reach promotions and captures now and then
            b.push(rng.choice(promos) if promos and rng.random() < 0.7 else rng.choice(legal))
    assert positions > 3000


def test_canonical_transform_keeps_indices_distinct_and_changes_them():
    b = chess.Board("8/8/8/8/8/3k4/8/K1Q5 w - - 0 1")
    plain, canonical = indices(b, 1), indices(b, 3)
    assert len(set(canonical.values())) == b.legal_moves.count()
    assert plain != canonical
