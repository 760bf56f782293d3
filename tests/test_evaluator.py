"""The evaluator through real networks (lc0's exact outputs) and the tiny net (the whole path)."""

from __future__ import annotations

import json
import threading

import chess
import numpy as np
import pytest

from lichessbot.engine.encoding import encode, game_history, position_key
from lichessbot.engine.evaluator import EvalRequest, Evaluation, Evaluator, select_providers
from lichessbot.engine.network import NetworkError, load_network
from lichessbot.engine.policy_map import move_indices
from tests.conftest import shared_file
from tests.test_encoding import board_from_uci_position
from tests.tinynet import build_tiny_onnx


def request(board: chess.Board) -> EvalRequest:
    hist = game_history(board)
    return EvalRequest(history=hist, moves=list(board.legal_moves), key=position_key(hist[-1]))


@pytest.mark.parametrize("suffix", ["onnx", "pb.gz"])
@pytest.mark.parametrize("net", ["maia-1100", "maia-1900"])
def test_every_reference_position_matches_lc0_exact_outputs(net, suffix):
    path = shared_file(f"nets/{net}.{suffix}")
    tag = net.replace("-", "")
    recs = []
    for name in (f"ref/lc0ref_{tag}.jsonl", f"ref/lc0ref_{tag}_fen.jsonl"):
        recs += [json.loads(line) for line in shared_file(name).read_text().splitlines()]
    ev = Evaluator(load_network(str(path)), backend="cpu", cache_size=0, policy_temperature=1.0)
    boards = [board_from_uci_position(r["uci_position"]) for r in recs]
    logits, wdl, mlh = ev.run(encode([game_history(b) for b in boards]))
    assert logits.shape == (len(recs), 1858) and wdl.shape == (len(recs), 3) and mlh is None
    evals = ev.evaluate([request(b) for b in boards])
    for rec, board, lg, w, e in zip(recs, boards, logits, wdl, evals):
        ref = rec["nn_exact_blas"]
        moves = [chess.Move.from_uci(u) for u in ref["policy_logits"]]
        s = game_history(board)[-1]
        np.testing.assert_allclose(lg[move_indices(moves, s)], list(ref["policy_logits"].values()), atol=1e-4,
                                   err_msg=rec["tag"])
        assert abs((w[0] - w[2]) - ref["q"]) < 1e-4 and abs(e.q - ref["q"]) < 1e-4, rec["tag"]
        np.testing.assert_allclose(e.wdl, ref["wdl"], atol=1e-4)
        priors = dict(zip([m.uci() for m in board.legal_moves], e.priors.tolist()))
        for uci, pct in ref["policy_softmax_pct"].items():
            assert priors[uci] == pytest.approx(pct / 100, abs=1e-5), (rec["tag"], uci)


def test_startpos_priors_at_default_temperature_match_lc0_print():
    path = shared_file("nets/maia-1100.onnx")
    rec = json.loads(shared_file("ref/lc0ref_maia1100.jsonl").read_text().splitlines()[0])
    ev = Evaluator(load_network(str(path)), backend="cpu")
    (e,) = ev.evaluate([request(chess.Board())])
    priors = dict(zip([m.uci() for m in chess.Board().legal_moves], e.priors.tolist()))
    for uci, pct in rec["moves_policy_default_temp_1.359"].items():
        assert priors[uci] * 100 == pytest.approx(pct, abs=0.08), uci


@pytest.fixture(scope="module")
def tiny_eval(tmp_path_factory):
    net = load_network(str(build_tiny_onnx(tmp_path_factory.mktemp("ev") / "tiny.onnx", seed=3, mlh=True)))
    return Evaluator(net, backend="cpu", threads=1, cache_size=4)


def test_tiny_net_whole_path_gives_normalised_priors_wdl_and_moves_left(tiny_eval):
    board = chess.Board()
    board.push_uci("e2e4")
    (e,) = tiny_eval.evaluate([request(board)])
    assert isinstance(e, Evaluation) and e.priors.dtype == np.float32 and e.priors.shape == (20,)
    assert e.priors.sum() == pytest.approx(1.0, abs=1e-6) and (e.priors > 0).all()
    assert sum(e.wdl) == pytest.approx(1.0, abs=1e-5) and e.q == pytest.approx(e.wdl[0] - e.wdl[2])
    assert e.m >= 0.0 and tiny_eval.provider == "CPUExecutionProvider"


def test_priors_follow_the_policy_temperature(tmp_path):
    net = load_network(str(build_tiny_onnx(tmp_path / "t.onnx", seed=5)))
    req = request(chess.Board())
    hot = Evaluator(net, backend="cpu", cache_size=0, policy_temperature=1.0).evaluate([req])[0].priors
    cool = Evaluator(net, backend="cpu", cache_size=0, policy_temperature=2.0).evaluate([req])[0].priors
    expect = hot.astype(np.float64) ** 0.5
    np.testing.assert_allclose(cool, expect / expect.sum(), rtol=1e-4)


def test_cache_hits_need_the_same_number_of_moves_and_results_are_shared(tiny_eval):
    tiny_eval.cache.clear()
    req = request(chess.Board())
    first = tiny_eval.evaluate([req])[0]
    n = tiny_eval.evaluations
    assert tiny_eval.evaluate([req])[0] is first and tiny_eval.evaluations == n
    assert tiny_eval.cache.get(req.key, 19) is None
    assert not first.priors.flags.writeable


def test_duplicate_positions_in_one_batch_are_evaluated_once(tiny_eval):
    tiny_eval.cache.clear()
    board = chess.Board()
    board.push_uci("d2d4")
    n = tiny_eval.evaluations
    a, b = tiny_eval.evaluate([request(board), request(board)])
    assert a is b and tiny_eval.evaluations == n + 1


def test_cache_is_bounded(tiny_eval):
    tiny_eval.cache.clear()
    board = chess.Board()
    reqs = []
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"):
        board.push_uci(uci)
        reqs.append(request(board))
    tiny_eval.evaluate(reqs)
    assert len(tiny_eval.cache) == 4 and tiny_eval.cache.get(reqs[0].key, len(reqs[0].moves)) is None
    assert tiny_eval.cache.get(reqs[-1].key, len(reqs[-1].moves)) is not None


def test_batched_and_single_evaluations_agree_across_threads(tmp_path):
    net = load_network(str(build_tiny_onnx(tmp_path / "t.onnx", seed=9)))
    ev = Evaluator(net, backend="cpu", cache_size=0)
    board = chess.Board()
    reqs = []
    for uci in "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6".split():
        board.push_uci(uci)
        reqs.append(request(board))
    batch = ev.evaluate(reqs)
    got: dict[int, Evaluation] = {}

    def worker(i):
        got[i] = ev.evaluate([reqs[i]])[0]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(reqs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, e in enumerate(batch):
        np.testing.assert_allclose(got[i].priors, e.priors, rtol=1e-4, atol=1e-6)
        assert got[i].q == pytest.approx(e.q, abs=1e-5)


def test_scalar_value_net_gives_wdl_from_q(tmp_path):
    net = load_network(str(build_tiny_onnx(tmp_path / "v.onnx", wdl=False)))
    ev = Evaluator(net, backend="cpu")
    _, wdl, _ = ev.run(encode([game_history(chess.Board())]))
    (e,) = ev.evaluate([request(chess.Board())])
    assert e.wdl[1] == 0.0 and e.wdl[0] == pytest.approx((1 + e.q) / 2) and wdl.shape == (1, 3)


def test_position_without_moves_gets_empty_priors(tiny_eval):
    board = chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")  # stalemate
    (e,) = tiny_eval.evaluate([request(board)])
    assert e.priors.shape == (0,)


def test_backend_selection_prefers_gpu_then_cpu_and_refuses_unknown():
    assert select_providers("auto", ["CUDAExecutionProvider", "CPUExecutionProvider"]) == [
        "CUDAExecutionProvider", "CPUExecutionProvider"]
    assert select_providers("tensorrt", ["CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    assert select_providers("cpu", ["TensorrtExecutionProvider", "CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    with pytest.raises(NetworkError, match="unknown engine backend"):
        select_providers("opencl")


def test_bad_planes_shape_is_refused(tiny_eval):
    with pytest.raises(ValueError, match=r"\[B, 112, 8, 8\]"):
        tiny_eval.run(np.zeros((1, 104, 8, 8), np.float32))


def test_model_onnxruntime_cannot_run_is_a_network_error(tmp_path):
    import dataclasses

    from tests.tinynet import tiny_model

    model = tiny_model()
    model.graph.node[1].op_type = "NoSuchOp"
    net = load_network(str(build_tiny_onnx(tmp_path / "ok.onnx")))
    bad = dataclasses.replace(net, model=model.SerializeToString(), source="bad.onnx")
    with pytest.raises(NetworkError, match="onnxruntime cannot load network bad.onnx"):
        Evaluator(bad, backend="cpu")


def test_lookup_false_skips_the_cache_read_but_still_fills_the_cache(tmp_path):
    ev = Evaluator(load_network(str(build_tiny_onnx(tmp_path / "t.onnx", seed=4))), backend="cpu", cache_size=100)
    board = chess.Board()
    board.push_uci("e2e4")
    req = request(board)
    first = ev.evaluate([req], lookup=False)[0]
    assert (ev.cache.hits, ev.cache.misses) == (0, 0)  # no read at all: the caller had already missed
    assert ev.cache.get(req.key, len(req.moves)) is first  # but the result is stored for later hits
    again = ev.evaluate([req])[0]  # a default call reads the cache and hits
    assert again is first and ev.evaluations == 1
