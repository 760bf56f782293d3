"""The move overhead as a game really pays it: learned from the clocks lichess reports, not configured.

lila gives bots no lag compensation (lila modules/round/src/main/MovePlayer.scala: ``botLag =
MoveMetrics(clientLag = Centis(0).some)``, the metrics of every bot move), so each of our moves costs our
clock the time from lila sending us the position to lila receiving our move: our thinking plus the round
trip on the wire. lichess reports both clocks after every move (``gameState`` ``wtime``/``btime``), so the
bot can see what each move cost and take its own thinking time off. What is left is the overhead of that
move; the time manager charges a robust high percentile of them (:attr:`OverheadEstimator.estimate_ms`) to
each move still to play.

Pure bookkeeping: the caller (the game) hands in lichess's clocks and the time it measured itself.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from lichessbot.timeman.clock import Clock

__all__ = ["OVERHEAD_MAX_MS", "OVERHEAD_MIN_MS", "OVERHEAD_QUANTILE", "OVERHEAD_WINDOW", "OverheadEstimator",
           "OverheadSummary", "quantile"]

#: The estimate never goes below this (ms): what a UCI GUI on the same machine costs, Stockfish's default
#: "Move Overhead" (Stockfish src/engine.cpp; 10 ms). lila's clocks are kept in centiseconds
#: (scalachess Clock), so smaller samples are at the resolution of the clock anyway.
OVERHEAD_MIN_MS = 10
#: The estimate never goes above this (ms): Stockfish's largest "Move Overhead" (its option's maximum,
#: 5000 ms). A bot whose moves cost more than this on the wire cannot play bullet at all.
OVERHEAD_MAX_MS = 5000
#: The share of measured moves whose overhead the estimate covers (ours: one move in ten may cost more;
#: the hard maximum's safety margin and the low-clock margin absorb it).
OVERHEAD_QUANTILE = 0.9
#: The estimate reads the last this many samples (ours: a game's connection changes; about 30 moves).
OVERHEAD_WINDOW = 32


def quantile(values: list[int], q: float) -> int:
    """The nearest-rank ``q`` quantile of ``values`` (non-empty): the ``ceil(q * n)``-th smallest, so with
    fewer than ``1 / (1 - q)`` values it is their maximum (a cautious start)."""
    ordered = sorted(values)
    k = max(1, math.ceil(q * len(ordered)))
    return ordered[k - 1]


@dataclass(frozen=True)
class OverheadSummary:
    """What the estimator learned in one game (for the game's log line), milliseconds.

    Attributes:
        estimate_ms: the overhead one move may cost now (the high percentile).
        typical_ms: the overhead reserved for each move to come (the median).
        default_ms: the starting value (``timeman.move_overhead``).
        samples: moves measured.
        median_ms: the median of the samples (None without samples).
        max_ms: the largest sample (None without samples).
    """

    estimate_ms: int
    typical_ms: int
    default_ms: int
    samples: int
    median_ms: int | None
    max_ms: int | None


class OverheadEstimator:
    """The per-move overhead of one game, in milliseconds.

    Until the first measured move it is ``default_ms``; then the :data:`OVERHEAD_QUANTILE` quantile
    (nearest rank) of the last :data:`OVERHEAD_WINDOW` samples, bounded to ``[low_ms, high_ms]``
    (:attr:`estimate_ms`), and their median likewise bounded (:attr:`typical_ms`).

    Call :meth:`posted` when our move is sent and :meth:`seen` with each new position lichess reports.
    """

    def __init__(self, default_ms: int, *, low_ms: int = OVERHEAD_MIN_MS, high_ms: int = OVERHEAD_MAX_MS,
                 q: float = OVERHEAD_QUANTILE, window: int = OVERHEAD_WINDOW) -> None:
        self.default_ms = int(default_ms)
        self.low_ms, self.high_ms, self.q = low_ms, high_ms, q
        self._window: deque[int] = deque(maxlen=window)
        self.samples: list[int] = []  # every sample of the game, ms
        self._pending: dict[int, tuple[int, int, int]] = {}  # ply -> (clock before, inc, thought), ms

    @property
    def estimate_ms(self) -> int:
        """What one move may cost now, ms: the high percentile (the hard maximum keeps it back)."""
        if not self._window:
            return self.default_ms
        return min(self.high_ms, max(self.low_ms, quantile(list(self._window), self.q)))

    @property
    def typical_ms(self) -> int:
        """What a move typically costs now, ms: the median, bounded likewise (the moves to come are reserved it:
        their sum is what the clock will pay; a high percentile taken 52 times over would starve the clock)."""
        if not self._window:
            return self.default_ms
        return min(self.high_ms, max(self.low_ms, quantile(list(self._window), 0.5)))

    def posted(self, ply: int, clock: Clock, thought_s: float) -> None:
        """Our move at ``ply`` (plies before it) was sent: ``clock`` is our clock in the state we moved from,
        as lichess computed it when it sent that state (:meth:`Clock.from_lichess`, nothing taken off), and
        ``thought_s`` the seconds from that state's arrival (our clock's reference point) to sending the move.
        A later call for the same ply (a retried post) replaces the earlier one. Plies 0 and 1 are not
        measured: lichess's clock does not run before each side has moved once."""
        if ply >= 2:
            self._pending[ply] = (clock.time, max(0, clock.inc), max(0, int(thought_s * 1000)))

    def seen(self, plies: int, clock: Clock) -> int | None:
        """lichess reports a position after ``plies`` moves with our clock ``clock`` (:meth:`Clock.from_lichess`).
        When it is the one after our move at ``plies - 1``, returns the sample (ms, at least 0): what that
        move cost our clock beyond our thinking; else None. Every move still waiting is dropped: it was
        measured now, missed (the state after it never came), or taken back."""
        pending = self._pending.get(plies - 1)
        self._pending.clear()
        if pending is None:
            return None
        before, inc, thought = pending
        sample = max(0, before + inc - clock.time - thought)
        self._window.append(sample)
        self.samples.append(sample)
        return sample

    def summary(self) -> OverheadSummary:
        """The game's figures for its log line."""
        s = self.samples
        return OverheadSummary(estimate_ms=self.estimate_ms, typical_ms=self.typical_ms, default_ms=self.default_ms,
                               samples=len(s),
                               median_ms=sorted(s)[len(s) // 2] if s else None, max_ms=max(s) if s else None)
