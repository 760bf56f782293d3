"""Value objects of a match: engines, time controls, adjudication, the config, and the results."""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field

import chess
import chess.pgn

from lichessbot.errors import LichessbotError
from lichessbot.match.elo import EloEstimate, elo_estimate

__all__ = [
    "Adjudication",
    "EngineSpec",
    "GameRecord",
    "MatchConfig",
    "MatchError",
    "MatchResult",
    "Opening",
    "TimeControl",
    "our_engine_command",
]


class MatchError(LichessbotError, ValueError):
    """A match that cannot be played: bad settings, an engine that does not start, unreadable openings."""


def our_engine_command() -> list[str]:
    """The command line of our engine: ``<this python> -m lichessbot uci``."""
    return [sys.executable, "-m", "lichessbot", "uci"]


@dataclass(frozen=True)
class Opening:
    """A start position: a FEN and book moves played from it before the engines take over.

    Attributes:
        fen: the position the game starts from (``chess.STARTING_FEN`` for the usual start).
        moves: moves played from ``fen`` (marked "book" in the PGN), possibly empty.
        name: shown in logs (the EPD ``id``, the PGN ``Opening`` tag, or the line number).
    """

    fen: str = chess.STARTING_FEN
    moves: tuple[chess.Move, ...] = field(default_factory=tuple)
    name: str = ""

    def board(self) -> chess.Board:
        """A board at the start of the game (``fen``; book moves not played)."""
        return chess.Board(self.fen)


@dataclass(frozen=True)
class TimeControl:
    """What one side may spend per move. Seconds throughout.

    Either a clock (``base`` seconds plus ``inc`` seconds after each move; the match keeps the clock and a
    side that runs out loses on time) or a fixed budget per move (``nodes`` and/or ``movetime``), or a
    clock together with a node cap. ``TimeControl.parse("10+0.1")`` reads the usual base+increment form.
    """

    base: float | None = None
    inc: float = 0.0
    nodes: int | None = None
    movetime: float | None = None

    def __post_init__(self) -> None:
        if self.base is None and self.nodes is None and self.movetime is None:
            raise MatchError("a time control needs a clock (base+inc), nodes or a movetime")
        if (self.base is not None and self.base <= 0) or self.inc < 0:
            raise MatchError(f"time control base must be > 0 and inc >= 0 seconds (got {self.base}, {self.inc})")
        if (self.nodes is not None and self.nodes < 1) or (self.movetime is not None and self.movetime <= 0):
            raise MatchError("time control nodes must be >= 1 and movetime > 0 seconds")

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """``"10+0.1"`` (base+inc in seconds), ``"60"`` (no increment) or ``"1:30+1"`` (minutes:seconds).

        Raises:
            MatchError: the text is not of that form.
        """
        m = re.fullmatch(r"\s*(?:(\d+):)?(\d+(?:\.\d*)?)(?:\+(\d+(?:\.\d*)?))?\s*", text)
        if not m:
            raise MatchError(f"time control {text!r} is not of the form base+inc in seconds, e.g. 10+0.1")
        base = float(m.group(2)) + 60.0 * float(m.group(1) or 0)
        return cls(base=base, inc=float(m.group(3) or 0.0))

    @property
    def clocked(self) -> bool:
        """True when the match keeps a clock for this side."""
        return self.base is not None

    def pgn(self) -> str:
        """The PGN ``TimeControl`` tag value (PGN standard §9.6.1): ``"10+0.1"``, ``"-"`` without a clock."""
        if self.base is None:
            return "-"
        return f"{self.base:g}+{self.inc:g}" if self.inc else f"{self.base:g}"

    def __str__(self) -> str:
        parts = [self.pgn()] if self.clocked else []
        if self.nodes is not None:
            parts.append(f"{self.nodes} nodes")
        if self.movetime is not None:
            parts.append(f"{self.movetime:g} s/move")
        return ", ".join(parts)


@dataclass(frozen=True)
class EngineSpec:
    """One engine of the match.

    Attributes:
        name: shown in the PGN and the summary.
        command: the command line (list of arguments); ``our_engine_command()`` for ``lichessbot uci``.
        options: UCI options sent with ``setoption`` after start, e.g. ``{"Skill Level": 0}``.
        tc: this side's time control (the match's default when None).
    """

    name: str
    command: list[str] = field(default_factory=our_engine_command)
    options: dict[str, str | int | bool] = field(default_factory=dict)
    tc: TimeControl | None = None


@dataclass(frozen=True)
class Adjudication:
    """Optional early ends of games; every rule is off by default. Scores in centipawns, from the
    engines' own reports (mate = +-100000).

    Attributes:
        resign_score: a game is won when both engines' last ``resign_moves`` reports each (so
            2*resign_moves plies) give one side at least this much; None: off.
        draw_score: a game is drawn when, from full move ``draw_after_move`` on, both engines' last
            ``draw_moves`` reports each are within +-draw_score; None: off.
        max_plies: a game still running after this many plies is a draw; None: off.
    """

    resign_score: int | None = None
    resign_moves: int = 3
    draw_score: int | None = None
    draw_moves: int = 8
    draw_after_move: int = 40
    max_plies: int | None = None


@dataclass(frozen=True)
class MatchConfig:
    """A match between ``first`` (reported as "us": W/D/L and Elo are from its side) and ``second``.

    Attributes:
        games: games in all; opening i is played by games 2i (first has white) and 2i+1 (colours swapped).
        tc: the default time control of both sides (an engine's own ``tc`` wins).
        openings: start positions (FEN plus book moves), cycled; empty: the standard start position.
        concurrency: games played at once (each game has its own two engine processes).
        latency: seconds charged to the mover's clock for every move, on top of the measured time
            (simulates network lag; it is not slept).
        adjudication: early ends (all off by default).
        pgn_path: where the games are appended as they finish; None: not written.
        event: the PGN ``Event`` tag.
        move_timeout_margin: seconds an engine may overrun its budget before it is treated as hung
            (loses on time and is restarted); the budget of a clocked side is its remaining clock.
        startup_timeout: seconds an engine may take to start and answer ``uci``/``isready``.
    """

    first: EngineSpec
    second: EngineSpec
    games: int = 2
    tc: TimeControl | None = None
    openings: list[Opening] = field(default_factory=list)
    concurrency: int = 1
    latency: float = 0.0
    adjudication: Adjudication = field(default_factory=Adjudication)
    pgn_path: str | None = None
    event: str = "lichessbot match"
    move_timeout_margin: float = 10.0
    startup_timeout: float = 60.0

    def __post_init__(self) -> None:
        if self.games < 1 or self.concurrency < 1:
            raise MatchError("games and concurrency must be >= 1")
        if self.first.name == self.second.name:
            raise MatchError(f"both engines are named {self.first.name!r}; give them different names")
        if self.latency < 0:
            raise MatchError("latency must be >= 0 seconds")
        for spec in (self.first, self.second):
            if (spec.tc or self.tc) is None:
                raise MatchError(f"engine {spec.name} has no time control (give tc, nodes or movetime)")

    def tc_of(self, spec: EngineSpec) -> TimeControl:
        """The time control of one side."""
        tc = spec.tc or self.tc
        assert tc is not None
        return tc


@dataclass
class GameRecord:
    """One finished game.

    Attributes:
        number: 1-based, in the order of the schedule.
        first_white: True when ``first`` had white.
        result: ``"1-0"``, ``"0-1"`` or ``"1/2-1/2"``.
        termination: PGN ``Termination`` value: normal, time forfeit, rules infraction, abandoned,
            adjudication.
        reason: in words, e.g. "checkmate", "black lost on time", "white's engine crashed".
        loser_fault: the name of the engine that lost by time / illegal move / crash, else None.
        fault: "time", "illegal", "crash", "error" (an ``info string error`` line) or None.
        plies: plies played by the engines (book moves excluded).
        pgn: the game as python-chess PGN, with [%clk] and [%eval] comments.
        engine_error: when the game was lost to an engine failure (a crash, an ``info string error``, an
            illegal move, no answer; not a loss on time), the engine's last words: the failure as it came
            (e.g. "engine process died unexpectedly (exit code: 3)") and its last stderr lines; else None.
        failed_engine: the name of that engine (None when no engine failed).
    """

    number: int
    first_white: bool
    result: str
    termination: str
    reason: str
    loser_fault: str | None
    fault: str | None
    plies: int
    pgn: chess.pgn.Game
    engine_error: str | None = None
    failed_engine: str | None = None

    @property
    def first_score(self) -> float:
        """1, 0.5 or 0: the game's result from ``first``'s side."""
        if self.result == "1/2-1/2":
            return 0.5
        white_won = self.result == "1-0"
        return 1.0 if white_won == self.first_white else 0.0


@dataclass
class MatchResult:
    """The match so far (or at its end). W/D/L and Elo are from ``first``'s side."""

    first: str
    second: str
    games: list[GameRecord] = field(default_factory=list)
    restarts: dict[str, int] = field(default_factory=dict)  # engine name -> processes restarted

    @property
    def wins(self) -> int:
        return sum(g.first_score == 1.0 for g in self.games)

    @property
    def draws(self) -> int:
        return sum(g.first_score == 0.5 for g in self.games)

    @property
    def losses(self) -> int:
        return sum(g.first_score == 0.0 for g in self.games)

    @property
    def score(self) -> float:
        """Points of ``first`` divided by games (0.5 with no game)."""
        n = len(self.games)
        return (self.wins + 0.5 * self.draws) / n if n else 0.5

    def faults(self, kind: str) -> Counter[str]:
        """Per engine name, the games lost by ``kind``: "time", "illegal", "crash" or "error" (the engine
        wrote an ``info string error`` line instead of searching)."""
        return Counter(g.loser_fault for g in self.games if g.fault == kind and g.loser_fault)

    def engine_failures(self) -> dict[str, list[GameRecord]]:
        """Per engine name, the games it lost to an engine failure (:attr:`GameRecord.engine_error`), in
        schedule order."""
        out: dict[str, list[GameRecord]] = {}
        for g in sorted(self.games, key=lambda g: g.number):
            if g.engine_error is not None and g.failed_engine is not None:
                out.setdefault(g.failed_engine, []).append(g)
        return out

    @property
    def elo(self) -> EloEstimate:
        """Elo difference of ``first`` over ``second`` with its 95 % error bar."""
        return elo_estimate(self.wins, self.draws, self.losses)

    def summary(self) -> str:
        """Several lines: W/D/L, score, Elo +- error bar, LOS, and the losses on time / illegal / crash."""
        e = self.elo
        lines = [
            f"{self.first} vs {self.second}: {len(self.games)} games",
            f"  +{self.wins} ={self.draws} -{self.losses}   score {100 * self.score:.1f}%",
            f"  Elo difference {e}   LOS {100 * e.los:.1f}%",
        ]
        for kind, label in (("time", "losses on time"), ("illegal", "illegal moves"), ("crash", "crashes"),
                            ("error", "engine errors")):
            c = self.faults(kind)
            lines.append(f"  {label}: {self.first} {c.get(self.first, 0)}, {self.second} {c.get(self.second, 0)}")
        if any(self.restarts.values()):
            lines.append("  restarts: " + ", ".join(f"{k} {v}" for k, v in self.restarts.items()))
        return "\n".join(lines)
