"""The PUCT search: mates, stalemate traps, repetitions, limits, tree reuse, legality, determinism."""

from __future__ import annotations

import threading
import time

import chess
import numpy as np
import pytest

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.diagnostics.fake_net import FakeEvaluator
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.search import Searcher, SearchError
from lichessbot.timeman import VisitsStopper
from tests.conftest import maia_net

MOVES = _core.POLICY_MOVES


@pytest.fixture(scope="module")
def tiny_eval(tiny_net) -> Evaluator:
    return Evaluator(load_network(str(tiny_net)), backend="cpu", threads=1, cache_size=20_000)


@pytest.fixture(scope="module")
def default_eval() -> Evaluator:
    """The project's default network: a real policy and value (which network does not matter here)."""
    return Evaluator(load_network("default"), backend="cpu", threads=1, cache_size=50_000)


def test_mate_in_one_found_with_few_nodes(tiny_eval):
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    result = Searcher(tiny_eval).search(board, VisitsStopper(300))
    assert result.best_move == chess.Move.from_uci("d1d8")
    assert result.score.mate == 1
    assert result.root_moves[0].proven == 1


def test_mate_in_two_found_with_a_uniform_net():
    # Uniform priors and a constant value: only terminal detection and sticky endgames find it.
    board = chess.Board("1r4k1/5ppp/8/8/8/8/4RPPP/4R1K1 w - - 0 1")
    result = Searcher(FakeEvaluator()).search(board, VisitsStopper(800))
    assert result.best_move == chess.Move.from_uci("e2e8")
    assert result.score.mate == 2
    assert result.pv[:3] == [chess.Move.from_uci(m) for m in ("e2e8", "b8e8", "e1e8")]


def test_mate_in_two_found_by_a_real_network(default_eval):
    board = chess.Board("1r4k1/5ppp/8/8/8/8/4RPPP/4R1K1 w - - 0 1")
    result = Searcher(default_eval).search(board, VisitsStopper(300))
    assert (result.best_move.uci(), result.score.mate) == ("e2e8", 2)


def test_won_position_not_thrown_into_stalemate(tiny_eval):
    board = chess.Board("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1")  # Qf7 stalemates, Qf8# mates
    result = Searcher(tiny_eval).search(board, VisitsStopper(400))
    after = board.copy()
    after.push(result.best_move)
    assert not after.is_stalemate()
    assert result.q > 0.9
    stalemating = [rm for rm in result.root_moves if _stalemates(board, rm.move)]
    assert stalemating and any(rm.n for rm in stalemating)  # the trap was searched, not just avoided
    for rm in stalemating:
        if rm.n:
            assert rm.proven == 0 and rm.q == 0.0


def _stalemates(board: chess.Board, move: chess.Move) -> bool:
    after = board.copy()
    after.push(move)
    return after.is_stalemate()


def test_forced_repetition_is_a_draw():
    # White is lost except for the perpetual Qe8+ Kh7 Qe4+ Kg8 Qe8+ ... (Stockfish: 0.00, others -4). It takes a
    # network that plays chess to find it in 1000 nodes (the small default network does not): maia-1100.
    maia = Evaluator(load_network(str(maia_net("maia-1100.pb.gz"))), backend="cpu", threads=1, cache_size=50_000)
    board = chess.Board("6k1/5pp1/8/8/8/r7/1r6/4Q2K w - - 0 1")
    searcher = Searcher(maia)
    result = searcher.search(board, VisitsStopper(1000))
    assert result.best_move == chess.Move.from_uci("e1e8")
    assert result.q > -0.25 > max(rm.q for rm in result.root_moves[1:] if rm.n)
    assert searcher.tree_info()["twofold"] > 0
    searcher.close()


def _knight_logits() -> np.ndarray:
    """Logits that make the knight moves g1f3/f3g1 (black: g8f6/f6g8, mirrored) 50 times likelier."""
    logits = np.zeros(1858, dtype=np.float32)
    for uci in ("g1f3", "f3g1"):
        logits[MOVES.index(uci)] = 1.359 * np.log(50.0)
    return logits


def test_two_fold_inside_the_tree_is_a_draw():
    searcher = Searcher(FakeEvaluator(value=0.3, logits=_knight_logits()), SearchParams(minibatch_size=8))
    searcher.search(chess.Board(), VisitsStopper(300))
    node = searcher.node_info(["g1f3", "g8f6", "f3g1", "f6g8"])
    assert node is not None
    assert node.terminal == "twofold" and node.wl == 0.0 and node.d == 1.0
    # The same repetition whose first occurrence lies before the root is not a draw (cycle not in the tree).
    board = chess.Board()
    board.push_uci("g1f3")
    board.push_uci("g8f6")
    searcher = Searcher(FakeEvaluator(value=0.3, logits=_knight_logits()), SearchParams(minibatch_size=8))
    searcher.search(board, VisitsStopper(100))
    node = searcher.node_info(["f3g1", "f6g8"])
    assert node is not None and node.terminal == "" and node.expanded


def test_threefold_in_game_history_counts():
    # Knights went out and back twice: Nf3 now would repeat the position after 1.Nf3 a third time.
    board = chess.Board()
    for uci in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]:
        board.push_uci(uci)
    searcher = Searcher(FakeEvaluator(value=0.5), SearchParams(minibatch_size=16))
    result = searcher.search(board, VisitsStopper(400))
    nf3 = next(rm for rm in result.root_moves if rm.move.uci() == "g1f3")
    assert nf3.proven == 0  # a third occurrence: a terminal draw below the root


def test_nodes_limit_is_exact(tiny_eval):
    for pipeline in (True, False):
        searcher = Searcher(tiny_eval, SearchParams(minibatch_size=64), pipeline=pipeline)
        result = searcher.search(chess.Board(), VisitsStopper(777))
        assert result.nodes == 777
        assert result.playouts == 777


def test_tree_reuse_keeps_the_subtree(tiny_eval):
    searcher = Searcher(tiny_eval)
    board = chess.Board()
    first = searcher.search(board, VisitsStopper(1500))
    assert first.ponder_move is not None
    kept = searcher.node_info([first.best_move, first.ponder_move]).n
    assert kept > 0
    board.push(first.best_move)
    board.push(first.ponder_move)
    second = searcher.search(board, VisitsStopper(kept + 200))
    assert second.reused_nodes == kept
    assert second.playouts == 200
    # A position that does not follow from the last one starts a fresh tree.
    third = searcher.search(chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"), VisitsStopper(50))
    assert third.reused_nodes == 0


def test_self_play_moves_are_legal(tiny_eval):
    searcher = Searcher(tiny_eval, SearchParams(minibatch_size=16))
    board = chess.Board()
    while not board.is_game_over(claim_draw=True) and board.ply() < 80:
        result = searcher.search(board, VisitsStopper(50))
        assert result.best_move in board.legal_moves
        assert all(rm.move in board.legal_moves for rm in result.root_moves)
        board.push(result.best_move)


def _sampled_game(evaluator: Evaluator, seed: int) -> list[str]:
    params = SearchParams(temperature=1.0, seed=seed, minibatch_size=32)
    searcher = Searcher(evaluator, params)
    board = chess.Board()
    for _ in range(12):
        board.push(searcher.search(board, VisitsStopper(60)).best_move)
    return [m.uci() for m in board.move_stack]


def test_same_result_twice_with_a_fixed_seed(tiny_eval):
    tiny_eval.clear_cache()
    a = _sampled_game(tiny_eval, 7)
    tiny_eval.clear_cache()
    b = _sampled_game(tiny_eval, 7)
    assert a == b


def test_stop_from_another_thread_and_ponderhit(tiny_eval):
    searcher = Searcher(tiny_eval)
    infos = []
    handle = searcher.start(chess.Board(), on_info=infos.append)
    threading.Event().wait(0.2)
    assert not handle.done
    handle.stop()
    result = handle.wait(timeout=10)
    assert result.stop_reason == "stop"
    assert infos and infos[-1].nodes == result.nodes

    class After:
        def __init__(self, n):
            self.n = n

            self.done = None

        def should_stop(self, stats, hints):
            return "enough" if stats.nodes >= self.n else None

        def on_search_done(self, stats):
            self.done = stats

    handle = searcher.start(chess.Board(), None, ponder=True)
    threading.Event().wait(0.1)
    after = After(300)
    handle.ponderhit(after)
    result = handle.wait(timeout=20)
    assert result.stop_reason == "enough"
    assert after.done is not None and after.done.nodes == result.nodes  # told once, with the final statistics


def test_no_legal_moves_is_an_error(tiny_eval):
    with pytest.raises(SearchError):
        Searcher(tiny_eval).start(chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"), VisitsStopper(10))


def test_bench_search_reports_nodes_per_second(capsys):
    import json

    from lichessbot.cli import main

    assert main(["bench", "search", "--nodes", "40", "--no-pipeline", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = report["runs"][0]["positions"]
    assert [r["position"] for r in rows][:2] == ["startpos", "sicilian-najdorf"]
    assert all(r["nodes"] == 40 and r["nps"] > 0 for r in rows)


def test_a_ponder_miss_reuses_the_subtree_of_the_reply_really_played(tiny_eval):
    searcher = Searcher(tiny_eval)
    board = chess.Board()
    first = searcher.search(board, VisitsStopper(1500))
    after_ours = searcher.node_info([first.best_move])
    replies = sorted(after_ours.children, key=lambda t: -t[1])
    assert len(replies) >= 2
    predicted, missed = (chess.Move.from_uci(u) for u, _ in replies[:2])
    kept = replies[1][1]
    assert kept > 0
    board.push(first.best_move)
    ponder_board = board.copy()
    ponder_board.push(predicted)
    handle = searcher.start(ponder_board, VisitsStopper(300), ponder=True)
    handle.stop()
    handle.wait()
    board.push(missed)  # the opponent played another move: a ponder miss
    second = searcher.search(board, VisitsStopper(kept + 100))
    assert second.reused_nodes == kept
    # A search that was not a ponder search keeps no anchor: an unrelated line starts fresh.
    board.pop()
    board.pop()
    board.push(chess.Move.from_uci("a2a3"))
    assert searcher.search(board, VisitsStopper(20)).reused_nodes == 0


class _SlowNet(FakeEvaluator):
    """A network that takes ``delay`` seconds a batch (a loaded CPU)."""

    def __init__(self, delay: float) -> None:
        super().__init__(value=0.0)
        self.delay = delay

    def run(self, planes, **kw):
        time.sleep(self.delay)
        return super().run(planes, **kw)


@pytest.mark.slow
def test_the_move_comes_as_soon_as_the_search_stops_not_after_the_batch_at_the_network():
    # lc0 sends bestmove when the stop fires (search.cc MaybeTriggerStop); the batch still at the network is
    # backed up afterwards, so a stopped search does not wait one more network call.
    searcher = Searcher(_SlowNet(0.5), SearchParams(minibatch_size=8), pipeline=True)
    handle = searcher.start(chess.Board())
    time.sleep(0.75)  # mid-way through the second batch; a third is gathered and sent when it returns
    t = time.perf_counter()
    handle.stop()
    result = handle.wait(timeout=10)
    waited = time.perf_counter() - t
    assert result.stop_reason == "stop" and waited < 0.6  # the second batch's rest, not also the third
    assert not handle.done  # ... and the thread backs the batch up after
    handle.join()
    assert handle.done and searcher.tree_info()["root_n"] >= result.nodes
    searcher.close()
