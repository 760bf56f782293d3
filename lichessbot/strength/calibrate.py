"""``lichessbot calibrate``: measure strength levels against Stockfish's own ``UCI_Elo`` and write the table.

Three steps (docs/strength.md), all through the match runner (:mod:`lichessbot.match`) and our engine's
real UCI path (``UCI_LimitStrength``/``UCI_Elo`` with a one-level ``StrengthTable``):

1. **Sweep**: each point x of a ladder of settings (:func:`ladder`) plays ``--sweep-games`` games
   against Stockfish, in pairs from one opening with colours swapped, each pair against the
   ``--sweep-opponents`` Elo nearest to the point's rating estimated so far (a staircase).
2. **Fit**: the performance rating of each point, the R where the logistic expectations
   1 / (1 + 10^((E_j - R) / 400)) summed over its games equal its points (maximum likelihood of the Elo
   model, Elo's formula), smoothed by a least-squares quadratic in x and made non-decreasing; a
   target's x is read off by linear interpolation.
3. **Verify**: each level, lowest first, starts at the x where the curve, shifted by the mean offset
   the levels below measured against it, reaches its Elo, and plays ``--games`` games against
   Stockfish at its own ``UCI_Elo``; a level whose score falls outside 50 % +- ``--band`` moves x (by
   half the measured Elo gap over the curve's slope; from a second measurement on, to the root of the
   line through the level's measured gaps), never below the level under it, and is played again
   (``--refine`` rounds at most). The table keeps each level's last measurement, whatever it is;
   ``verify.json`` keeps them all. ``--extrapolate`` adds levels below the lowest one
   (below Stockfish's range) read off the curve shifted by what all verifications measured against it,
   stored without a measurement.

Both sides are limited by nodes, never by time, so the result does not depend on the machine's load.
Every game result is kept in ``--work`` (``sweep.json``, ``verify.json``): a run that is stopped and
started again with the same arguments resumes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import Any

import chess.engine
import numpy as np

from lichessbot.engine.network import _default_path
from lichessbot.match import EngineSpec, MatchConfig, TimeControl, load_openings, run_match
from lichessbot.match.elo import Z95, elo_estimate
from lichessbot.match.types import Adjudication, our_engine_command
from lichessbot.strength.levels import Level, Measurement, StrengthError, StrengthTable

__all__ = ["add_arguments", "fit_performance", "ladder", "performance", "run"]

#: Stockfish 15.1's UCI_Elo range (src/ucioption.cpp: ``UCI_Elo`` spin 1350..2850).
SF_ELO_RANGE = (1350, 2850)


def ladder(x: float) -> Level:
    """The settings of ladder point ``x`` in 0..12 (ours): nodes 2^x; temperature 1 - x/10 (0 from x = 10);
    max_q_loss from 0.3 at x = 0 to 0.05 at x = 10; a near-equal choice in 10 % of the moves below x = 8;
    at 1 node moves under 10 % of the top prior are never chosen."""
    f = min(1.0, max(0.0, x / 10.0))
    return Level(elo=None, nodes=max(1, round(2.0 ** x)), temperature=round(max(0.0, 1.0 - f), 3),
                 max_q_loss=round(0.3 - 0.25 * f, 3), near_equal_q=0.02,
                 near_equal_prob=0.1 if x < 8 else 0.0, min_prior=0.1)


def performance(games: list[tuple[int, float, int]]) -> float:
    """Maximum-likelihood rating R from ``(opponent elo, points, games)`` triples (logistic Elo model):
    sum_j n_j / (1 + 10^((E_j - R) / 400)) = sum_j points_j, solved by bisection within the opponents'
    range +- 800. A perfect (null) score gives the upper (lower) end."""
    pts = sum(p for _, p, _ in games)
    lo, hi = min(e for e, _, _ in games) - 800.0, max(e for e, _, _ in games) + 800.0
    for _ in range(60):
        mid = (lo + hi) / 2
        exp = sum(n / (1 + 10 ** ((e - mid) / 400)) for e, _, n in games)
        lo, hi = (mid, hi) if exp < pts else (lo, mid)
    return (lo + hi) / 2


def fit_performance(sweep: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """(x, rating) per ladder point of ``sweep`` results (dicts with x, elo, w, d, l), x ascending.

    Each point's rating is :func:`performance` of its games; the curve is the least-squares quadratic
    in x through the points that neither won nor lost every game (weights: games played), made
    non-decreasing (a running maximum); with fewer than three such points, the points themselves."""
    by_x: dict[float, list[tuple[int, float, int]]] = {}
    for r in sweep:
        n = r["w"] + r["d"] + r["l"]
        if n:
            by_x.setdefault(float(r["x"]), []).append((int(r["elo"]), r["w"] + r["d"] / 2, n))
    xs = sorted(by_x)
    raw = {x: performance(by_x[x]) for x in xs}
    ok = [x for x in xs if 0 < sum(p for _, p, _ in by_x[x]) < sum(n for _, _, n in by_x[x])]
    if len(ok) >= 3:
        coef = np.polyfit(ok, [raw[x] for x in ok], 2, w=[math.sqrt(sum(n for *_, n in by_x[x])) for x in ok])
        fitted = {x: float(np.polyval(coef, x)) for x in xs}
    else:
        fitted = raw
    out, best = [], -math.inf
    for x in xs:
        best = max(best, fitted[x])
        out.append((x, best))
    return out


def _curve_at(x: float, curve: list[tuple[float, float]]) -> float:
    """The fitted rating at ``x`` (linear between the curve's points, flat beyond its ends)."""
    if x <= curve[0][0]:
        return curve[0][1]
    for (x0, r0), (x1, r1) in pairwise(curve):
        if x0 <= x <= x1:
            return r0 + (r1 - r0) * (x - x0) / (x1 - x0)
    return curve[-1][1]


def x_for(elo: float, curve: list[tuple[float, float]]) -> float | None:
    """The ladder point where the fitted ``curve`` reaches ``elo`` (linear between points); None above it."""
    if not curve or elo > curve[-1][1]:
        return None
    if elo <= curve[0][1]:
        return curve[0][0]
    for (x0, r0), (x1, r1) in pairwise(curve):
        if r0 <= elo <= r1:
            return x0 if r1 == r0 else x0 + (x1 - x0) * (elo - r0) / (r1 - r0)
    return curve[-1][0]


class _Runner:
    """Plays the games of one calibration and keeps every result in the work directory."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.work = Path(args.work)
        self.work.mkdir(parents=True, exist_ok=True)
        path = args.openings
        if path == "default":
            path = str(resources.files("lichessbot") / "data" / "openings.pgn")
        self.openings_path = path
        self.openings = load_openings(path)
        self.adjudication = Adjudication(resign_score=1500, resign_moves=4, max_plies=400)
        self._opening_at = 0

    def _load(self, name: str) -> list[dict[str, Any]]:
        p = self.work / name
        return json.loads(p.read_text()) if p.exists() else []

    def _save(self, name: str, rows: list[dict[str, Any]]) -> None:
        (self.work / name).write_text(json.dumps(rows, indent=1) + "\n")

    def play(self, level: Level, elo: int, games: int, tag: str) -> tuple[int, int, int]:
        """``games`` games of ``level`` (as UCI_Elo ``elo``) against Stockfish at UCI_Elo ``elo``: W/D/L."""
        a = self.args
        trial = self.work / f"level-{tag}.json"
        StrengthTable(network=a.network, levels=(Level(**{**level.__dict__, "elo": elo}),)).save(trial)
        ours = EngineSpec("lichessbot", our_engine_command(),
                          {"WeightsFile": a.network, "StrengthTable": str(trial), "UCI_LimitStrength": True,
                           "UCI_Elo": elo, "Threads": 1}, TimeControl(nodes=level.nodes))
        sf = EngineSpec(f"sf{elo}", [a.stockfish], {"UCI_LimitStrength": True, "UCI_Elo": elo, "Threads": 1,
                                                      "Hash": 16}, TimeControl(nodes=a.sf_nodes))
        k = self._opening_at % len(self.openings)
        self._opening_at += (games + 1) // 2
        openings = self.openings[k:] + self.openings[:k]
        res = run_match(MatchConfig(ours, sf, games=games, openings=openings, concurrency=a.concurrency,
                                    adjudication=self.adjudication, pgn_path=str(self.work / f"{tag}.pgn"),
                                    event=f"calibrate {tag}"))
        print(f"  {tag}: nodes {level.nodes} T {level.temperature:g} vs sf{elo}: "
              f"+{res.wins} ={res.draws} -{res.losses}", file=sys.stderr, flush=True)
        return res.wins, res.draws, res.losses

    def sweep(self, xs: list[float], opponents: list[int]) -> list[dict[str, Any]]:
        """Each ladder point plays ``sweep_games`` games in pairs, each pair against the opponent nearest
        to its rating estimated so far (the previous point's rating before its first game): a staircase
        that spends the games where they tell most, near a 50 % score."""
        rows = self._load("sweep.json")
        estimate = float(opponents[len(opponents) // 2])
        for x in xs:
            while True:
                mine = [r for r in rows if r["x"] == x]
                played = sum(r["w"] + r["d"] + r["l"] for r in mine)
                if mine:
                    estimate = performance([(r["elo"], r["w"] + r["d"] / 2, r["w"] + r["d"] + r["l"]) for r in mine])
                if played >= self.args.sweep_games:
                    break
                elo = min(opponents, key=lambda e: abs(e - estimate))
                w, d, l = self.play(ladder(x), elo, 2, f"sweep-x{x:g}-{played // 2}-e{elo}")
                rows.append({"x": x, "elo": elo, "w": w, "d": d, "l": l})
                self._save("sweep.json", rows)
        return rows

    def bias(self, curve: list[tuple[float, float]], below: int) -> float:
        """How much stronger than the sweep's curve the verification games measured, in Elo: the mean over
        the verification results of the levels below ``below`` of (opponent Elo + measured gap) - curve(x);
        0 without any. The
        next level starts at the x where the curve reaches its Elo minus this (the sweep's 8 games per
        point can put the whole curve off by 100 Elo or more)."""
        rows = [r for r in self._load("verify.json") if r["elo"] < below]
        if not rows:
            return 0.0
        return sum(r["elo"] + _gap(r) - _curve_at(r["x"], curve) for r in rows) / len(rows)

    def verify(self, elo: int, x: float, slope: float, x_min: float = 0.0) -> tuple[float, Measurement]:
        """Play ``games`` at ``x`` against Stockfish at ``elo``; outside the band move x (:meth:`_next_x`)
        and play again, ``refine`` rounds at most. Returns the last x played and its measurement. A level
        with results in ``verify.json`` goes on from its last one (a resumed run replays no game)."""
        rows = self._load("verify.json")
        mine = [r for r in rows if r["elo"] == elo]
        if mine:
            x = mine[-1]["x"]
        used = max(0, len(mine) - 1)
        last = max(used, self.args.refine)
        for round_ in range(used, last + 1):
            x = round(x, 3)
            prev = next((r for r in rows if r["elo"] == elo and r["x"] == x), None)
            if prev is None:
                w, d, l = self.play(ladder(x), elo, self.args.games, f"verify-e{elo}-x{x:.3f}")
                prev = {"elo": elo, "x": x, "w": w, "d": d, "l": l}
                rows.append(prev)
                self._save("verify.json", rows)
            m = measurement(prev["w"], prev["d"], prev["l"], f"Stockfish UCI_Elo {elo}")
            if abs(m.score - 0.5) <= self.args.band or round_ == last:
                return x, m
            x = _next_x([(r["x"], _gap(r)) for r in rows if r["elo"] == elo], x, slope, x_min)
        raise AssertionError("unreachable")


def _gap(row: dict[str, Any]) -> float:
    """The measured Elo difference of a result row, within +-400 (a perfect or null score)."""
    n = row["w"] + row["d"] + row["l"]
    s = (row["w"] + row["d"] / 2) / n
    return max(-400.0, min(400.0, -400.0 * math.log10(1 / s - 1))) if 0 < s < 1 else math.copysign(400.0, s - 0.5)


def _next_x(points: list[tuple[float, float]], x: float, slope: float, x_min: float) -> float:
    """The next x to try for a level from its measured (x, Elo gap) points: with two or more x values the
    root of the least-squares line gap(x) (the secant method), kept within one unit of the points; with
    one, a step of half the gap over the curve's ``slope`` (Elo per unit of x; half, since 30 games
    measure a gap only to about +-130 Elo). Never below ``x_min`` (the level under it), nor above 12."""
    xs = sorted({p[0] for p in points})
    nxt = x - 0.5 * dict(points)[x] / slope
    if len(xs) >= 2:
        b, a = np.polyfit([p[0] for p in points], [p[1] for p in points], 1)
        if b > 0:
            nxt = min(max(-a / b, xs[0] - 1.0), xs[-1] + 1.0)
    return min(max(x_min, nxt), 12.0)


def measurement(w: int, d: int, l: int, opponent: str) -> Measurement:
    """A :class:`Measurement` from W/D/L with the match runner's formulas (lichessbot.match.elo)."""
    n = w + d + l
    s = (w + d / 2) / n
    var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + l * s ** 2) / n
    est = elo_estimate(w, d, l)
    finite = math.isfinite(est.diff)
    return Measurement(games=n, wins=w, draws=d, losses=l, score=round(s, 4),
                       score_margin=round(Z95 * math.sqrt(var / n), 4),
                       elo_diff=round(est.diff, 1) if finite else None,
                       elo_margin=round(est.margin, 1) if finite and math.isfinite(est.margin) else None,
                       opponent=opponent)


def _sha256(network: str) -> str:
    p = _default_path() if network == "default" else Path(network)
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else ""


def run(args: argparse.Namespace) -> int:
    """Sweep, fit, verify, write ``--out``. Raises StrengthError for bad arguments."""
    elos = sorted(int(e) for e in args.levels.split(","))
    if any(not SF_ELO_RANGE[0] <= e <= SF_ELO_RANGE[1] for e in elos):
        raise StrengthError(f"--levels: Stockfish's UCI_Elo covers {SF_ELO_RANGE[0]}..{SF_ELO_RANGE[1]}, got {elos}")
    xs = sorted(float(x) for x in args.sweep.split(","))
    opponents = sorted(int(e) for e in args.sweep_opponents.split(",")) if args.sweep_opponents else elos
    if any(not SF_ELO_RANGE[0] <= e <= SF_ELO_RANGE[1] for e in opponents):
        raise StrengthError(f"--sweep-opponents: Stockfish's UCI_Elo covers {SF_ELO_RANGE[0]}..{SF_ELO_RANGE[1]}")
    try:
        sf = chess.engine.SimpleEngine.popen_uci([args.stockfish])
        sf_name = sf.id.get("name", "Stockfish")
        sf.quit()
    except (OSError, chess.engine.EngineError) as err:
        raise StrengthError(f"--stockfish {args.stockfish}: cannot start it ({err})") from None
    runner = _Runner(args)
    print(f"sweep: ladder points {xs} x opponents {opponents}, {args.sweep_games} games each", file=sys.stderr)
    curve = fit_performance(runner.sweep(xs, opponents))
    print("fit: " + ", ".join(f"x={x:g}: {r:.0f}" for x, r in curve), file=sys.stderr)
    levels: list[Level] = []
    x_prev = x_first = 0.0
    ladder_x: dict[int, float] = {}
    for elo in elos:
        bias = runner.bias(curve, elo)
        x = x_for(elo - bias, curve)
        if x is None:
            print(f"level {elo}: above what the sweep reached ({curve[-1][1]:.0f}); left out", file=sys.stderr)
            continue
        i = max(1, min(len(curve) - 1, next((k for k, (cx, _) in enumerate(curve) if cx >= x), len(curve) - 1)))
        slope = max(20.0, (curve[i][1] - curve[i - 1][1]) / (curve[i][0] - curve[i - 1][0]))
        x, m = runner.verify(elo, max(x, x_prev), slope, x_prev)
        x_first = x if not levels else x_first
        x_prev = x
        print(f"level {elo}: x {x:g} -> score {m.score:.1%} +- {m.score_margin:.1%} over {m.games} games",
              file=sys.stderr)
        levels.append(Level(**{**ladder(x).__dict__, "elo": elo, "measured": m}))
        ladder_x[elo] = x
    if not levels:
        raise StrengthError("no level could be calibrated: the sweep never reached the lowest --levels")
    lowest, x_lowest = levels[0].elo or 0, x_first  # calibrated levels all have an elo
    bias = runner.bias(curve, 10**6)
    for elo in sorted(int(e) for e in args.extrapolate.split(",") if e.strip()):
        x = x_for(elo - bias, curve)
        if elo >= lowest or x is None:
            raise StrengthError(f"--extrapolate: {elo} is not below the lowest measured level {lowest}")
        x = round(min(x, x_lowest), 3)
        levels.append(Level(**{**ladder(x).__dict__, "elo": elo, "extrapolated": True}))
        ladder_x[elo] = x
        print(f"level {elo}: x {x:g} read off the sweep's curve, not measured", file=sys.stderr)
    levels.sort(key=lambda lv: lv.elo or 0)
    conditions = {"opponent": f"{sf_name} ({args.stockfish}), UCI_LimitStrength true, UCI_Elo = the level, "
                              f"Threads 1, Hash 16, go nodes {args.sf_nodes}",
                  "ours": "lichessbot uci, UCI_LimitStrength true, go nodes = the level's nodes",
                  "openings": Path(runner.openings_path).name, "adjudication": "resign 1500 cp x 4 moves, "
                  "draw at 400 plies", "sweep": [{"x": x, "rating": round(r)} for x, r in curve],
                  "sweep_games": args.sweep_games, "games": args.games,
                  "ladder_x": {str(e): ladder_x[e] for e in sorted(ladder_x)}}
    table = StrengthTable(network=args.network, levels=tuple(levels), network_sha256=_sha256(args.network),
                          conditions=conditions)
    table.save(args.out)
    print(f"wrote {args.out}: {len(levels)} levels", file=sys.stderr)
    for lv in levels:
        mm = lv.measured
        result = "not measured" if mm is None else \
            f"+{mm.wins} ={mm.draws} -{mm.losses}\t{mm.score:.1%} +- {mm.score_margin:.1%}"
        print(f"{lv.elo}\t{lv.nodes} nodes\tT {lv.temperature:g}\t{result}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--network", default="default", help="the network to calibrate (WeightsFile)")
    p.add_argument("--levels", default="1350,1500,1600,1700,1800",
                   help="UCI_Elo of the levels, comma-separated, within Stockfish's 1350..2850")
    p.add_argument("--extrapolate", default="",
                   help="UCI_Elo of unmeasured levels below the lowest level (below Stockfish's range), read off "
                        "the sweep's curve; comma-separated")
    p.add_argument("--games", type=int, default=30, help="games per level in the verification (default 30)")
    p.add_argument("--sweep", default="0,2,4,6,8,10", help="ladder points x of the sweep (nodes 2^x)")
    p.add_argument("--sweep-opponents", default="",
                   help="Stockfish UCI_Elo values the sweep plays, comma-separated (default: the levels)")
    p.add_argument("--sweep-games", type=int, default=8, help="games per ladder point (default 8)")
    p.add_argument("--band", type=float, default=0.1,
                   help="a level whose score is farther than this from 0.5 is moved and played again")
    p.add_argument("--refine", type=int, default=1, help="rounds of moving a level outside the band (default 1)")
    p.add_argument("--stockfish", default="/usr/games/stockfish", help="Stockfish's command")
    p.add_argument("--sf-nodes", type=int, default=20000,
                   help="Stockfish's go nodes (enough for its skill pick at depth 1 + level)")
    p.add_argument("--openings", default="default", help=".pgn or .epd; default: lichessbot/data/openings.pgn")
    p.add_argument("--concurrency", type=int, default=1, help="games at once (two processes each)")
    p.add_argument("--work", default="calibration", help="directory for PGNs and resumable results")
    p.add_argument("--out", default="strength.json", help="the table to write")
