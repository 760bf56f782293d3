"""The stop rules as pure functions of the search statistics (the stoppers of
:mod:`lichessbot.timeman.stoppers` apply them). Times in seconds.

Root visits include visits reused from the previous tree, so reused work counts toward every rule; rates
(nps) count only this search's playouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import structlog

from lichessbot.config import TimemanConfig

if TYPE_CHECKING:  # annotations only: the time manager never imports the search at run time
    from lichessbot.search import RootMove, SearchStats

__all__ = ["MIN_RIVAL_SHARE", "SMART_PRUNING_PLAYOUT_BONUS", "best_by_visits", "early_stop_reason", "instability",
           "log_event", "proven_reason", "smart_pruning_reason"]

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


def smart_pruning_reason(stats: SearchStats, elapsed: float, remaining_s: float, remaining_playouts: float,
                         cfg: TimemanConfig) -> str | None:
    """lc0's smart pruning (src/search/classic/stoppers/stoppers.cc ``SmartPruningStopper``): stop when
    ``remaining_playouts < N(best) - N(second)``.

    ``remaining = min(remaining_s * nps, remaining_playouts) / factor`` with
    ``nps = (playouts + 300) / search_seconds + 1``; ``remaining_s`` and ``remaining_playouts`` are the other
    stoppers' hints (the time to the deadline, s; the playouts to a node limit), infinite when none limits.
    Not before ``smart_pruning_min_time`` ms of search (lc0 ``kSmartPruningToleranceMs``).
    """
    if stats.elapsed * 1000.0 < cfg.smart_pruning_min_time:
        return None
    best, second = best_by_visits(stats.root_moves)
    if best is None or best.n == 0:
        return None
    nps = (stats.playouts + SMART_PRUNING_PLAYOUT_BONUS) / max(stats.elapsed, 1e-3) + 1.0
    remaining = min(max(0.0, remaining_s) * nps, remaining_playouts)
    if remaining == float("inf"):
        return None
    remaining /= cfg.smart_pruning_factor
    if remaining < best.n - second:
        where = f"{elapsed:.2f} s of {elapsed + remaining_s:.2f} s" if remaining_s != float("inf") else \
            f"{elapsed:.2f} s"
        return f"smart-pruning at {where} ({best.move} leads by {best.n - second} " \
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
