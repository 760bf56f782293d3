"""``lichessbot calibrate``: measure strength levels against Stockfish's own ``UCI_Elo`` and write the table.

Every game goes through the match runner (:mod:`lichessbot.match`) and our engine's real UCI path
(``UCI_LimitStrength``/``UCI_Elo`` with a one-level ``StrengthTable``), and every game counts: the table is
fitted to all the games the run played, never to a selected match (docs/strength.md, "How it is measured").

1. **Sweep**: each point x of a ladder of settings (:func:`ladder`) plays ``--sweep-games`` games against
   Stockfish, in pairs from one opening with colours swapped, each pair against the ``--sweep-opponents`` Elo
   nearest the point's rating so far (a staircase).
2. **Curve**: r(x), the rating of ladder point x, by maximum likelihood of Elo's logistic model over every game
   played so far at any x, sweep and verification alike (:func:`lichessbot.strength.fit.fit_curve`).
3. **Levels**, lowest first: a level is placed at the x where the curve, shifted by the offset d its own games
   so far measure against it (before its first match, the offset of the lower levels' games), reaches its Elo
   E: r(x) + d = E; d is the maximum-likelihood offset of those games from the curve. It plays ``--games``
   games against Stockfish at E. When its rating there (all games at exactly that x) scores farther than
   ``--band`` from 50 % against E, the curve is fitted again with these games and the level placed again
   (``--refine`` rounds at most; never below the level under it); its earlier games stay in the fit and in the
   record. A level's measurement is every game played at its final x, pooled over matches: W/D/L, the
   maximum-likelihood Elo and its 95 % likelihood-ratio interval (:class:`~lichessbot.strength.Measurement`).
   ``--extrapolate`` adds levels below the lowest one (below Stockfish's range) read off the curve shifted
   by the offset of all verification games; they are marked extrapolated and carry no measurement.

Both sides are limited by nodes, never by time, so the result does not depend on the machine's load.
Every match is recorded in ``--work`` (:mod:`lichessbot.strength.record`: ``<tag>.pgn`` and ``matches.json``
with each game's result): a run that is stopped and started again with the same arguments replays none of
them. At the end the PGNs and matches.json are copied beside the table (``--out t.json``: ``t-matches/``).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import chess.engine

from lichessbot.match import EngineSpec, MatchConfig, MatchError, TimeControl, load_openings, run_match, schedule
from lichessbot.match.types import Adjudication, our_engine_command
from lichessbot.neural.network import _default_path
from lichessbot.strength.fit import Curve, expected, fit_curve, ml_rating, performance
from lichessbot.strength.levels import Level, Measurement, StrengthError, StrengthTable
from lichessbot.strength.record import GameResult, Ledger, MatchRecord, matches_dir

__all__ = ["SF_ELO_RANGE", "X_MAX", "add_arguments", "ladder", "measure", "offset", "run"]

#: Stockfish 15.1's UCI_Elo range (src/ucioption.cpp: ``UCI_Elo`` spin 1350..2850).
SF_ELO_RANGE = (1350, 2850)
#: The ladder's top point (4096 nodes, temperature 0).
X_MAX = 12.0
#: How the table's levels were measured (its ``conditions.method``).
METHOD = ("pooled: the curve r(x) by maximum likelihood (Elo's logistic model) over every game played; each "
          "level's measurement = every game at its final x, pooled over matches: maximum-likelihood Elo with its "
          "95 % likelihood-ratio interval")


def ladder(x: float) -> Level:
    """The settings of ladder point ``x`` in 0..12 (ours): nodes 2^x; temperature 1 - x/10 (0 from x = 10);
    max_q_loss from 0.3 at x = 0 to 0.05 at x = 10; a near-equal choice in 10 % of the moves below x = 8;
    at 1 node moves under 10 % of the top prior are never chosen."""
    f = min(1.0, max(0.0, x / 10.0))
    return Level(elo=None, nodes=max(1, round(2.0 ** x)), temperature=round(max(0.0, 1.0 - f), 3),
                 max_q_loss=round(0.3 - 0.25 * f, 3), near_equal_q=0.02,
                 near_equal_prob=0.1 if x < 8 else 0.0, min_prior=0.1)


def offset(curve: Curve, matches: list[MatchRecord]) -> float:
    """How much stronger than ``curve`` the games of ``matches`` measured, in Elo: the d maximising the likelihood
    of their results under r(x) + d (:func:`lichessbot.strength.fit.ml_rating` against opponents E - r(x));
    when they were all won (lost), the low (high) end of its 95 % interval, the least offset they show; 0 without
    games."""
    games = [(e - curve.at(x), s) for m in matches for x, e, s in m.games()]
    if not games:
        return 0.0
    r = ml_rating(games)
    d = r.elo if r.elo is not None else r.low if r.low is not None else r.high
    assert d is not None  # one side of the interval is always bounded
    return d


def measure(level_elo: int, x: float, matches: list[MatchRecord]) -> Measurement:
    """The measurement of the level ``level_elo`` at ladder point ``x``: every game of ``matches`` played at exactly
    ``x``, pooled (:meth:`Measurement.of`).

    Raises:
        ValueError: no game of ``matches`` was played at ``x``.
    """
    at = [m for m in matches if m.x == x]
    if not at:
        raise ValueError(f"no game at x = {x}")
    opponents = sorted({m.opponent_elo for m in at})
    return Measurement.of([(float(m.opponent_elo), g.score) for m in at for g in m.results], level_elo,
                          "Stockfish UCI_Elo " + ", ".join(map(str, opponents)), matches=len(at))


def _in_band(m: Measurement, elo: int, band: float) -> bool:
    """True when the measured Elo scores within 50 % +- ``band`` against ``elo`` (Elo's expected score; with every
    game against ``elo`` this is the observed score)."""
    if m.elo is None:
        return band >= 0.5
    return abs(expected(m.elo, elo) - 0.5) <= band


class _Runner:
    """Plays the matches of one calibration (or finds them in the work directory's record)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.work = Path(args.work)
        try:
            self.work.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StrengthError(f"--work {self.work}: cannot be created ({err.strerror})") from None
        self.ledger = Ledger(self.work)
        path = args.openings
        if path == "default":
            path = str(resources.files("lichessbot") / "data" / "openings.pgn")
        self.openings_path = path
        try:
            self.openings = load_openings(path)
        except MatchError as err:
            raise StrengthError(f"--openings: {err}") from None
        self.adjudication = Adjudication(resign_score=1500, resign_moves=4, max_plies=400)
        #: The matches this run asked for, in order (played now or found in the record): its decisions read these.
        self.played: list[MatchRecord] = []

    def match(self, kind: str, x: float, level: int | None, elo: int, games: int, tag: str) -> MatchRecord:
        """The match ``tag``: from the record when it was played before, else played now and recorded."""
        rec = self.ledger.find(tag)
        if rec is None:
            rec = self.play(kind, x, level, elo, games, tag)
            self.ledger.add(rec)
        if rec not in self.played:
            self.played.append(rec)
        return rec

    def play(self, kind: str, x: float, level: int | None, elo: int, games: int, tag: str) -> MatchRecord:
        """``games`` games of ladder point ``x`` (as ``UCI_Elo`` ``elo``) against Stockfish at ``UCI_Elo`` ``elo``.
        The runner appends each game to ``<tag>.pgn`` as it ends; once the match is over the file is written
        again in schedule order."""
        a = self.args
        settings = ladder(x)
        trial = self.work / f"level-{tag}.json"
        StrengthTable(network=a.network, levels=(Level(**{**settings.__dict__, "elo": elo}),)).save(trial)
        ours = EngineSpec("lichessbot", our_engine_command(),
                          {"WeightsFile": a.network, "StrengthTable": str(trial), "UCI_LimitStrength": True,
                           "UCI_Elo": elo, "Threads": 1}, TimeControl(nodes=settings.nodes))
        sf = EngineSpec(f"sf{elo}", [a.stockfish], {"UCI_LimitStrength": True, "UCI_Elo": elo, "Threads": 1,
                                                      "Hash": 16}, TimeControl(nodes=a.sf_nodes))
        first = self.ledger.pairs() % len(self.openings)
        pgn = self.work / f"{tag}.pgn"
        config = MatchConfig(ours, sf, games=games, openings=self.openings[first:] + self.openings[:first],
                             concurrency=a.concurrency, adjudication=self.adjudication, pgn_path=str(pgn),
                             event=f"calibrate {tag}")
        res = run_match(config)
        games_ = sorted(res.games, key=lambda g: g.number)
        pgn.write_text("".join(f"{g.pgn}\n\n" for g in games_), encoding="utf-8")
        names = {number: opening.name for number, opening, _ in schedule(config)}
        rec = MatchRecord(tag=tag, kind=kind, x=x, level=level, settings=settings.settings(), opponent=sf.name,
                          opponent_elo=elo, first_opening=first,
                          results=tuple(GameResult(number=g.number, opening=names.get(g.number, ""),
                                                   colour="white" if g.first_white else "black", result=g.result,
                                                   score=g.first_score, termination=g.termination, plies=g.plies)
                                        for g in games_))
        print(f"  {tag}: nodes {settings.nodes} T {settings.temperature:g} vs sf{elo}: "
              f"+{rec.wins} ={rec.draws} -{rec.losses}", file=sys.stderr, flush=True)
        return rec

    def games(self) -> list[tuple[float, float, float]]:
        """(x, opponent Elo, our score) of every game this run has asked for so far."""
        return [g for m in self.played for g in m.games()]

    def sweep(self, xs: list[float], opponents: list[int]) -> None:
        """Each ladder point plays ``sweep_games`` games in pairs, each pair against the opponent nearest to its
        rating so far (:func:`lichessbot.strength.fit.performance`; the previous point's before its first game):
        a staircase that spends the games where they tell most, near a 50 % score."""
        estimate = float(opponents[len(opponents) // 2])
        for x in xs:
            while True:
                mine = [g for m in self.played if m.kind == "sweep" and m.x == x for g in m.games()]
                if mine:
                    estimate = performance([(e, s, 1.0) for _, e, s in mine])
                if len(mine) >= self.args.sweep_games:
                    break
                elo = min(opponents, key=lambda e: abs(e - estimate))
                self.match("sweep", x, None, elo, 2, f"sweep-x{x:g}-{len(mine) // 2}-e{elo}")

    def level(self, elo: int, x_min: float) -> tuple[float, Measurement] | None:
        """Place the level ``elo`` and play it (module docstring, step 3), ``--refine`` rounds of moving at most.
        Returns its final x and the measurement there; None when the curve does not reach ``elo`` (the level is
        left out)."""
        x = x_min
        for round_ in range(self.args.refine + 1):
            curve = fit_curve(self.games())
            own = [m for m in self.played if m.kind == "verify" and m.level == elo]
            d = offset(curve, own or [m for m in self.played if m.kind == "verify"])
            at = curve.x_for(elo - d, X_MAX if round_ else None)
            if at is None and round_ == 0:
                print(f"level {elo}: above what the sweep reached ({curve.at(curve.x1):.0f} at x {curve.x1:g}); "
                      "left out", file=sys.stderr)
                return None
            x = round(min(X_MAX, max(x_min, X_MAX if at is None else at)), 3)
            self.match("verify", x, elo, elo, self.args.games, f"verify-e{elo}-r{round_}-x{x:.3f}")
            m = measure(elo, x, self.played)
            print(f"level {elo}: x {x:g} (curve {curve.at(x):.0f}, offset {d:+.0f}) -> {m.describe()}",
                  file=sys.stderr, flush=True)
            if _in_band(m, elo, self.args.band):
                break
        return x, measure(elo, x, self.played)


def _ints(text: str, flag: str, lo: int = SF_ELO_RANGE[0], hi: int = SF_ELO_RANGE[1]) -> list[int]:
    """The comma-separated integers of ``flag``, each within lo..hi, sorted; a StrengthError names the flag."""
    try:
        values = sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        raise StrengthError(f"{flag}: comma-separated integers expected, got {text!r}") from None
    if any(not lo <= v <= hi for v in values):
        raise StrengthError(f"{flag}: Stockfish's UCI_Elo covers {lo}..{hi}, got {values}")
    return values


def _check(args: argparse.Namespace) -> tuple[list[int], list[int], list[float], list[int]]:
    """The levels, extrapolated levels, sweep points and sweep opponents of ``args``; bad flags raise a
    StrengthError naming the flag."""
    elos = _ints(args.levels, "--levels")
    if not elos:
        raise StrengthError("--levels: at least one level")
    low = _ints(args.extrapolate, "--extrapolate", 1, SF_ELO_RANGE[1])
    if any(e >= elos[0] for e in low):
        raise StrengthError(f"--extrapolate: {low} must lie below the lowest of --levels ({elos[0]})")
    try:
        xs = sorted({float(x) for x in args.sweep.split(",") if x.strip()})
    except ValueError:
        raise StrengthError(f"--sweep: comma-separated ladder points expected, got {args.sweep!r}") from None
    if not xs or any(not 0 <= x <= X_MAX for x in xs):
        raise StrengthError(f"--sweep: ladder points within 0..{X_MAX:g} expected, got {args.sweep!r}")
    opponents = _ints(args.sweep_opponents, "--sweep-opponents") if args.sweep_opponents else elos
    for flag, value, ok in (("--games", args.games, args.games >= 1),
                            ("--sweep-games", args.sweep_games, args.sweep_games >= 1),
                            ("--refine", args.refine, args.refine >= 0),
                            ("--band", args.band, 0 < args.band <= 0.5),
                            ("--concurrency", args.concurrency, args.concurrency >= 1),
                            ("--sf-nodes", args.sf_nodes, args.sf_nodes >= 1)):
        if not ok:
            raise StrengthError(f"{flag}: {value} is out of range (see lichessbot calibrate --help)")
    if not Path(args.out).resolve().parent.is_dir():  # found before the games, not after hours of them
        raise StrengthError(f"--out {args.out}: its directory does not exist")
    return elos, low, xs, opponents


def _sha256(network: str) -> str:
    p = _default_path() if network == "default" else Path(network)
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else ""


def run(args: argparse.Namespace) -> int:
    """Sweep, fit, place and play the levels, write ``--out`` and its matches directory. Raises StrengthError for
    bad arguments."""
    elos, low, xs, opponents = _check(args)
    try:
        sf = chess.engine.SimpleEngine.popen_uci([args.stockfish])
        sf_name = sf.id.get("name", "Stockfish")
        sf.quit()
    except (OSError, chess.engine.EngineError) as err:
        raise StrengthError(f"--stockfish {args.stockfish}: cannot start it ({err})") from None
    runner = _Runner(args)
    print(f"sweep: ladder points {xs} x opponents {opponents}, {args.sweep_games} games each", file=sys.stderr)
    runner.sweep(xs, opponents)
    placed: dict[int, float] = {}
    x_min = 0.0
    for elo in elos:
        got = runner.level(elo, x_min)
        if got is not None:
            placed[elo] = x_min = got[0]
    if not placed:
        raise StrengthError("no level could be calibrated: the sweep never reached the lowest --levels")
    every = runner.ledger.matches  # every match of the work directory, this run's and any before
    curve = fit_curve([g for m in every for g in m.games()])
    levels = [Level(**{**ladder(x).__dict__, "elo": elo, "measured": measure(elo, x, every)})
              for elo, x in placed.items()]
    d = offset(curve, [m for m in every if m.kind == "verify"])
    for elo in low:
        at = curve.x_for(elo - d)  # never None: elo lies below every placed level, which the curve reached
        x = round(min(curve.x1 if at is None else at, placed[min(placed)]), 3)
        levels.append(Level(**{**ladder(x).__dict__, "elo": elo, "extrapolated": True}))
        placed[elo] = x
        print(f"level {elo}: x {x:g} read off the curve (offset {d:+.0f}), not measured: extrapolated",
              file=sys.stderr)
    levels.sort(key=lambda lv: lv.elo or 0)
    folder = matches_dir(args.out)
    conditions: dict[str, Any] = {
        "opponent": f"{sf_name} ({args.stockfish}), UCI_LimitStrength true, UCI_Elo = the level, Threads 1, "
                    f"Hash 16, go nodes {args.sf_nodes}",
        "ours": "lichessbot uci, UCI_LimitStrength true, go nodes = the level's nodes",
        "openings": Path(runner.openings_path).name,
        "adjudication": "resign 1500 cp x 4 moves, draw at 400 plies", "method": METHOD,
        "curve": curve.to_json(), "sweep": [{"x": x, "rating": round(curve.at(x))} for x in xs],
        "sweep_games": args.sweep_games, "games": args.games, "band": args.band, "refine": args.refine,
        "matches": folder.name, "games_played": sum(len(m.results) for m in every),
        "ladder_x": {str(e): placed[e] for e in sorted(placed)}}
    table = StrengthTable(network=args.network, levels=tuple(levels), network_sha256=_sha256(args.network),
                          conditions=conditions)
    try:
        table.save(args.out)
    except OSError as err:
        raise StrengthError(f"--out {args.out}: cannot be written ({err.strerror})") from None
    runner.ledger.export(folder)
    print(f"wrote {args.out}: {len(levels)} levels; {folder}: {len(every)} matches, "
          f"{conditions['games_played']} games", file=sys.stderr)
    for lv in levels:
        mm = lv.measured
        result = "extrapolated, not measured" if mm is None else mm.describe()
        print(f"{lv.elo}\tx {placed[lv.elo or 0]:g}\t{lv.nodes} nodes\tT {lv.temperature:g}\t{result}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--network", default="default",
                   help="the network to calibrate (WeightsFile; default: the default network)")
    p.add_argument("--levels", default="1350,1500,1600,1700,1800",
                   help="UCI_Elo of the levels, comma-separated, within Stockfish's 1350..2850 "
                        "(default 1350,1500,1600,1700,1800)")
    p.add_argument("--extrapolate", default="",
                   help="UCI_Elo of unmeasured levels below the lowest level (below Stockfish's range), read off "
                        "the curve; comma-separated; marked extrapolated in the table")
    p.add_argument("--games", type=int, default=30, help="games per verification match of a level (default 30)")
    p.add_argument("--sweep", default="0,2,4,6,8,10",
                   help="ladder points x of the sweep, 0..12 (nodes 2^x; default 0,2,4,6,8,10)")
    p.add_argument("--sweep-opponents", default="",
                   help="Stockfish UCI_Elo values the sweep plays, comma-separated (default: the levels)")
    p.add_argument("--sweep-games", type=int, default=8, help="games per ladder point, in pairs (default 8)")
    p.add_argument("--band", type=float, default=0.1,
                   help="a level whose pooled games at its x score farther than this from 0.5 is placed again "
                        "from the refitted curve and plays a new match; its earlier games stay in the fit "
                        "(0..0.5, default 0.1)")
    p.add_argument("--refine", type=int, default=1, help="rounds of placing a level again at most (default 1)")
    p.add_argument("--stockfish", default="/usr/games/stockfish",
                   help="Stockfish's command (default /usr/games/stockfish)")
    p.add_argument("--sf-nodes", type=int, default=20000,
                   help="Stockfish's go nodes (default 20000: past its skill pick at depth 1 + level)")
    p.add_argument("--openings", default="default", help=".pgn or .epd; default: lichessbot/data/openings.pgn")
    p.add_argument("--concurrency", type=int, default=1, help="games at once, two processes each (default 1)")
    p.add_argument("--work", default="calibration",
                   help="directory of the matches as they are played (PGNs, matches.json): a stopped run started "
                        "again with the same arguments resumes from it (default ./calibration)")
    p.add_argument("--out", default="strength.json",
                   help="the table to write (default strength.json); every match's PGN and matches.json are "
                        "copied beside it, to <out's stem>-matches/")
