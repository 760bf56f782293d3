"""lc0's ``go searchmoves``: the search visits only the given root moves, in the core, the searcher and UCI."""

from __future__ import annotations

import io
import time

import chess
import pytest

from lichessbot.config import SearchParams
from lichessbot.diagnostics.fake_net import FakeEvaluator
from lichessbot.search import Limits, Searcher, SearchError
from lichessbot.uci import UciEngine

ONLY = [chess.Move.from_uci("a2a3"), chess.Move.from_uci("h2h4")]


def test_the_search_visits_only_the_search_moves_also_in_a_reused_tree():
    with Searcher(FakeEvaluator(value=0.1), SearchParams(minibatch_size=16)) as searcher:
        board = chess.Board()
        free = searcher.search(board, Limits(nodes=400))
        assert len(free.root_moves) == 20
        kept = searcher.search(board, Limits(nodes=800), searchmoves=ONLY)
        assert {rm.move for rm in kept.root_moves} == set(ONLY) and kept.best_move in ONLY
        assert sum(rm.n for rm in kept.root_moves) >= 800 - free.nodes - 1  # every new visit went to them
        again = searcher.search(board, Limits(nodes=900))  # set_position lifts the restriction
        assert len(again.root_moves) == 20


def test_an_illegal_search_move_is_a_search_error():
    with Searcher(FakeEvaluator()) as searcher, pytest.raises(SearchError, match="e2e5"):
        searcher.search(chess.Board(), Limits(nodes=10), searchmoves=[chess.Move.from_uci("e2e5")])


def _uci_go(tiny_net, go: str) -> list[str]:
    out = io.StringIO()
    eng = UciEngine(out=out)
    for line in (f"setoption name WeightsFile value {tiny_net}", "setoption name Backend value cpu",
                 "setoption name Threads value 1", "position startpos", go):
        eng.handle(line)
    deadline = time.monotonic() + 20
    while "bestmove" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    eng.handle("quit")
    return out.getvalue().splitlines()


def test_uci_go_searchmoves_searches_those_moves(tiny_net):
    lines = _uci_go(tiny_net, "go nodes 300 searchmoves a2a3 h2h4")
    assert lines[-1].split()[1] in ("a2a3", "h2h4")
    pvs = [line.split(" pv ")[1].split()[0] for line in lines if line.startswith("info") and " pv " in line]
    assert pvs and set(pvs) <= {"a2a3", "h2h4"}
    assert not any("error" in line for line in lines)


def test_uci_reports_an_illegal_search_move_and_searches_every_move(tiny_net):
    lines = _uci_go(tiny_net, "go nodes 50 searchmoves e2e5")
    assert any(line.startswith("info string error") and "e2e5" in line for line in lines)
    assert lines[-1].startswith("bestmove ")
