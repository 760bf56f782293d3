"""The evaluation service: one network call for the batches of several searches, fair and prioritised."""

from __future__ import annotations

import threading
import time

import chess
import numpy as np
import pytest

from lichessbot.config import SearchParams, parse_config
from lichessbot.diagnostics.fake_net import FakeEvaluator, GpuModelEvaluator
from lichessbot.neural.runner import NetOutputs
from lichessbot.neural.service import EvalService
from lichessbot.search import Searcher
from lichessbot.thinker.engine import Engine
from lichessbot.timeman import VisitsStopper
from tests.fake_lichess import BotRun, FakeLichess, resign_after


class _Recorder(FakeEvaluator):
    """Records the calls; the first call waits for ``gate`` so that requests pile up behind it. As a CPU
    provider with one thread, the service runs one worker."""

    provider = "CPUExecutionProvider"

    def __init__(self):
        super().__init__()
        self.calls: list[int] = []
        self.values: list[float] = []  # the first plane value of each call's first position
        self.gate = threading.Event()

    def run(self, planes, *, game="", priority=0, out=None):
        self.calls.append(len(planes))
        self.values.append(float(planes[0, 0, 0, 0]))
        if len(self.calls) == 1:
            self.gate.wait(5)
        res = super().run(planes)
        logits = res.logits.copy()
        logits[:, 0] = planes[:, 0, 0, 0]  # the caller's own first plane value comes back in its rows
        return NetOutputs(logits, res.wdl, res.mlh)


def _submit(svc, value, rows, game, priority=0, results=None):
    planes = np.full((rows, 112, 8, 8), value, dtype=np.float32)
    t = threading.Thread(target=lambda: results.append((game, svc.run(planes, game=game, priority=priority))))
    t.start()
    return t


def _wait_queue(svc, n):
    deadline = time.time() + 5
    while len(svc._queue) < n and time.time() < deadline:
        time.sleep(0.005)


def test_waiting_batches_merge_into_one_call_and_each_search_gets_its_own_rows():
    ev = _Recorder()
    svc = EvalService(ev, max_batch=64)
    results: list = []
    first = _submit(svc, 9.0, 4, "a", results=results)
    while not ev.calls:
        time.sleep(0.005)
    threads = [_submit(svc, float(k), 8, f"g{k}", results=results) for k in range(3)]
    _wait_queue(svc, 3)
    ev.gate.set()
    for t in [first, *threads]:
        t.join(5)
    assert ev.calls == [4, 24]  # the three waiting batches went in one call
    for game, (logits, wdl, mlh) in results:
        value = 9.0 if game == "a" else float(game[1:])
        assert logits.shape == (4 if game == "a" else 8, 1858) and np.all(logits[:, 0] == value)
        assert wdl.shape == (len(logits), 3) and mlh is None
    st = svc.stats()
    assert st["batches"] == 2 and st["mean_fill"] == 14 and st["mean_games"] == 2
    assert set(st["share"]) == {"a", "g0", "g1", "g2"}
    svc.close()


def test_clock_games_go_before_pondering_ones_and_no_game_waits_twice_behind_another():
    ev = _Recorder()
    svc = EvalService(ev, max_batch=8)  # one request per call
    results: list = []
    first = _submit(svc, 0.0, 8, "busy", results=results)
    while not ev.calls:
        time.sleep(0.005)
    order = []
    threads = [_submit(svc, 1.0, 8, "ponder", priority=1, results=order),
               _submit(svc, 2.0, 8, "busy", results=order)]
    _wait_queue(svc, 2)
    threads.append(_submit(svc, 3.0, 8, "other", results=order))
    _wait_queue(svc, 3)
    ev.gate.set()
    for t in [first, *threads]:
        t.join(5)
    # "other" was never served, "busy" just was: "other" first although it came last; pondering last.
    assert ev.values == [0.0, 3.0, 2.0, 1.0]
    svc.close()


def test_on_a_gpu_a_second_worker_stages_the_next_call_only_when_half_a_call_waits():
    ev = _Recorder()
    ev.provider = "CUDAExecutionProvider"
    svc = EvalService(ev, max_batch=64)
    assert svc.concurrency == 2 and svc.inflight == 3
    results: list = []
    first = _submit(svc, 9.0, 8, "a", results=results)
    while not ev.calls:
        time.sleep(0.005)
    small = _submit(svc, 1.0, 8, "b", results=results)
    time.sleep(0.1)
    assert ev.calls == [8], "8 of 64 positions waiting: the second worker waits for more"
    more = [_submit(svc, 2.0, 16, f"c{k}", results=results) for k in range(2)]
    deadline = time.time() + 5
    while len(ev.calls) < 2 and time.time() < deadline:
        time.sleep(0.005)
    assert ev.calls == [8, 40], "half a call waiting: the second worker takes it while the first runs"
    ev.gate.set()
    for t in [first, small, *more]:
        t.join(5)
    svc.close()


def test_an_error_reaches_every_search_of_the_call_and_a_closed_service_refuses():
    class Failing(FakeEvaluator):
        def run(self, planes, *, game="", priority=0, out=None):
            raise ValueError("network failed")

    svc = EvalService(Failing())
    with pytest.raises(ValueError, match="network failed"):
        svc.run(np.zeros((2, 112, 8, 8), np.float32))
    svc.close()
    with pytest.raises(RuntimeError, match="closed"):
        svc.run(np.zeros((2, 112, 8, 8), np.float32))


def test_searches_through_the_service_are_the_searches_without_it():
    board = chess.Board()
    alone = Searcher(FakeEvaluator(), SearchParams(minibatch_size=16)).search(board, VisitsStopper(500))
    svc = EvalService(FakeEvaluator())
    served = Searcher(svc, SearchParams(minibatch_size=16), game="x").search(board, VisitsStopper(500))
    assert [(rm.move, rm.n) for rm in served.root_moves] == [(rm.move, rm.n) for rm in alone.root_moves]
    assert svc.stats()["share"] == {"x": 1.0}
    svc.close()


def test_on_a_modelled_gpu_concurrent_searches_share_calls():
    svc = EvalService(GpuModelEvaluator(fixed=0.02, per_position=0.0))
    results = []

    def search(k):
        s = Searcher(svc, SearchParams(minibatch_size=32), game=f"g{k}")
        results.append(s.search(chess.Board(), VisitsStopper(600)))

    threads = [threading.Thread(target=search, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 4 and all(r.nodes == 600 for r in results)
    assert svc.stats()["mean_games"] > 1.5
    svc.close()


@pytest.mark.slow
def test_four_concurrent_bot_games_share_the_evaluation_service(tmp_path):
    from tests.tinynet import build_tiny_onnx

    net = build_tiny_onnx(tmp_path / "tiny.onnx", seed=3)
    cfg = parse_config({"engine": {"network": str(net), "backend": "cpu", "threads": 1,
                                   "search": {"minibatch_size": 8}}})
    with Engine(cfg, nodes=400) as engine, FakeLichess() as server, \
            BotRun(server, engine, {"challenge": {"concurrency": 4}}):
        ids = [server.challenge(limit=120, opponent=resign_after(6)) for _ in range(4)]
        assert server.wait_for(lambda: all(i in server.games and server.games[i].over for i in ids), 90)
        games = [server.games[i] for i in ids]
    assert all(g.status == "resign" for g in games)
    st = engine.service.stats()
    assert st["batches"] > 0 and st["mean_games"] > 1.0, st
    assert len(st["share"]) == 4
