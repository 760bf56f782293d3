"""The batched PUCT search (lc0 "classic" search): Python drives, the Rust core searches.

One :class:`Searcher` per game owns a :class:`lichessbot._core.SearchCore` (the tree, selection,
expansion with the chess rules, the input encoding, the policy map and backup, in Rust) and shares
one evaluator (the onnxruntime session) and its NN cache with every other game of the process.

One batch: the core gathers leaves with virtual loss and writes their planes into a float32
``[B, 112, 8, 8]`` buffer, or their compact form (uint8 ``[B, 1344]``, lc0's mask and value pairs) when the
runner takes it (GIL released); the evaluator runs the network; the core consumes
``logits [B, 1858]``, ``wdl [B, 3]``, ``mlh [B]`` and backs them up (GIL released). With ``pipeline``
the next batch is gathered while the network evaluates the previous ones: up to the evaluator's
``concurrency`` batches are at the network at once (on the CPU one per thread, each on one core), and
the oldest is backed up first, so the order of gathers and backups never depends on timing. After
every batch the search asks its one stopper (the time manager's chain: time, node limit, smart pruning), and
gathers no batch past the playouts it says are left; once over, it tells the stopper (lc0 ``OnSearchDone``).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import chess
import numpy as np
import structlog

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.neural.runner import NetOutputs, NetworkRunner, empty_outputs
from lichessbot.score import Score
from lichessbot.search import stats as st
from lichessbot.search.handle import InfoCallback, SearchHandle, _State
from lichessbot.search.types import RootLine, RootMove, SearchError, SearchResult, SearchStats, Stopper, StopperHints

__all__ = ["SAMPLING_PARAMS", "Searcher", "SearchHandle", "core_params", "minibatch_of"]

_log = structlog.get_logger(__name__)

#: UCI info lines are sent when the best move, depth or seldepth change, or after this many seconds.
_INFO_EVERY = 5.0


#: The :class:`~lichessbot.config.SearchParams` fields the Python face reads itself (the move sampling at
#: the root, :func:`lichessbot.search.stats.sample_by_temperature`); the core takes every other one.
SAMPLING_PARAMS = frozenset({"temperature", "temp_decay_moves", "temp_cutoff_move", "temp_value_cutoff",
                             "temp_visit_offset", "seed"})


def core_params(params: SearchParams, *, input_format: int, minibatch_size: int) -> dict[str, float | int | bool | str]:
    """The dict :class:`lichessbot._core.SearchCore` takes: every field of ``params`` but
    :data:`SAMPLING_PARAMS`, the network's lc0 ``input_format`` and the resolved ``minibatch_size``
    (>= 1, see :func:`minibatch_of`). The core refuses a missing or unknown key (ValueError naming it)."""
    d: dict[str, float | int | bool | str] = params.model_dump(exclude=set(SAMPLING_PARAMS))
    d["input_format"] = input_format
    d["minibatch_size"] = minibatch_size
    return d


def minibatch_of(params: SearchParams, runner: NetworkRunner) -> int:
    """``params.minibatch_size``, or when it is 0 the runner's ``info.minibatch``."""
    return params.minibatch_size or runner.info.minibatch


class Searcher:
    """PUCT search for one game; keeps its tree between moves (tree reuse).

    ``evaluator``: the :class:`~lichessbot.neural.runner.NetworkRunner` (an evaluator, or the evaluation
    service over it); the search reads its ``info`` (input format, WDL head, minibatch, batches in flight)
    and shares its ``search_cache`` (the process's :class:`lichessbot._core.NNCache`). ``pipeline``:
    gather the next batch while the network evaluates the previous one (default True). ``game``: a name
    for the evaluation service's fairness and stats. ``tablebases``:
    the process's :class:`lichessbot._core.Tablebases` to probe at expansion (lc0's rule, see
    docs/tablebases.md), or None.
    """

    def __init__(self, evaluator: NetworkRunner, params: SearchParams | None = None, *, pipeline: bool = True,
                 game: str = "", tablebases: _core.Tablebases | None = None) -> None:
        self.evaluator = evaluator
        info = evaluator.info
        #: Who this search plays for, as the evaluation service sees it (fairness, stats).
        self.game = game
        self.params = params or SearchParams()
        self.pipeline = pipeline
        self.has_wdl = info.has_wdl
        self._rng = np.random.default_rng(self.params.seed)
        #: The minibatch this searcher uses (``MinibatchSize``, or the runner's default when 0).
        self.minibatch = mb = minibatch_of(self.params, evaluator)
        cp = core_params(self.params, input_format=info.input_format, minibatch_size=mb)
        self._core = _core.SearchCore(cp, evaluator.search_cache)
        self.tablebases = tablebases
        if tablebases is not None:
            self._core.set_tablebases(tablebases)
        #: Batches at the network at once: the runner's ``info.inflight`` (an evaluation service: one more
        #: than its workers; an evaluator: one per CPU thread), at least 1.
        self._inflight = max(1, info.inflight) if pipeline else 1
        # One buffer per batch at the network, plus the one being gathered; each with its output buffers,
        # which the network writes into (no allocation per batch).
        buffers = self._inflight + 1 if pipeline else 1
        shape, dtype = info.input_shape()
        self._planes: list[np.ndarray] = [np.zeros((mb, *shape), dtype=dtype) for _ in range(buffers)]
        #: The core writes the compact input (lc0's mask and value pairs) when the runner takes it.
        self._compact = info.compact
        self._outs = [empty_outputs(mb, info.has_mlh) for _ in range(buffers)]
        self._moves: list[chess.Move] = []  # root edges, edge order
        self._executor: ThreadPoolExecutor | None = None
        self._handle: SearchHandle | None = None
        self._t_first: float | None = None
        self._turn = chess.WHITE  # side to move at the root
        self._searchmoves: frozenset[chess.Move] = frozenset()  # the root moves the search may visit

    # ---------------------------------------------------------------------------------------------
    def new_game(self) -> None:
        """Drop the tree (and re-seed the move sampler)."""
        self._stop_running()
        self._core.new_game()
        self._moves = []
        self._rng = np.random.default_rng(self.params.seed)

    def close(self) -> None:
        """Stop any search and the evaluation worker thread."""
        self._stop_running()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, board: chess.Board, stopper: Stopper | None, **kw: Any) -> SearchResult:
        """Run a search to its end: ``start(board, stopper, **kw).wait()`` (a stopper is needed: without one
        the search runs until ``stop()``)."""
        return self.start(board, stopper, **kw).wait()

    def start(self, board: chess.Board, stopper: Stopper | None = None, *, on_info: InfoCallback | None = None,
              ponder: bool = False, searchmoves: Sequence[chess.Move] = ()) -> SearchHandle:
        """Start searching ``board`` in a new thread and return its handle at once. ``stopper``: what decides
        when to stop (the time manager's chain, e.g. :class:`lichessbot.timeman.VisitsStopper` for a node
        limit); None: until ``stop()`` (``go infinite``). ``ponder``: no stopper is asked until
        :meth:`SearchHandle.ponderhit`. ``searchmoves``: visit only these root moves (lc0's ``go
        searchmoves``); the result's root moves are those, best first.

        Raises SearchError when the position has no legal moves or the core refuses it (a bad FEN or
        move, an illegal search move: the message names it).
        """
        self._stop_running()
        if not any(board.generate_legal_moves()):
            raise SearchError(f"no legal moves in {board.fen()}")
        moves = [m.uci() for m in board.move_stack]
        try:
            self._core.set_position(board.root().fen(), moves, board.chess960, ponder)
            self._core.set_search_moves([m.uci() for m in searchmoves])
        except (ValueError, RuntimeError) as err:
            self._core.new_game()
            raise SearchError(f"cannot search {board.fen()}: {err}") from None
        self._searchmoves = frozenset(searchmoves)
        self._turn = board.turn
        state = _State(stopper, ponder, on_info)
        thread = threading.Thread(target=self._thread_main, args=(state, board.ply()),
                                  name="lichessbot-search", daemon=True)
        self._handle = SearchHandle(state, thread)
        thread.start()
        return self._handle

    def _stop_running(self) -> None:
        if self._handle is not None and not self._handle.done:
            self._handle.stop()
            self._handle.join()

    def _settle(self) -> None:
        """Let the last search back up its last batches before the tree is read from another thread."""
        if self._handle is not None:
            self._handle.join()

    # ---------------------------------------------------------------------------------------------
    def _thread_main(self, state: _State, ply: int) -> None:
        try:
            self._run(state, ply)
        except RuntimeError as err:  # a panic in the core: its tree may be inconsistent, drop it
            self._core.new_game()
            state.error = SearchError(f"search failed: {err}")
        except BaseException as err:  # noqa: BLE001 - handed to wait()
            state.error = err
        finally:
            state.ready.set()

    def _gather(self, buf: int, limit: int | None) -> int:
        """One batch gathered by the core into buffer ``buf``, in the runner's input form; its rows."""
        if self._compact:
            return self._core.gather_compact(self._planes[buf], limit)
        return self._core.gather(self._planes[buf], limit)

    def _network(self, buf: int, rows: int, priority: int = 0) -> NetOutputs:
        """The network's outputs for the first ``rows`` planes of buffer ``buf``, in that buffer's outputs."""
        logits, wdl, mlh = self.evaluator.run(self._planes[buf][:rows], game=self.game, priority=priority,
                                              out=self._outs[buf])
        return NetOutputs(np.ascontiguousarray(logits, dtype=np.float32), np.ascontiguousarray(wdl, dtype=np.float32),
                          None if mlh is None else np.ascontiguousarray(mlh, dtype=np.float32).reshape(-1))

    def _run(self, state: _State, ply: int) -> None:
        """The search loop; ``state.result`` is set (and ``state.ready``) as soon as it stops, and the
        batches still at the network are backed up after that (lc0 search.cc ``MaybeTriggerStop`` sends
        bestmove at once, its workers finish their batches later)."""
        core = self._core
        reused = core.root_info().n
        self._t_first = None
        if core.root_needs_eval():
            n = self._gather(0, None)
            core.apply(*self._network(0, n))
        self._moves = [chess.Move.from_uci(u) for u in core.root_moves()]
        inflight = self._inflight
        executor = self._executor
        if self.pipeline and executor is None:
            executor = self._executor = ThreadPoolExecutor(max_workers=inflight, thread_name_prefix="lichessbot-nn")
        pending: deque[Future[NetOutputs]] = deque()
        buf = 0
        last_info: tuple[int | None, int, int] = (None, -1, -1)
        last_info_t = 0.0
        reason = ""
        hints = StopperHints()
        try:
            while True:
                reason, cap = self._should_stop(state, reused, hints)
                if reason:
                    break
                rows = self._gather(buf, cap)
                if len(pending) >= inflight or (pending and not rows):
                    core.apply(*pending.popleft().result())
                if rows:
                    if executor is not None:
                        prio = 1 if state.pondering else 0
                        pending.append(executor.submit(self._network, buf, rows, prio))
                        buf = (buf + 1) % len(self._planes)
                    else:
                        core.apply(*self._network(buf, rows))
                if state.on_info is not None:
                    now = time.perf_counter()
                    c = core.counters()
                    depth = c.depth_sum // c.playouts if c.playouts else 0
                    key = (core.root_edges()[0].edge, depth, c.seldepth)
                    if key != last_info or now - last_info_t > _INFO_EVERY:
                        last_info, last_info_t = key, now
                        state.on_info(self._stats(state, reused))
        except BaseException:
            while pending:
                core.apply(*pending.popleft().result())
            raise
        if self.tablebases is not None:
            failure = self.tablebases.take_failure()
            if failure is not None:  # once per process: probing is off from now on
                _log.error("tablebase probe failed; probing disabled", error=failure)
        final = self._stats(state, reused)
        if state.on_info is not None:
            state.on_info(final)
        with state.lock:
            stopper = None if state.pondering else state.stopper
        if stopper is not None:
            try:
                stopper.on_search_done(final)
            except Exception as err:  # noqa: BLE001 - the bookkeeping of the next move must not cost this one
                _log.error("stopper failed after the search; the move stands", error=repr(err))
        state.result = self._result(final, reason, ply)
        state.ready.set()
        while pending:
            core.apply(*pending.popleft().result())

    def _should_stop(self, state: _State, reused: int, hints: StopperHints) -> tuple[str, int | None]:
        """(the reason to stop, or ""; the root visits the next gather may reach, None: no cap). The one
        stopper decides (lc0 search.cc ``MaybeTriggerStop``); its hint of the playouts left caps the gather."""
        if self._t_first is None and self._core.counters().playouts > 0:
            self._t_first = time.perf_counter()  # lc0 PopulateCommonIterationStats: nps_start_time_
        if state.stop_event.is_set():
            return "stop", None
        with state.lock:
            if state.pondering:
                return "", None
            stopper = state.stopper
        if stopper is None:
            return "", None
        stats = self._stats(state, reused)
        hints.reset()
        reason = stopper.should_stop(stats, hints) or ""
        left = hints.remaining_playouts
        return reason, None if math.isinf(left) else stats.nodes + max(0, int(left))

    # ---------------------------------------------------------------------------------------------
    def _root_moves(self) -> tuple[list[RootMove], list[int]]:
        """Root moves best first (lc0 ranking) and their edge indices (only the search moves, when given)."""
        rms, idx = [], []
        for e in self._core.root_edges():
            if self._searchmoves and self._moves[e.edge] not in self._searchmoves:
                continue
            rms.append(RootMove(move=self._moves[e.edge], n=e.n, p=e.p, q=e.q, u=e.u, d=e.d, m=e.m, wl=e.wl,
                                in_flight=e.in_flight, proven=e.proven))
            idx.append(e.edge)
        return rms, idx

    def _edge_values(self, edge: int) -> tuple[float, float, Score, list[chess.Move]]:
        """(wl, d, score, pv) of root edge ``edge``: W - L and D from the root side to move's view, its
        :class:`~lichessbot.score.Score` and its principal variation (that move first)."""
        v = self._core.edge_values(edge)
        score = Score.from_wl_d(v.wl, v.d, v.mate, has_wdl=self.has_wdl)
        return v.wl, v.d, score, [chess.Move.from_uci(u) for u in v.pv]

    def _stats(self, state: _State, reused: int) -> SearchStats:
        """The live statistics, lc0's definitions (:class:`~lichessbot.search.types.SearchStats`)."""
        now = time.perf_counter()
        core = self._core
        rn = core.root_info().n
        c = core.counters()
        playouts = c.playouts
        rms, idx = self._root_moves()
        since_first = now - self._t_first if self._t_first is not None else 0.0
        _wl, _d, score, pv = self._edge_values(idx[0])
        return SearchStats(
            elapsed=now - state.t0, playouts=playouts, nodes=rn, reused_nodes=reused,
            nps=int(playouts / since_first) if since_first > 0 else 0, depth=c.depth_sum // playouts if playouts else 0,
            seldepth=c.seldepth, root_moves=rms, legal_moves=len(rms), pv=pv, score=score, tbhits=c.tbhits,
        )

    def _result(self, stats: SearchStats, reason: str, ply: int) -> SearchResult:
        rms = stats.root_moves
        pick = st.sample_by_temperature(rms, self.params, ply, self._rng)
        edges = [self._moves.index(rm.move) for rm in rms]
        bi = edges[pick if pick is not None else 0]
        wl, d, score, pv = self._edge_values(bi)
        lines = []
        for rm, e in zip(rms, edges):
            _wl, _d, line_score, line_pv = self._edge_values(e)
            lines.append(RootLine(move=rm.move, score=line_score, pv=tuple(line_pv)))
        return SearchResult(
            best_move=self._moves[bi], ponder_move=pv[1] if len(pv) > 1 else None, pv=pv,
            q=wl + self._dsc() * d, score=score, nodes=stats.nodes, playouts=stats.playouts,
            reused_nodes=stats.reused_nodes, nps=stats.nps,
            depth=stats.depth, seldepth=stats.seldepth, time=stats.elapsed, stop_reason=reason,
            root_moves=stats.root_moves, tbhits=stats.tbhits, lines=tuple(lines),
        )

    def _dsc(self) -> float:
        """DrawScore for the root side to move (white's view signed)."""
        ds = self.params.draw_score
        return ds if self._turn == chess.WHITE else -ds

    def verbose_stats(self) -> list[str]:
        """lc0-style VerboseMoveStats lines for the current root (worst first, then the node line)."""
        self._settle()
        if not self._moves:
            return []
        edges = self._core.root_edges()
        nn = self._core.root_nn_indices()
        return st.verbose_lines(edges, self._moves, nn, self._core.root_info(), self._dsc())

    # ---------------------------------------------------------------------------------------------
    def node_info(self, moves: Iterable[chess.Move | str]) -> _core.NodeInfo | None:
        """The node reached from the last search's root by ``moves`` (chess.Move or UCI strings), None when
        it is not in the tree (see :class:`lichessbot._core.NodeInfo`)."""
        self._settle()
        return self._core.node_info([m if isinstance(m, str) else m.uci() for m in moves])

    def tree_info(self) -> dict[str, Any]:
        """Sizes of the tree for tests and benchmarks: nodes and edges in the arenas, two-fold draws."""
        self._settle()
        nodes, edges = self._core.tree_size()
        return {"nodes": nodes, "edges": edges, "twofold": self._core.count_twofold(),
                "root_n": self._core.root_info().n}

    # ---------------------------------------------------------------------------------------------
    def root_pvs(self, k: int) -> list[tuple[RootMove, Score, list[chess.Move]]]:
        """The first ``k`` root moves of the current tree in lc0's ranking (lc0 src/search/classic/search.cc
        ``GetBestChildrenNoTemperature``), each with (root move, score, pv): its score from the root side to
        move's view and the principal variation starting with that move. For ``MultiPV`` (lichessbot uci)."""
        rms, idx = self._root_moves()
        out = []
        for rm, e in zip(rms[:k], idx[:k]):
            _wl, _d, score, pv = self._edge_values(e)
            out.append((rm, score, pv))
        return out
