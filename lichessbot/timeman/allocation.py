"""Time allocation: pure functions from a clock to a time budget for one move.

The model is lc0's legacy time manager (src/search/classic/stoppers/legacy.cc): the expected number of moves
left follows a log-logistic game-length curve (midpoint 51.5 moves, steepness 7), the remaining time plus the
increments to come is shared among them, the first search of a game gets a bonus, and time spared by earlier
early stops (the "bank") is spent on the next move. On top of lc0 we cap one move at a share of the clock,
floor the expected moves left, and keep a safety margin that grows as the clock gets low.

Clocks are in milliseconds (as UCI and lichess give them); budgets are in seconds (as the search
measures time).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from lichessbot.config import TimemanConfig
from lichessbot.errors import LichessbotError

__all__ = ["Budget", "Clock", "ClockError", "allocate", "expected_moves_left", "fixed_budget", "game_ply", "movetime_s",
           "safety_margin_ms"]


class ClockError(LichessbotError, ValueError):
    """A clock that cannot be used (negative time, movestogo below 1)."""


@dataclass(frozen=True)
class Clock:
    """Our clock for one move, in milliseconds (UCI wtime/btime, winc/binc, movestogo).

    Attributes:
        time: our remaining time, ms (may be negative in UCI: treated as 0).
        inc: our increment per move, ms (negative: treated as 0).
        movestogo: moves until the next time control, or None for sudden death / increment.
        opp_time: the opponent's remaining time, ms, if known (for logs; not used to allocate).
        opp_inc: the opponent's increment, ms.
    """

    time: int
    inc: int = 0
    movestogo: int | None = None
    opp_time: int | None = None
    opp_inc: int = 0

    def __post_init__(self) -> None:
        if self.movestogo is not None and self.movestogo < 1:
            raise ClockError(f"movestogo must be at least 1, not {self.movestogo}")


@dataclass(frozen=True)
class Budget:
    """The time budget of one move, in seconds.

    Attributes:
        target: the time the move should take (s); early stops end before it, late stops after it.
        hard_max: the time the move may never pass (s); at most time - move_overhead - margin.
        moves_left: expected moves left used for the allocation (after movestogo and the floor).
        margin_ms: the safety margin kept back on top of the move overhead (ms).
        bank_used_ms: banked time (spared by earlier moves) spent on this move (ms).
        clocked: False for a fixed budget (go movetime, lichess's unclocked first moves).
    """

    target: float
    hard_max: float
    moves_left: float = 0.0
    margin_ms: float = 0.0
    bank_used_ms: float = 0.0
    clocked: bool = True

    def describe(self) -> str:
        """A short text for logs and chat, e.g. ``"target 1.20 s, max 2.40 s"``."""
        return f"target {self.target:.2f} s, max {self.hard_max:.2f} s"


def game_ply(board: chess.Board) -> int:
    """Plies played since the game's start: 2*(fullmove - 1) + (1 if black to move).

    From the FEN's full-move number (docs/lc0-conventions.md §6; not lc0 HEAD's full-move counter).
    """
    return 2 * (board.fullmove_number - 1) + (0 if board.turn == chess.WHITE else 1)


def expected_moves_left(move: float, midpoint: float = 51.5, steepness: float = 7.0) -> float:
    """Expected moves left in the game after ``move`` full moves (lc0 legacy.cc).

    ``midpoint * (1 + 2*(move/midpoint)**steepness)**(1/steepness) - move``: 51.5 at move 0,
    about 13.7 at move 40 and 7.8 at move 60 with the defaults.
    """
    move = max(0.0, float(move))
    return float(midpoint * (1.0 + 2.0 * (move / midpoint) ** steepness) ** (1.0 / steepness) - move)


def safety_margin_ms(time_ms: float, cfg: TimemanConfig) -> float:
    """Milliseconds kept back on top of the move overhead: ``safety_margin``, plus up to
    ``low_clock_margin`` growing linearly as the clock falls from ``low_clock`` to 0 (ours)."""
    if cfg.low_clock <= 0 or time_ms >= cfg.low_clock:
        return float(cfg.safety_margin)
    low = 1.0 - max(0.0, time_ms) / cfg.low_clock
    return cfg.safety_margin + cfg.low_clock_margin * low


def _clock_cap_s(time_ms: float, cfg: TimemanConfig) -> tuple[float, float]:
    """(cap in seconds, margin in ms): a move may use at most min(max_move_share * time,
    time - overhead - margin), never below 0."""
    margin = safety_margin_ms(time_ms, cfg)
    cap_ms = min(cfg.max_move_share * time_ms, time_ms - cfg.move_overhead - margin)
    return max(0.0, cap_ms) / 1000.0, margin


def allocate(clock: Clock, ply: int, cfg: TimemanConfig, *, banked_ms: float = 0.0,
             first_search: bool = False) -> Budget:
    """The budget of one move from the clock (lc0 legacy.cc, plus our caps; see the module doc).

    Args:
        clock: our clock, ms.
        ply: plies played before this move (:func:`game_ply`).
        cfg: the timeman section of the config.
        banked_ms: time spared by earlier moves (ms, >= 0); ``cfg.bank_use`` of it is spent here.
        first_search: the first search of this game (lc0's first-move and book-ply bonus).

    Returns:
        A :class:`Budget`. ``hard_max`` is never above ``time - move_overhead - margin`` (nor below 0),
        ``target`` never above ``hard_max``.
    """
    time_ms = float(max(0, clock.time))
    inc = float(max(0, clock.inc))
    mtg = max(expected_moves_left(ply / 2.0, cfg.midpoint_move, cfg.steepness), cfg.min_moves_left)
    if clock.movestogo is not None and clock.movestogo < mtg:
        mtg = float(clock.movestogo)
    # lc0 legacy.cc subtracts the overhead once; every move still to play pays it, so by default we
    # charge it to each expected move (as Stockfish src/timeman.cpp does): in a long game without
    # increment the target then falls to a bare minimum before the latency alone can flag us.
    overhead = cfg.move_overhead * (mtg if cfg.overhead_per_move else 1.0)
    total = max(0.0, time_ms + inc * (mtg - 1.0) - overhead)
    squander = 0.0
    banked_ms = max(0.0, banked_ms)
    if banked_ms > 0:
        total = max(0.0, total - banked_ms)
        squander = banked_ms * cfg.bank_use
    this_ms = total / mtg
    if first_search:
        this_ms *= 1.0 + cfg.first_move_bonus + cfg.book_ply_bonus * min(12, ply)
    this_ms += squander
    cap_s, margin = _clock_cap_s(time_ms, cfg)
    target = min(this_ms / 1000.0, cap_s)
    # No late-stop extension on a low clock: a fixed cost per move (latency) must not meet doubled moves.
    extend = cfg.late_stop and time_ms >= cfg.low_clock
    hard = min(target * cfg.late_stop_factor, cap_s) if extend else target
    return Budget(target=target, hard_max=hard, moves_left=mtg, margin_ms=margin, bank_used_ms=squander)


def fixed_budget(seconds: float) -> Budget:
    """A fixed budget of ``seconds`` (target = hard maximum, nothing banked): ``go movetime`` without a
    clock and lichess's unclocked first moves."""
    return Budget(target=seconds, hard_max=seconds, clocked=False)


def movetime_s(movetime: float, overhead_ms: float) -> float:
    """Seconds to search for a fixed move time of ``movetime`` seconds (UCI ``go movetime``): the move time
    minus ``overhead_ms`` milliseconds, but never less than half the move time (nor below 0), so a short
    movetime still searches (ours; UCI says movetime means "search exactly x ms")."""
    movetime = max(0.0, movetime)
    return max(movetime / 2.0, movetime - max(0.0, overhead_ms) / 1000.0)
