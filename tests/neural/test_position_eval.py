"""The raw network's view of a position (lichessbot.neural.position_eval): the core's encoder and policy map, one
network run and the softmax at the policy temperature (lc0's exact outputs on the Maia nets:
tests/neural/test_maia.py)."""

from __future__ import annotations

import threading

import chess
import numpy as np
import pytest

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.position_eval import PositionEval, encode_boards, evaluate_boards
from lichessbot.search.searcher import core_params
from tests.tinynet import build_tiny_onnx

T1 = SearchParams(policy_temperature=1.0)


@pytest.fixture(scope="module")
def tiny_mlh(tmp_path_factory) -> Evaluator:
    net = load_network(str(build_tiny_onnx(tmp_path_factory.mktemp("ev") / "tiny.onnx", seed=3, mlh=True)))
    return Evaluator(net, backend="cpu", threads=1, cache_size=0)


def test_tiny_net_whole_path_gives_normalised_priors_wdl_and_moves_left(tiny_mlh):
    board = chess.Board()
    board.push_uci("e2e4")
    (e,) = evaluate_boards(tiny_mlh, [board], input_format=1)
    assert isinstance(e, PositionEval) and e.priors.dtype == np.float32 and e.priors.shape == (20,)
    assert e.moves == tuple(board.legal_moves) and not e.priors.flags.writeable
    assert e.priors.sum() == pytest.approx(1.0, abs=1e-6) and (e.priors > 0).all()
    assert sum(e.wdl) == pytest.approx(1.0, abs=1e-5) and e.q == pytest.approx(e.wdl[0] - e.wdl[2])
    assert e.m is not None and e.m >= 0.0


def test_priors_follow_the_policy_temperature(tiny_mlh):
    board = [chess.Board()]
    hot = evaluate_boards(tiny_mlh, board, input_format=1, params=T1)[0].priors
    cool = evaluate_boards(tiny_mlh, board, input_format=1, params=SearchParams(policy_temperature=2.0))[0].priors
    expect = hot.astype(np.float64) ** 0.5
    np.testing.assert_allclose(cool, expect / expect.sum(), rtol=1e-4)


def test_priors_are_the_search_cores_own_at_the_root(tiny_mlh):
    """The same encoder, policy map and temperature as the search: the core's root priors (lc0's fast exp and
    16-bit storage) agree with the exact softmax here to about 1e-3."""
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    params = SearchParams(policy_temperature=1.7, history_fill="always")
    (e,) = evaluate_boards(tiny_mlh, [board], input_format=1, params=params)
    core = _core.SearchCore(core_params(params, input_format=1, minibatch_size=4), _core.NNCache(0))
    core.set_position(board.fen(), [])
    planes = np.zeros((4, 112, 8, 8), np.float32)
    assert core.gather(planes) == 1
    np.testing.assert_array_equal(planes[0], encode_boards([board], input_format=1, history_fill="always")[0][0])
    logits, wdl, mlh = tiny_mlh.run(planes[:1])
    core.apply(logits, wdl, mlh)
    theirs = {core.root_moves()[x.edge]: x.p for x in core.root_edges()}
    ours = dict(zip([m.uci() for m in e.moves], e.priors.tolist()))
    assert set(theirs) == set(ours)
    for uci, p in ours.items():
        assert theirs[uci] == pytest.approx(p, abs=2e-3), uci


def test_batched_and_single_evaluations_agree_across_threads(tmp_path):
    ev = Evaluator(load_network(str(build_tiny_onnx(tmp_path / "t.onnx", seed=9))), backend="cpu", cache_size=0)
    board = chess.Board()
    boards = []
    for uci in "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6".split():
        board.push_uci(uci)
        boards.append(board.copy())
    batch = evaluate_boards(ev, boards, input_format=1)
    got: dict[int, PositionEval] = {}

    def worker(i):
        got[i] = evaluate_boards(ev, [boards[i]], input_format=1)[0]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(boards))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, e in enumerate(batch):
        np.testing.assert_allclose(got[i].priors, e.priors, rtol=1e-4, atol=1e-6)
        assert got[i].q == pytest.approx(e.q, abs=1e-5)


def test_scalar_value_net_gives_wdl_from_q(tmp_path):
    ev = Evaluator(load_network(str(build_tiny_onnx(tmp_path / "v.onnx", wdl=False))), backend="cpu")
    (e,) = evaluate_boards(ev, [chess.Board()], input_format=1)
    assert e.wdl[1] == 0.0 and e.wdl[0] == pytest.approx((1 + e.q) / 2)


def test_position_without_moves_gets_empty_priors_and_no_boards_no_run(tiny_mlh):
    board = chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")  # stalemate
    (e,) = evaluate_boards(tiny_mlh, [board], input_format=1)
    assert e.priors.shape == (0,) and e.moves == ()
    assert evaluate_boards(tiny_mlh, [], input_format=1) == []
