"""The clock at human time controls (issue 49 item 3): from lila's blitz on (estimated game time ``limit + 40 x
increment`` of 180 s and more), no move may cost more than a tenth of the remaining clock, and the first search's
bonus (lc0 legacy.cc) is not multiplied by the late stop. Bullet is pinned unchanged by test_timeman_pinned.py."""

from __future__ import annotations

import chess
import pytest

from lichessbot.config import TimemanConfig
from lichessbot.search import RootMove, SearchStats
from lichessbot.timeman import Clock, TimeManager, allocate
from lichessbot.timeman.allocation import HUMAN_MOVE_SHARE, human_time_control

E2E4, D2D4 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("d2d4")
HUMAN = [(180_000, 2_000), (300_000, 3_000), (900_000, 10_000)]  # 3+2, 5+3, 15+10


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def board_at(ply: int) -> chess.Board:
    board = chess.Board()
    board.fullmove_number = ply // 2 + 1
    board.turn = chess.WHITE if ply % 2 == 0 else chess.BLACK
    return board


def stats(elapsed: float, *, unstable: bool = False) -> SearchStats:
    """A search's statistics: the most visited move e2e4; ``unstable``: d2d4 has the better Q (the late stop's
    signal)."""
    rival_q = 0.3 if unstable else 0.0
    return SearchStats(elapsed=elapsed, playouts=200, nodes=201, reused_nodes=0, nps=0, depth=0, seldepth=0,
                       legal_moves=20, root_moves=[RootMove(move=E2E4, n=120, p=0.5, q=0.1, u=0, d=0, m=0),
                                                   RootMove(move=D2D4, n=80, p=0.3, q=rival_q, u=0, d=0, m=0)])


@pytest.mark.parametrize(("initial_s", "inc_s", "human"), [
    (15, 0, False), (60, 0, False), (10, 0.1, False), (60, 0.6, False), (120, 1, False),  # 2+1: 160 s, bullet
    (180, 0, True), (180, 2, True), (300, 3, True), (900, 10, True), (0, 5, True),  # 0+5: 200 s, blitz
])
def test_human_time_controls_are_lilas_blitz_and_slower(initial_s: float, inc_s: float, human: bool) -> None:
    assert human_time_control(Clock(time=1_000, inc=int(inc_s * 1000), initial=int(initial_s * 1000))) is human
    assert not human_time_control(Clock(time=int(initial_s * 1000), inc=int(inc_s * 1000)))  # no initial: unknown


@pytest.mark.parametrize(("initial", "inc"), HUMAN)
@pytest.mark.parametrize("ply", [0, 2, 3, 10])  # UCI's first go; the bot's first clocked move; after a book
@pytest.mark.parametrize("overhead", [None, 40, 400])
def test_the_first_clocked_move_costs_at_most_a_tenth_of_the_clock(initial: int, inc: int, ply: int,
                                                                   overhead: int | None) -> None:
    cfg = TimemanConfig()
    clock = Clock(time=initial, inc=inc, initial=initial, overhead=overhead, overhead_typical=overhead)
    b = allocate(clock, ply, cfg, first_search=True)
    cost = overhead if overhead is not None else cfg.move_overhead
    assert 0 < b.target <= b.hard_max
    assert b.hard_max * 1000 + cost + b.margin_ms <= HUMAN_MOVE_SHARE * initial + 1e-6  # the margin: a batch late


@pytest.mark.parametrize(("initial", "inc"), [(180_000, 0), *HUMAN])
@pytest.mark.parametrize("spend", ["hard_max", "early"])
@pytest.mark.parametrize("uci", [False, True])
def test_no_move_of_a_game_may_cost_more_than_a_tenth_of_the_clock(initial: int, inc: int, spend: str,
                                                                   uci: bool) -> None:
    """A whole game through the time manager, 100 moves a side: each move spends its hard maximum (the late stop
    every move) or stops early at half its target (banking the rest, spent on the next move), and pays 150 ms
    of overhead. UCI clocks carry no starting clock: the manager takes the first one."""
    fake, overhead = FakeTime(), 150
    tm = TimeManager(TimemanConfig(), monotonic=fake)
    time_ms, worst = initial, 0.0
    for i in range(100):
        unclocked = not uci and i == 0  # lichess: each side's first move is unclocked
        clock = Clock(time=time_ms, inc=inc, initial=None if uci else initial, overhead=overhead,
                      overhead_typical=overhead)
        chain = tm.stopper(board_at(1 + 2 * i), clock=clock, first_moves_unclocked=unclocked)
        assert chain is not None and chain.budget is not None
        b = chain.budget
        used = b.hard_max if spend == "hard_max" else b.target / 2
        fake.now += used
        chain.on_search_done(stats(used))
        if unclocked:
            continue
        share = (used * 1000 + overhead) / time_ms
        worst = max(worst, share)
        # the search and its overhead within a tenth (when the overhead alone is more, no search at all)
        assert b.hard_max * 1000 <= max(0.0, HUMAN_MOVE_SHARE * time_ms - overhead - b.margin_ms) + 1e-6, (i, b)
        time_ms = int(time_ms - used * 1000 - overhead + inc)
        assert time_ms > 0
    assert worst > 0.05  # the cap is reached at times: the check above is not vacuous


@pytest.mark.parametrize(("initial", "inc"), HUMAN)
def test_the_first_move_bonus_and_the_late_stop_do_not_multiply(initial: int, inc: int) -> None:
    """At ply 0 the bonus target (x2.8) is below the tenth of the clock, so the cap does not hide the rule: the
    hard maximum is the bonus-given target, not twice it."""
    cfg = TimemanConfig()
    clock = Clock(time=initial, inc=inc, initial=initial)
    plain = allocate(clock, 0, cfg)
    first = allocate(clock, 0, cfg, first_search=True)
    assert first.target == pytest.approx(plain.target * (1 + cfg.first_move_bonus))  # lc0's bonus, kept
    assert first.target * 1000 < HUMAN_MOVE_SHARE * initial - cfg.move_overhead  # not capped
    assert first.hard_max <= max(first.target, cfg.late_stop_factor * plain.target) + 1e-9
    assert first.hard_max == first.target
    assert plain.hard_max == pytest.approx(cfg.late_stop_factor * plain.target)  # other moves still extend


def test_the_first_clocked_search_stops_at_its_target_even_when_unstable() -> None:
    """Through the manager and its stopper chain at 3+2 (UCI: no starting clock, ply 0, where the tenth of the
    clock does not bind): an unstable best move (a rival with a better Q) takes the first clocked search no
    further than its bonus-given target, while the late stop extends the next one."""
    fake = FakeTime()
    cfg = TimemanConfig(early_stop=False, smart_pruning=False)
    tm = TimeManager(cfg, monotonic=fake)
    first = tm.stopper(board_at(0), clock=Clock(180_000, 2_000))
    assert first is not None and first.budget is not None
    fake.now += 1e6  # the stats' elapsed governs
    at_target = stats(first.budget.target, unstable=True)
    assert first.should_stop(at_target) is not None
    assert first.kind in ("target", "hard-max") and not first.extended  # hard max = target: the same deadline
    first.on_search_done(at_target)
    second = tm.stopper(board_at(2), clock=Clock(165_000, 2_000))
    assert second is not None and second.budget is not None
    fake.now += 1e6
    assert second.budget.hard_max > second.budget.target
    assert second.should_stop(stats(second.budget.target, unstable=True)) is None  # the late stop extends
