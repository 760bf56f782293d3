"""The move a strength level plays, chosen from the root of a finished search (docs/strength.md).

Rules, in order (``root_moves`` best first in lc0's ranking, Q from the root side to move's view):

1. a proven win at the top is always played;
2. the candidates are the root moves with visits whose Q is at most ``max_q_loss`` below the best
   move's Q, never a proven loss; when no move has visits (1 node: only the root was evaluated), the
   moves whose prior is at least ``min_prior`` of the highest prior;
3. with probability ``near_equal_prob`` a deliberate choice: uniformly among the candidates other than
   the best whose Q is within ``near_equal_q`` of the best's (if there is one);
4. else, with ``temperature`` T > 0, sampled with weights (N / max N)^(1/T) (priors (P / max P)^(1/T)
   at 1 node), as lc0's ``GetBestChildWithTemperature`` (src/search/classic/search.cc) with
   TempVisitOffset 0; with T = 0 the best move.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from lichessbot.strength.levels import Level

if TYPE_CHECKING:
    from lichessbot.search import RootMove, SearchResult

__all__ = ["Choice", "apply_level", "choose"]


@dataclass(frozen=True)
class Choice:
    """An index into the root moves (best first) and why: "best", "proven-win", "near-equal", "temperature"."""

    index: int
    reason: str


def choose(root_moves: list[RootMove], level: Level, rng: np.random.Generator) -> Choice:
    """The root move to play at ``level`` (rules in the module docstring).

    Raises:
        ValueError: ``root_moves`` is empty.
    """
    if not root_moves:
        raise ValueError("no root moves to choose from")
    best = root_moves[0]
    if best.proven == 1:
        return Choice(0, "proven-win")
    visited = best.n > 0
    if visited:
        floor = best.q - level.max_q_loss
        cand = [i for i, rm in enumerate(root_moves) if rm.n > 0 and rm.q >= floor and rm.proven != -1]
        weights = np.array([root_moves[i].n for i in cand], dtype=np.float64)
    else:
        top = max(rm.p for rm in root_moves)
        cand = [i for i, rm in enumerate(root_moves) if rm.p >= level.min_prior * top and rm.proven != -1]
        weights = np.array([root_moves[i].p for i in cand], dtype=np.float64)
    if 0 not in cand:
        cand, weights = [0, *cand], np.concatenate([[best.n if visited else best.p], weights])
    if len(cand) == 1:
        return Choice(0, "best")
    if visited and level.near_equal_prob > 0 and rng.random() < level.near_equal_prob:
        near = [i for i in cand if i != 0 and root_moves[i].q >= best.q - level.near_equal_q]
        if near:
            return Choice(int(near[rng.integers(len(near))]), "near-equal")
    if level.temperature <= 0 or weights.max() <= 0:
        return Choice(0, "best")
    w = (weights / weights.max()) ** (1.0 / level.temperature)
    pick = int(cand[int(rng.choice(len(cand), p=w / w.sum()))])
    return Choice(pick, "best" if pick == 0 else "temperature")


def apply_level(result: SearchResult, level: Level, rng: np.random.Generator) -> SearchResult:
    """``result`` with the move ``level`` chooses: best move, ponder move, PV, Q and score of that move.

    Everything is read from ``result`` (its ``root_moves`` and their ``lines``), never from the search's
    tree, which may already be searching the next position. ``result.stop_reason`` gets
    ``"; strength <reason> <move>"`` appended when another move than the best is played.

    Raises:
        ValueError: ``result`` has root moves without their lines (a result not made by the search).
    """
    rms = result.root_moves
    if not rms:
        return result
    if len(result.lines) != len(rms):
        raise ValueError(f"the search result has {len(rms)} root moves but {len(result.lines)} lines")
    c = choose(rms, level, rng)
    if c.index == 0:
        return result
    rm, line = rms[c.index], result.lines[c.index]
    pv = list(line.pv)
    return replace(result, best_move=rm.move, ponder_move=pv[1] if len(pv) > 1 else None, pv=pv, q=rm.q,
                   score=line.score, stop_reason=f"{result.stop_reason}; strength {c.reason} {rm.move.uci()}")
