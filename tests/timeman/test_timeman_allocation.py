"""Allocation as pure functions of fake clocks: bullet to classical, increments, movestogo, low clocks."""

from __future__ import annotations

import chess
import pytest

from lichessbot.config import ConfigError, TimemanConfig, parse_config
from lichessbot.timeman import Budget, Clock, ClockError, TimeManager, allocate, expected_moves_left, game_ply
from lichessbot.timeman.allocation import fixed_budget, safety_margin_ms

LC0 = TimemanConfig(move_overhead=200, min_moves_left=1, max_move_share=1.0, overhead_per_move=False)  # lc0 legacy


def test_expected_moves_left_follows_lc0_curve():
    assert expected_moves_left(0) == pytest.approx(51.5)
    assert expected_moves_left(20) == pytest.approx(31.52, abs=0.01)  # docs/lc0-conventions.md §6
    assert expected_moves_left(40) < expected_moves_left(20)


def test_lc0_worked_numbers():
    # docs/lc0-conventions.md §6: ply 0, 60 s, no increment -> 1161 ms, x2.8 on the first move -> 3251 ms;
    # ply 40, 60 s + 1 s -> about 2866 ms.
    assert allocate(Clock(60_000), 0, LC0).target == pytest.approx(1.1612, abs=1e-3)
    assert allocate(Clock(60_000), 0, LC0, first_search=True).target == pytest.approx(3.251, abs=2e-3)
    assert allocate(Clock(60_000, 1_000), 40, LC0).target == pytest.approx(2.866, abs=2e-3)


def test_game_ply_from_fen_move_number():
    board = chess.Board()
    assert game_ply(board) == 0
    board.push_san("e4")
    assert game_ply(board) == 1
    assert game_ply(chess.Board("8/8/8/8/8/8/8/K1k5 w - - 0 41")) == 80


@pytest.mark.parametrize(
    ("clock", "ply"),
    [
        (Clock(15_000), 0),  # 1/4+0 ultrabullet
        (Clock(60_000), 30),  # 1+0 bullet
        (Clock(120_000, 1_000), 50),  # 2+1
        (Clock(180_000), 90),  # 3+0 blitz, late
        (Clock(600_000, 5_000), 20),  # 10+5 rapid
        (Clock(5_400_000, 30_000), 60),  # 90+30 classical
        (Clock(5_400_000, 0, movestogo=40), 10),  # 40 moves in 90 minutes
    ],
)
def test_budget_is_a_small_part_of_the_clock_and_within_its_caps(clock, ply):
    cfg = TimemanConfig()
    b = allocate(clock, ply, cfg)
    assert 0 <= b.target <= b.hard_max
    # the target is 0 only when the clock cannot pay the move overhead of the moves still to come
    assert b.target > 0 or clock.time + clock.inc * (b.moves_left - 1) <= cfg.move_overhead * 52
    assert b.hard_max <= cfg.late_stop_factor * b.target + 1e-9
    assert b.hard_max * 1000 <= clock.time - cfg.move_overhead - b.margin_ms
    assert b.hard_max * 1000 <= cfg.max_move_share * clock.time
    assert b.target * 1000 <= clock.time / 8  # never a reckless share of the clock
    assert b.target * 1000 >= min(clock.inc, clock.time) * 0.5 or clock.inc == 0


def test_increment_buys_time():
    cfg = TimemanConfig()
    assert allocate(Clock(60_000, 2_000), 30, cfg).target > allocate(Clock(60_000), 30, cfg).target + 1.5


def test_movestogo_shares_the_time_among_the_moves_to_go():
    cfg = TimemanConfig(max_move_share=1.0)
    b = allocate(Clock(40_000, 0, movestogo=4), 60, cfg)
    assert b.moves_left == 4
    # the overhead kept back for each move to go and two more (Stockfish src/timeman.cpp: 2 + movestogo)
    assert b.target == pytest.approx((40_000 - 6 * cfg.move_overhead) / 4 / 1000)
    # the last move before the control may use everything but the overhead and the margin
    last = allocate(Clock(10_000, 0, movestogo=1), 60, cfg)
    assert last.hard_max == pytest.approx((10_000 - cfg.move_overhead - last.margin_ms) / 1000)


def test_sudden_death_floors_the_moves_left():
    cfg = TimemanConfig()
    assert expected_moves_left(60) < cfg.min_moves_left
    assert allocate(Clock(30_000), 120, cfg).moves_left == cfg.min_moves_left


@pytest.mark.parametrize("time_ms", [0, 50, 300, 400, 600, 1_000, 2_000, 5_000, 9_999])
def test_low_clock_panic_never_plans_past_the_reserve(time_ms):
    cfg = TimemanConfig()
    for ply in (0, 40, 120):
        for first in (False, True):
            b = allocate(Clock(time_ms, 0), ply, cfg, banked_ms=5_000, first_search=first)
            assert 0 <= b.target <= b.hard_max
            assert b.hard_max * 1000 <= max(0.0, time_ms - cfg.move_overhead - b.margin_ms) + 1e-9


def test_safety_margin_grows_as_the_clock_gets_low():
    cfg = TimemanConfig(safety_margin=50, low_clock=10_000, low_clock_margin=250)
    assert safety_margin_ms(60_000, cfg) == 50
    assert safety_margin_ms(5_000, cfg) == pytest.approx(175)
    assert safety_margin_ms(0, cfg) == pytest.approx(300)
    assert safety_margin_ms(2_000, cfg) > safety_margin_ms(8_000, cfg)


def test_negative_uci_time_is_an_empty_clock():
    b = allocate(Clock(-500, -100), 10, TimemanConfig())
    assert b.target == 0 and b.hard_max == 0


def test_banked_time_is_spent_on_the_next_move():
    cfg = TimemanConfig()
    plain = allocate(Clock(60_000), 30, cfg)
    banked = allocate(Clock(60_000), 30, cfg, banked_ms=2_000)
    assert banked.bank_used_ms == 2_000
    # lc0: (total - bank) / movestogo + bank
    assert banked.target == pytest.approx(plain.target + 2.0 - 2.0 / plain.moves_left, abs=1e-6)


def test_first_search_bonus_grows_with_book_plies():
    cfg = TimemanConfig(max_move_share=1.0)
    base = allocate(Clock(600_000), 8, cfg).target
    first = allocate(Clock(600_000), 8, cfg, first_search=True).target
    assert first == pytest.approx(base * (1 + 1.8 + 0.25 * 8))


def test_late_stop_off_makes_the_target_the_hard_max():
    b = allocate(Clock(60_000), 30, TimemanConfig(late_stop=False))
    assert b.hard_max == b.target


def test_a_movetime_search_without_a_clock_gets_a_fixed_budget_of_movetime_less_overhead():
    stopper = TimeManager(TimemanConfig(move_overhead=100)).stopper(chess.Board(), movetime=1.0)
    assert stopper.budget.target == stopper.budget.hard_max == pytest.approx(0.9)
    assert not stopper.budget.clocked
    assert fixed_budget(0.25) == Budget(target=0.25, hard_max=0.25, clocked=False)


def test_a_movetime_beside_a_clock_caps_the_budget_and_keeps_every_other_field():
    tm = TimeManager(TimemanConfig(move_overhead=100))
    clocked = tm.stopper(chess.Board(), clock=Clock(60_000))
    assert clocked is not None and clocked.budget is not None and clocked.budget.reserve_ms > 0
    capped = TimeManager(TimemanConfig(move_overhead=100)).stopper(chess.Board(), clock=Clock(60_000), movetime=0.2)
    assert capped is not None and capped.budget is not None
    assert capped.budget.target == capped.budget.hard_max == pytest.approx(0.1)  # movetime less the overhead
    full, cut = vars(clocked.budget), vars(capped.budget)
    assert {k: v for k, v in cut.items() if k not in ("target", "hard_max")} == {
        k: v for k, v in full.items() if k not in ("target", "hard_max")}  # reserve_ms kept, and every other
    with pytest.raises(TypeError):
        Budget(1.0, 2.0)  # type: ignore[misc]  # keywords only


def test_bad_clock_and_config_are_refused():
    with pytest.raises(ClockError, match="movestogo"):
        Clock(1_000, movestogo=0)
    with pytest.raises(ConfigError, match="timeman.smart_pruning_factor"):
        parse_config({"timeman": {"smart_pruning_factor": 0}})
    with pytest.raises(ConfigError, match="timeman.nonsense: unknown key"):
        parse_config({"timeman": {"nonsense": 1}})


@pytest.mark.parametrize("base_ms", [15_000, 60_000, 180_000])
def test_a_long_sudden_death_game_never_flags_when_each_move_costs_its_hard_max_plus_latency(base_ms):
    # No increment, 150 moves of ours, every move using its whole hard maximum plus 50 ms of latency, the
    # overhead charged twice that (a high percentile of the moves' costs, as the bot learns it): the clock
    # must never run out (Stockfish's reserve of 52 moves' overhead).
    cfg = TimemanConfig(move_overhead=100)
    latency_ms = 50
    time_ms = float(base_ms)
    for move in range(150):
        b = allocate(Clock(int(time_ms)), 2 * move, cfg, first_search=move == 0)
        time_ms -= b.hard_max * 1000 + latency_ms
        assert time_ms > 0, f"flagged at move {move}"


def test_charging_the_overhead_once_flags_in_the_same_long_game():
    # The same game under lc0's rule (overhead charged once, late stop on a low clock too) flags.
    cfg = TimemanConfig(move_overhead=100, overhead_per_move=False, low_clock=0)
    time_ms = 60_000.0
    for move in range(150):
        b = allocate(Clock(int(max(0.0, time_ms))), 2 * move, cfg, first_search=move == 0)
        time_ms -= b.hard_max * 1000 + 50
    assert time_ms < 0
