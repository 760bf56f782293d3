"""One value for an evaluation: centipawns, moves to mate and the win/draw/loss probabilities.

The search, the tablebase root probe, UCI, the bot's chat, PGN and status page all read scores through
:class:`Score`; nothing else computes a WDL triple or centipawns from ``(wl, d)``. Imports nothing of
the project (a floor of its own, like :mod:`lichessbot.errors`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import chess
import chess.engine

__all__ = ["Score", "wdl_mu_cp"]

#: Probabilities this close to 0 or 1 make lc0's WDL_mu undefined (lc0 search.cc ``WDLRescale``).
_WDL_EPS = 1e-4


def wdl_mu_cp(wl: float, d: float, has_wdl: bool = True) -> int:
    """Centipawns by lc0's default ScoreType ``WDL_mu`` (lc0 src/search/classic/search.cc ``SendUciInfo``
    and ``WDLRescale``), falling back like lc0 to 45 tan(1.56728071628 wl) where mu is not reasonable
    (no WDL head, a probability within 1e-4 of 0 or 1, or |wl| + d >= 0.996).

    Args:
        wl: W - L in [-1, 1], the side to move's view.
        d: the draw probability in [0, 1].
        has_wdl: the network has a WDL head; without one only the tan fallback applies.

    Returns:
        Centipawns, truncated toward zero like lc0's ``int`` cast, clamped to +-1,000,000.
    """
    fallback = 45.0 * math.tan(1.56728071628 * max(-1.0, min(1.0, wl)))
    w, lo = (1.0 + wl - d) / 2.0, (1.0 - wl - d) / 2.0
    mu = 0.0
    if has_wdl and all(_WDL_EPS < x < 1 - _WDL_EPS for x in (w, d, lo)):
        a, b = math.log(1.0 / lo - 1.0), math.log(1.0 / w - 1.0)
        if a + b != 0:
            mu = (a - b) / (a + b)
    if mu != 0.0 and abs(wl) + d < 0.996 and (abs(mu) < 1 or abs(fallback) < abs(100 * mu)):
        return int(100 * mu)
    return int(max(-1e6, min(1e6, fallback)))


@dataclass(frozen=True, slots=True)
class Score:
    """An evaluation from one side's point of view (which side: say so where a Score is stored).

    Attributes:
        cp: centipawns (lc0's WDL_mu over the search's Q for searched moves; Stockfish's tablebase
            convention for tablebase moves, :data:`lichessbot.tablebase.TB_CP`).
        wdl: (W, D, L) probabilities, floats summing to 1.
        mate: moves (not plies) to mate when proven: > 0 this side mates, < 0 it is mated; else None.
    """

    cp: int
    wdl: tuple[float, float, float]
    mate: int | None = None

    @classmethod
    def from_wl_d(cls, wl: float, d: float, mate: int | None = None, *, has_wdl: bool = True) -> Score:
        """The score of a node whose values are ``wl`` = W - L and ``d`` = D: W = (1 + wl - d) / 2,
        L = (1 - wl - d) / 2 (lc0 src/search/classic/node.h ``GetWL``/``GetD``), cp by :func:`wdl_mu_cp`."""
        return cls(cp=wdl_mu_cp(wl, d, has_wdl), wdl=((1 + wl - d) / 2, d, (1 - wl - d) / 2), mate=mate)

    @property
    def wl(self) -> float:
        """W - L, in [-1, 1]."""
        return self.wdl[0] - self.wdl[2]

    @property
    def permille(self) -> tuple[int, int, int]:
        """The UCI ``wdl`` triple: w = round(500(1 + wl - d)), l = round(500(1 - wl - d)), d = 1000 - w - l
        (lc0 src/search/classic/search.cc ``SendUciInfo``)."""
        wl, d = self.wl, self.wdl[1]
        w = max(0, min(1000, round(500 * (1 + wl - d))))
        lo = max(0, min(1000 - w, round(500 * (1 - wl - d))))
        return w, 1000 - w - lo, lo

    def value_cp(self, mate_score: int = 100_000) -> int:
        """Centipawns with a mate as +-(``mate_score`` - moves to mate), so that thresholds compare
        (python-chess ``chess.engine.Score.score(mate_score=...)`` does the same with plies)."""
        if self.mate is not None:
            return (mate_score - abs(self.mate)) * (1 if self.mate > 0 else -1)
        return self.cp

    def flipped(self) -> Score:
        """The same evaluation from the other side's point of view."""
        w, d, lo = self.wdl
        return Score(cp=-self.cp, wdl=(lo, d, w), mate=None if self.mate is None else -self.mate)

    def pov(self, color: chess.Color) -> chess.engine.PovScore:
        """python-chess's score (mate or centipawns) for a Score seen from ``color``'s side."""
        relative = chess.engine.Mate(self.mate) if self.mate is not None else chess.engine.Cp(self.cp)
        return chess.engine.PovScore(relative, color)

    def uci(self) -> str:
        """``mate N`` or ``cp N``, the UCI ``score`` field's value."""
        return f"mate {self.mate}" if self.mate is not None else f"cp {self.cp}"
