"""The time manager: budgets from clocks and the stop rules the search consults (docs/timeman.md).

It never imports the search at run time (the search's types are used for annotations only).
"""

from lichessbot.timeman.allocation import Budget, Clock, ClockError, allocate, expected_moves_left, game_ply
from lichessbot.timeman.manager import TimeManager
from lichessbot.timeman.stoppers import NoStopper, TimeStopper

__all__ = ["Budget", "Clock", "ClockError", "NoStopper", "TimeManager", "TimeStopper", "allocate",
           "expected_moves_left", "game_ply"]
