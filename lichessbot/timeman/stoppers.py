"""Stop rules: pure functions of the search statistics, and the stopper the search consults.

The search calls :meth:`TimeStopper.should_stop` after every batch with its live
:class:`lichessbot.search.SearchStats`; a string return value is the reason to stop. Root visits
include visits reused from the previous tree, so reused work counts toward every rule; rates (nps)
count only this search's playouts.

Rules, checked in this order (the first that fires wins):

1. *immediate*: one legal move, a proven win, or every move but one proven lost (lc0 stoppers.cc,
   SmartPruningStopper steps 1-3; proofs read from ``RootMove.proven`` when the search sets it);
2. *hard maximum*: the budget's ``hard_max`` is reached;
3. *target* / *late stop*: the target is reached, unless the best move is unstable (the most visited
   move is not the best by Q, or its Q fell more than ``late_stop_q_drop`` since our previous move):
   then the search goes on up to ``hard_max`` (at most ``late_stop_factor`` x target) while it stays
   unstable (NeuralchessGM; lc0's smooth manager spends its piggybank on the same signal);
4. *smart pruning*: the most visited move cannot be overtaken before the deadline at the current rate
   (lc0 stoppers.cc SmartPruningStopper: factor 1.33, 200 ms grace, nps = (playouts + 300)/s + 1);
5. *early stop* (NeuralchessGM): after ``early_stop_after`` x target, the most visited move also has the
   best Q, its Q did not fall more than ``early_stop_q_drop`` below the previous move's, and either its
   prior is above ``early_stop_prior`` or its visits are ``early_stop_visit_ratio`` x the second's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import structlog

from lichessbot.config import TimemanConfig
from lichessbot.timeman.allocation import Budget

if TYPE_CHECKING:  # annotations only: the time manager never imports the search at run time
    from lichessbot.search import RootMove, SearchStats

__all__ = ["MIN_RIVAL_SHARE", "NoStopper", "TimeStopper", "best_by_visits", "early_stop_reason", "log_event",
           "instability", "proven_reason",
           "smart_pruning_reason"]

log = structlog.get_logger("lichessbot.timeman")

#: A rival move takes part in the "best by Q" comparisons only with at least this share of the most
#: visited move's visits: Q of a move with a handful of visits is noise (ours).
MIN_RIVAL_SHARE = 0.05

#: lc0 smart pruning's nps smoothing: nps = (playouts + 300) / seconds + 1 (lc0 stoppers.cc).
SMART_PRUNING_PLAYOUT_BONUS = 300


def log_event(event: str, **kw: Any) -> None:
    """Log, but never let a broken log stream stop a search mid-game."""
    try:
        log.info(event, **kw)
    except Exception:  # noqa: BLE001 - e.g. a closed stream; the decision itself stands
        pass


def best_by_visits(moves: Sequence[RootMove]) -> tuple[RootMove | None, int]:
    """The most visited root move (ties: the earlier in the search's ranking) and the second-highest
    visit count (0 when there is no other move)."""
    best: RootMove | None = None
    second = 0
    for rm in moves:
        if best is None or rm.n > best.n:
            if best is not None:
                second = max(second, best.n)
            best = rm
        else:
            second = max(second, rm.n)
    return best, second


def _best_q_rival(moves: Sequence[RootMove], best: RootMove, tolerance: float = 0.0) -> RootMove | None:
    """The rival with a Q higher than ``best``'s by more than ``tolerance`` among moves with enough
    visits, or None."""
    floor = max(1, MIN_RIVAL_SHARE * best.n)
    rival: RootMove | None = None
    for rm in moves:
        if rm is best or rm.n < floor or rm.q <= best.q + tolerance:
            continue
        if rival is None or rm.q > rival.q:
            rival = rm
    return rival


def instability(stats: SearchStats, prev_q: float | None, q_drop: float, tolerance: float = 0.0) -> str | None:
    """Why the best move is unstable, or None: the most visited move is not the best by Q (by more
    than ``tolerance``), or its Q is more than ``q_drop`` below ``prev_q`` (our previous move's Q,
    same side's view)."""
    best, _ = best_by_visits(stats.root_moves)
    if best is None or best.n == 0:
        return None
    rival = _best_q_rival(stats.root_moves, best, tolerance)
    if rival is not None:
        return f"most visited {best.move} (Q {best.q:+.3f}) is not best by Q ({rival.move} Q {rival.q:+.3f})"
    if prev_q is not None and prev_q - best.q > q_drop:
        return f"Q fell {prev_q - best.q:.3f} since the previous move ({prev_q:+.3f} -> {best.q:+.3f})"
    return None


def proven_reason(stats: SearchStats) -> str | None:
    """lc0 SmartPruningStopper steps 2-3: a root move is a proven win, or at most one move is not a
    proven loss. Reads ``RootMove.proven`` (+1 win, -1 loss, root side's view; None: not proven)."""
    lost = 0
    for rm in stats.root_moves:
        proven = rm.proven
        if proven == 1:
            return f"proven win {rm.move}"
        lost += proven == -1
    if lost and lost >= stats.legal_moves - 1:
        return f"{lost} of {stats.legal_moves} moves proven lost"
    return None


def smart_pruning_reason(stats: SearchStats, elapsed: float, deadline: float, cfg: TimemanConfig) -> str | None:
    """lc0's smart pruning: stop when ``remaining_playouts < N(best) - N(second)``.

    ``remaining_playouts = min((deadline - elapsed) * nps, hint) / factor`` with
    ``nps = (playouts + 300) / search_seconds + 1`` (lc0 stoppers.cc). Not before
    ``smart_pruning_min_time`` ms of search. Times in seconds.
    """
    if stats.elapsed * 1000.0 < cfg.smart_pruning_min_time:
        return None
    best, second = best_by_visits(stats.root_moves)
    if best is None or best.n == 0:
        return None
    nps = (stats.playouts + SMART_PRUNING_PLAYOUT_BONUS) / max(stats.elapsed, 1e-3) + 1.0
    remaining = max(0.0, deadline - elapsed) * nps
    hint = stats.remaining_playouts_hint
    if hint is not None:
        remaining = min(remaining, hint)
    remaining /= cfg.smart_pruning_factor
    if remaining < best.n - second:
        return f"smart-pruning at {elapsed:.2f} s of {deadline:.2f} s ({best.move} leads by {best.n - second} " \
               f"visits, about {remaining:.0f} playouts left)"
    return None


def early_stop_reason(stats: SearchStats, elapsed: float, target: float, prev_q: float | None,
                      cfg: TimemanConfig) -> str | None:
    """NeuralchessGM's early stop (see the module doc). Times in seconds."""
    if elapsed < cfg.early_stop_after * target:
        return None
    best, second = best_by_visits(stats.root_moves)
    if best is None or best.n == 0:
        return None
    if _best_q_rival(stats.root_moves, best, cfg.best_q_tolerance) is not None:
        return None
    if prev_q is not None and prev_q - best.q > cfg.early_stop_q_drop:
        return None
    if best.p > cfg.early_stop_prior:
        why = f"prior {best.p:.2f}"
    elif best.n >= cfg.early_stop_visit_ratio * second:
        why = f"visits {best.n} vs {second}"
    else:
        return None
    return f"early-stop at {elapsed:.2f} s of {target:.2f} s ({best.move}: best Q {best.q:+.3f}, {why})"


class NoStopper:
    """A stopper that never stops (``go infinite`` without a clock)."""

    budget: Budget | None = None
    reason: str | None = None

    def should_stop(self, stats: SearchStats) -> str | None:  # noqa: ARG002 - the Stopper protocol
        return None


class TimeStopper:
    """The stopper of one search: a :class:`Budget` and the rules of :class:`TimemanConfig`.

    Elapsed time is ``min(stats.elapsed, now - creation)``, so a stopper handed over at a ponderhit
    counts from the ponderhit. A deadline nearer than the interval since the previous check (one batch;
    at most half the deadline) counts as reached, since the search stops only after the batch under way.
    After a stop, ``reason`` and ``elapsed`` (s) hold the decision;
    ``extended`` says whether the late-stop rule took the search past its target.
    """

    def __init__(self, budget: Budget, cfg: TimemanConfig, *, prev_q: float | None = None,
                 monotonic: Callable[[], float] = time.monotonic, context: dict[str, Any] | None = None) -> None:
        self.budget = budget
        self.cfg = cfg
        self.prev_q = prev_q
        self._monotonic = monotonic
        self.created = monotonic()
        self.context = context or {}
        self.reason: str | None = None
        self.elapsed = 0.0
        self.extended = False
        self._last_t: float | None = None
        self.kind: str | None = None  # "immediate", "hard-max", "target", "late-stop", "smart-pruning", "early-stop"

    def _elapsed(self, stats: SearchStats) -> float:
        return max(0.0, min(stats.elapsed, self._monotonic() - self.created))

    def should_stop(self, stats: SearchStats) -> str | None:
        """A reason to stop now, or None to go on. Logs each stop (and each late-stop extension)."""
        if self.reason is not None:
            return self.reason
        if not stats.root_moves or stats.nodes <= 0:
            return None  # lc0: never stop before the root is expanded
        t = self._elapsed(stats)
        b, cfg = self.budget, self.cfg
        # The next check comes one batch later, and a stopped search still finishes the batch under way:
        # a deadline closer than the last batch interval is taken as reached (ours; capped at half of it).
        lag = 0.0 if self._last_t is None else max(0.0, t - self._last_t)
        self._last_t = t

        def reached(deadline: float) -> bool:
            return t + min(lag, 0.5 * deadline) >= deadline

        reason: str | None = None
        kind = ""
        if cfg.immediate and stats.legal_moves == 1:
            reason, kind = f"immediate: one legal move at {t:.2f} s", "immediate"
        elif cfg.immediate and (proof := proven_reason(stats)) is not None:
            reason, kind = f"immediate: {proof} at {t:.2f} s", "immediate"
        elif reached(b.hard_max):
            kind = "late-stop" if self.extended else "hard-max"
            reason = f"{kind} at {t:.2f} s of max {b.hard_max:.2f} s (target {b.target:.2f} s)"
        else:
            unstable = (instability(stats, self.prev_q, cfg.late_stop_q_drop, cfg.best_q_tolerance)
                        if cfg.late_stop and b.clocked and b.hard_max > b.target else None)
            deadline = b.hard_max if unstable else b.target
            if reached(b.target):
                if unstable:
                    if not self.extended:
                        self.extended = True
                        log_event("timeman.extend", why=unstable, elapsed=round(t, 3), target=round(b.target, 3),
                                  hard_max=round(b.hard_max, 3), **self.context)
                elif self.extended:
                    reason, kind = f"late-stop at {t:.2f} s of max {b.hard_max:.2f} s (stable again)", "late-stop"
                else:
                    reason, kind = f"target at {t:.2f} s of {b.target:.2f} s", "target"
            if reason is None and cfg.smart_pruning:
                reason = smart_pruning_reason(stats, t, deadline, cfg)
                kind = "smart-pruning"
            if reason is None and cfg.early_stop and b.clocked and not unstable:
                reason = early_stop_reason(stats, t, b.target, self.prev_q, cfg)
                kind = "early-stop"
        if reason is None:
            return None
        self.reason, self.kind, self.elapsed = reason, kind, t
        log_event("timeman.stop", reason=reason, kind=kind, elapsed=round(t, 3), target=round(b.target, 3),
                  hard_max=round(b.hard_max, 3), nodes=stats.nodes, reused=stats.reused_nodes, **self.context)
        return reason
