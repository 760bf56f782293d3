"""The learned move overhead (lichessbot.timeman.overhead) as pure bookkeeping: lichess's clocks in, our own
thinking time taken off, a high percentile out, bounded, starting from the configured value."""

from __future__ import annotations

import pytest

from lichessbot.config import TimemanConfig
from lichessbot.timeman import Clock, OverheadEstimator, allocate
from lichessbot.timeman.overhead import OVERHEAD_MAX_MS, OVERHEAD_MIN_MS, quantile


def _move(est: OverheadEstimator, ply: int, before: int, thought_s: float, after: int, inc: int = 0) -> int | None:
    """Our move at ``ply`` posted ``thought_s`` after the state with our clock ``before``; lichess then reports
    ``after`` in the next state (ms)."""
    est.posted(ply, Clock(before, inc), thought_s)
    return est.seen(ply + 1, Clock(after, inc))


def test_a_move_costs_what_lichess_charged_less_our_thinking():
    est = OverheadEstimator(300)
    assert est.estimate_ms == 300  # the configured start, before any move is measured
    # 60 s on the clock, 1 s increment; we thought 0.8 s; lichess reports 60.0 - 1.0 + 1.0 => 0.2 s lost on the wire
    assert _move(est, 2, 60_000, 0.8, 60_000 - 1_000 + 1_000, inc=1_000) == 200
    assert est.estimate_ms == 200


def test_the_estimate_is_a_high_percentile_of_the_game_bounded():
    est = OverheadEstimator(300)
    clock = 60_000
    for i, cost in enumerate([40, 45, 50, 42, 48, 44, 46, 41, 43, 47, 400]):  # one slow move in eleven
        _move(est, 2 + 2 * i, clock, 0.1, clock - 100 - cost)
        clock -= 100 + cost
    assert est.estimate_ms == quantile(est.samples, 0.9) == 50  # the 10th of 11: the outlier is left out
    assert quantile([5, 1, 3], 0.9) == 5  # few samples: their maximum (a cautious start)
    tiny = OverheadEstimator(300)
    _move(tiny, 2, 10_000, 0.5, 10_000 - 500)  # a localhost server: nothing lost on the wire
    assert tiny.estimate_ms == OVERHEAD_MIN_MS
    huge = OverheadEstimator(300)
    _move(huge, 2, 60_000, 0.1, 60_000 - 100 - 9_000)
    assert huge.estimate_ms == OVERHEAD_MAX_MS


def test_unclocked_missed_and_taken_back_moves_are_not_measured():
    est = OverheadEstimator(100)
    assert _move(est, 0, 60_000, 1.0, 60_000) is None  # lichess's clock does not run on the first moves
    assert _move(est, 1, 60_000, 1.0, 60_000) is None
    est.posted(4, Clock(50_000), 0.2)
    assert est.seen(7, Clock(49_000)) is None  # the state after our move never came: the next one is two later
    est.posted(6, Clock(50_000), 0.2)
    assert est.seen(5, Clock(50_000)) is None  # a takeback
    assert est.seen(7, Clock(49_000)) is None  # ... and the taken back move is forgotten
    assert est.samples == [] and est.estimate_ms == 100
    est.posted(8, Clock(50_000), 0.2)
    est.posted(8, Clock(50_000), 0.9)  # a retried post replaces the first
    assert est.seen(9, Clock(49_000)) == 100
    s = est.summary()
    assert (s.samples, s.median_ms, s.max_ms, s.default_ms) == (1, 100, 100, 100)


def test_the_measured_overhead_is_what_the_allocation_charges():
    cfg = TimemanConfig(move_overhead=300)
    configured = allocate(Clock(60_000), 20, cfg)
    measured = allocate(Clock(60_000, overhead=40), 20, cfg)
    assert configured.overhead_ms == 300 and measured.overhead_ms == 40
    # 52 moves' overhead kept back (Stockfish src/timeman.cpp): 260 ms less reserved frees 260*52 ms
    assert measured.target * 1000 == pytest.approx(configured.target * 1000 + 260 * 52 / configured.moves_left)


def test_the_moves_to_come_are_reserved_the_median_and_one_move_its_high_percentile():
    est = OverheadEstimator(100)
    clock = 60_000
    for i, cost in enumerate([40] * 8 + [900] * 2):  # two stalls in ten (a loaded machine, slow answers)
        _move(est, 2 + 2 * i, clock, 0.1, clock - 100 - cost)
        clock -= 100 + cost
    assert (est.typical_ms, est.estimate_ms) == (40, 900)
    cfg = TimemanConfig()
    b = allocate(Clock(30_000, overhead=est.estimate_ms, overhead_typical=est.typical_ms), 20, cfg)
    assert b.reserve_ms == 40 * 52 and b.overhead_ms == 900  # 52 x 900 ms would leave a 30 s clock nothing
    assert b.hard_max * 1000 <= 30_000 - 900 - b.margin_ms
    assert b.target > 0.3
