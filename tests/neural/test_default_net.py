"""The shipped default network (lichessbot/data/default.onnx, trained by training/; see MODEL.md)."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import onnx
import pytest

from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.position_eval import PositionEval, encode_boards, evaluate_boards

REPO = Path(__file__).resolve().parents[2]
DEFAULT = REPO / "lichessbot" / "data" / "default.onnx"
MATE1 = REPO / "training" / "mate_in_1.epd"


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator(load_network("default"), backend="cpu", threads=1, cache_size=0)


def evaluate(ev: Evaluator, board: chess.Board) -> tuple[list[chess.Move], PositionEval]:
    (res,) = evaluate_boards(ev, [board], input_format=1)
    return list(res.moves), res


def test_shipped_file_has_lc0_interface_and_fits_the_package_limits():
    assert DEFAULT.stat().st_size <= 10_000_000
    model = onnx.load(str(DEFAULT))
    assert model.ir_version <= 13
    assert {o.domain: o.version for o in model.opset_import}[""] == 17
    dims = {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in list(model.graph.input) + list(model.graph.output)}
    assert dims == {"/input/planes": ["batch", 112, 8, 8], "/output/policy": ["batch", 1858],
                    "/output/wdl": ["batch", 3]}
    net = load_network("default")
    assert (net.input_format, net.has_wdl, net.has_mlh, net.source) == (1, True, False, "default")


def test_default_net_gives_a_distribution_and_a_legal_move_at_the_start(evaluator):
    board = chess.Board()
    moves, ev = evaluate(evaluator, board)
    assert ev.priors.shape == (20,) and abs(float(ev.priors.sum()) - 1) < 1e-5
    assert abs(sum(ev.wdl) - 1) < 1e-5 and all(0 <= x <= 1 for x in ev.wdl)
    assert moves[int(np.argmax(ev.priors))] in board.legal_moves
    # raw outputs for a batch of two: same rows for the same input
    planes = encode_boards([board] * 2, input_format=1, history_fill="fen_only")[0]
    logits, wdl, mlh = evaluator.run(planes)
    assert logits.shape == (2, 1858) and wdl.shape == (2, 3) and mlh is None
    np.testing.assert_allclose(logits[0], logits[1], atol=1e-5)


def test_default_net_rates_the_start_position_as_balanced_and_opens_sensibly(evaluator):
    # the first shipped net had never seen an empty history and gave the start position L = 0.83
    moves, ev = evaluate(evaluator, chess.Board())
    w, d, l = ev.wdl
    assert abs(w - l) < 0.2 and d > 0.3, ev.wdl  # shipped net: 0.17 / 0.69 / 0.14
    top = moves[int(np.argmax(ev.priors))].uci()
    assert top in {"e2e4", "d2d4", "c2c4", "g1f3"}, top


def _top_move_hits(evaluator, path: Path, good) -> tuple[int, float]:
    """How often the highest prior is a good move, and how often a uniformly random move would be."""
    hits, chance = 0, 0.0
    for fen in path.read_text().splitlines():
        board = chess.Board(fen)
        moves, ev = evaluate(evaluator, board)
        ok = {m for m in moves if good(board, m)}
        chance += len(ok) / len(moves)
        hits += moves[int(np.argmax(ev.priors))] in ok
    return hits, chance


def _mates(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        return board.is_checkmate()
    finally:
        board.pop()


def test_default_net_takes_a_hanging_queen_far_more_often_than_chance(evaluator):
    # 60 positions from random games where the opponent's queen is attacked and undefended (not trained on)
    hits, chance = _top_move_hits(evaluator, REPO / "training" / "hanging_queen.epd",
                                  lambda b, m: b.piece_type_at(m.to_square) == chess.QUEEN)
    assert chance < 4 and hits >= 50, (hits, chance)  # shipped net: 55 of 60; a random one about 3


@pytest.mark.slow
def test_default_net_finds_mates_in_one_more_often_than_chance(evaluator):
    # the 200 positions of training/mate_in_1.epd (random games where the side to move can mate)
    hits, chance = _top_move_hits(evaluator, MATE1, _mates)
    assert hits >= max(4 * chance, 95), (hits, chance)  # shipped net: 119 of 200; a random one about 6
