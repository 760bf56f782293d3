"""Reading a search's root: sampling by temperature and VerboseMoveStats lines (scores: :mod:`lichessbot.score`).

The ranking of root moves, the PV and the per-move statistics come from the Rust core; this module
turns them into what UCI and the bot show. Sources: lc0 src/search/classic/search.cc (``SendUciInfo``,
``GetBestChildWithTemperature``, ``GetVerboseStats``).
"""

from __future__ import annotations

import chess
import numpy as np

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.search.types import RootMove

__all__ = ["sample_by_temperature", "verbose_lines"]


def sample_by_temperature(root_moves: list[RootMove], params: SearchParams, ply: int,
                          rng: np.random.Generator) -> int | None:
    """An index into ``root_moves`` sampled by visits^(1/T), or None when the effective temperature is 0.

    lc0 search.cc ``GetBestChildWithTemperature`` and params.cc: T decays linearly to 0 over
    TempDecayMoves (full moves), and is 0 from TempCutoffMove on; moves with Q < best Q - TempValueCutoff/50
    are left out; weights are ((N + TempVisitOffset) / max N)^(1/T), or priors when no move has visits.
    """
    t = params.temperature
    moves_played = ply // 2
    if t <= 0 or not root_moves:
        return None
    if params.temp_cutoff_move and moves_played + 1 >= params.temp_cutoff_move:
        return None
    if params.temp_decay_moves:
        t *= max(0.0, 1.0 - moves_played / params.temp_decay_moves)
        if t <= 0:
            return None
    ns = np.array([rm.n for rm in root_moves], dtype=np.float64)
    if ns.max() <= 0:
        w = np.array([rm.p for rm in root_moves], dtype=np.float64)
    else:
        best_q = max(rm.q for rm in root_moves if rm.n > 0)
        cut = best_q - params.temp_value_cutoff / 50.0
        offs = ns + params.temp_visit_offset
        keep = (ns > 0) & np.array([rm.q >= cut for rm in root_moves]) & (offs > 0)
        w = np.where(keep, (np.maximum(offs, 0) / offs[keep].max()) ** (1.0 / t), 0.0)
    if w.sum() <= 0:
        return None
    return int(rng.choice(len(root_moves), p=w / w.sum()))


def verbose_lines(edges: list[_core.RootEdge], moves: list[chess.Move], nn_indices: list[int], root: _core.RootNode,
                  dsc: float) -> list[str]:
    """lc0's VerboseMoveStats lines (lc0 search.cc ``GetVerboseStats``): worst first, then ``node``.

    ``edges``: the core's ``root_edges()`` (best first); ``moves`` and ``nn_indices`` (lc0 policy index
    printed in brackets) in edge order; ``root``: the core's ``root_info()``, wl in the node's mover view;
    ``dsc``: DrawScore for the root side to move.
    """
    lines = []
    for e in reversed(edges):
        v = "(V:  -.----)" if e.v0 is None else f"(V: {e.v0:7.4f})"
        term = ""
        if e.proven is not None:
            term = " (W)" if e.proven > 0 else (" (L)" if e.proven < 0 else " (D)")
        lines.append(
            f"{moves[e.edge].uci():<5} ({nn_indices[e.edge]:^4}) N: {e.n:7d} (+{e.in_flight:2d}) "
            f"(P: {e.p * 100:5.2f}%) (WL: {e.wl:8.5f}) (D: {e.d:6.3f}) (M: {e.m:4.1f}) (Q: {e.q:8.5f}) (U: {e.u:7.5f}) "
            f"(S: {e.q + e.u:8.5f}) {v}{term}"
        )
    r = root
    lines.append(
        f"node  ({len(edges):4d}) N: {r.n:7d} (+{r.in_flight:2d}) (P: {r.visited_policy * 100:5.2f}%) "
        f"(WL: {-r.wl:8.5f}) (D: {r.d:6.3f}) (M: {r.m:4.1f}) (Q: {-r.wl + dsc * r.d:8.5f})"
    )
    return lines
