"""The batched PUCT search (lc0 "classic" search; ../shared/spec/lc0-facts.md §5).

One :class:`Searcher` per game owns the tree and shares one :class:`~lichessbot.engine.evaluator.Evaluator`.
A search runs in its own thread: it gathers a minibatch of leaves (selection with virtual loss on the
U denominator, collisions, cache hits and terminals backed up at once "out of order"), and, while the
network evaluates that batch in a worker thread (onnxruntime releases the GIL), gathers the next one.
After every batch it consults the limits and the stopper.
"""

from __future__ import annotations

import math
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import chess
import numpy as np

from lichessbot.config import SearchParams
from lichessbot.engine.encoding import Snapshot, game_history, position_key
from lichessbot.engine.evaluator import EvalRequest, Evaluation, Evaluator
from lichessbot.search import stats as st
from lichessbot.search.handle import InfoCallback, SearchHandle, _State
from lichessbot.search.tree import (
    TERMINAL_TWOFOLD, Node, backup, cancel_path, expand_leaf, history_of, set_edges, update_bounds,
)
from lichessbot.search.types import Limits, SearchError, SearchResult, SearchStats, Stopper

__all__ = ["Searcher", "SearchHandle"]

def collisions_allowed(n: int, p: SearchParams) -> int:
    """Collision visits allowed in one batch for a tree of ``n`` visits (lc0 search.cc
    ``CalculateCollisionsLeft``): 1 up to ScalingStart, MaxCollisionVisits from ScalingEnd, a power ramp between."""
    lo, hi = p.max_collision_visits_scaling_start, p.max_collision_visits_scaling_end
    if n <= lo:
        return 1
    if n >= hi:
        return p.max_collision_visits
    frac = (n - lo) / (hi - lo)
    return int(round(1 + (p.max_collision_visits - 1) * frac ** p.max_collision_visits_scaling_power))


class _Batch:
    __slots__ = ("leaves", "requests", "future", "results")

    def __init__(self) -> None:
        self.leaves: list[tuple[Node, list[chess.Move], int]] = []
        self.requests: list[EvalRequest] = []
        self.future: Future | None = None
        self.results: list[Evaluation] | None = None


class Searcher:
    """PUCT search for one game; keeps its tree between moves (tree reuse).

    ``pipeline``: gather the next batch while the network evaluates the previous one (default True).
    """

    def __init__(self, evaluator: Evaluator, params: SearchParams | None = None, *, pipeline: bool = True) -> None:
        self.evaluator = evaluator
        self.params = params or SearchParams()
        self.pipeline = pipeline
        self.has_wdl = bool(getattr(getattr(evaluator, "network", None), "has_wdl", True))
        self._rng = np.random.default_rng(self.params.seed)
        self._root: Node | None = None
        self._root_fen: str | None = None
        self._root_moves: list[chess.Move] = []
        # While pondering: the root of the search before the ponder move, kept so that a ponder miss
        # can still reuse the subtree of the move the opponent really played.
        self._anchor: tuple[Node, list[chess.Move]] | None = None
        self._root_pondered = False
        self._game: list[Snapshot] = []
        self._board = chess.Board()
        self._executor: ThreadPoolExecutor | None = None
        self._handle: SearchHandle | None = None

    # ---------------------------------------------------------------------------------------------
    def new_game(self) -> None:
        """Drop the tree (and re-seed the move sampler)."""
        self._stop_running()
        self._root = None
        self._root_fen = None
        self._root_moves = []
        self._anchor = None
        self._rng = np.random.default_rng(self.params.seed)

    def close(self) -> None:
        """Stop any search and the evaluation worker thread."""
        self._stop_running()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def search(self, board: chess.Board, limits: Limits, **kw) -> SearchResult:
        """Run a search to its end: ``start(board, limits, **kw).wait()``."""
        return self.start(board, limits, **kw).wait()

    def start(self, board: chess.Board, limits: Limits, *, stopper: Stopper | None = None,
              on_info: InfoCallback | None = None, ponder: bool = False) -> SearchHandle:
        """Start searching ``board`` in a new thread and return its handle at once.

        Raises SearchError when the position has no legal moves.
        """
        self._stop_running()
        if not any(board.generate_legal_moves()):
            raise SearchError(f"no legal moves in {board.fen()}")
        state = _State(limits, stopper, ponder, on_info)
        root = self._prepare_root(board, ponder=ponder)
        thread = threading.Thread(target=self._thread_main, args=(state, root, board.ply()),
                                  name="lichessbot-search", daemon=True)
        self._handle = SearchHandle(state, thread)
        thread.start()
        return self._handle

    def _stop_running(self) -> None:
        if self._handle is not None and not self._handle.done:
            self._handle.stop()
            try:
                self._handle.wait()
            except Exception:  # noqa: BLE001 - the error belonged to that search's caller
                pass

    # ---------------------------------------------------------------------------------------------
    def _prepare_root(self, board: chess.Board, *, ponder: bool = False) -> Node:
        """The root for ``board``: the old subtree under the moves played since the last search, or a
        fresh node (lc0 node.cc ``NodeTree::ResetToPosition``; lc0-facts §5.9).

        A ponder search keeps the previous root as an anchor: on a ponder miss the new position does
        not follow from the ponder root, but it may follow from the anchor (our move, then the reply
        the opponent really played), whose subtree is then reused.
        """
        start = board.root()
        fen = start.fen() + (" 960" if board.chess960 else "")
        moves = list(board.move_stack)
        self._board.chess960 = board.chess960
        self._game = game_history(board)
        root = None
        candidates = []
        if fen == self._root_fen:
            if self._root is not None:
                candidates.append((self._root, self._root_moves))
            if self._anchor is not None:
                candidates.append(self._anchor)
        for old, old_moves in candidates:
            root = self._descend(old, old_moves, moves)
            if root is not None:
                break
        if not ponder:
            self._anchor = None
        elif self._root is not None and fen == self._root_fen and not self._root_pondered:
            self._anchor = (self._root, self._root_moves)
        self._root_pondered = ponder
        if root is None:
            root = Node(None, -1)
            root.snap = self._game[-1]
            ds = self.params.draw_score
            root.dsc = ds if board.turn == chess.WHITE else -ds
        else:
            root.parent = None
            root.idx = -1
            root.terminal = 0  # lc0 MakeMove: a terminal node that becomes the root is searched again
        self._root, self._root_fen, self._root_moves = root, fen, moves
        return root

    def _descend(self, old: Node, old_moves: list[chess.Move], moves: list[chess.Move]) -> Node | None:
        """The node of ``old``'s tree reached by the moves played after ``old_moves``, if it was
        expanded and still valid as a root; else None."""
        if moves[:len(old_moves)] != old_moves:
            return None
        node: Node | None = old
        for mv in moves[len(old_moves):]:
            node = node.child_of(mv)
            if node is None:
                return None
        if node.moves is None or node.snap != self._game[-1] or not _two_folds_valid(node):
            return None
        return node

    # ---------------------------------------------------------------------------------------------
    def _thread_main(self, state: _State, root: Node, ply: int) -> None:
        try:
            state.result = self._run(state, root, ply)
        except BaseException as err:  # noqa: BLE001 - handed to wait()
            state.error = err

    def _evaluate(self, requests: list[EvalRequest]) -> list[Evaluation]:
        return self.evaluator.evaluate(requests, lookup=False)  # _gather already missed the cache

    def _run(self, state: _State, root: Node, ply: int) -> SearchResult:
        p = self.params
        reused = root.n
        self._playouts = 0
        self._depth_sum = 0
        self._seldepth = 0
        self._t_first: float | None = None
        if root.moves is None:
            self._expand_root(root)
        if self.pipeline and self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lichessbot-nn")
        pending: _Batch | None = None
        last_info = (None, -1, -1)
        last_info_t = 0.0
        reason = ""
        while True:
            reason = self._should_stop(state, root, pending)
            if reason:
                break
            batch = self._gather(state, root, len(pending.leaves) if pending else 0)
            if pending is not None:
                self._apply(pending, pending.future.result())
                pending = None
            if batch.leaves:
                if self.pipeline:
                    batch.future = self._executor.submit(self._evaluate, batch.requests)
                    pending = batch
                else:
                    self._apply(batch, self._evaluate(batch.requests))
            if state.on_info is not None:
                now = time.perf_counter()
                bi = st.best_edge(root)
                key = (bi, int(self._depth_avg()), self._seldepth)
                if key != last_info or now - last_info_t > 5.0:
                    last_info, last_info_t = key, now
                    state.on_info(self._stats(state, root, reused, ply))
        if pending is not None:
            self._apply(pending, pending.future.result())
        final = self._stats(state, root, reused, ply)
        if state.on_info is not None:
            state.on_info(final)
        return self._result(root, final, reason, ply)

    def _depth_avg(self) -> float:
        return self._depth_sum / self._playouts if self._playouts else 0.0

    def _count(self, depth: int) -> None:
        self._playouts += 1
        self._depth_sum += depth
        if depth > self._seldepth:
            self._seldepth = depth
        if self._t_first is None:
            self._t_first = time.perf_counter()

    def _expand_root(self, root: Node) -> None:
        board = self._board
        s = root.snap
        board.set_fen(chess.STARTING_FEN)
        board.pawns, board.knights, board.bishops = s.pawns, s.knights, s.bishops
        board.rooks, board.queens, board.kings = s.rooks, s.queens, s.kings
        board.occupied_co[True], board.occupied_co[False] = s.white, s.black
        board.occupied = s.white | s.black
        board.promoted = 0
        board.turn, board.castling_rights, board.ep_square, board.halfmove_clock = s.turn, s.castling, s.ep_square, s.rule50
        legal = list(board.generate_legal_moves())
        req = EvalRequest(history_of(root, self._game), legal, position_key(s))
        ev = self._evaluate([req])[0]
        root.inflight += 1
        set_edges(root, legal, ev.priors)
        root.v0 = -ev.q
        backup(root, -ev.q, ev.wdl[1], ev.m)
        self._count(0)

    # ---------------------------------------------------------------------------------------------
    def _gather(self, state: _State, root: Node, in_pending: int) -> _Batch:
        """Select leaves until the minibatch is full, collisions or out-of-order evals run out, or the
        nodes limit would be passed. Terminals and cache hits are backed up at once."""
        p = self.params
        batch = _Batch()
        mb = p.minibatch_size
        budget = 1 << 62
        limits = state.limits
        if limits.nodes is not None and not state.pondering:
            budget = limits.nodes - root.n - in_pending
        collisions = collisions_allowed(root.n, p)
        ooo_left = max(1, int(p.max_out_of_order_evals_factor * mb))
        collided: list[Node] = []
        board, game, cache = self._board, self._game, self.evaluator.cache
        two_fold, sticky = p.two_fold_draws, p.sticky_endgames
        c0, cf, cb = p.cpuct, p.cpuct_factor, p.cpuct_base
        fpu_abs = p.fpu_strategy == "absolute"
        fpu_v = p.fpu_value
        if p.fpu_strategy_at_root == "same":
            rfpu_abs, rfpu_v = fpu_abs, fpu_v
        else:
            rfpu_abs, rfpu_v = p.fpu_strategy_at_root == "absolute", p.fpu_value_at_root
        log, sqrt = math.log, math.sqrt
        leaves = batch.leaves
        while len(leaves) < mb and budget > 0:
            node = root
            ply = 0
            node.inflight += 1
            absolute, fv = rfpu_abs, rfpu_v
            while node.moves is not None and not (ply and node.terminal):
                # PUCT (lc0 search.cc PickNodesToExtendTask): Q + cpuct(N) sqrt(max(N-1,1)) P / (1+N_i+inflight_i)
                n = node.n
                pm = (c0 + cf * log((n + cb) / cb)) * sqrt(n - 1 if n > 2 else 1)
                fpu = fv if absolute else (-node.wl + node.dsc * node.d) - fv * sqrt(node.vp)
                en, ef, eq, pr = node.en, node.ef, node.eq, node.p
                best = -1e9
                bi = 0
                for i in range(len(pr)):
                    ni = en[i]
                    fi = ef[i]
                    s = (eq[i] if ni else fpu) + pm * pr[i] / (1 + ni + fi)
                    if s > best:
                        best, bi = s, i
                    if ni + fi == 0:
                        break  # edges are sorted by prior: no later unstarted edge can score higher
                ef[bi] += 1
                child = node.ch[bi]
                if child is None:
                    child = node.ch[bi] = Node(node, bi)
                child.inflight += 1
                node = child
                ply += 1
                absolute, fv = fpu_abs, fpu_v
            if node.terminal:
                self._count(backup(node, node.wl, node.d, node.m))
                budget -= 1
                ooo_left -= 1
            elif node.snap is not None:  # already waiting for the network: a collision
                collided.append(node)
                collisions -= 1
                if collisions <= 0:
                    break
                continue
            else:
                legal = expand_leaf(node, board, game, ply, two_fold)
                budget -= 1
                if legal is None:
                    self._count(backup(node, node.wl, node.d, node.m))
                    update_bounds(node.parent, sticky)
                    ooo_left -= 1
                else:
                    key = position_key(node.snap)
                    ev = cache.get(key, len(legal))
                    if ev is None:
                        leaves.append((node, legal, ply))
                        batch.requests.append(EvalRequest(history_of(node, game), legal, key))
                        continue
                    self._expand_with(node, legal, ev)
                    ooo_left -= 1
            if ooo_left <= 0:
                break
        for node in collided:
            cancel_path(node)
        return batch

    def _expand_with(self, node: Node, legal: list[chess.Move], ev: Evaluation) -> None:
        set_edges(node, legal, ev.priors)
        node.v0 = -ev.q
        self._count(backup(node, -ev.q, ev.wdl[1], ev.m))

    def _apply(self, batch: _Batch, results: list[Evaluation]) -> None:
        for (node, legal, _ply), ev in zip(batch.leaves, results):
            self._expand_with(node, legal, ev)

    # ---------------------------------------------------------------------------------------------
    def _should_stop(self, state: _State, root: Node, pending: _Batch | None) -> str:
        if state.stop_event.is_set():
            return "stop"
        with state.lock:
            if state.pondering:
                return ""
            limits, stopper = state.limits, state.stopper
            limit_t0 = state.limit_t0
        if limits.infinite:
            return ""
        if limits.nodes is not None and root.n >= limits.nodes:
            return f"nodes limit {limits.nodes}"
        if limits.movetime is not None and time.perf_counter() - limit_t0 >= limits.movetime:
            return f"movetime {limits.movetime:.3f} s"
        if stopper is not None:
            stats = self._stats(state, root, root.n - self._playouts, 0)
            reason = stopper.should_stop(stats)
            if reason:
                return reason
        return ""

    def _best_values(self, root: Node, bi: int) -> tuple[float, float, int | None, list[chess.Move]]:
        """(wl, d, mate, pv) of root edge ``bi``, root side to move's view; the root's own value when the
        edge has no visits yet."""
        child = root.ch[bi]
        pv = [root.moves[bi]]
        if child is not None and child.n:
            pv.extend(st.pv_of(child))
            return child.wl, child.d, st.mate_in(child), pv
        return -root.wl, root.d, None, pv

    def _stats(self, state: _State, root: Node, reused: int, ply: int) -> SearchStats:
        now = time.perf_counter()
        order = st.ranked_edges(root)
        rms = st.root_moves(root, self.params, order)
        nps = self._playouts / (now - self._t_first) if self._t_first and now > self._t_first else 0.0
        hint = None
        limits = state.limits
        if limits.nodes is not None:
            hint = float(max(0, limits.nodes - root.n))
        wl, d, mate, pv = self._best_values(root, order[0])
        return SearchStats(
            elapsed=now - state.t0, playouts=self._playouts, nodes=root.n, reused_nodes=reused, nps=nps,
            depth=self._depth_avg(), seldepth=self._seldepth, root_moves=rms, best=rms[0] if rms else None,
            legal_moves=len(root.moves or ()), remaining_playouts_hint=hint, root_n=root.n,
            root_wl=-root.wl, root_d=root.d, root_m=root.m, ply=ply, pv=pv,
            cp=st.score_cp(wl, d, self.has_wdl), mate=mate, wdl=((1 + wl - d) / 2, d, (1 - wl - d) / 2),
        )

    def _result(self, root: Node, stats: SearchStats, reason: str, ply: int) -> SearchResult:
        bi = st.sample_by_temperature(root, self.params, ply, self._rng)
        if bi is None:
            bi = st.best_edge(root)
        wl, d, mate, pv = self._best_values(root, bi)
        return SearchResult(
            best_move=root.moves[bi], ponder_move=pv[1] if len(pv) > 1 else None, pv=pv,
            q=wl + root.dsc * d, wdl=((1 + wl - d) / 2, d, (1 - wl - d) / 2), cp=st.score_cp(wl, d, self.has_wdl),
            mate=mate, nodes=root.n, playouts=stats.playouts, reused_nodes=stats.reused_nodes, nps=stats.nps,
            depth=stats.depth, seldepth=stats.seldepth, time=stats.elapsed, stop_reason=reason,
            root_moves=stats.root_moves,
        )

    def verbose_stats(self) -> list[str]:
        """lc0-style VerboseMoveStats lines for the current root (worst first, then the node line)."""
        if self._root is None or self._root.moves is None:
            return []
        from lichessbot.engine.policy_map import move_index

        root = self._root
        return st.verbose_lines(root, self.params, lambda mv: move_index(mv, root.snap))


def _two_folds_valid(root: Node) -> bool:
    """False when a two-fold draw below the new root no longer has its whole cycle inside the tree
    (lc0 search.cc ``EnsureNodeTwoFoldCorrectForDepth``); the caller then starts a fresh tree."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if node.terminal == TERMINAL_TWOFOLD and (depth < 4 or depth < node.cycle):
            return False
        for c in node.ch:
            if c is not None:
                stack.append((c, depth + 1))
    return True
