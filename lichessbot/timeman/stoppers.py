"""The stoppers of one search and the chain that asks them, in lc0's shape (src/search/classic/stoppers/:
``ChainedSearchStopper``, ``VisitsStopper``, ``TimeLimitStopper``, ``SmartPruningStopper`` in stoppers.cc, the
chain built in common.cc ``PopulateCommonUciStoppers``).

The search asks one :class:`ChainedStopper` after every batch (``should_stop(stats, hints)``) and tells it once
when it is over (``on_search_done``). The chain asks its stoppers in order; the first reason wins. Stoppers
pass hints down the chain and back to the search (:class:`lichessbot.search.StopperHints`): the time to the
deadline and the playouts left to a node limit (smart pruning reads both; the search gathers no batch past the
second). The time manager (:mod:`lichessbot.timeman.manager`) builds the chain of each search:

1. :class:`ImmediateStopper`: one legal move, a proven win, every move but one proven lost (lc0
   ``SmartPruningStopper`` steps 1-3);
2. :class:`BudgetStopper`: the budget's hard maximum, its target, and the late stop past the target while the
   best move is unstable (lc0 legacy.cc ``LegacyStopper``, a ``TimeLimitStopper``; the late stop is
   NeuralchessGM's);
3. :class:`VisitsStopper`: a node limit, reused nodes included (lc0 ``VisitsStopper``);
4. :class:`SmartPruningStopper`: the best move cannot be overtaken before the deadline (lc0, last in its chain);
5. :class:`EarlyStopper`: a clear, stable best move after half the target (NeuralchessGM).

The rules themselves are pure functions in :mod:`lichessbot.timeman.stop_rules`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lichessbot.config import TimemanConfig
from lichessbot.timeman.allocation import Budget
from lichessbot.timeman.stop_rules import early_stop_reason, instability, log_event, proven_reason, smart_pruning_reason

if TYPE_CHECKING:  # annotations only: the time manager never imports the search at run time
    from lichessbot.search import SearchStats, StopperHints

__all__ = ["BudgetStopper", "ChainedStopper", "EarlyStopper", "ImmediateStopper", "SearchClock", "SmartPruningStopper",
           "StopperElement", "VisitsStopper", "stopper_chain"]


class SearchClock:
    """The time one search has been running, in seconds: ``min(stats.elapsed, now - creation)``, so a chain
    handed to a search at a ponderhit counts from the ponderhit."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self.created = monotonic()

    def elapsed(self, stats: SearchStats) -> float:
        return max(0.0, min(stats.elapsed, self._monotonic() - self.created))

    def since_created(self) -> float:
        return self._monotonic() - self.created


class StopperElement:
    """One link of the chain: ``kind`` names its stops in logs and counts ("immediate", "hard-max", ...)."""

    kind = ""

    def should_stop(self, stats: SearchStats, hints: StopperHints) -> str | None:  # noqa: ARG002 - the protocol
        return None

    def on_search_done(self, stats: SearchStats) -> None:  # noqa: ARG002 - the protocol
        return None


class VisitsStopper(StopperElement):
    """Stop at ``nodes`` root visits, reused ones included (lc0 stoppers.cc ``VisitsStopper``); tells the
    search and smart pruning how many playouts are left (lc0 publishes ``limit - total_nodes``)."""

    kind = "nodes"

    def __init__(self, nodes: int) -> None:
        self.nodes = int(nodes)

    def should_stop(self, stats: SearchStats, hints: StopperHints) -> str | None:
        hints.update_remaining_playouts(max(0, self.nodes - stats.nodes))
        return f"nodes limit {self.nodes}" if stats.nodes >= self.nodes else None

    def __repr__(self) -> str:
        return f"VisitsStopper({self.nodes})"


class ImmediateStopper(StopperElement):
    """One legal move, a proven win at the root, or every move but one proven lost (lc0 stoppers.cc
    ``SmartPruningStopper`` steps 1-3; proofs read from ``RootMove.proven``)."""

    kind = "immediate"

    def __init__(self, clock: SearchClock) -> None:
        self.clock = clock

    def should_stop(self, stats: SearchStats, hints: StopperHints) -> str | None:
        t = self.clock.elapsed(stats)
        if stats.legal_moves == 1:
            return f"immediate: one legal move at {t:.2f} s"
        proof = proven_reason(stats)
        return f"immediate: {proof} at {t:.2f} s" if proof is not None else None


class BudgetStopper(StopperElement):
    """The budget of one move (:class:`~lichessbot.timeman.allocation.Budget`): stop at its hard maximum,
    and at its target unless the best move is unstable (the most visited move is not the best by Q, or its
    Q fell more than ``late_stop_q_drop`` since our previous move): then go on, up to the hard maximum, while
    that lasts (NeuralchessGM's late stop; lc0's smooth manager spends its piggybank on the same signal).
    Publishes the time to the deadline in force (the hard maximum while unstable, else the target).

    A deadline nearer than the interval since the previous check (one batch; at most half the deadline)
    counts as reached: the next check comes one batch later, and a stopped search still finishes the batch
    under way (ours). After each check ``t`` (s) and ``unstable`` (the reason, or None) hold what it saw;
    ``extended`` says whether the late stop took the search past its target.
    """

    kind = "target"

    def __init__(self, budget: Budget, cfg: TimemanConfig, clock: SearchClock, *, prev_q: float | None = None,
                 context: dict[str, Any] | None = None) -> None:
        self.budget, self.cfg, self.clock, self.prev_q = budget, cfg, clock, prev_q
        self.context = context or {}
        self.extended = False
        self.t = 0.0
        self.unstable: str | None = None
        self._last_t: float | None = None

    def should_stop(self, stats: SearchStats, hints: StopperHints) -> str | None:
        b, cfg = self.budget, self.cfg
        t = self.t = self.clock.elapsed(stats)
        lag = 0.0 if self._last_t is None else max(0.0, t - self._last_t)
        self._last_t = t

        def reached(deadline: float) -> bool:
            return t + min(lag, 0.5 * deadline) >= deadline

        self.unstable = None
        if reached(b.hard_max):
            self.kind = "late-stop" if self.extended else "hard-max"
            return f"{self.kind} at {t:.2f} s of max {b.hard_max:.2f} s (target {b.target:.2f} s)"
        if cfg.late_stop and b.clocked and b.hard_max > b.target:
            self.unstable = instability(stats, self.prev_q, cfg.late_stop_q_drop, cfg.best_q_tolerance)
        hints.update_remaining_time((b.hard_max if self.unstable else b.target) - t)
        if not reached(b.target):
            return None
        if self.unstable:
            if not self.extended:
                self.extended = True
                log_event("timeman.extend", why=self.unstable, elapsed=round(t, 3), target=round(b.target, 3),
                          hard_max=round(b.hard_max, 3), **self.context)
            return None
        if self.extended:
            self.kind = "late-stop"
            return f"late-stop at {t:.2f} s of max {b.hard_max:.2f} s (stable again)"
        self.kind = "target"
        return f"target at {t:.2f} s of {b.target:.2f} s"


class SmartPruningStopper(StopperElement):
    """lc0's smart pruning (stoppers.cc ``SmartPruningStopper``, last in lc0's chain): the most visited move
    cannot be overtaken in the time or the playouts left (the hints of the stoppers before it)."""

    kind = "smart-pruning"

    def __init__(self, cfg: TimemanConfig, clock: SearchClock) -> None:
        self.cfg, self.clock = cfg, clock

    def should_stop(self, stats: SearchStats, hints: StopperHints) -> str | None:
        return smart_pruning_reason(stats, self.clock.elapsed(stats), hints.remaining_time_s,
                                    hints.remaining_playouts, self.cfg)


class EarlyStopper(StopperElement):
    """NeuralchessGM's early stop (:func:`~lichessbot.timeman.stop_rules.early_stop_reason`) on the budget of
    ``budget``: after ``early_stop_after`` x its target, when the best move is stable and clear."""

    kind = "early-stop"

    def __init__(self, budget: BudgetStopper) -> None:
        self.budget = budget

    def should_stop(self, stats: SearchStats, hints: StopperHints) -> str | None:
        b = self.budget
        if b.unstable or not b.budget.clocked:
            return None
        return early_stop_reason(stats, b.t, b.budget.target, b.prev_q, b.cfg)


class ChainedStopper:
    """lc0's ``ChainedSearchStopper``: asks its stoppers in order, the first reason wins; never stops before
    the root is expanded (lc0 search.cc ``MaybeTriggerStop``); tells every stopper, then ``on_done``, when
    the search is over.

    Attributes:
        stoppers: the links, in order.
        budget: the time budget of the search (s), None without one (a node limit alone).
        clock: the search's time, from this chain's creation.
        reason, kind, elapsed: the stop (its reason, the firing stopper's kind, seconds), None before it.
        context: fields added to the ``timeman.stop`` log line (the bot: ``game_id``, ``ply``).
    """

    def __init__(self, stoppers: Sequence[StopperElement], *, budget: Budget | None = None,
                 clock: SearchClock | None = None, context: dict[str, Any] | None = None,
                 on_done: Callable[[ChainedStopper, SearchStats], None] | None = None) -> None:
        self.stoppers = list(stoppers)
        self.budget = budget
        self.clock = clock or SearchClock()
        self.context = context or {}
        self.on_done = on_done
        self.reason: str | None = None
        self.kind: str | None = None
        self.elapsed = 0.0

    @property
    def extended(self) -> bool:
        """The late stop took the search past its target."""
        return any(isinstance(s, BudgetStopper) and s.extended for s in self.stoppers)

    def should_stop(self, stats: SearchStats, hints: StopperHints | None = None) -> str | None:
        """A reason to stop now, or None to go on (``hints``: a fresh one when not given). Logs the stop."""
        if self.reason is not None:
            return self.reason
        if not stats.root_moves or stats.nodes <= 0:
            return None
        if hints is None:
            from lichessbot.search.types import StopperHints  # noqa: PLC0415 - a value; only callers without a search

            hints = StopperHints()
        for stopper in self.stoppers:
            reason = stopper.should_stop(stats, hints)
            if reason:
                self.reason, self.kind, self.elapsed = reason, stopper.kind, self.clock.elapsed(stats)
                b = self.budget
                log_event("timeman.stop", reason=reason, kind=stopper.kind, elapsed=round(self.elapsed, 3),
                          target=None if b is None else round(b.target, 3),
                          hard_max=None if b is None else round(b.hard_max, 3), nodes=stats.nodes,
                          reused=stats.reused_nodes, **self.context)
                return reason
        return None

    def on_search_done(self, stats: SearchStats) -> None:
        for stopper in self.stoppers:
            stopper.on_search_done(stats)
        if self.on_done is not None:
            self.on_done(self, stats)


def stopper_chain(budget: Budget | None, cfg: TimemanConfig, *, nodes: int | None = None, prev_q: float | None = None,
                  monotonic: Callable[[], float] = time.monotonic, context: dict[str, Any] | None = None,
                  on_done: Callable[[ChainedStopper, SearchStats], None] | None = None) -> ChainedStopper | None:
    """The chain of one search (lc0 common.cc ``PopulateCommonUciStoppers`` and ``PopulateIntrinsicStoppers``,
    in the order of the module doc): with a ``budget`` (s) the time rules of ``cfg`` that are on; with ``nodes``
    the node limit; None when neither. ``prev_q``: our previous move's Q (same side's view) for the early and
    late stops. A node limit without a budget gets no smart pruning (:meth:`TimeManager.stopper`)."""
    clock = SearchClock(monotonic)
    chain: list[StopperElement] = []
    timer = None
    if budget is not None:
        timer = BudgetStopper(budget, cfg, clock, prev_q=prev_q, context=context)
        if cfg.immediate:
            chain.append(ImmediateStopper(clock))
        chain.append(timer)
    if nodes is not None:
        chain.append(VisitsStopper(nodes))
    if timer is not None:
        if cfg.smart_pruning:
            chain.append(SmartPruningStopper(cfg, clock))
        if cfg.early_stop and timer.budget.clocked:
            chain.append(EarlyStopper(timer))
    if not chain:
        return None
    return ChainedStopper(chain, budget=budget, clock=clock, context=context, on_done=on_done)
