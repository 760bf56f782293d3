"""The time manager of one game: a budget and a stopper per search, and what carries over between
moves (banked time, the previous move's Q, whether the first-search bonus was used)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import chess

from lichessbot.config import TimemanConfig
from lichessbot.timeman.allocation import Budget, Clock, allocate, fixed_budget, game_ply, movetime_s
from lichessbot.timeman.stoppers import NoStopper, TimeStopper, log_event

if TYPE_CHECKING:  # annotations only
    from lichessbot.search import SearchResult

__all__ = ["TimeManager"]


class TimeManager:
    """Time management for one game (lc0 legacy manager plus the rules of docs/timeman.md).

    Call :meth:`stopper` before each search (or at a ponderhit) and hand the result to the search;
    call :meth:`move_done` with the search's result once the move is played.

    Attributes:
        config: the timeman config section.
        budget: the last budget computed (seconds), None before the first search; for logs and chat.
        bank_ms: time spared by earlier moves and not spent yet (ms).
        stops: how many searches ended by each rule ("early-stop", "smart-pruning", "target", ...).
        extended: how many searches the late-stop rule took past their target.
        context: fields added to every ``timeman.*`` log line of this game (the bot: ``game_id``).
    """

    def __init__(self, config: TimemanConfig | None = None, *,
                 monotonic: Callable[[], float] = time.monotonic, context: Mapping[str, Any] | None = None) -> None:
        self.config = config if config is not None else TimemanConfig()
        self.context = dict(context or {})  # added to every timeman.* log line, e.g. {"game_id": ...}
        self._monotonic = monotonic
        self.budget: Budget | None = None
        self.bank_ms = 0.0
        self.stops: Counter[str] = Counter()
        self.extended = 0
        self._clocked_searches = 0
        self._prev_q: float | None = None
        self._prev_turn: bool | None = None
        self._prev_turn_pending: bool | None = None
        self._stopper: TimeStopper | None = None

    def stopper(self, clock: Clock | None, board: chess.Board, limits_movetime: float | None = None, *,
                first_moves_unclocked: bool = False,
                movetime_overhead_ms: float | None = None) -> TimeStopper | NoStopper:
        """The stopper for a search of ``board`` (our side to move).

        Args:
            clock: our clock (ms), or None when the search has no clock.
            board: the position to search; its ply (from the FEN's move number) feeds the allocation.
            limits_movetime: ``go movetime`` in seconds, or None; caps the budget: the movetime minus
                ``movetime_overhead_ms``, never less than half of it (:func:`movetime_s`).
            first_moves_unclocked: lichess's clock does not run yet (each side's first move): think
                ``first_moves_think`` ms, bank nothing.
            movetime_overhead_ms: milliseconds kept back from ``limits_movetime``; None: ``move_overhead``
                (``lichessbot uci`` passes its own small MovetimeOverhead: MoveOverhead is for clocks).

        Returns:
            A :class:`TimeStopper` (``.budget`` holds the target and hard maximum in seconds), or a
            :class:`NoStopper` when there is neither a clock nor a movetime (``go infinite``).
        """
        cfg = self.config
        ply = game_ply(board)
        mt_overhead = cfg.move_overhead if movetime_overhead_ms is None else movetime_overhead_ms
        if first_moves_unclocked:
            think = cfg.first_moves_think / 1000.0
            if limits_movetime is not None:
                think = min(think, limits_movetime)
            budget = fixed_budget(think)
        elif clock is not None:
            budget = allocate(clock, ply, cfg, banked_ms=self.bank_ms, first_search=self._clocked_searches == 0)
            self.bank_ms = max(0.0, self.bank_ms - budget.bank_used_ms)
            self._clocked_searches += 1
            if limits_movetime is not None:
                cap = movetime_s(limits_movetime, mt_overhead)
                budget = Budget(min(budget.target, cap), min(budget.hard_max, cap), budget.moves_left,
                                budget.margin_ms, budget.bank_used_ms, budget.clocked)
        elif limits_movetime is not None:
            budget = fixed_budget(movetime_s(limits_movetime, mt_overhead))
        else:
            self._stopper = None
            return NoStopper()
        prev_q = self._prev_q if self._prev_turn == board.turn else None
        context = {**self.context, "ply": ply}
        self.budget = budget
        log_event("timeman.budget", target=round(budget.target, 3), hard_max=round(budget.hard_max, 3),
                  moves_left=round(budget.moves_left, 1), bank_used_ms=round(budget.bank_used_ms),
                  time_ms=None if clock is None else clock.time, inc_ms=None if clock is None else clock.inc,
                  clocked=budget.clocked, **context)
        self._stopper = TimeStopper(budget, cfg, prev_q=prev_q, monotonic=self._monotonic, context=context)
        self._prev_turn_pending = board.turn
        return self._stopper

    def move_done(self, result: SearchResult) -> None:
        """Record a finished search: bank the time it spared (target - time used, ms, when positive and
        clocked; lc0 legacy.cc), remember its Q for the early/late stop rules, count its stop rule."""
        st = self._stopper
        self._stopper = None
        if st is None:
            return
        used = st.elapsed if st.reason is not None else min(result.time, self._monotonic() - st.created)
        if st.budget.clocked:
            spared_ms = (st.budget.target - used) * 1000.0
            if spared_ms > 0:
                self.bank_ms += spared_ms
        self._prev_q = float(result.q)
        self._prev_turn = self._prev_turn_pending
        self.stops[st.kind or "other"] += 1
        self.extended += int(st.extended)
