"""The search tree: compact nodes, leaf expansion with lc0's terminal rules, backup, certainty propagation.

A :class:`Node` holds its own statistics and, once expanded, *parallel lists of its edges* (sorted by
prior, highest first, as lc0 sorts them): ``moves`` (chess.Move), ``p`` (prior), ``en`` (completed
visits of the child), ``eq`` (the child's Q from this node's side to move), ``ef`` (visits in flight)
and ``ch`` (the child :class:`Node`, ``None`` until first visited). There is no Python object per edge
and no table keyed by positions: a child node is created when selection first walks into it.

Values follow lc0 (../shared/spec/lc0-facts.md §4, lc0 src/search/classic/node.h): a node's ``wl`` and
``m`` are from the view of **the player who moved into it**; ``d`` has no side. Bounds ``lower`` and
``upper`` (-1 loss, 0 draw, +1 win, same view) implement "sticky endgames" (§5.6).

Each expanded node keeps the :class:`~lichessbot.engine.encoding.Snapshot` of its position, so a leaf
is reached by walking nodes only; the one python-chess board of a search is set from the parent's
snapshot and pushed one move to expand the leaf (no move stack is ever copied).
"""

from __future__ import annotations

from collections.abc import Sequence

import chess
import numpy as np

from lichessbot.engine.encoding import Snapshot, snapshot

__all__ = ["Node", "TERMINAL_NONE", "TERMINAL_END", "TERMINAL_TWOFOLD", "expand_leaf", "set_edges",
           "backup", "cancel_path", "update_bounds", "history_of", "has_mating_material"]

TERMINAL_NONE, TERMINAL_END, TERMINAL_TWOFOLD = 0, 1, 2

_DARK = 0xAA55AA55AA55AA55  # a1 is dark


class Node:
    """One position of the tree. See the module docstring for the meaning of each field."""

    __slots__ = ("parent", "idx", "snap", "moves", "p", "en", "eq", "ef", "ch",
                 "n", "inflight", "wl", "d", "m", "terminal", "lower", "upper", "vp", "cycle", "dsc", "v0")

    def __init__(self, parent: Node | None, idx: int) -> None:
        self.parent = parent
        self.idx = idx  # edge index in the parent
        self.snap: Snapshot | None = None
        self.moves: list[chess.Move] | None = None  # None until expanded
        self.p: list[float] = []
        self.en: list[int] = []
        self.eq: list[float] = []
        self.ef: list[int] = []
        self.ch: list[Node | None] = []
        self.n = 0  # completed visits
        self.inflight = 0
        self.wl = 0.0
        self.d = 0.0
        self.m = 0.0
        self.terminal = TERMINAL_NONE
        self.lower = -1
        self.upper = 1
        self.vp = 0.0  # sum of priors of children with N > 0 (lc0 GetVisitedPolicy)
        self.cycle = 0  # two-fold draws: plies back to the first occurrence
        self.dsc = 0.0  # draw score for this node's side to move (lc0 DrawScore, white's view signed)
        self.v0 = 0.0  # the first value seen here (network or terminal), the mover's view

    @property
    def proven(self) -> bool:
        """True when the game result from here is known (a terminal, or bounds that met)."""
        return self.terminal != TERMINAL_NONE

    def child_of(self, move: chess.Move) -> Node | None:
        """The child reached by ``move``, or None (not expanded or not visited)."""
        if self.moves is None:
            return None
        for i, mv in enumerate(self.moves):
            if mv == move:
                return self.ch[i]
        return None

    def count(self) -> int:
        """Number of nodes in this subtree (iterative walk)."""
        total, stack = 0, [self]
        while stack:
            nd = stack.pop()
            total += 1
            stack.extend(c for c in nd.ch if c is not None)
        return total


def has_mating_material(s: Snapshot) -> bool:
    """lc0's rule (lc0 src/chess/board.cc ``HasMatingMaterial``; lc0-facts §5.5)."""
    if s.rooks or s.queens or s.pawns:
        return True
    occ = s.white | s.black
    if occ.bit_count() < 4:
        return False
    if s.knights:
        return True
    return bool(s.bishops & _DARK) and bool(s.bishops & ~_DARK)


def _repetition(parent: Node, s: Snapshot, game: Sequence[Snapshot]) -> tuple[int, int]:
    """(lc0 repetition count, cycle length in plies) of ``s`` reached from ``parent``.

    lc0 src/chess/position.cc ``ComputeLastMoveRepetitions``: 0 when rule50 < 4; else scan same-side
    positions 2, 4, ... plies back; at the first equal board return 1 + its count; stop at rule50 < 2.
    The positions back are the tree path (``parent`` upwards) and then the game before the root.
    """
    if s.rule50 < 4:
        return 0, 0
    board = s[:11]
    x: Node | None = parent
    gi = len(game) - 1  # game[-1] is the root's snapshot, the same as the root node's
    dist = 0
    limit = s.rule50
    while dist < limit:
        dist += 1
        if x is not None:
            pos = x.snap
            x = x.parent
            if x is None:
                gi = len(game) - 2  # the root was just consumed; continue in the game before it
        else:
            if gi < 0:
                return 0, 0
            pos = game[gi]
            gi -= 1
        if dist & 1:
            continue
        if pos[:11] == board:
            return 1 + pos.repetitions, dist
        if pos.rule50 < 2:
            return 0, 0
    return 0, 0


def history_of(node: Node, game: Sequence[Snapshot], length: int = 8) -> list[Snapshot]:
    """The last ``length`` positions up to ``node`` (oldest first): the tree path, then the game."""
    out = []
    x: Node | None = node
    while x is not None and len(out) < length:
        out.append(x.snap)
        x = x.parent
    if len(out) < length and len(game) > 1:
        need = length - len(out)
        out.extend(reversed(game[max(0, len(game) - 1 - need):len(game) - 1]))
    out.reverse()
    return out


def expand_leaf(node: Node, board: chess.Board, game: Sequence[Snapshot], ply: int,
                two_fold: bool) -> list[chess.Move] | None:
    """Set ``node.snap`` and apply the terminal rules; return its legal moves, or None if terminal.

    ``board`` is the search's scratch board (its move stack is left empty); ``ply`` is the distance
    from the root (>= 1). Terminal rules, lc0 src/search/classic/search.cc ``ExtendNode`` (lc0-facts
    §5.5): no legal move -> checkmate (win for the mover, M 0) or stalemate (draw); then insufficient
    material, rule50 >= 100, a third occurrence, and (``two_fold``) a repetition whose whole cycle lies
    in the tree (ply >= 4 and ply >= cycle) are draws.
    """
    parent = node.parent
    ps = parent.snap
    bb = board.occupied_co
    board.pawns, board.knights, board.bishops = ps.pawns, ps.knights, ps.bishops
    board.rooks, board.queens, board.kings = ps.rooks, ps.queens, ps.kings
    bb[True], bb[False] = ps.white, ps.black
    board.occupied = ps.white | ps.black
    board.turn = ps.turn
    board.castling_rights = ps.castling
    board.ep_square = ps.ep_square
    board.halfmove_clock = ps.rule50
    board.push(parent.moves[node.idx])
    s = snapshot(board, 0, after_move=parent.moves[node.idx])
    reps, cycle = _repetition(parent, s, game)
    if reps:
        s = s._replace(repetitions=reps)
    node.snap = s
    node.dsc = -parent.dsc
    legal = list(board.generate_legal_moves())
    check = board.is_check() if not legal else False
    board.move_stack.clear()
    board._stack.clear()
    if not legal:
        if check:
            _make_terminal(node, 1.0, 0.0, 0.0)
        else:
            _make_terminal(node, 0.0, 1.0, 0.0)
        return None
    if not has_mating_material(s) or s.rule50 >= 100 or reps >= 2:
        _make_terminal(node, 0.0, 1.0, 0.0)
        return None
    if two_fold and reps == 1 and ply >= 4 and ply >= cycle:
        _make_terminal(node, 0.0, 1.0, float(cycle))
        node.terminal = TERMINAL_TWOFOLD
        node.cycle = cycle
        return None
    return legal


def _make_terminal(node: Node, wl: float, d: float, m: float) -> None:
    node.terminal = TERMINAL_END
    node.wl, node.d, node.m = wl, d, m
    node.v0 = wl
    b = 1 if wl > 0 else (-1 if wl < 0 else 0)
    node.lower = node.upper = b
    if b < 0 and node.parent is not None:  # lc0 node.cc MakeTerminal: the edge to a loss gets prior 0
        parent = node.parent
        parent.p[node.idx] = 0.0


def set_edges(node: Node, legal: list[chess.Move], priors: np.ndarray) -> None:
    """Create the edges of ``node`` from its legal moves and their priors (float32 [n], same order).

    Edges are sorted by prior, highest first (lc0 search.cc ``FetchSingleNodeResult`` -> ``SortEdges``).
    """
    n = len(legal)
    order = np.argsort(-priors, kind="stable")
    node.moves = [legal[j] for j in order.tolist()]
    node.p = priors[order].tolist()
    node.en = [0] * n
    node.eq = [0.0] * n
    node.ef = [0] * n
    node.ch = [None] * n


def backup(node: Node, v: float, d: float, m: float) -> int:
    """Back one visit up from ``node`` to the root; (v, d, m) in the view of the player who moved
    into ``node``. Undoes one in-flight visit per node. Returns the depth (edges) of ``node``.

    lc0 search.cc ``DoBackupUpdateSingleNode``: wl += (v - wl)/(N+1), likewise d and m; v = -v and
    m += 1 one level up.
    """
    depth = 0
    while True:
        n1 = node.n + 1
        node.wl += (v - node.wl) / n1
        node.d += (d - node.d) / n1
        node.m += (m - node.m) / n1
        node.n = n1
        node.inflight -= 1
        parent = node.parent
        if parent is None:
            return depth
        i = node.idx
        parent.en[i] = n1
        parent.ef[i] -= 1
        parent.eq[i] = node.wl + parent.dsc * node.d
        if n1 == 1:
            parent.vp += parent.p[i]
        node = parent
        v = -v
        m += 1.0
        depth += 1


def cancel_path(node: Node) -> None:
    """Undo the in-flight visit of a collision (or an abandoned leaf) from ``node`` up to the root."""
    while True:
        node.inflight -= 1
        parent = node.parent
        if parent is None:
            return
        parent.ef[node.idx] -= 1
        node = parent


def update_bounds(node: Node, params_sticky: bool) -> None:
    """Certainty propagation from ``node`` (the parent of a newly proven child) upwards.

    lc0 search.cc ``MaybeSetBounds`` (lc0-facts §5.6): over the children (unvisited ones count as
    (-1, +1)) take the max lower and max upper bound; this node's bounds become (-max_upper,
    -max_lower). When they meet, the node becomes terminal: M is 1 + the shortest winning child's M
    (a loss for the mover) or 1 + the longest child's M otherwise; the change of value is carried into
    every ancestor's averages (``AdjustForTerminal``). The root is never made terminal.
    """
    if not params_sticky:
        return
    while node is not None and node.moves is not None:
        max_lo, max_up = -1, -1
        for c in node.ch:
            if c is None:
                max_up = 1
            else:
                if c.lower > max_lo:
                    max_lo = c.lower
                if c.upper > max_up:
                    max_up = c.upper
        lo, up = -max_up, -max_lo
        if lo == node.lower and up == node.upper:
            return
        node.lower, node.upper = lo, up
        if node.parent is None or lo != up or node.terminal:
            return
        # Proven: an exact value (wl in the mover's view) and M.
        if lo < 0:
            m = 1.0 + min(c.m for c in node.ch if c is not None and c.lower == 1)
        else:
            m = 1.0 + max(c.m for c in node.ch if c is not None)
        _adjust_for_terminal(node, float(lo), 1.0 if lo == 0 else 0.0, m)
        node.terminal = TERMINAL_END
        if lo < 0:  # lc0 MakeTerminal: the edge to a loss gets prior 0
            parent = node.parent
            parent.vp -= parent.p[node.idx]
            parent.p[node.idx] = 0.0
        node = node.parent


def _adjust_for_terminal(node: Node, wl: float, d: float, m: float) -> None:
    """Replace ``node``'s averages by exact values and shift every ancestor's averages to match."""
    n = node.n
    dwl, dd, dm = (wl - node.wl) * n, (d - node.d) * n, (m - node.m) * n
    node.wl, node.d, node.m = wl, d, m
    x = node
    while x.parent is not None:
        parent = x.parent
        parent.eq[x.idx] = x.wl + parent.dsc * x.d
        dwl = -dwl
        if parent.n:
            parent.wl += dwl / parent.n
            parent.d += dd / parent.n
            parent.m += dm / parent.n
        x = parent
