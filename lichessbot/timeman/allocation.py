"""Time allocation: pure functions from a clock to a time budget for one move.

The model is lc0's legacy time manager (src/search/classic/stoppers/legacy.cc): the expected number of moves
left follows a log-logistic game-length curve (midpoint 51.5 moves, steepness 7), the remaining time plus the
increments to come is shared among them, the first search of a game gets a bonus, and time spared by earlier
early stops (the "bank") is spent on the next move. The move overhead is what each move costs beyond the
search (measured per game from the clocks, :mod:`lichessbot.timeman.overhead`; else configured): its typical
value is reserved for the moves to come (Stockfish src/timeman.cpp ``TimeManagement::init``: ``moveOverhead *
(2 + mtg)``), where lc0 takes its 200 ms off once, and its high percentile is kept back from one move. On top
of lc0 we cap one move at a share of the clock, floor the expected moves left, and keep a safety margin that
grows as the clock gets low.

At human time controls (lila's blitz and slower: :func:`human_time_control`) two more rules hold (issue 49): no
move may take more than :data:`HUMAN_MOVE_SHARE` of the remaining clock, its overhead included, and the first
search's bonus is not multiplied by the late stop. At bullet (``bench timeman``'s 10+0.1, where the strength
against lc0 was measured) nothing changes: tests/timeman/test_timeman_pinned.py pins every budget.

Clocks are in milliseconds (as UCI and lichess give them, :class:`~lichessbot.timeman.clock.Clock`); budgets
are in seconds (as the search measures time).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from lichessbot.config import TimemanConfig
from lichessbot.timeman.clock import Clock

__all__ = ["HUMAN_GAME_S", "HUMAN_MOVE_SHARE", "OVERHEAD_HORIZON", "Budget", "allocate", "estimated_game_s",
           "expected_moves_left", "fixed_budget", "game_ply", "human_time_control", "move_overhead_ms", "movetime_s",
           "overhead_moves", "safety_margin_ms"]


@dataclass(frozen=True, kw_only=True)
class Budget:
    """The time budget of one move, in seconds. Made by keyword only (a positional rebuild once dropped a field:
    a copy with other values is :func:`dataclasses.replace`).

    Attributes:
        target: the time the move should take (s); early stops end before it, late stops after it.
        hard_max: the time the move may never pass (s); at most time - overhead - margin.
        moves_left: expected moves left used for the allocation (after movestogo and the floor).
        margin_ms: the safety margin kept back on top of the move overhead (ms).
        bank_used_ms: banked time (spared by earlier moves) spent on this move (ms).
        clocked: False for a fixed budget (go movetime, lichess's unclocked first moves).
        overhead_ms: the move overhead the hard maximum keeps back (ms, :func:`move_overhead_ms`).
        reserve_ms: what is kept back for the overhead of the moves to come (ms).
    """

    target: float
    hard_max: float
    moves_left: float = 0.0
    margin_ms: float = 0.0
    bank_used_ms: float = 0.0
    clocked: bool = True
    overhead_ms: float = 0.0
    reserve_ms: float = 0.0

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


#: Stockfish's planning horizon for the move overhead's reserve (src/timeman.cpp: ``mtg = movestogo ?
#: std::min(movestogo, 50) : 50`` and ``moveOverhead * (2 + mtg)``), moves.
OVERHEAD_HORIZON = 50


def overhead_moves(clock: Clock) -> float:
    """How many moves' overhead the allocation keeps back: ``2 + min(movestogo, 50)``, or ``2 + 50`` without
    movestogo (Stockfish src/timeman.cpp)."""
    horizon = OVERHEAD_HORIZON if clock.movestogo is None else min(clock.movestogo, OVERHEAD_HORIZON)
    return 2.0 + horizon


#: Estimated game seconds from which a clock is a human time control: lila's blitz and slower (scalachess
#: ``chess.Speed``: Bullet ``30 to 179``, Blitz from 180 s, of ``Clock.Config.estimateTotalSeconds``).
HUMAN_GAME_S = 180

#: At a human time control, the most one move may cost, search and overhead, as a share of the remaining clock
#: (issue 49: "no single move above ~10 % of the remaining clock at 3+2 and slower"; lc0's legacy manager, with
#: no late stop, spent about 9 % on its first clocked move at 3+2 there).
HUMAN_MOVE_SHARE = 0.10


def estimated_game_s(initial_ms: float, inc_ms: float) -> float:
    """lila's estimated game time, seconds: ``limit + 40 * increment`` (scalachess ``Clock.Config
    .estimateTotalSeconds``; the speeds of lichess.org/faq#time-controls), from milliseconds."""
    return (max(0.0, initial_ms) + 40.0 * max(0.0, inc_ms)) / 1000.0


def human_time_control(clock: Clock) -> bool:
    """True for lila's blitz and slower: the estimated game time from the game's starting clock
    (``clock.initial``, ms) and increment is at least :data:`HUMAN_GAME_S` (3+0, 2+1 is bullet: 160 s). False
    when the starting clock is not known (``clock.initial`` None: the time manager fills it in for UCI)."""
    return clock.initial is not None and estimated_game_s(clock.initial, clock.inc) >= HUMAN_GAME_S


def move_overhead_ms(clock: Clock, cfg: TimemanConfig) -> float:
    """What one move costs beyond its search, ms: the game's measured overhead (``clock.overhead``, the bot's
    :class:`~lichessbot.timeman.overhead.OverheadEstimator`) when known, else ``cfg.move_overhead``."""
    return float(max(0, cfg.move_overhead if clock.overhead is None else clock.overhead))


def _clock_cap_s(time_ms: float, overhead_ms: float, cfg: TimemanConfig, human: bool) -> tuple[float, float]:
    """(cap in seconds, margin in ms): a move may use at most min(max_move_share * time,
    time - overhead - margin), never below 0 (lc0 legacy.cc: ``min(this_move, time - overhead)``; the share
    and the margin are ours); at a human time control also at most ``HUMAN_MOVE_SHARE * time - overhead -
    margin``, so the move with its overhead costs at most that share of the clock (issue 49), the margin
    keeping back, as it does from the whole clock, the batch a search finishes past its deadline (a 3+2 game on
    the embedded lichess stopped 43 ms past a 3.83 s hard maximum, and the move cost 10.1 % of the clock)."""
    margin = safety_margin_ms(time_ms, cfg)
    cap_ms = min(cfg.max_move_share * time_ms, time_ms - overhead_ms - margin)
    if human:
        cap_ms = min(cap_ms, HUMAN_MOVE_SHARE * time_ms - overhead_ms - margin)
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
        A :class:`Budget`. ``hard_max`` is never above ``time - overhead - margin`` (nor below 0),
        ``target`` never above ``hard_max``; the overhead is :func:`move_overhead_ms`.
    """
    time_ms = float(max(0, clock.time))
    inc = float(max(0, clock.inc))
    mtg = max(expected_moves_left(ply / 2.0, cfg.midpoint_move, cfg.steepness), cfg.min_moves_left)
    if clock.movestogo is not None and clock.movestogo < mtg:
        mtg = float(clock.movestogo)
    # Every move still to play pays the overhead (lila charges a bot's round trip to its clock: MovePlayer's
    # botLag), so by default it is kept back for the moves to come as Stockfish src/timeman.cpp
    # ``TimeManagement::init`` does: ``moveOverhead * (2 + mtg)`` with mtg the movestogo, at most 50, else 50
    # (its horizon, not the expected game length: a sudden-death game may last longer than expected, and each
    # move past the expectation still pays the wire). lc0 legacy.cc subtracts it once (overhead_per_move
    # false). Measured, the moves to come are reserved their typical cost (the median: their sum is what the
    # clock will pay), and one move's high percentile is kept back from its hard maximum (below).
    per_move = move_overhead_ms(clock, cfg)
    typical = per_move if clock.overhead_typical is None else float(max(0, clock.overhead_typical))
    overhead = typical * (overhead_moves(clock) if cfg.overhead_per_move else 1.0)
    total = max(0.0, time_ms + inc * (mtg - 1.0) - overhead)
    squander = 0.0
    banked_ms = max(0.0, banked_ms)
    if banked_ms > 0:
        total = max(0.0, total - banked_ms)
        squander = banked_ms * cfg.bank_use
    this_ms = total / mtg
    plain_ms = this_ms + squander  # the target without the first search's bonus
    if first_search:
        this_ms *= 1.0 + cfg.first_move_bonus + cfg.book_ply_bonus * min(12, ply)
    this_ms += squander
    human = human_time_control(clock)
    cap_s, margin = _clock_cap_s(time_ms, per_move, cfg, human)
    target = min(this_ms / 1000.0, cap_s)
    # No late-stop extension on a low clock: a fixed cost per move (latency) must not meet doubled moves (ours).
    extend = cfg.late_stop and time_ms >= cfg.low_clock
    if not extend:
        hard = target
    elif human and first_search:
        # The bonus and the late stop never multiply (issue 49): lc0's bonus (legacy.cc ``LegacyTimeManager::
        # GetStopper``: ``this_move_time *= 1 + first-move-bonus + book-ply-bonus * min(12, ply)`` on the first
        # move of the game) is already the extra time of a search without a tree to reuse, and lc0 has no late
        # stop on top of it. The late stop extends the move without its bonus, so the hard maximum is the larger
        # of the bonus-given target and late_stop_factor x the plain target (with the defaults, x2.8 and more
        # against x2: the target itself).
        hard = min(max(target, plain_ms * cfg.late_stop_factor / 1000.0), cap_s)
    else:
        hard = min(target * cfg.late_stop_factor, cap_s)
    return Budget(target=target, hard_max=hard, moves_left=mtg, margin_ms=margin, bank_used_ms=squander,
                  overhead_ms=per_move, reserve_ms=overhead)


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
