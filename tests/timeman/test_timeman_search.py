"""The time manager driving the real search (FakeEvaluator: no network): stop reasons and banking."""

from __future__ import annotations

import chess
import numpy as np

from lichessbot import search
from lichessbot.config import SearchParams, TimemanConfig
from lichessbot.diagnostics import fake_net as fake
from lichessbot.timeman import Clock, TimeManager


def _searcher(logits=None):
    return search.Searcher(fake.FakeEvaluator(value=0.0, logits=logits), SearchParams(minibatch_size=16),
                           pipeline=False)


def test_one_legal_move_is_played_at_once_in_a_real_search():
    tm = TimeManager(TimemanConfig())
    board = chess.Board("7k/8/8/8/8/8/5PPq/5RK1 w - - 0 40")
    stopper = tm.stopper(Clock(60_000), board)
    assert stopper.budget.target > 1.0  # a long budget, yet ...
    s = _searcher()
    result = s.search(board, search.Limits(), stopper=stopper)
    s.close()
    assert result.best_move == chess.Move.from_uci("g1h2")
    assert result.stop_reason.startswith("immediate: one legal move")
    tm.move_done(result)
    assert tm.stops["immediate"] == 1 and tm.bank_ms > 1000  # the unused budget is banked


def test_a_clear_best_move_stops_before_its_target_and_banks_the_rest():
    from lichessbot._core import POLICY_MOVES as MOVES

    prior = np.zeros(1858, dtype=np.float32)  # e2e4 gets 99 % of the prior among 20 moves
    prior[MOVES.index("e2e4")] = 1.359 * np.log(0.99 * 19 / 0.01)

    tm = TimeManager(TimemanConfig(first_move_bonus=0, book_ply_bonus=0))
    board = chess.Board()
    stopper = tm.stopper(Clock(60_000), board)  # target ~1.2 s: early stop after ~0.6 s
    s = _searcher(prior)
    result = s.search(board, search.Limits(), stopper=stopper)
    s.close()
    assert result.best_move.uci() == "e2e4"
    assert result.stop_reason.startswith(("smart-pruning", "early-stop"))
    tm.move_done(result)
    assert tm.bank_ms > 0
    assert tm.stops[stopper.kind] == 1
