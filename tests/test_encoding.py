"""Encoding equals lc0's own planes (../shared/ref), mask for mask, and the lc0 encoder test vectors."""

from __future__ import annotations

import json

import chess
import numpy as np
import pytest

from lichessbot.engine.encoding import (
    Snapshot,
    choose_transform,
    count_repetitions,
    encode,
    game_history,
    position_key,
    snapshot,
)
from tests.conftest import REF, shared_file


def board_from_uci_position(cmd: str) -> chess.Board:
    """A board with its move stack from a UCI ``position`` command."""
    words = cmd.split()
    assert words[0] == "position"
    if words[1] == "startpos":
        board, rest = chess.Board(), words[2:]
    else:
        end = words.index("moves") if "moves" in words else len(words)
        board, rest = chess.Board(" ".join(words[2:end])), words[end:]
    for uci in rest[1:] if rest else []:
        board.push_uci(uci)
    return board


def ref_records() -> list[dict]:
    out = []
    for name in ("lc0ref_maia1100.jsonl", "lc0ref_maia1100_fen.jsonl"):
        path = REF / name
        if path.exists():
            out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


def planes_to_masks(planes: np.ndarray) -> tuple[list[int], list[float]]:
    """[112, 8, 8] -> (64-bit mask per plane, value where set)."""
    masks, values = [], []
    for p in planes.reshape(112, 64):
        nz = np.flatnonzero(p)
        masks.append(sum(1 << int(i) for i in nz))
        values.append(float(p[nz[0]]) if nz.size else None)
    return masks, values


def test_every_reference_position_matches_lc0_planes_mask_for_mask():
    shared_file("ref/lc0ref_maia1100.jsonl")
    records = ref_records()
    assert len(records) >= 59
    planes = encode([game_history(board_from_uci_position(r["uci_position"])) for r in records])
    assert planes.shape == (len(records), 112, 8, 8) and planes.dtype == np.float32
    for rec, got in zip(records, planes):
        want = ref_planes(rec["lc0_input_planes"])
        bad = [p for p in range(112) if not np.array_equal(got[p], want[p])]
        assert not bad, (rec["tag"], bad, [hex(planes_to_masks(got)[0][p]) for p in bad])


def ref_planes(ref: dict) -> np.ndarray:
    """lc0's (masks_hex, values) -> float32 [112, 8, 8]: value where the bit is set, else 0."""
    masks = np.array([int(h, 16) for h in ref["masks_hex"]], dtype=np.uint64)
    bits = np.unpackbits(masks.view(np.uint8).reshape(112, 8), axis=-1, bitorder="little").astype(np.float32)
    return (bits * np.array(ref["values"], dtype=np.float32)[:, None]).reshape(112, 8, 8)


def test_reference_repetition_counts_follow_lc0_rule():
    shared_file("ref/lc0ref_maia1100.jsonl")
    for rec in ref_records():
        hist = game_history(board_from_uci_position(rec["uci_position"]))
        assert hist[-1].repetitions == rec["repetitions_lc0_rule"], rec["tag"]
        assert hist[-1].rule50 == rec["rule50"], rec["tag"]


def _masks(board: chess.Board, **kw) -> list[int]:
    return planes_to_masks(encode([game_history(board)], **kw)[0])[0]


def test_startpos_classical_no_fill_matches_lc0_encoder_test():
    m = _masks(chess.Board(), fill="no")
    assert m[0] == 0xFF00 and m[1] == (1 << 1 | 1 << 6) and m[2] == (1 << 2 | 1 << 5)
    assert m[3] == (1 << 0 | 1 << 7) and m[4] == 1 << 3 and m[5] == 1 << 4 and m[11] == 1 << 60
    assert all(x == 0 for x in m[13:104])
    assert all(m[p] == 2**64 - 1 for p in (104, 105, 106, 107, 111)) and m[108] == 0 and m[110] == 0


def test_side_to_move_and_rule50_planes_after_nf3_and_nf6():
    b = chess.Board()
    b.push_uci("g1f3")
    planes = encode([game_history(b)])[0]
    assert (planes[108] == 1).all() and (planes[109] == 1).all()
    b.push_uci("g8f6")
    planes = encode([game_history(b)])[0]
    assert (planes[108] == 0).all() and (planes[109] == 2).all()


def test_castling_plane_formats_use_rook_squares():
    m = _masks(chess.Board(), input_format=2)
    assert m[104] == (1 << 0 | 1 << 56) and m[105] == (1 << 7 | 1 << 63) and m[106] == 0 and m[107] == 0


@pytest.mark.parametrize(
    ("fen", "transform", "our_king", "their_king"),
    [("3r4/4k3/8/1K6/8/8/8/8 w - - 0 1", 7, 12, 38), ("3r4/4k3/2K5/8/8/8/8/8 w - - 0 1", 3, 21, 11)],
)
def test_canonical_transform_matches_lc0_encoder_test(fen, transform, our_king, their_king):
    board = chess.Board(fen)
    assert choose_transform(snapshot(board), 3) == transform
    m = _masks(board, input_format=3)
    assert m[5] == 1 << our_king and m[11] == 1 << their_king


def test_hectoplies_formats_scale_rule50_and_armageddon_marks_black():
    board = chess.Board("8/8/3k4/8/8/8/1Q6/4K3 b - - 37 60")
    for fmt, r50 in ((3, 37.0), (4, 0.37), (5, 0.37), (132, 0.37), (133, 0.37)):
        planes = encode([game_history(board)], input_format=fmt)[0]
        assert planes[109, 0, 0] == pytest.approx(r50)
        assert (planes[110] == (1 if fmt in (132, 133) else 0)).all()


def test_fill_modes_startpos_and_fen_games():
    start = chess.Board()
    assert not encode([game_history(start)])[0, 13:104].any()  # fen_only: startpos has no made-up slots
    assert encode([game_history(start)], fill="always")[0, 13:104].any()
    fen = chess.Board("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1")
    planes = encode([game_history(fen)])[0]
    for t in range(8):  # fen_only: a FEN game repeats its position in every slot
        assert (planes[13 * t:13 * t + 12] == planes[0:12]).all()
    assert not encode([game_history(fen)], fill="no")[0, 13:104].any()


def test_fill_undoes_the_double_push_of_a_fen_ep_square():
    board = chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")
    m = _masks(board, fill="no")
    f5, f7 = chess.F5, chess.F7
    assert m[6] & (1 << f5) and not m[6] & (1 << f7)
    assert m[13 + 6] & (1 << f7) and not m[13 + 6] & (1 << f5)
    assert all(x == 0 for x in m[26:104])


def test_ep_square_only_when_a_pawn_can_take_after_a_move():
    b = chess.Board()
    b.push_uci("e2e4")
    assert snapshot(b).ep_square is None  # no black pawn attacks e3
    for uci in ("a7a6", "e4e5", "d7d5"):
        b.push_uci(uci)
    assert snapshot(b).ep_square == chess.D6


def test_repetitions_and_position_key_ignore_rule50():
    b = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):
        b.push_uci(uci)
    hist = game_history(b)
    assert hist[-1].repetitions == 1 and count_repetitions(hist[:-1], hist[-1]._replace(repetitions=0)) == 1
    assert position_key(hist[-1]) != position_key(hist[0])
    assert position_key(hist[-1]._replace(rule50=0, repetitions=0)) == position_key(hist[0])


def test_batch_encoding_equals_single_encodings_and_fills_out():
    boards = []
    for moves in ("e2e4 e7e5 g1f3", "d2d4 d7d5", "", "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3"):
        b = chess.Board()
        for m in moves.split():
            b.push_uci(m)
        boards.append(game_history(b))
    out = np.full((8, 112, 8, 8), 7.0, dtype=np.float32)
    batch = encode(boards, out=out)
    assert batch.base is out or batch is out
    for i, h in enumerate(boards):
        assert (batch[i] == encode([h])[0]).all()


def test_bad_format_and_fill_are_refused():
    h = game_history(chess.Board())
    with pytest.raises(ValueError, match="input format"):
        encode([h], input_format=6)
    with pytest.raises(ValueError, match="fill"):
        encode([h], fill="sometimes")


def test_snapshot_is_a_plain_tuple_of_ints():
    s = snapshot(chess.Board())
    assert isinstance(s, Snapshot) and s.turn is True
    assert s.castling == chess.BB_A1 | chess.BB_H1 | chess.BB_A8 | chess.BB_H8


@pytest.mark.parametrize("fmt", [1, 2, 3, 4, 5, 132, 133])
@pytest.mark.parametrize("fill", ["fen_only", "no", "always"])
def test_every_format_and_fill_encodes_random_games_with_the_canonical_king_placement(fmt, fill):
    import random

    rng = random.Random(fmt * 7 + len(fill))
    hists = []
    for start in (chess.STARTING_FEN, "8/8/3k4/8/8/8/1Q6/4K3 b - - 4 60", "4k3/8/8/8/8/8/8/R3K2R w K - 3 9"):
        b = chess.Board(start)
        for _ in range(30):
            if b.is_game_over():
                break
            b.push(rng.choice(list(b.legal_moves)))
            hists.append(game_history(b)[-8:])
    planes = encode(hists, input_format=fmt, fill=fill)
    assert planes.shape == (len(hists), 112, 8, 8) and np.isfinite(planes).all()
    assert (planes[:, 111] == 1).all()
    for h, p in zip(hists, planes):
        s = h[-1]
        king = np.argwhere(p[5])
        assert len(king) == 1
        if fmt >= 3 and not s.castling:
            assert king[0][1] >= 4  # files e-h after the canonical Flip
            if not s.pawns:
                assert king[0][0] <= 3  # ranks 1-4 after Mirror
        history = p[13:104].any()
        if fmt < 3:  # formats 1 and 2: the previous positions, or made-up copies with fill "always"
            assert history == (len(h) > 1 or fill == "always")
        elif s.rule50 == 0:  # canonical formats: a zeroing move hides everything before it
            assert not history
