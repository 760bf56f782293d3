"""Strength levels and the calibration table that maps a ``UCI_Elo`` to search settings (docs/strength.md).

A :class:`Level` is what weakens the engine: a node limit per move, a temperature over the root visits,
a guard on Q, and an occasional deliberate choice among near-equal moves (:mod:`lichessbot.strength.choice`).
A :class:`StrengthTable` holds the calibrated levels of one network, each with how it was measured
against Stockfish's own ``UCI_Elo``; it is stored as JSON (``lichessbot calibrate`` writes it, the
default network's ships as ``lichessbot/data/strength_default.json``).

Between two levels of a table the settings are interpolated (nodes geometrically, the rest linearly);
below the lowest level the lowest is played; above the highest the engine plays at full strength
(:meth:`StrengthTable.level_for` returns None).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from itertools import pairwise
from pathlib import Path
from statistics import NormalDist
from typing import Any

from lichessbot.errors import LichessbotError
from lichessbot.strength.fit import ml_rating

__all__ = [
    "DEFAULT_TABLE",
    "READ_FORMATS",
    "TABLE_FORMAT",
    "Level",
    "Measurement",
    "StrengthError",
    "StrengthTable",
    "load_table",
    "maia_level",
]

#: Version of the table's JSON layout: 2 adds each measurement's maximum-likelihood Elo with its 95 % interval and
#: the number of matches pooled (``lichessbot calibrate`` pools every game at a level's settings); format 1
#: tables (one match per level) are still read, their Elo and interval computed from their W/D/L.
TABLE_FORMAT = 2
#: The formats :func:`load_table` reads.
READ_FORMATS = (1, 2)
#: The 97.5 % quantile of the standard normal distribution (the score's 95 % interval; as lichessbot.match.elo.Z95,
#: computed here so that reading a table does not import the match runner).
Z95 = NormalDist().inv_cdf(0.975)
#: The table shipped for the default network (package data).
DEFAULT_TABLE = "strength_default.json"


class StrengthError(LichessbotError, ValueError):
    """A strength setting or table that cannot be used; the message names the key or file and the reason."""


def _tenth(v: float | None) -> float | None:
    """``v`` rounded to 0.1 (None stays None)."""
    return None if v is None else round(v, 1)


@dataclass(frozen=True)
class Measurement:
    """How a level scored: every game ``lichessbot calibrate`` played at exactly the level's settings, pooled
    over all its matches there (docs/strength.md), mostly against its reference opponent (Stockfish at
    ``UCI_Elo`` = the level's Elo).

    Attributes:
        games, wins, draws, losses: the games, from our side.
        score: (wins + draws/2) / games.
        score_margin: half-width of the score's 95 % interval (trinomial variance, docs/match.md).
        elo_diff: ``elo`` minus the level's ``UCI_Elo``, in Elo; None when ``elo`` is.
        elo_margin: half the width of [``elo_low``, ``elo_high``] in Elo; None when it is unbounded.
        opponent: who was played, e.g. "Stockfish UCI_Elo 1500".
        elo: the maximum-likelihood rating of the games against their opponents' ``UCI_Elo`` (Elo's logistic
            model, :func:`lichessbot.strength.fit.ml_rating`); None when every game was won, or every game lost.
        elo_low, elo_high: its 95 % likelihood-ratio interval (Wilks; :mod:`lichessbot.strength.fit`); None
            on a side where it is unbounded.
        matches: how many matches the games come from.
    """

    games: int
    wins: int
    draws: int
    losses: int
    score: float
    score_margin: float
    elo_diff: float | None
    elo_margin: float | None
    opponent: str = ""
    elo: float | None = None
    elo_low: float | None = None
    elo_high: float | None = None
    matches: int = 1

    @classmethod
    def of(cls, games: Sequence[tuple[float, float]], level_elo: int, opponent: str, matches: int = 1) -> Measurement:
        """The measurement of ``games`` = (opponent ``UCI_Elo``, our score 0 / 0.5 / 1) pairs of a level whose
        ``UCI_Elo`` is ``level_elo``; Elo values rounded to 0.1, scores to 1e-4.

        Raises:
            ValueError: ``games`` is empty or a score is not 0, 0.5 or 1.
        """
        if any(s not in (0.0, 0.5, 1.0) for _, s in games):
            raise ValueError("a game's score must be 0, 0.5 or 1")
        r = ml_rating(games)
        n = len(games)
        w, d = sum(s == 1.0 for _, s in games), sum(s == 0.5 for _, s in games)
        s = (w + d / 2) / n
        var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + (n - w - d) * s ** 2) / n
        return cls(games=n, wins=w, draws=d, losses=n - w - d, score=round(s, 4),
                   score_margin=round(Z95 * math.sqrt(var / n), 4),
                   elo_diff=_tenth(None if r.elo is None else r.elo - level_elo), elo_margin=_tenth(r.margin),
                   opponent=opponent, elo=_tenth(r.elo), elo_low=_tenth(r.low), elo_high=_tenth(r.high),
                   matches=matches)

    def describe(self) -> str:
        """One line: ``60 games (2 matches) +25 =8 -27, Elo 1488 (95 %: 1402..1575)``."""
        def num(v: float | None, unbounded: str) -> str:
            return unbounded if v is None else f"{v:.0f}"
        elo = num(self.elo, "unbounded")
        return (f"{self.games} games ({self.matches} match{'es' if self.matches != 1 else ''}) +{self.wins} "
                f"={self.draws} -{self.losses}, Elo {elo} (95 %: {num(self.elo_low, '-inf')}.."
                f"{num(self.elo_high, '+inf')})")


@dataclass(frozen=True)
class Level:
    """The settings of one strength level.

    Attributes:
        elo: the ``UCI_Elo`` this level plays at (None for a preset such as Maia's).
        nodes: node limit per move (lc0 VisitsStopper: reused nodes count), >= 1.
        temperature: the move is sampled with weights (N / max N)^(1/T) over the root moves with visits
            (with priors, (P / max P)^(1/T), when only the root was evaluated); 0 plays the best move
            (lc0 search.cc ``GetBestChildWithTemperature``).
        max_q_loss: a move whose Q (root side to move's view, -1..1) is more than this below the best
            move's Q is never chosen; proven losses never are.
        near_equal_q: moves within this Q of the best are "near-equal".
        near_equal_prob: probability of a deliberate choice, uniformly among the near-equal moves
            other than the best (when there is one), instead of sampling by temperature.
        min_prior: moves whose prior is below this share of the highest prior are never chosen (the
            only guard at 1 node, where no move has a Q).
        measured: the calibration result, None for an unmeasured level.
        extrapolated: read off the calibration curve outside the range it was measured in (below
            Stockfish's ``UCI_Elo`` range: ``lichessbot calibrate --extrapolate``); a greeting never names
            such a level by its Elo (:func:`lichessbot.strength.level_text`).
    """

    elo: int | None
    nodes: int
    temperature: float = 0.0
    max_q_loss: float = 0.1
    near_equal_q: float = 0.02
    near_equal_prob: float = 0.0
    min_prior: float = 0.0
    measured: Measurement | None = None
    extrapolated: bool = False

    def __post_init__(self) -> None:
        checks = [(self.nodes >= 1, "nodes must be at least 1"),
                  (self.temperature >= 0, "temperature must not be negative"),
                  (0 <= self.max_q_loss <= 2, "max_q_loss must be within 0..2"),
                  (0 <= self.near_equal_q <= 2, "near_equal_q must be within 0..2"),
                  (0 <= self.near_equal_prob <= 1, "near_equal_prob must be within 0..1"),
                  (0 <= self.min_prior <= 1, "min_prior must be within 0..1")]
        for ok, why in checks:
            if not ok:
                raise StrengthError(f"strength level {self.elo}: {why}")

    def describe(self) -> str:
        """A short line for logs and chat, e.g. ``1500 Elo (64 nodes, T 0.5)``."""
        head = "Maia preset" if self.elo is None else f"{self.elo} Elo"
        if self.extrapolated:
            head += ", extrapolated, not measured"
        return f"{head} ({self.nodes} nodes, T {self.temperature:.2g})"

    def settings(self) -> dict[str, Any]:
        """The settings alone (no Elo, no measurement), as stored in a table."""
        d = asdict(self)
        d.pop("elo"), d.pop("measured"), d.pop("extrapolated")
        return d


def maia_level(nodes: int = 1, temperature: float = 1.0, min_prior: float = 0.05) -> Level:
    """The Maia preset: a human-move-prediction network (the operator supplies it) played from its policy.

    At 1 node the move is sampled from the network's priors at ``temperature`` (1.0: as often as the
    network predicts a human of its rating would play it), among moves with at least ``min_prior`` of the
    top prior. Maia's authors play it at 1 node (McIlroy-Young et al., "Aligning Superhuman AI with
    Human Behavior: Chess as a Model System", KDD 2020); the sampling is ours.
    """
    return Level(elo=None, nodes=nodes, temperature=temperature, max_q_loss=0.3, near_equal_prob=0.0,
                 min_prior=min_prior)


@dataclass(frozen=True)
class StrengthTable:
    """The calibrated levels of one network, lowest Elo first.

    Attributes:
        network: the network's name (file name, or "default").
        network_sha256: hex digest of the network file, or "" when unknown.
        levels: the levels, Elo ascending, at least one.
        conditions: how the levels were measured (opponent, its limit, openings, games), free-form.
        source: where the table was read from (for messages).
    """

    network: str
    levels: tuple[Level, ...]
    network_sha256: str = ""
    conditions: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def min_elo(self) -> int:
        return int(self.levels[0].elo)  # type: ignore[arg-type]

    @property
    def max_elo(self) -> int:
        return int(self.levels[-1].elo)  # type: ignore[arg-type]

    def level_for(self, elo: int) -> Level | None:
        """The settings for ``elo``: a table level, interpolated between the two around it (nodes
        geometrically, the other settings linearly), the lowest level below the table, None (full
        strength) above it. The returned level's ``elo`` is the one asked for (clamped to the lowest)."""
        lv = self.levels
        if elo > self.max_elo:
            return None
        if elo <= self.min_elo:  # below the table: its lowest level, under that level's own Elo
            return replace(lv[0], elo=self.min_elo) if elo < self.min_elo else lv[0]
        for lo, hi in pairwise(lv):
            if elo == hi.elo:
                return hi
            if lo.elo <= elo < hi.elo:  # type: ignore[operator]
                if elo == lo.elo:
                    return lo
                f = (elo - lo.elo) / (hi.elo - lo.elo)  # type: ignore[operator]
                return Level(
                    elo=elo,
                    nodes=max(1, round(math.exp((1 - f) * math.log(lo.nodes) + f * math.log(hi.nodes)))),
                    temperature=_lerp(lo.temperature, hi.temperature, f),
                    max_q_loss=_lerp(lo.max_q_loss, hi.max_q_loss, f),
                    near_equal_q=_lerp(lo.near_equal_q, hi.near_equal_q, f),
                    near_equal_prob=_lerp(lo.near_equal_prob, hi.near_equal_prob, f),
                    min_prior=_lerp(lo.min_prior, hi.min_prior, f),
                    extrapolated=lo.extrapolated or hi.extrapolated)
        return lv[-1]

    def to_json(self) -> dict[str, Any]:
        return {"format": TABLE_FORMAT, "network": self.network, "network_sha256": self.network_sha256,
                "conditions": self.conditions,
                "levels": [{"elo": lv.elo, **lv.settings(),
                            "measured": None if lv.measured is None else asdict(lv.measured),
                            **({"extrapolated": True} if lv.extrapolated else {})} for lv in self.levels]}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")


def _lerp(a: float, b: float, f: float) -> float:
    return round(a + (b - a) * f, 4)


def _level_from(d: Any, where: str, fmt: int) -> Level:
    if not isinstance(d, dict):
        raise StrengthError(f"{where}: a level must be an object")
    known = set(Level.__dataclass_fields__)
    extra = set(d) - known
    if extra:
        raise StrengthError(f"{where}: unknown key {min(extra)!r}")
    if not isinstance(d.get("elo"), int) or not isinstance(d.get("nodes"), int):
        raise StrengthError(f"{where}: 'elo' and 'nodes' must be integers")
    m = d.get("measured")
    try:
        measured = None if m is None else Measurement(**m)
        if measured is not None and fmt == 1:  # one match against the level's UCI_Elo; no Elo, no interval stored
            games = [(float(d["elo"]), 1.0)] * measured.wins + [(float(d["elo"]), 0.5)] * measured.draws \
                + [(float(d["elo"]), 0.0)] * measured.losses
            measured = Measurement.of(games, d["elo"], measured.opponent)
        return Level(**{**d, "measured": measured})
    except (TypeError, ValueError) as err:  # StrengthError is a ValueError
        raise StrengthError(f"{where}: {err}") from None


def load_table(path: str | Path = "default") -> StrengthTable:
    """Read a table written by ``lichessbot calibrate`` (``"default"``: the one shipped for the default network),
    of any format of :data:`READ_FORMATS`.

    Raises:
        StrengthError: the file is missing, not JSON, or a level is malformed (file and level named).
    """
    if str(path) == "default":
        text = (resources.files("lichessbot") / "data" / DEFAULT_TABLE).read_text(encoding="utf-8")
        source = f"lichessbot/data/{DEFAULT_TABLE}"
    else:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as err:
            raise StrengthError(f"strength table {source}: cannot read ({err.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise StrengthError(f"strength table {source}: not JSON ({err})") from None
    if not isinstance(data, dict) or data.get("format") not in READ_FORMATS:
        raise StrengthError(f"strength table {source}: not a strength table of format "
                            f"{' or '.join(map(str, READ_FORMATS))}")
    raw = data.get("levels")
    if not isinstance(raw, list) or not raw:
        raise StrengthError(f"strength table {source}: 'levels' must be a non-empty list")
    levels = sorted((_level_from(d, f"strength table {source}, level {i + 1}", data["format"])
                     for i, d in enumerate(raw)),
                    key=lambda lv: lv.elo or 0)  # a table's levels all have an elo
    if len({lv.elo for lv in levels}) != len(levels):
        raise StrengthError(f"strength table {source}: two levels with the same elo")
    return StrengthTable(network=str(data.get("network", "")), levels=tuple(levels),
                         network_sha256=str(data.get("network_sha256", "")),
                         conditions=dict(data.get("conditions") or {}), source=source)
