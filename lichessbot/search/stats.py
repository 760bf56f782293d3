"""Reading a tree: lc0's best-move ranking, the PV, root move stats, scores, sampling by temperature.

Sources: ../shared/spec/lc0-facts.md §4.1 (score), §5.8 (ranking, temperature), §5.1 (U term).
"""

from __future__ import annotations

import math

import chess
import numpy as np

from lichessbot.config import SearchParams
from lichessbot.search.tree import Node
from lichessbot.search.types import RootMove

__all__ = ["cpuct", "score_cp", "wdl_permille", "mate_in", "ranked_edges", "best_edge", "pv_of",
           "root_moves", "sample_by_temperature", "verbose_lines"]


def cpuct(params: SearchParams, n: int) -> float:
    """cpuct(N) = CPuct + CPuctFactor * ln((N + CPuctBase) / CPuctBase) (lc0 search.cc ``ComputeCpuct``)."""
    return params.cpuct + params.cpuct_factor * math.log((n + params.cpuct_base) / params.cpuct_base)


def score_cp(wl: float, d: float, has_wdl: bool = True) -> int:
    """Centipawns by lc0's default ScoreType ``WDL_mu`` (lc0 search.cc ``SendUciInfo``, ``WDLRescale``).

    ``wl`` = W - L and ``d`` from the root side to move's view. Truncated toward zero like lc0's int.
    """
    fallback = 45.0 * math.tan(1.56728071628 * max(-1.0, min(1.0, wl)))
    w, lo = (1.0 + wl - d) / 2.0, (1.0 - wl - d) / 2.0
    mu = 0.0
    if has_wdl and all(1e-4 < x < 1 - 1e-4 for x in (w, d, lo)):
        a, b = math.log(1.0 / lo - 1.0), math.log(1.0 / w - 1.0)
        if a + b != 0:
            mu = (a - b) / (a + b)
    if mu != 0.0 and abs(wl) + d < 0.996 and (abs(mu) < 1 or abs(fallback) < abs(100 * mu)):
        return int(100 * mu)
    return int(max(-1e6, min(1e6, fallback)))


def wdl_permille(wl: float, d: float) -> tuple[int, int, int]:
    """The UCI ``wdl`` triple: w = round(500(1+wl-d)), l = round(500(1-wl-d)), d = 1000-w-l (lc0 search.cc)."""
    w = max(0, min(1000, round(500 * (1 + wl - d))))
    lo = max(0, min(1000 - w, round(500 * (1 - wl - d))))
    return w, 1000 - w - lo, lo


def mate_in(child: Node) -> int | None:
    """``score mate`` for a proven best child: sign(wl) * (round(M)/2 + 1), truncated (lc0 search.cc)."""
    if not child.terminal or child.wl == 0:
        return None
    k = int(round(child.m) / 2 + 1)
    return k if child.wl > 0 else -k


def _key(node: Node, i: int) -> tuple:
    c = node.ch[i]
    n = node.en[i]
    q = node.eq[i] if n else 0.0
    if c is not None and c.terminal:
        if c.wl > 0:
            return (2, -c.m, 0, 0.0, node.p[i])
        if c.wl < 0:
            return (0, c.m, 0, 0.0, node.p[i])
        return (1, n, -c.m, q, node.p[i])
    return (1, n, 0.0, q, node.p[i])


def ranked_edges(node: Node) -> list[int]:
    """Edge indices of an expanded node, best first by lc0's ranking (lc0 search.cc
    ``GetBestChildrenNoTemperature``): proven win (shorter first) > others by visits, then Q, then
    prior > proven loss (longer first)."""
    return sorted(range(len(node.moves or ())), key=lambda i: _key(node, i), reverse=True)


def best_edge(node: Node) -> int | None:
    """The best edge index of an expanded node, or None."""
    if not node.moves:
        return None
    return max(range(len(node.moves)), key=lambda i: _key(node, i))


def pv_of(root: Node, max_len: int = 100) -> list[chess.Move]:
    """The principal variation: best edges from the root while the child has visits."""
    pv: list[chess.Move] = []
    node = root
    while node.moves and len(pv) < max_len:
        i = best_edge(node)
        if i is None or node.en[i] == 0 and pv:
            break
        pv.append(node.moves[i])
        child = node.ch[i]
        if child is None:
            break
        node = child
    return pv


def root_moves(root: Node, params: SearchParams, order: list[int] | None = None) -> list[RootMove]:
    """Per root edge stats, best first; q, wl from the root side to move's view."""
    if order is None:
        order = ranked_edges(root)
    pm = cpuct(params, root.n) * math.sqrt(max(root.n - 1, 1))
    out = []
    for i in order:
        c = root.ch[i]
        n = root.en[i]
        proven = None
        if c is not None and c.terminal:
            proven = 1 if c.wl > 0 else (-1 if c.wl < 0 else 0)
        out.append(RootMove(
            move=root.moves[i], n=n, p=root.p[i], q=root.eq[i] if n else 0.0,
            u=pm * root.p[i] / (1 + n + root.ef[i]), d=c.d if (c is not None and n) else 0.0,
            m=c.m if (c is not None and n) else 0.0, wl=c.wl if (c is not None and n) else 0.0,
            in_flight=root.ef[i], proven=proven,
        ))
    return out


def sample_by_temperature(root: Node, params: SearchParams, ply: int, rng: np.random.Generator) -> int | None:
    """A root edge sampled by visits^(1/T), or None when the effective temperature is 0.

    lc0 search.cc ``GetBestChildWithTemperature`` and params.cc: T decays linearly to 0 over
    TempDecayMoves (full moves), and is 0 from TempCutoffMove on; moves with Q < best Q - TempValueCutoff/50
    are left out; weights are ((N + TempVisitOffset) / max N)^(1/T), or priors when no move has visits.
    """
    t = params.temperature
    moves_played = ply // 2
    if t <= 0 or not root.moves:
        return None
    if params.temp_cutoff_move and moves_played + 1 >= params.temp_cutoff_move:
        return None
    if params.temp_decay_moves:
        t *= max(0.0, 1.0 - moves_played / params.temp_decay_moves)
        if t <= 0:
            return None
    idx = list(range(len(root.moves)))
    ns = np.array([root.en[i] for i in idx], dtype=np.float64)
    if ns.max() <= 0:
        w = np.array(root.p, dtype=np.float64)
    else:
        best_q = max(root.eq[i] for i in idx if root.en[i] > 0)
        cut = best_q - params.temp_value_cutoff / 50.0
        offs = ns + params.temp_visit_offset
        keep = (ns > 0) & np.array([root.eq[i] >= cut for i in idx]) & (offs > 0)
        w = np.where(keep, (np.maximum(offs, 0) / offs[keep].max()) ** (1.0 / t), 0.0)
    if w.sum() <= 0:
        return None
    return int(rng.choice(len(idx), p=w / w.sum()))


def verbose_lines(root: Node, params: SearchParams, move_index=None) -> list[str]:
    """lc0's VerboseMoveStats lines (lc0 search.cc ``GetVerboseStats``): worst first, then ``node``.

    ``move_index(move) -> int`` gives the network's policy index printed in brackets (or -1).
    """
    rms = root_moves(root, params)
    lines = []
    for rm in reversed(rms):
        i = root.moves.index(rm.move)
        c = root.ch[i]
        idx = move_index(rm.move) if move_index else -1
        v = "(V:  -.----)" if c is None or rm.n == 0 else f"(V: {c.v0:7.4f})"
        term = ""
        if rm.proven is not None:
            term = " (W)" if rm.proven > 0 else (" (L)" if rm.proven < 0 else " (D)")
        lines.append(
            f"{rm.move.uci():<5} ({idx:^4}) N: {rm.n:7d} (+{rm.in_flight:2d}) (P: {rm.p * 100:5.2f}%) "
            f"(WL: {rm.wl:8.5f}) (D: {rm.d:6.3f}) (M: {rm.m:4.1f}) (Q: {rm.q:8.5f}) (U: {rm.u:7.5f}) "
            f"(S: {rm.q + rm.u:8.5f}) {v}{term}"
        )
    lines.append(
        f"node  ({len(root.moves):4d}) N: {root.n:7d} (+{root.inflight:2d}) (P: {root.vp * 100:5.2f}%) "
        f"(WL: {-root.wl:8.5f}) (D: {root.d:6.3f}) (M: {root.m:4.1f}) (Q: {-root.wl + root.dsc * root.d:8.5f})"
    )
    return lines
