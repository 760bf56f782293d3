"""Elo difference and its 95 % error bar from a match's wins, draws and losses.

The formulas (the usual ones, e.g. cutechess-cli's match summary and the Chess Programming Wiki page
"Match Statistics", https://www.chessprogramming.org/Match_Statistics):

* score ``s = (W + D/2) / N`` with ``N = W + D + L``;
* Elo difference of the logistic model: ``elo(s) = -400 * log10(1/s - 1)``;
* variance of one game's score under the trinomial model (each game is 1, 1/2 or 0 with the observed
  frequencies ``w = W/N``, ``d = D/N``, ``l = L/N``):
  ``var = w (1 - s)^2 + d (1/2 - s)^2 + l (0 - s)^2``; the standard error of ``s`` is ``sqrt(var / N)``;
* the 95 % interval of ``s`` is ``s +- 1.959964 * sqrt(var / N)`` (normal quantile for 97.5 %), mapped
  through ``elo()``; the error bar reported is half the width of the mapped interval:
  ``(elo(s_hi) - elo(s_lo)) / 2``;
* likelihood of superiority: ``LOS = 1/2 (1 + erf((W - L) / sqrt(2 (W + L))))`` (draws ignored).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["EloEstimate", "elo_estimate", "elo_from_score", "Z95"]

Z95 = 1.959963984540054  # the 97.5 % quantile of the standard normal distribution


def elo_from_score(s: float) -> float:
    """Elo difference of the logistic model for a score fraction ``s`` in [0, 1] (+-inf at 1 and 0)."""
    if s >= 1.0:
        return math.inf
    if s <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / s - 1.0) + 0.0  # + 0.0 turns -0.0 into 0.0


@dataclass(frozen=True)
class EloEstimate:
    """Elo difference (of the side whose W/D/L were given) with its 95 % error bar.

    Attributes:
        diff: Elo difference (``inf``/``-inf`` for a perfect or null score, ``nan`` with no game).
        margin: half-width of the 95 % interval in Elo (``nan`` when undefined: no game or s in {0, 1}).
        score: the score fraction ``s``.
        los: likelihood of superiority in [0, 1] (0.5 without decisive games).
        games: ``N``.
    """

    diff: float
    margin: float
    score: float
    los: float
    games: int

    def __str__(self) -> str:
        if math.isnan(self.diff):
            return "n/a"
        if math.isinf(self.diff):
            return "+inf" if self.diff > 0 else "-inf"
        margin = "?" if math.isnan(self.margin) else f"{self.margin:.1f}"
        return f"{self.diff:+.1f} +/- {margin}"


def elo_estimate(wins: int, draws: int, losses: int) -> EloEstimate:
    """Elo difference, 95 % error bar and LOS from W/D/L (formulas in the module docstring).

    Raises:
        ValueError: a negative count.
    """
    if min(wins, draws, losses) < 0:
        raise ValueError(f"negative game counts: +{wins} ={draws} -{losses}")
    n = wins + draws + losses
    decisive = wins + losses
    los = 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * decisive))) if decisive else 0.5
    if n == 0:
        return EloEstimate(math.nan, math.nan, 0.5, los, 0)
    s = (wins + 0.5 * draws) / n
    w, d, l_ = wins / n, draws / n, losses / n
    var = w * (1.0 - s) ** 2 + d * (0.5 - s) ** 2 + l_ * s**2
    se = math.sqrt(var / n)
    diff = elo_from_score(s)
    if s <= 0.0 or s >= 1.0:
        return EloEstimate(diff, math.nan, s, los, n)
    lo, hi = max(s - Z95 * se, 0.0), min(s + Z95 * se, 1.0)
    margin = (elo_from_score(hi) - elo_from_score(lo)) / 2.0
    return EloEstimate(diff, margin, s, los, n)
