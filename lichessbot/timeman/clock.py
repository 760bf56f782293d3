"""The clock of one move: one type, in milliseconds, and the one place where lichess's and UCI's forms of it
are read.

lichess gives both clocks in milliseconds (``gameState`` ``wtime``/``btime``/``winc``/``binc``; ``gameFull``
``clock.initial``/``clock.increment``; lila modules/bot/src/main/BotJsonView.scala), UCI gives them in
milliseconds too (``go wtime btime winc binc movestogo``); both are seen here from the side to move. Every
other room takes a :class:`Clock` and never converts a clock again.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from lichessbot.errors import LichessbotError

__all__ = ["Clock", "ClockError"]


class ClockError(LichessbotError, ValueError):
    """A clock that cannot be used (movestogo below 1)."""


@dataclass(frozen=True)
class Clock:
    """Our clock for one move, in milliseconds, from the mover's side.

    Attributes:
        time: our remaining time, ms (it may be negative in UCI; the allocation treats it as 0).
        inc: our increment per move, ms (negative: treated as 0).
        movestogo: moves until the next time control (UCI ``movestogo``), or None for sudden death and increment.
        opp_time: the opponent's remaining time, ms, when known (logs, chat; the allocation does not use it).
        opp_inc: the opponent's increment, ms.
        initial: the game's starting clock, ms (lichess ``gameFull`` ``clock.initial``), None when not known
            (UCI): the online sources' ``max_time`` compares it.
        overhead: what one move may cost beyond its search, ms, as measured in this game (a high percentile:
            :class:`~lichessbot.timeman.overhead.OverheadEstimator`); the hard maximum keeps it back. None: the
            time manager's configured ``move_overhead``.
        overhead_typical: what a move typically costs beyond its search, ms (the measured median); the moves to
            come are reserved that much each. None: ``overhead``.

    Raises:
        ClockError: ``movestogo`` below 1.
    """

    time: int
    inc: int = 0
    movestogo: int | None = None
    opp_time: int | None = None
    opp_inc: int = 0
    initial: int | None = None
    overhead: int | None = None
    overhead_typical: int | None = None

    def __post_init__(self) -> None:
        if self.movestogo is not None and self.movestogo < 1:
            raise ClockError(f"movestogo must be at least 1, not {self.movestogo}")

    @property
    def seconds(self) -> float:
        """Our remaining time in seconds, at least 0."""
        return max(0, self.time) / 1000.0

    @property
    def initial_seconds(self) -> float | None:
        """The game's starting clock in seconds, or None when not known."""
        return None if self.initial is None else self.initial / 1000.0

    @classmethod
    def from_uci(cls, turn: chess.Color, *, wtime: int | None, btime: int | None, winc: int = 0, binc: int = 0,
                 movestogo: int | None = None) -> Clock | None:
        """The clock of UCI ``go wtime W btime B winc WI binc BI movestogo M`` (milliseconds) for the side
        ``turn``; None when ``go`` gives no time for that side (``go movetime``, ``nodes``, ``infinite``).
        Negative times and increments are kept for the time as sent (GUIs send a negative time after a flag)
        and floored at 0 for the increments."""
        ours, opp = (wtime, btime) if turn == chess.WHITE else (btime, wtime)
        inc, opp_inc = (winc, binc) if turn == chess.WHITE else (binc, winc)
        if ours is None:
            return None
        return cls(time=ours, inc=max(0, inc), movestogo=movestogo, opp_time=opp, opp_inc=max(0, opp_inc))

    @classmethod
    def from_lichess(cls, times: tuple[int, int, int, int], color: chess.Color, *, elapsed_ms: int = 0,
                     initial: int | None = None, overhead: int | None = None,
                     overhead_typical: int | None = None) -> Clock:
        """Our clock from lichess's last ``(wtime, btime, winc, binc)`` (ms, a ``gameState``) for ``color``,
        less ``elapsed_ms`` spent since that state was computed (0 before each side's second move: lichess
        runs the clocks from then on); ``initial``: ``gameFull``'s ``clock.initial`` (ms); ``overhead`` and
        ``overhead_typical``: the game's measured move overhead (ms), if any."""
        wtime, btime, winc, binc = times
        ours, opp = (wtime, btime) if color == chess.WHITE else (btime, wtime)
        inc, opp_inc = (winc, binc) if color == chess.WHITE else (binc, winc)
        return cls(time=ours - elapsed_ms, inc=inc, opp_time=opp, opp_inc=opp_inc, initial=initial, overhead=overhead,
                   overhead_typical=overhead_typical)
