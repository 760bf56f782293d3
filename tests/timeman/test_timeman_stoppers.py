"""Each stop rule against scripted search statistics, the stopper chain, and the TimeManager across moves."""

from __future__ import annotations

import chess
import pytest
import structlog

from lichessbot.config import TimemanConfig
from lichessbot.search import RootMove, SearchStats, StopperHints
from lichessbot.timeman import Budget, ChainedStopper, Clock, TimeManager, VisitsStopper
from lichessbot.timeman.stop_rules import best_by_visits, instability
from lichessbot.timeman.stoppers import BudgetStopper, SmartPruningStopper, stopper_chain


def RM(move: chess.Move, n: int, p: float = 0.1, q: float = 0.0, *, proven: int | None = None) -> RootMove:
    """A real root move of the search's API with visits ``n``, prior ``p`` and ``q``."""
    return RootMove(move=move, n=n, p=p, q=q, u=0.0, d=0.0, m=0.0, proven=proven)


def Stats(elapsed: float, root_moves: list[RootMove], *, playouts: int = 0, nodes: int = 0, reused_nodes: int = 0,
          legal_moves: int = 20) -> SearchStats:
    """The real SearchStats the search hands to stoppers: root moves best first (by visits), nodes the root's
    visits, playouts the visits of this search (nodes - reused) unless given."""
    root_moves = sorted(root_moves, key=lambda r: -r.n)
    nodes = nodes or sum(r.n for r in root_moves) + 1
    return SearchStats(elapsed=elapsed, playouts=playouts or nodes - reused_nodes, nodes=nodes,
                       reused_nodes=reused_nodes, nps=0, depth=0, seldepth=0, root_moves=root_moves,
                       legal_moves=legal_moves)



class FakeTime:
    """A monotonic clock that stands still unless told to move."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


E2E4, D2D4, G1F3, C2C4 = (chess.Move.from_uci(u) for u in ("e2e4", "d2d4", "g1f3", "c2c4"))
BUDGET = Budget(target=1.0, hard_max=2.0, moves_left=30)
# every rule off except the one under test
OFF = dict(immediate=False, smart_pruning=False, early_stop=False, late_stop=False)


def make(budget=BUDGET, prev_q=None, **cfg) -> tuple[ChainedStopper, FakeTime]:
    clock = FakeTime()
    st = stopper_chain(budget, TimemanConfig(**{**OFF, **cfg}), prev_q=prev_q, monotonic=clock)
    clock.now += 1e6  # stats.elapsed, not the wall clock, governs these scripted searches
    return st, clock


def even(elapsed=0.3, **kw) -> Stats:
    """An undecided search: two moves close in visits and Q."""
    return Stats(elapsed, [RM(E2E4, 300, p=0.4, q=0.05), RM(D2D4, 280, p=0.35, q=0.04), RM(G1F3, 50, q=0.0)], **kw)


def test_best_by_visits_and_second():
    best, second = best_by_visits([RM(E2E4, 5), RM(D2D4, 9), RM(G1F3, 7)])
    assert best.move == D2D4 and second == 7
    assert best_by_visits([RM(E2E4, 3)])[1] == 0


def test_one_legal_move_stops_at_once():
    st, _ = make(immediate=True)
    reason = st.should_stop(Stats(0.001, [RM(E2E4, 1, p=1.0)], legal_moves=1))
    assert reason.startswith("immediate") and st.kind == "immediate"
    st_off, _ = make(immediate=False)
    assert st_off.should_stop(Stats(0.001, [RM(E2E4, 1, p=1.0)], legal_moves=1)) is None


def test_never_stops_before_the_root_is_expanded():
    st, _ = make(immediate=True)
    assert st.should_stop(Stats(5.0, [], nodes=0, legal_moves=1)) is None


def test_target_stops_the_search():
    st, _ = make()
    assert st.should_stop(even(0.99)) is None
    reason = st.should_stop(even(1.01))
    assert reason == "target at 1.01 s of 1.00 s"
    assert st.should_stop(even(1.2)) == reason  # the decision sticks


def test_hard_max_caps_every_search():
    st, _ = make(budget=Budget(target=0.0, hard_max=0.0))
    assert st.should_stop(even(0.0)).startswith("hard-max")


def test_smart_pruning_stops_when_the_best_cannot_be_overtaken():
    st, _ = make(smart_pruning=True)
    # 0.5 s of 1.0 s at ~2000 playouts/s: ~750 playouts left / 1.33 = ~565 < lead of 1000 visits
    stats = Stats(0.5, [RM(E2E4, 1100, q=0.1), RM(D2D4, 100)], playouts=700)
    assert st.should_stop(stats).startswith("smart-pruning at 0.50 s of 1.00 s")


def test_smart_pruning_waits_for_its_minimum_and_a_clear_lead():
    st, _ = make(smart_pruning=True)
    assert st.should_stop(Stats(0.15, [RM(E2E4, 1100), RM(D2D4, 100)], playouts=700)) is None  # < 200 ms
    assert st.should_stop(even(0.5)) is None  # lead of 20 visits can be overtaken


def test_smart_pruning_counts_reused_visits():
    # Few new playouts, but the reused tree gives the best move an unassailable lead.
    st, _ = make(smart_pruning=True)
    stats = Stats(0.3, [RM(E2E4, 5000), RM(D2D4, 200)], reused_nodes=5000, playouts=201)
    assert st.should_stop(stats).startswith("smart-pruning")
    fresh, _ = make(smart_pruning=True)
    assert fresh.should_stop(Stats(0.3, [RM(E2E4, 150), RM(D2D4, 50)], playouts=201)) is None


def test_smart_pruning_uses_the_playouts_left_to_a_node_limit():
    st, _ = make(smart_pruning=True)
    stats = Stats(0.3, [RM(E2E4, 300), RM(D2D4, 100)], playouts=400)
    assert st.should_stop(stats, StopperHints(remaining_playouts=100)).startswith("smart-pruning")
    limited, _ = make(smart_pruning=True)
    limited.stoppers.insert(-1, VisitsStopper(401 + 100))  # the chain's own node limit gives the same hint
    assert limited.should_stop(stats).startswith("smart-pruning")


def test_early_stop_on_a_clear_prior_after_half_the_target():
    st, _ = make(early_stop=True)
    clear = [RM(E2E4, 300, p=0.95, q=0.2), RM(D2D4, 250, p=0.02, q=0.1)]
    assert st.should_stop(Stats(0.4, [*clear])) is None  # before half the target
    assert st.should_stop(Stats(0.55, [*clear])).startswith("early-stop at 0.55 s of 1.00 s")


def test_early_stop_on_a_visit_lead():
    st, _ = make(early_stop=True)
    assert st.should_stop(Stats(0.6, [RM(E2E4, 400, p=0.5, q=0.2), RM(D2D4, 150, p=0.3, q=0.1)])) is not None
    st2, _ = make(early_stop=True)
    assert st2.should_stop(Stats(0.6, [RM(E2E4, 400, p=0.5, q=0.2), RM(D2D4, 300, p=0.3, q=0.1)])) is None


def test_no_early_stop_when_another_move_has_a_better_q():
    st, _ = make(early_stop=True)
    assert st.should_stop(Stats(0.6, [RM(E2E4, 400, p=0.95, q=0.1), RM(D2D4, 100, q=0.3)])) is None


def test_no_early_stop_when_q_fell_since_the_previous_move():
    clear = [RM(E2E4, 400, p=0.95, q=0.10), RM(D2D4, 50, q=0.0)]
    fell, _ = make(early_stop=True, prev_q=0.20)
    assert fell.should_stop(Stats(0.6, [*clear])) is None
    held, _ = make(early_stop=True, prev_q=0.14)
    assert held.should_stop(Stats(0.6, [*clear])) is not None


def test_late_stop_extends_while_the_most_visited_is_not_best_by_q():
    st, _ = make(late_stop=True)
    unstable = [RM(E2E4, 400, q=0.0), RM(D2D4, 300, q=0.2)]
    assert st.should_stop(Stats(1.2, [*unstable])) is None
    assert st.extended
    stable = [RM(D2D4, 500, q=0.2), RM(E2E4, 400, q=0.0)]
    assert st.should_stop(Stats(1.5, stable)).startswith("late-stop at 1.50 s")
    assert st.kind == "late-stop"


def test_late_stop_extends_while_q_fell_and_never_past_the_hard_max():
    st, _ = make(late_stop=True, prev_q=0.3)
    fell = [RM(E2E4, 400, q=0.1), RM(D2D4, 100, q=0.0)]
    assert st.should_stop(Stats(1.9, [*fell])) is None
    assert st.should_stop(Stats(2.0, [*fell])).startswith("late-stop at 2.00 s of max 2.00 s")


def test_late_stop_ignores_rivals_with_a_handful_of_visits():
    stats = Stats(1.0, [RM(E2E4, 1000, q=0.0), RM(D2D4, 3, q=0.5)])
    assert instability(stats, None, 0.05) is None


def test_elapsed_counts_from_the_ponderhit():
    st, clock = make()
    clock.now = st.clock.created + 0.5  # handed over 0.5 s ago, after 10 s of pondering
    assert st.should_stop(even(10.0)) is None
    clock.now = st.clock.created + 1.05
    assert st.should_stop(even(10.55)) == "target at 1.05 s of 1.00 s"


# --- the chain -------------------------------------------------------------------------------------------
def timer(chain: ChainedStopper) -> BudgetStopper:
    return next(s for s in chain.stoppers if isinstance(s, BudgetStopper))


def test_the_chain_is_in_lc0s_order_and_the_first_reason_wins():
    clock = FakeTime()
    st = stopper_chain(BUDGET, TimemanConfig(), nodes=500, monotonic=clock)
    clock.now += 1e6
    assert [s.kind for s in st.stoppers] == ["immediate", "target", "nodes", "smart-pruning", "early-stop"]
    # the node limit and the target are both reached: the budget comes first in the chain
    assert st.should_stop(Stats(1.2, [RM(E2E4, 300, q=0.1), RM(D2D4, 280, q=0.0)], nodes=600)).startswith("target")
    assert st.kind == "target"


def test_a_node_limit_alone_stops_exactly_and_tells_the_search_what_is_left():
    assert stopper_chain(None, TimemanConfig()) is None  # go infinite: no stopper at all
    st = stopper_chain(None, TimemanConfig(), nodes=500)
    assert [type(s) for s in st.stoppers] == [VisitsStopper]  # no smart pruning without a clock (calibration)
    hints = StopperHints()
    assert st.should_stop(Stats(10.0, [RM(E2E4, 300), RM(D2D4, 100)], nodes=401), hints) is None
    assert hints.remaining_playouts == 99
    assert st.should_stop(Stats(10.0, [RM(E2E4, 400), RM(D2D4, 99)], nodes=500)) == "nodes limit 500"


def test_a_budget_publishes_the_time_to_its_deadline():
    st, _ = make(smart_pruning=True)
    hints = StopperHints()
    assert st.should_stop(even(0.25), hints) is None
    assert hints.remaining_time_s == pytest.approx(0.75)  # to the target: the best move is stable
    assert isinstance(st.stoppers[-1], SmartPruningStopper)


# --- the manager across moves ---------------------------------------------------------------------
def test_manager_banks_spared_time_and_spends_it_next_move():
    clock = FakeTime()
    cfg = TimemanConfig(first_move_bonus=0, book_ply_bonus=0, early_stop=True, smart_pruning=False)
    tm = TimeManager(cfg, monotonic=clock)
    board = chess.Board()
    st = tm.stopper(board, clock=Clock(60_000))
    first_target = st.budget.target
    clock.now += 1e6
    final = Stats(0.6, [RM(E2E4, 500, p=0.95, q=0.1), RM(D2D4, 20)])
    assert st.should_stop(final).startswith("early-stop")
    st.on_search_done(final)  # the search tells its chain, the chain tells the manager (lc0 OnSearchDone)
    assert tm.bank_ms == pytest.approx((first_target - 0.6) * 1000)
    assert tm.stops["early-stop"] == 1
    board.push_san("e4")
    board.push_san("e5")
    st2 = tm.stopper(board, clock=Clock(59_000))
    assert st2.budget.bank_used_ms == pytest.approx((first_target - 0.6) * 1000)
    assert tm.bank_ms == 0
    assert timer(st2).prev_q == 0.1  # the early/late rules compare with the previous move's Q


def test_manager_one_legal_move_is_played_at_once():
    tm = TimeManager(TimemanConfig())
    board = chess.Board("7k/8/8/8/8/8/5PPq/5RK1 w - - 0 40")  # only Kxh2
    assert board.legal_moves.count() == 1
    st = tm.stopper(board, clock=Clock(60_000))
    assert st.should_stop(Stats(0.0, [RM(next(iter(board.legal_moves)), 1, p=1.0)], legal_moves=1))
    assert st.kind == "immediate"


def test_manager_first_moves_unclocked_think_the_configured_time():
    tm = TimeManager(TimemanConfig(first_moves_think=700))
    st = tm.stopper(chess.Board(), clock=Clock(60_000), first_moves_unclocked=True)
    assert st.budget.target == st.budget.hard_max == pytest.approx(0.7)
    assert not st.budget.clocked
    st.on_search_done(Stats(0.1, [RM(E2E4, 10)]))
    assert tm.bank_ms == 0  # unclocked time is not banked
    # the first clocked search still gets lc0's first-search bonus
    board = chess.Board()
    board.push_san("e4")
    board.push_san("e5")
    bonus = tm.stopper(board, clock=Clock(60_000)).budget.target
    assert bonus > 2.5 * tm.stopper(board, clock=Clock(60_000)).budget.target


def test_manager_movetime_and_infinite():
    tm = TimeManager(TimemanConfig(move_overhead=100))
    st = tm.stopper(chess.Board(), movetime=2.0)
    assert st.budget.target == pytest.approx(1.9) and not st.budget.clocked
    assert tm.stopper(chess.Board()) is None
    assert tm.stopper(chess.Board(), clock=Clock(600_000), infinite=True) is None and tm.budget is None
    capped = tm.stopper(chess.Board(), clock=Clock(600_000), movetime=0.5)
    assert capped.budget.hard_max == pytest.approx(0.4)
    only_nodes = tm.stopper(chess.Board(), nodes=800, infinite=True)  # lc0: go infinite nodes N stops at N
    assert only_nodes.budget is None and [s.kind for s in only_nodes.stoppers] == ["nodes"]


def test_a_node_limited_search_leaves_the_bank_alone():
    tm = TimeManager(TimemanConfig())
    tm.bank_ms = 500.0
    st = tm.stopper(chess.Board(), nodes=100)
    st.on_search_done(Stats(0.1, [RM(E2E4, 100)]))
    assert tm.bank_ms == 500.0 and not tm.stops


def test_stops_are_logged_with_their_reason():

    with structlog.testing.capture_logs() as logs:
        st, _ = make()
        st.should_stop(even(1.5))
    stops = [e for e in logs if e["event"] == "timeman.stop"]
    assert stops and stops[0]["reason"] == "target at 1.50 s of 1.00 s"


def test_a_proven_win_or_a_single_unlost_move_stops_at_once():
    st, _ = make(immediate=True)
    win = [RM(E2E4, 10, q=1.0, proven=1), RM(D2D4, 40)]
    assert st.should_stop(Stats(0.01, win, legal_moves=2)).startswith("immediate: proven win e2e4")
    st2, _ = make(immediate=True)
    lost = [RM(E2E4, 10), RM(D2D4, 5, proven=-1), RM(G1F3, 5, proven=-1)]
    assert st2.should_stop(Stats(0.01, lost, legal_moves=3)).startswith("immediate: 2 of 3 moves proven lost")
    st3, _ = make(immediate=True)
    open_ = [RM(E2E4, 10), RM(D2D4, 5, proven=-1), RM(G1F3, 5)]
    assert st3.should_stop(Stats(0.01, open_, legal_moves=3)) is None


def test_a_deadline_within_the_next_batch_counts_as_reached():
    st, _ = make()
    assert st.should_stop(even(0.7)) is None
    assert st.should_stop(even(0.9)) == "target at 0.90 s of 1.00 s"  # the next check would come at 1.10 s
    slow, _ = make()
    assert slow.should_stop(even(0.01)) is None
    assert slow.should_stop(even(0.4)) is None  # a long first interval counts for at most half the target


def test_best_q_tolerance_ignores_tiny_q_leads():
    close = [RM(E2E4, 400, q=0.050), RM(D2D4, 300, q=0.055)]
    strict, _ = make(late_stop=True)
    assert strict.should_stop(Stats(1.2, [*close])) is None and strict.extended
    tolerant, _ = make(late_stop=True, best_q_tolerance=0.01)
    assert tolerant.should_stop(Stats(1.2, [*close])) == "target at 1.20 s of 1.00 s"
