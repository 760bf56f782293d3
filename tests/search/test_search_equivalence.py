"""The Rust core searches exactly as the Python search it replaced: equal root visit counts.

tests/data/search_equivalence.json holds the root visits of the Python PUCT search (commit 6498496,
tests/data/make_search_equivalence.py) on 52 positions (four illegal FENs of the first draft, a side to move
giving check, dropped: the core refuses them) -- start, openings, middlegames, en passant, promotions,
castling rights, repetitions, rule 50 near 100, mates in 1 and 2, stalemate traps, Chess960 -- at 400 nodes,
minibatch 1, unpipelined, with the deterministic evaluator of tests/equivalence.py.
Unpipelined because the Python search was not deterministic when pipelined: its worker thread stored a
batch's results in the NN cache while the next batch was being gathered, so a transposition of a
pending leaf was a cache hit or not depending on timing. The core stores results when it backs them
up, in the search thread.
"""

from __future__ import annotations

import json
from pathlib import Path

import chess
import pytest

from lichessbot.config import SearchParams
from lichessbot.search import Limits, Searcher
from tests.equivalence import DeterministicEvaluator

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "data" / "search_equivalence.json").read_text())


@pytest.fixture(scope="module")
def det_eval(tiny_net) -> DeterministicEvaluator:
    return DeterministicEvaluator(str(tiny_net))


def _board(case: dict) -> chess.Board:
    board = chess.Board() if case["fen"] == "startpos" else chess.Board(case["fen"], chess960=case["chess960"])
    for mv in case["moves"].split():
        board.push_uci(mv)
    return board


@pytest.mark.parametrize("case", FIXTURE["positions"], ids=[c["label"] for c in FIXTURE["positions"]])
@pytest.mark.slow
def test_root_visits_equal_the_python_search(det_eval, case):
    det_eval.reset()
    searcher = Searcher(det_eval, SearchParams(minibatch_size=FIXTURE["minibatch"]), pipeline=False)
    result = searcher.search(_board(case), Limits(nodes=case["nodes"]))
    searcher.close()
    visits = {rm.move.uci(): rm.n for rm in result.root_moves}
    assert visits == case["visits"]
    assert result.best_move.uci() == case["best"]
