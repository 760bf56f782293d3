"""The time manager of one game: the stopper chain of each search (lc0 src/search/classic/stoppers/common.cc
``CommonTimeManager::GetStopper``), and what carries over between moves (banked time, the previous move's Q,
whether the first-search bonus was used), updated when the search tells its chain it is done (lc0
``OnSearchDone``)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import chess

from lichessbot.config import TimemanConfig
from lichessbot.timeman.allocation import Budget, allocate, fixed_budget, game_ply, movetime_s
from lichessbot.timeman.clock import Clock
from lichessbot.timeman.stop_rules import log_event
from lichessbot.timeman.stoppers import ChainedStopper, stopper_chain

if TYPE_CHECKING:  # annotations only
    from lichessbot.search import SearchStats

__all__ = ["TimeManager"]


class TimeManager:
    """Time management for one game (lc0's legacy manager plus the rules of docs/timeman.md).

    Call :meth:`stopper` before each search (or at a ponderhit) and hand the chain to the search; the search
    tells the chain when it is done, and the chain tells this manager.

    Attributes:
        config: the timeman config section.
        budget: the budget of the last search (seconds), None when it had none; for logs and chat.
        bank_ms: time spared by earlier moves and not spent yet (ms).
        stops: how many timed searches ended by each kind of stop ("early-stop", "smart-pruning", "target", ...).
        extended: how many searches the late stop took past their target.

    A clock without the game's starting clock (UCI: ``Clock.initial`` None) is given our clock at this game's first
    clocked search as its start, so the human-time-control rules (:func:`~lichessbot.timeman.allocation.
    human_time_control`, from lila's blitz on) know the game's speed (the bot has lichess's ``clock.initial``).
        context: fields added to every ``timeman.*`` log line of this game (the bot: ``game_id``).
    """

    def __init__(self, config: TimemanConfig | None = None, *,
                 monotonic: Callable[[], float] = time.monotonic, context: Mapping[str, Any] | None = None) -> None:
        self.config = config if config is not None else TimemanConfig()
        self.context = dict(context or {})
        self._monotonic = monotonic
        self.budget: Budget | None = None
        self.bank_ms = 0.0
        self.stops: Counter[str] = Counter()
        self.extended = 0
        self._clocked_searches = 0
        self._initial_ms: int | None = None
        self._prev_q: float | None = None
        self._prev_turn: bool | None = None

    def _budget(self, board: chess.Board, clock: Clock | None, movetime: float | None, first_moves_unclocked: bool,
                movetime_overhead_ms: float | None) -> Budget | None:
        """The budget of a timed search (None without a clock, a movetime or lichess's unclocked first move)."""
        cfg = self.config
        mt_overhead = cfg.move_overhead if movetime_overhead_ms is None else movetime_overhead_ms
        if first_moves_unclocked:
            think = cfg.first_moves_think / 1000.0
            return fixed_budget(think if movetime is None else min(think, movetime))
        if clock is not None:
            if clock.initial is None:  # UCI: the game's starting clock is our clock at its first clocked search
                if self._initial_ms is None:
                    self._initial_ms = max(0, clock.time)
                clock = replace(clock, initial=self._initial_ms)
            budget = allocate(clock, game_ply(board), cfg, banked_ms=self.bank_ms,
                              first_search=self._clocked_searches == 0)
            self.bank_ms = max(0.0, self.bank_ms - budget.bank_used_ms)
            self._clocked_searches += 1
            if movetime is not None:  # lc0 common.cc: a movetime stopper beside the time manager's
                cap = movetime_s(movetime, mt_overhead)
                budget = replace(budget, target=min(budget.target, cap), hard_max=min(budget.hard_max, cap))
            return budget
        if movetime is not None:
            return fixed_budget(movetime_s(movetime, mt_overhead))
        return None

    def stopper(self, board: chess.Board, *, clock: Clock | None = None, movetime: float | None = None,
                nodes: int | None = None, infinite: bool = False, first_moves_unclocked: bool = False,
                movetime_overhead_ms: float | None = None) -> ChainedStopper | None:
        """The stopper chain for a search of ``board`` (our side to move); None when nothing limits it.

        Args:
            board: the position to search; its ply (from the FEN's move number) feeds the allocation.
            clock: our clock (ms), or None when the search has no clock.
            movetime: ``go movetime`` in seconds, or None: caps the budget at the movetime minus
                ``movetime_overhead_ms``, never less than half of it (:func:`movetime_s`).
            nodes: a node limit, reused nodes included (lc0 ``VisitsStopper``), or None.
            infinite: ``go infinite``: no time, no smart pruning; a node limit still holds (lc0 common.cc).
            first_moves_unclocked: lichess's clock does not run yet (each side's first move): think
                ``first_moves_think`` ms, bank nothing.
            movetime_overhead_ms: milliseconds kept back from ``movetime``; None: ``move_overhead``
                (``lichessbot uci`` passes its own small MovetimeOverhead: MoveOverhead is for clocks).

        Returns:
            A :class:`~lichessbot.timeman.stoppers.ChainedStopper` (``.budget`` holds the target and hard
            maximum in seconds, None for a node limit alone), or None (``go infinite``, pondering). A node
            limit without a clock gets no smart pruning (ours: lc0 prunes ``go nodes`` too, but the strength
            levels were calibrated with a plain node limit).
        """
        budget = None if infinite else self._budget(board, clock, movetime, first_moves_unclocked,
                                                     movetime_overhead_ms)
        self.budget = budget
        context = {**self.context, "ply": game_ply(board)}
        if budget is not None:
            log_event("timeman.budget", target=round(budget.target, 3), hard_max=round(budget.hard_max, 3),
                      moves_left=round(budget.moves_left, 1), bank_used_ms=round(budget.bank_used_ms),
                      overhead_ms=round(budget.overhead_ms), reserve_ms=round(budget.reserve_ms),
                      time_ms=None if clock is None else clock.time,
                      inc_ms=None if clock is None else clock.inc, clocked=budget.clocked, **context)
        turn = board.turn
        return stopper_chain(budget, self.config, nodes=nodes,
                             prev_q=self._prev_q if self._prev_turn == turn else None, monotonic=self._monotonic,
                             context=context, on_done=lambda st, stats: self._search_done(st, stats, turn))

    def _search_done(self, chain: ChainedStopper, stats: SearchStats, turn: chess.Color) -> None:
        """A timed search is over: bank the time it spared (target - time used, ms, when positive and clocked;
        lc0 legacy.cc ``LegacyStopper::OnSearchDone``, which banks a negative difference too), remember the best
        move's Q for the early and late stops, count its kind of stop."""
        b = chain.budget
        if b is None:
            return
        used = chain.elapsed if chain.reason is not None else min(stats.elapsed, chain.clock.since_created())
        if b.clocked:
            spared_ms = (b.target - used) * 1000.0
            if spared_ms > 0:
                self.bank_ms += spared_ms
        if stats.root_moves:
            self._prev_q = float(stats.root_moves[0].q)
            self._prev_turn = turn
        self.stops[chain.kind or "other"] += 1
        self.extended += int(chain.extended)
