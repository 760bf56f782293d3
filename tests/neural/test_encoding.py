"""The core's input encoder, as eval, bench nn and training call it: lc0's encoder test vectors, every input
format and history fill, and lc0's repetition and rule-50 planes on its reference positions."""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest

from lichessbot import _core
from lichessbot.neural.position_eval import encode_boards
from tests.search.test_core import game_of, ref_positions


def board_from_uci_position(cmd: str) -> chess.Board:
    """A board with its move stack from a UCI ``position`` command."""
    fen, moves = game_of(cmd)
    board = chess.Board(fen)
    for uci in moves:
        board.push_uci(uci)
    return board


def planes_of(board: chess.Board, input_format: int = 1, fill: str = "fen_only") -> np.ndarray:
    return encode_boards([board], input_format=input_format, history_fill=fill)[0][0]


def masks_of(board: chess.Board, **kw) -> list[int]:
    """The 64-bit mask of each plane (bit i = square i in the side to move's view)."""
    return [sum(1 << int(i) for i in np.flatnonzero(p)) for p in planes_of(board, **kw).reshape(112, 64)]


def test_repetition_and_rule50_planes_follow_lc0_on_its_reference_positions():
    for rec in ref_positions():
        planes = planes_of(board_from_uci_position(rec["uci_position"]))
        assert (planes[12] == (1.0 if rec["repetitions_lc0_rule"] else 0.0)).all(), rec["tag"]
        assert (planes[109] == rec["rule50"]).all(), rec["tag"]


def test_startpos_classical_no_fill_matches_lc0_encoder_test():
    m = masks_of(chess.Board(), fill="no")
    assert m[0] == 0xFF00 and m[1] == (1 << 1 | 1 << 6) and m[2] == (1 << 2 | 1 << 5)
    assert m[3] == (1 << 0 | 1 << 7) and m[4] == 1 << 3 and m[5] == 1 << 4 and m[11] == 1 << 60
    assert all(x == 0 for x in m[13:104])
    assert all(m[p] == 2**64 - 1 for p in (104, 105, 106, 107, 111)) and m[108] == 0 and m[110] == 0


def test_side_to_move_and_rule50_planes_after_nf3_and_nf6():
    b = chess.Board()
    b.push_uci("g1f3")
    planes = planes_of(b)
    assert (planes[108] == 1).all() and (planes[109] == 1).all()
    b.push_uci("g8f6")
    planes = planes_of(b)
    assert (planes[108] == 0).all() and (planes[109] == 2).all()


def test_castling_plane_formats_use_rook_squares():
    m = masks_of(chess.Board(), input_format=2)
    assert m[104] == (1 << 0 | 1 << 56) and m[105] == (1 << 7 | 1 << 63) and m[106] == 0 and m[107] == 0


@pytest.mark.parametrize(
    ("fen", "our_king", "their_king"),
    [("3r4/4k3/8/1K6/8/8/8/8 w - - 0 1", 12, 38), ("3r4/4k3/2K5/8/8/8/8/8 w - - 0 1", 21, 11)],
)
def test_canonical_transform_matches_lc0_encoder_test(fen, our_king, their_king):
    m = masks_of(chess.Board(fen), input_format=3)
    assert m[5] == 1 << our_king and m[11] == 1 << their_king


def test_hectoplies_formats_scale_rule50_and_armageddon_marks_black():
    board = chess.Board("8/8/3k4/8/8/8/1Q6/4K3 b - - 37 60")
    for fmt, r50 in ((3, 37.0), (4, 0.37), (5, 0.37), (132, 0.37), (133, 0.37)):
        planes = planes_of(board, input_format=fmt)
        assert planes[109, 0, 0] == pytest.approx(r50)
        assert (planes[110] == (1 if fmt in (132, 133) else 0)).all()


def test_fill_modes_startpos_and_fen_games():
    start = chess.Board()
    assert not planes_of(start)[13:104].any()  # fen_only: startpos has no made-up slots
    assert planes_of(start, fill="always")[13:104].any()
    fen = chess.Board("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1")
    planes = planes_of(fen)
    for t in range(8):  # fen_only: a FEN game repeats its position in every slot
        assert (planes[13 * t:13 * t + 12] == planes[0:12]).all()
    assert not planes_of(fen, fill="no")[13:104].any()


def test_fill_undoes_the_double_push_of_a_fen_ep_square():
    board = chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")
    m = masks_of(board, fill="no")
    f5, f7 = chess.F5, chess.F7
    assert m[6] & (1 << f5) and not m[6] & (1 << f7)
    assert m[13 + 6] & (1 << f7) and not m[13 + 6] & (1 << f5)
    assert all(x == 0 for x in m[26:104])


def test_a_batch_equals_its_positions_one_by_one_and_every_ply_of_a_game_its_prefixes():
    boards = []
    for moves in ("e2e4 e7e5 g1f3", "d2d4 d7d5", "", "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3"):
        b = chess.Board()
        for m in moves.split():
            b.push_uci(m)
        boards.append(b)
    batch, indices = encode_boards(boards, input_format=1, history_fill="fen_only")
    for i, b in enumerate(boards):
        assert (batch[i] == planes_of(b)).all()
        assert set(indices[i]) == {m.uci() for m in b.legal_moves}
    moves = [m.uci() for m in boards[-1].move_stack]
    plies, legal = _core.encode_plies(chess.STARTING_FEN, moves, input_format=5, history_fill="always")
    assert plies.shape == (len(moves) + 1, 112, 8, 8)
    for k in range(len(moves) + 1):
        one, idx = _core.encode_positions([(chess.STARTING_FEN, moves[:k])], input_format=5, history_fill="always")
        assert (plies[k] == one[0]).all() and legal[k] == idx[0]


def test_bad_formats_fills_and_games_are_refused_naming_them():
    with pytest.raises(ValueError, match="input format 6"):
        encode_boards([chess.Board()], input_format=6, history_fill="fen_only")
    with pytest.raises(ValueError, match="history fill"):
        encode_boards([chess.Board()], input_format=1, history_fill="sometimes")
    with pytest.raises(ValueError, match='game 1: illegal move "e2e5"'):
        _core.encode_positions([(chess.STARTING_FEN, []), (chess.STARTING_FEN, ["e2e5"])], input_format=1,
                               history_fill="no")
    with pytest.raises(ValueError, match="invalid FEN"):
        _core.encode_plies("nonsense", [], input_format=1, history_fill="no")


@pytest.mark.parametrize("fmt", _core.INPUT_FORMATS)
@pytest.mark.parametrize("fill", ["fen_only", "no", "always"])
@pytest.mark.slow
def test_every_format_and_fill_encodes_random_games_with_the_canonical_king_placement(fmt, fill):
    rng = random.Random(fmt * 7 + len(fill))
    boards = []
    for start in (chess.STARTING_FEN, "8/8/3k4/8/8/8/1Q6/4K3 b - - 4 60", "4k3/8/8/8/8/8/8/R3K2R w K - 3 9"):
        b = chess.Board(start)
        for _ in range(30):
            if b.is_game_over():
                break
            b.push(rng.choice(list(b.legal_moves)))
            boards.append(b.copy())
    planes = encode_boards(boards, input_format=fmt, history_fill=fill)[0]
    assert planes.shape == (len(boards), 112, 8, 8) and np.isfinite(planes).all()
    assert (planes[:, 111] == 1).all()
    for b, p in zip(boards, planes):
        king = np.argwhere(p[5])
        assert len(king) == 1
        if fmt >= 3 and not b.castling_rights:
            assert king[0][1] >= 4  # files e-h after the canonical Flip
            if not b.pawns:
                assert king[0][0] <= 3  # ranks 1-4 after Mirror
        history = p[13:104].any()
        if fmt < 3:  # formats 1 and 2: the previous positions, or made-up copies with fill "always"
            assert history == (len(b.move_stack) > 0 or fill == "always")
        elif b.halfmove_clock == 0:  # canonical formats: a zeroing move hides everything before it
            assert not history
