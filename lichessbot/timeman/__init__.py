"""The time manager: the one clock type (ms), budgets from it, the per-move overhead a bot game really pays,
and the stopper chain each search asks (docs/timeman.md; lc0's src/search/classic/stoppers/).

It imports the search's value types for annotations only, never the search at run time.
"""

from lichessbot.timeman.allocation import Budget, allocate, expected_moves_left, game_ply, move_overhead_ms
from lichessbot.timeman.clock import Clock, ClockError
from lichessbot.timeman.manager import TimeManager
from lichessbot.timeman.overhead import OverheadEstimator, OverheadSummary
from lichessbot.timeman.stoppers import ChainedStopper, VisitsStopper

__all__ = ["Budget", "ChainedStopper", "Clock", "ClockError", "OverheadEstimator", "OverheadSummary", "TimeManager",
           "VisitsStopper", "allocate", "expected_moves_left", "game_ply", "move_overhead_ms"]
