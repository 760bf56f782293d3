"""The rating model of ``lichessbot calibrate``: pure functions of game results, no game is played here.

Elo's logistic model (A. Elo, "The Rating of Chessplayers, Past and Present", 1978, in the logistic form
that USCF and lichess-style performance ratings use): a player of rating ``r`` scores against an opponent of
rating ``E`` an expected

    p(r, E) = 1 / (1 + 10^((E - r) / 400)) = sigmoid(k (r - E)),   k = ln(10) / 400.

A game's result ``s`` (our points: 1, 1/2 or 0) counts as ``s`` of a win and ``1 - s`` of a loss, so the
log-likelihood of a set of games is

    l(r) = sum_j s_j ln p(r, E_j) + (1 - s_j) ln(1 - p(r, E_j))

(the Bernoulli quasi-likelihood with draws as half a win, the model of the performance rating and of
Ordo; its maximum solves sum_j p(r, E_j) = sum_j s_j). Draws lower the real variance of a score below the
model's, so the intervals below are, if anything, a little wide.

* :func:`ml_rating`: the maximum-likelihood rating of games against known opponents, with its 95 %
  likelihood-ratio interval {r : 2 (l(r_hat) - l(r)) <= 3.8415}, 3.8415 the 95 % quantile of chi-square
  with one degree of freedom (Wilks' theorem, S. S. Wilks, Ann. Math. Statist. 9, 1938). Unlike
  r_hat +- 1.96 / sqrt(Fisher information), it is asymmetric where the score is lopsided and has a
  finite bound even for a perfect (null) score, whose r_hat is infinite.
* :func:`fit_curve`: the rating r(x) of ladder point x, over every game played at any x, by maximum
  likelihood of the same model with r(x) a quadratic that is non-decreasing over the points played
  (logistic regression of the results on x, offset by the opponent's Elo, fitted by Newton's method).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["CHI2_95", "K", "PRIOR_DRAWS", "Curve", "Rating", "expected", "fit_curve", "ml_rating", "performance"]

#: Elo's logistic scale: p = sigmoid(K (r - E)), K = ln(10) / 400 per Elo point.
K = math.log(10.0) / 400.0
#: The 95 % quantile of chi-square with one degree of freedom (the likelihood-ratio interval's threshold).
CHI2_95 = 3.841458820694124
#: Virtual draws per ladder point in :func:`fit_curve`: each point played also counts one draw against the mean
#: opponent of its games (R. Coulom's BayesElo puts the same prior of virtual draws on every player). It keeps
#: the curve finite when a point won or lost all its games (the maximum-likelihood curve is then infinitely
#: steep); a point of 8 games it moves by a sixth of its 95 % error bar at most (2 / 8: 25 Elo of +-290;
#: 1 / 8: 58 of +-400; 4 / 8: 0).
PRIOR_DRAWS = 1.0
#: Elo beyond the opponents where the bisections below stop looking.
_SPAN = 4000.0


def expected(r: float, e: float) -> float:
    """Elo's expected score p(r, E) = 1 / (1 + 10^((E - r) / 400)) of a rating ``r`` against ``e`` (Elo)."""
    return 1.0 / (1.0 + math.pow(10.0, (e - r) / 400.0))


def _loglik(r: float, games: Sequence[tuple[float, float]]) -> float:
    """l(r) of the module docstring for ``games`` = (opponent Elo, our score) pairs, in nats."""
    e = np.array([g[0] for g in games], dtype=np.float64)
    s = np.array([g[1] for g in games], dtype=np.float64)
    z = K * (r - e)
    return float(-(s * np.logaddexp(0.0, -z) + (1.0 - s) * np.logaddexp(0.0, z)).sum())


def performance(games: Sequence[tuple[float, float, float]]) -> float:
    """The maximum-likelihood rating from ``(opponent Elo, points, games)`` triples: the root of
    sum_j n_j p(R, E_j) = sum_j points_j, by bisection within the opponents' range +- 800 Elo. A perfect
    (null) score gives the upper (lower) end, so the value is always finite (the sweep's staircase uses it).

    Raises:
        ValueError: ``games`` is empty.
    """
    if not games:
        raise ValueError("performance of no games")
    pts = sum(p for _, p, _ in games)
    lo, hi = min(e for e, _, _ in games) - 800.0, max(e for e, _, _ in games) + 800.0
    for _ in range(60):
        mid = (lo + hi) / 2
        exp = sum(n * expected(mid, e) for e, _, n in games)
        lo, hi = (mid, hi) if exp < pts else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True)
class Rating:
    """A maximum-likelihood rating with its 95 % likelihood-ratio interval, in Elo (:func:`ml_rating`).

    Attributes:
        elo: the maximum-likelihood rating; None when unbounded (every game won or every game lost).
        low: lower end of the 95 % interval; None when unbounded below (every game lost).
        high: upper end; None when unbounded above (every game won).
        games: number of games.
        points: our points (wins + draws / 2).
    """

    elo: float | None
    low: float | None
    high: float | None
    games: int
    points: float

    @property
    def margin(self) -> float | None:
        """Half the interval's width in Elo, None when it is unbounded."""
        return None if self.low is None or self.high is None else (self.high - self.low) / 2.0


def _bisect(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of a monotone ``f`` on [lo, hi] (a sign change assumed), to 1e-6 of its unit."""
    flo = f(lo)
    for _ in range(100):
        mid = (lo + hi) / 2
        if (f(mid) > 0) == (flo > 0):
            lo, flo = mid, f(mid)
        else:
            hi = mid
        if hi - lo < 1e-6:
            break
    return (lo + hi) / 2


def ml_rating(games: Sequence[tuple[float, float]]) -> Rating:
    """The maximum-likelihood rating of ``games`` = (opponent Elo, our score in {0, 0.5, 1}) pairs, with its 95 %
    likelihood-ratio interval (module docstring; the score may be any value in 0..1).

    Raises:
        ValueError: ``games`` is empty or a score is outside 0..1.
    """
    if not games:
        raise ValueError("the rating of no games")
    if any(not 0.0 <= s <= 1.0 for _, s in games):
        raise ValueError("a game's score must be within 0..1")
    n, pts = len(games), sum(s for _, s in games)
    e_lo, e_hi = min(e for e, _ in games) - _SPAN, max(e for e, _ in games) + _SPAN
    r_hat: float | None = None
    top = 0.0  # with every game won (lost), the supremum of l: every term tends to ln 1 = 0
    if 0 < pts < n:
        r_hat = found = _bisect(lambda r: sum(expected(r, e) for e, _ in games) - pts, e_lo, e_hi)
        top = _loglik(found, games)
    cut = top - CHI2_95 / 2.0
    low = high = None
    if pts > 0:  # l increases up to r_hat (or without end)
        low = _bisect(lambda r: _loglik(r, games) - cut, e_lo, r_hat if r_hat is not None else e_hi)
    if pts < n:
        high = _bisect(lambda r: _loglik(r, games) - cut, r_hat if r_hat is not None else e_lo, e_hi)
    return Rating(elo=r_hat, low=low, high=high, games=n, points=pts)


@dataclass(frozen=True)
class Curve:
    """The rating of the ladder's settings, r(x) in Elo, x the ladder point (:func:`fit_curve`).

    Between ``x0`` and ``x1`` (the lowest and highest x played) r is the quadratic with r(x0) = ``a`` and slopes
    ``d0`` at x0 and ``d1`` at x1 (Elo per unit of x, both >= 0, so r never decreases: its slope moves linearly
    from d0 to d1); outside, it goes on as a line with the end's slope. ``games`` is the number of games fitted.
    """

    x0: float
    x1: float
    a: float
    d0: float
    d1: float
    games: int = 0

    def at(self, x: float) -> float:
        """r(x) in Elo."""
        if x <= self.x0:
            return self.a + self.d0 * (x - self.x0)
        w = self.x1 - self.x0
        if x >= self.x1:
            return self.a + (self.d0 + self.d1) / 2.0 * w + self.d1 * (x - self.x1)
        t = x - self.x0
        return self.a + self.d0 * t + (self.d1 - self.d0) * t * t / (2.0 * w)

    def x_for(self, elo: float, x_max: float | None = None) -> float | None:
        """The x where r reaches ``elo``: ``x0`` when r(x0) is already above it; None when r stays below it up to
        ``x_max`` (default ``x1``: no extrapolation above the points played)."""
        top = self.x1 if x_max is None else max(self.x1, x_max)
        if elo <= self.at(self.x0):
            return self.x0
        if elo > self.at(top):
            return None
        return _bisect(lambda x: self.at(x) - elo, self.x0, top)

    def to_json(self) -> dict[str, float]:
        return {"x0": self.x0, "x1": self.x1, "a": round(self.a, 2), "d0": round(self.d0, 3),
                "d1": round(self.d1, 3), "games": self.games}


def _basis(x: np.ndarray, x0: float, x1: float) -> np.ndarray:
    """Columns (1, b0(x), b1(x)) with r(x) = a + d0 b0(x) + d1 b1(x) on [x0, x1] (:class:`Curve`); fewer columns
    with fewer points: one x gives r = a, two give the line r = a + d (x - x0)."""
    t = x - x0
    if x1 == x0:
        return np.ones((len(x), 1))
    if len(np.unique(x)) == 2:
        return np.stack([np.ones_like(t), t], axis=1)
    w = x1 - x0
    return np.stack([np.ones_like(t), t - t * t / (2 * w), t * t / (2 * w)], axis=1)


def _newton(b: np.ndarray, e: np.ndarray, s: np.ndarray, wt: np.ndarray, free: list[int]) -> tuple[np.ndarray, float]:
    """Maximise the weighted log-likelihood of r = b @ theta over the ``free`` columns (the others 0) by Newton's
    method with step halving; the objective is concave. Returns (theta, its log-likelihood)."""

    def ll(theta: np.ndarray) -> float:
        z = K * (b @ theta - e)
        return float(-(wt * (s * np.logaddexp(0.0, -z) + (1.0 - s) * np.logaddexp(0.0, z))).sum())

    theta = np.zeros(b.shape[1])
    theta[0] = float(np.average(e, weights=wt))
    cur = ll(theta)
    bf = b[:, free]
    for _ in range(200):
        p = 0.5 * (1.0 + np.tanh(K * (b @ theta - e) / 2.0))  # sigmoid(z), without overflow
        grad = K * bf.T @ (wt * (s - p))
        hess = K * K * (bf.T * (wt * p * (1.0 - p))) @ bf
        step = np.linalg.solve(hess + 1e-12 * np.eye(len(free)), grad)
        t = 1.0
        while True:
            cand = theta.copy()
            cand[free] += t * step
            new = ll(cand)
            if new >= cur - 1e-12 or t < 1e-6:
                break
            t /= 2
        if new < cur - 1e-12:  # no step uphill: at the maximum, up to rounding
            break
        theta, gain, cur = cand, new - cur, new
        if np.max(np.abs(t * step)) < 1e-7 or gain < 1e-12:
            break
    return theta, cur


def fit_curve(games: Sequence[tuple[float, float, float]], prior_draws: float = PRIOR_DRAWS) -> Curve:
    """The non-decreasing quadratic r(x) of :class:`Curve` that maximises the likelihood of every game of
    ``games`` = (ladder x, opponent Elo, our score) triples (module docstring), penalised by ``prior_draws``
    virtual draws per distinct x against the mean opponent Elo of that x's games (:data:`PRIOR_DRAWS`; with 0,
    games that a step of the curve would separate into wins and losses make it run away to infinite slopes).

    The slopes d0, d1 >= 0 are the only constraints; the likelihood is concave in (a, d0, d1), so its maximum
    under them is the best of the unconstrained maxima with each subset of {d0, d1} held at 0 that keep the
    other slope >= 0 (the Karush-Kuhn-Tucker conditions of a concave program with bound constraints).

    Raises:
        ValueError: ``games`` is empty.
    """
    if not games:
        raise ValueError("a curve needs at least one game")
    x = np.array([g[0] for g in games], dtype=np.float64)
    e = np.array([g[1] for g in games], dtype=np.float64)
    s = np.array([g[2] for g in games], dtype=np.float64)
    wt = np.ones(len(games))
    if prior_draws > 0:
        xs = np.unique(x)
        mean_opponent = [float(e[x == v].mean()) for v in xs]
        x, e = np.concatenate([x, xs]), np.concatenate([e, mean_opponent])
        s = np.concatenate([s, np.full(len(xs), 0.5)])
        wt = np.concatenate([wt, np.full(len(xs), prior_draws)])
    x0, x1 = float(x.min()), float(x.max())
    b = _basis(x, x0, x1)
    slopes = list(range(1, b.shape[1]))
    best: tuple[float, np.ndarray] | None = None
    for held in itertools.chain.from_iterable(itertools.combinations(slopes, k) for k in range(len(slopes) + 1)):
        free = [i for i in range(b.shape[1]) if i not in held]
        theta, ll = _newton(b, e, s, wt, free)
        if all(theta[i] >= -1e-9 for i in slopes) and (best is None or ll > best[0]):
            best = (ll, theta)
    assert best is not None  # holding every slope at 0 is always feasible
    theta = np.maximum(best[1], [-np.inf] + [0.0] * len(slopes))
    a = float(theta[0])
    d0 = float(theta[1]) if len(theta) > 1 else 0.0
    d1 = float(theta[2]) if len(theta) > 2 else d0
    return Curve(x0=x0, x1=x1, a=a, d0=d0, d1=d1, games=len(games))
