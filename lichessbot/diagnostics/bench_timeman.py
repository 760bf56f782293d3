"""``lichessbot bench timeman``: the clock as users meet it, measured side by side with lc0.

Our engine (``lichessbot uci``) plays lc0 (a UCI binary given by ``--lc0``, a yardstick, never a dependency) on
the same network, one thread each, at each ``--tc`` (base+increment seconds), openings from
``lichessbot/data/openings.pgn`` played twice with the colours swapped (:mod:`lichessbot.match`: the match keeps
the clocks, charges each move its measured time plus ``--latency-ms``, and a side past its clock loses on time).
For each time control it prints the mean time per move by phase (moves 1-10, 11-40, 41+ by the position's full
move number), ours beside lc0's from the same games, the score with its 95 % interval and the Elo difference,
and the losses on time. Each finished game is appended to ``--jsonl`` (one JSON object per game, with every
move's time), and ``--summarize FILE`` prints the summary of such a file (a run stopped early, or several
files joined).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from lichessbot.errors import LichessbotError
from lichessbot.match import EngineSpec, GameRecord, MatchConfig, MatchResult, TimeControl, load_openings, run_match
from lichessbot.match.elo import Z95, elo_estimate

__all__ = ["OURS", "PHASES", "THEIRS", "BenchError", "GameTimes", "Summary", "add_arguments", "format_summary",
           "game_times", "run", "summarize"]

OURS, THEIRS = "lichessbot", "lc0"
#: The phases of a game by full move number (inclusive bounds; None: no upper bound), as docs/timeman.md reports them.
PHASES: tuple[tuple[str, int, int | None], ...] = (("moves 1-10", 1, 10), ("moves 11-40", 11, 40),
                                                    ("moves 41+", 41, None))


class BenchError(LichessbotError, RuntimeError):
    """The bench cannot run: no lc0, a bad time control or option, an unreadable record file."""


@dataclass
class GameTimes:
    """One finished game from our side, with every engine move's time.

    Attributes:
        tc: the time control (``"10+0.1"``).
        ours_white: our engine had white.
        score: ours: 1, 0.5 or 0.
        result, termination, reason: as the match records them (``"1-0"``, ``"time forfeit"``, ...).
        fault: "time", "illegal", "crash", "error" or None; loser: the engine that lost by it.
        moves: ``(full move number, engine name, seconds)`` for every engine move (book moves excluded),
            the seconds charged to its clock (measured time plus the latency).
    """

    tc: str
    ours_white: bool
    score: float
    result: str
    termination: str
    reason: str
    fault: str | None
    loser: str | None
    moves: list[tuple[int, str, float]] = field(default_factory=list)
    number: int = 0

    def flagged(self, ours: str = OURS, theirs: str = THEIRS) -> str | None:
        """The engine whose flag fell, also when the game was drawn for it (the opponent could not mate,
        FIDE 6.9), else None."""
        if self.termination != "time forfeit":
            return None
        white_flagged = self.reason.startswith("white")
        return ours if white_flagged == self.ours_white else theirs


def game_times(record: GameRecord, tc: TimeControl, ours: str = OURS, theirs: str = THEIRS) -> GameTimes:
    """The moves' times of a finished game, read from its PGN clocks: a side's move cost its clock before the
    move (the base at first) minus its clock after it plus the increment."""
    board = record.pgn.board()
    clocks = {chess.WHITE: float(tc.base or 0.0), chess.BLACK: float(tc.base or 0.0)}
    names = {chess.WHITE: ours if record.first_white else theirs, chess.BLACK: theirs if record.first_white else ours}
    moves: list[tuple[int, str, float]] = []
    for node in record.pgn.mainline():
        mover = board.turn
        fullmove = board.fullmove_number
        board.push(node.move)
        clk = node.clock()
        if clk is None:  # a book move
            continue
        moves.append((fullmove, names[mover], round(clocks[mover] - clk + tc.inc, 4)))
        clocks[mover] = clk
    return GameTimes(tc=tc.pgn(), ours_white=record.first_white, score=record.first_score, result=record.result,
                     termination=record.termination, reason=record.reason, fault=record.fault,
                     loser=record.loser_fault, moves=moves, number=record.number)


@dataclass
class Summary:
    """The figures of one time control over many games (from our side).

    Attributes:
        tc: the time control.
        games, wins, draws, losses: counts.
        phase_means: per phase name, (our mean seconds per move, lc0's, our moves, lc0's moves).
        time_losses: per engine name, games lost on time; faults: per engine, games lost otherwise.
        flags: per engine name, games whose flag fell (lost, or drawn: the opponent could not mate).
    """

    tc: str
    games: int
    wins: int
    draws: int
    losses: int
    phase_means: dict[str, tuple[float | None, float | None, int, int]]
    time_losses: dict[str, int]
    faults: dict[str, int]
    flags: dict[str, int] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.5

    def score_interval(self) -> tuple[float, float]:
        """The 95 % interval of the score (trinomial standard error, as lichessbot.match.elo)."""
        n = self.games
        if not n:
            return 0.0, 1.0
        s = self.score
        var = (self.wins * (1 - s) ** 2 + self.draws * (0.5 - s) ** 2 + self.losses * s**2) / n
        half = Z95 * math.sqrt(var / n)
        return max(0.0, s - half), min(1.0, s + half)


def _phase_times(games: Sequence[GameTimes], who: str, lo: int, hi: int | None) -> list[float]:
    """The seconds of ``who``'s moves at full moves ``lo``..``hi`` (None: no upper bound) in ``games``."""
    return [t for g in games for (move, eng, t) in g.moves if eng == who and move >= lo and (hi is None or move <= hi)]


def summarize(games: Iterable[GameTimes], ours: str = OURS, theirs: str = THEIRS) -> list[Summary]:
    """One :class:`Summary` per time control, in the order the time controls first appear."""
    by_tc: dict[str, list[GameTimes]] = {}
    for g in games:
        by_tc.setdefault(g.tc, []).append(g)
    out = []
    for tc, gs in by_tc.items():
        means: dict[str, tuple[float | None, float | None, int, int]] = {}
        for name, lo, hi in PHASES:
            a, b = (_phase_times(gs, who, lo, hi) for who in (ours, theirs))
            means[name] = (statistics.fmean(a) if a else None, statistics.fmean(b) if b else None, len(a), len(b))
        out.append(Summary(
            tc=tc, games=len(gs), wins=sum(g.score == 1.0 for g in gs), draws=sum(g.score == 0.5 for g in gs),
            losses=sum(g.score == 0.0 for g in gs), phase_means=means,
            time_losses={who: sum(g.fault == "time" and g.loser == who for g in gs) for who in (ours, theirs)},
            faults={who: sum(g.fault not in (None, "time") and g.loser == who for g in gs) for who in (ours, theirs)},
            flags={who: sum(g.flagged(ours, theirs) == who for g in gs) for who in (ours, theirs)},
        ))
    return out


def format_summary(s: Summary, ours: str = OURS, theirs: str = THEIRS) -> str:
    """The lines printed for one time control."""
    lines = [f"== {s.tc}: {s.games} games, {ours} vs {theirs}",
             f"  mean time per move (s)  {ours:>10} {theirs:>8}  ratio   moves ({ours}, {theirs})"]
    for name, (a, b, na, nb) in s.phase_means.items():
        ratio = f"{a / b:5.2f}" if a is not None and b else "  -  "
        fa = f"{a:10.3f}" if a is not None else f"{'-':>10}"
        fb = f"{b:8.3f}" if b is not None else f"{'-':>8}"
        lines.append(f"  {name:<22} {fa} {fb}  {ratio}   ({na}, {nb})")
    lo, hi = s.score_interval()
    e = elo_estimate(s.wins, s.draws, s.losses)
    lines.append(f"  score +{s.wins} ={s.draws} -{s.losses}: {100 * s.score:.1f} % (95 % interval {100 * lo:.1f}-"
                 f"{100 * hi:.1f} %), Elo {e}, LOS {100 * e.los:.1f} %")
    lines.append(f"  losses on time: {ours} {s.time_losses.get(ours, 0)}, {theirs} {s.time_losses.get(theirs, 0)} "
                 f"(flags, the drawn ones too: {ours} {s.flags.get(ours, 0)}, {theirs} {s.flags.get(theirs, 0)}); "
                 f"other faults: {ours} {s.faults.get(ours, 0)}, {theirs} {s.faults.get(theirs, 0)}")
    return "\n".join(lines)


def _records(path: str) -> list[GameTimes]:
    games = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    games.append(record_of(json.loads(line)))
    except (OSError, ValueError, TypeError) as err:
        raise BenchError(f"{path}: not a bench timeman record ({err})") from None
    return games


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lc0", default=None, help="the lc0 binary (the yardstick; e.g. built by build-lc0.sh)")
    parser.add_argument("--network", default=None, help="our network (.onnx or .pb.gz; WeightsFile)")
    parser.add_argument("--lc0-weights", default=None,
                        help="lc0's weights (default: the --network path with .pb.gz, the same network)")
    parser.add_argument("--tc", action="append", default=None,
                        help="base+inc in seconds (repeatable; default 10+0.1)")
    parser.add_argument("--games", type=int, default=20, help="games per time control (colours alternate)")
    parser.add_argument("--openings", default="default", help=".pgn or .epd (default lichessbot/data/openings.pgn)")
    parser.add_argument("--latency-ms", type=float, default=0.0, metavar="MS",
                        help="milliseconds charged to each move of both sides on top of its measured time")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="extra UCI option for our engine (repeatable)")
    parser.add_argument("--lc0-option", action="append", default=[], metavar="NAME=VALUE",
                        help="extra UCI option for lc0 (repeatable)")
    parser.add_argument("--engine-cmd", default=None, help="our engine's command line (default: lichessbot uci)")
    parser.add_argument("--jsonl", default=None, help="append each game (with every move's time) to this file")
    parser.add_argument("--pgn", default=None, help="write the games to this PGN file")
    parser.add_argument("--summarize", nargs="+", default=None, metavar="JSONL",
                        help="print the summary of these --jsonl files and exit (no game is played)")


def _options(items: Sequence[str], flag: str) -> dict[str, str | int | bool]:
    out: dict[str, str | int | bool] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise BenchError(f"{flag} {item!r} is not NAME=VALUE")
        out[name] = value
    return out


def _specs(args: argparse.Namespace) -> tuple[EngineSpec, EngineSpec]:
    if not args.lc0 or not os.access(args.lc0, os.X_OK):
        raise BenchError(f"--lc0 {args.lc0!r}: not an executable lc0 (build one with build-lc0.sh)")
    if not args.network:
        raise BenchError("--network: our network is needed (lc0 plays the same one)")
    weights = args.lc0_weights or str(Path(args.network).with_suffix("")) + ".pb.gz"
    if not Path(weights).exists():
        raise BenchError(f"lc0's weights {weights} do not exist (give --lc0-weights)")
    options = {"WeightsFile": str(Path(args.network).resolve()), "Threads": 1, **_options(args.option, "--option")}
    ours = EngineSpec(OURS, args.engine_cmd.split() if args.engine_cmd else EngineSpec(OURS).command, options)
    theirs = EngineSpec(THEIRS, [args.lc0, f"--weights={Path(weights).resolve()}", "--backend=onnx-cpu"],
                        {"Threads": 1, **_options(args.lc0_option, "--lc0-option")})
    return ours, theirs


def run(args: argparse.Namespace) -> int:
    if args.summarize:
        games = [g for path in args.summarize for g in _records(path)]
        for s in summarize(games):
            print(format_summary(s), flush=True)
        return 0
    if args.games < 1:
        raise BenchError("--games must be at least 1")
    tcs = [TimeControl.parse(t) for t in (args.tc or ["10+0.1"])]
    ours, theirs = _specs(args)
    path = str(resources.files("lichessbot") / "data" / "openings.pgn") if args.openings == "default" else args.openings
    openings = load_openings(path)
    for tc in tcs:
        print(f"== {tc.pgn()}: {args.games} games, {OURS} vs {THEIRS} ({Path(args.network).name}, one thread each), "
              f"latency {args.latency_ms:g} ms, load average {os.getloadavg()[0]:.1f}", flush=True)
        played: list[GameTimes] = []

        def on_game(record: GameRecord, result: MatchResult, tc: TimeControl = tc,
                    played: list[GameTimes] = played) -> None:
            g = game_times(record, tc)
            played.append(g)
            if args.jsonl:
                with open(args.jsonl, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(vars(g)) + "\n")
            ours_t = [t for (_m, who, t) in g.moves if who == OURS]
            lc0_t = [t for (_m, who, t) in g.moves if who == THEIRS]
            print(f"game {record.number:3d} ours {'white' if g.ours_white else 'black'} {g.result:7s} "
                  f"{record.reason[:40]:40s} mean s/move ours {statistics.fmean(ours_t or [0]):.3f} lc0 "
                  f"{statistics.fmean(lc0_t or [0]):.3f}  score so far {100 * result.score:.1f} % "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)

        pgn = None if args.pgn is None else (args.pgn if len(tcs) == 1 else f"{args.pgn}.{tc.pgn()}.pgn")
        run_match(MatchConfig(first=ours, second=theirs, games=args.games, tc=tc, openings=openings,
                              latency=args.latency_ms / 1000.0, pgn_path=pgn, event=f"bench timeman {tc.pgn()}"),
                  on_game=on_game)
        for s in summarize(played):
            print(format_summary(s), flush=True)
    return 0


def record_of(d: dict[str, Any]) -> GameTimes:
    """A :class:`GameTimes` from one line of a ``--jsonl`` file (parsed)."""
    return GameTimes(**{**d, "moves": [tuple(m) for m in d["moves"]]})
