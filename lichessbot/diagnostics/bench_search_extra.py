"""Parts of ``lichessbot bench search`` beyond nps: lc0 side by side, tree memory, stop latency.

- :func:`lc0_nps`: lc0 (a UCI binary given by ``--lc0``, a yardstick, never a dependency) on the same
  positions, ``go nodes N`` from an empty tree (``ucinewgame``), its reported nps and nodes.
- :func:`memory_per_node`: RSS growth of the process over a search of ``nodes`` nodes with the NN cache
  off, divided by the nodes (bytes per node of the whole tree: nodes, edges, arena slack).
- :func:`concurrent_games`: N searches of different positions at once through one evaluation service:
  aggregate and per-game playouts per second, and the service's merging figures.
- :func:`stop_latency`: milliseconds from ``SearchHandle.stop()`` to the result, over several searches
  stopped at random moments.
- :func:`tablebase_nps`: nps without and with Syzygy probes in the search on 5-6-piece endgames whose
  captures reach the tables, and the tablebase hits per second.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

import chess
import chess.engine

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.neural.runner import NetworkRunner
from lichessbot.neural.service import EvalService
from lichessbot.search import Searcher
from lichessbot.timeman import VisitsStopper

__all__ = ["TB_POSITIONS", "concurrent_games", "lc0_nps", "memory_per_node", "rss_bytes", "stop_latency",
           "tablebase_nps"]

#: (name, FEN): endgames of five and six pieces whose captures reach 3-4-piece tables.
TB_POSITIONS: list[tuple[str, str]] = [
    ("KQPvKR", "3rk3/8/8/8/8/8/4P3/3QK3 w - - 0 1"),
    ("KRPvKR", "8/8/4k3/8/3KP3/8/r7/5R2 w - - 0 1"),
    ("KPPvKP", "8/5k2/8/4pP2/4P3/8/8/4K3 w - - 0 1"),
    ("KRPPvKR", "8/8/4k3/8/3KPP2/8/r7/5R2 w - - 0 1"),
]


def lc0_nps(lc0: str, weights: str, backend: str, threads: int, board: chess.Board, nodes: int,
            minibatch: int | None = None, timeout: float = 600.0) -> dict[str, Any]:
    """lc0's nps, nodes, depth and seldepth for ``go nodes`` on ``board`` from an empty tree. Raises
    chess.engine.EngineError (or OSError) when lc0 cannot start."""
    # Smart pruning off: lc0 searches the same nodes as we do (it would stop a node-limited search early).
    options: dict[str, Any] = {"WeightsFile": weights, "Backend": backend, "Threads": threads, "SmartPruningFactor": 0}
    if minibatch:
        options["MinibatchSize"] = minibatch
    engine = chess.engine.SimpleEngine.popen_uci([lc0], stderr=open(os.devnull, "w"), timeout=60)  # noqa: SIM115
    try:
        engine.configure({k: v for k, v in options.items() if k in engine.options})
        engine.ping()
        info = engine.analyse(board, chess.engine.Limit(nodes=nodes), game=object())
        # A second run: the first one pays for the backend's warm-up.
        info = engine.analyse(board, chess.engine.Limit(nodes=nodes), game=object())
    finally:
        engine.quit()
    return {"nodes": info.get("nodes", 0), "nps": info.get("nps", 0), "seconds": info.get("time", 0.0),
            "depth": info.get("depth", 0), "seldepth": info.get("seldepth", 0)}


def rss_bytes() -> int:
    """Resident set size of this process, bytes (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def memory_per_node(evaluator: NetworkRunner, board: chess.Board, nodes: int, params: SearchParams) -> dict[str, Any]:
    """Bytes of RSS per node of a ``nodes``-node tree (the evaluator's NN cache should be off)."""
    searcher = Searcher(evaluator, params, pipeline=False)
    searcher.search(chess.Board(), VisitsStopper(100))  # threads, arenas and buffers exist before the count
    searcher.new_game()
    before = rss_bytes()
    result = searcher.search(board, VisitsStopper(nodes))
    after = rss_bytes()
    info = searcher.tree_info()
    searcher.close()
    return {"nodes": result.nodes, "tree_nodes": info["nodes"], "edges": info["edges"],
            "rss_growth_bytes": after - before, "bytes_per_node": round((after - before) / max(1, result.nodes), 1)}


def stop_latency(evaluator: NetworkRunner, board: chess.Board, params: SearchParams, runs: int = 10,
                 seed: int = 1) -> dict[str, Any]:
    """``stop()`` -> result latency in milliseconds (min, median, max) over ``runs`` infinite searches
    stopped after 0.2 to 0.8 seconds."""
    rng = random.Random(seed)
    searcher = Searcher(evaluator, params)
    lat = []
    for _ in range(runs):
        searcher.new_game()
        handle = searcher.start(board)
        time.sleep(rng.uniform(0.2, 0.8))
        t = time.perf_counter()
        handle.stop()
        handle.wait()
        lat.append((time.perf_counter() - t) * 1000.0)
    searcher.close()
    lat.sort()
    return {"runs": runs, "min_ms": round(lat[0], 1), "median_ms": round(lat[len(lat) // 2], 1),
            "max_ms": round(lat[-1], 1), "minibatch": searcher.minibatch}


def concurrent_games(evaluator: NetworkRunner, boards: list[chess.Board], params: SearchParams,
                     seconds: float) -> dict[str, Any]:
    """Search every board at once (one Searcher each, one :class:`EvalService` for all) for ``seconds``;
    lc0's nps of each game (:class:`lichessbot.search.SearchStats`) and their sum, and the service's stats."""
    service = EvalService(evaluator)
    searchers = [Searcher(service, params, game=f"game{k}") for k in range(len(boards))]
    handles = [s.start(b) for s, b in zip(searchers, boards)]
    time.sleep(seconds)
    for h in handles:
        h.stop()
    rates = []
    for h in handles:
        r = h.wait()
        rates.append(float(r.nps))
    for s in searchers:
        s.close()
    stats = service.stats()
    service.close()
    return {"games": len(boards), "total_pps": round(sum(rates)), "per_game_pps": [round(x) for x in rates],
            "min_share_of_mean": round(min(rates) / (sum(rates) / len(rates)), 3) if sum(rates) else 0.0,
            "batches": stats["batches"], "mean_fill": round(stats["mean_fill"], 1),
            "mean_games": round(stats["mean_games"], 2), "mean_wait_ms": round(stats["mean_wait_ms"], 2)}


def tablebase_nps(evaluator: NetworkRunner, tables: _core.Tablebases | None, nodes: int,
                  params: SearchParams) -> list[dict[str, Any]]:
    """Per position of :data:`TB_POSITIONS`: nps of a fresh ``nodes``-node search without and with
    ``tables`` (a ``lichessbot._core.Tablebases``), the hits and hits per second. With the zero-cost
    network the difference is the cost of probing plus that of a different tree (terminals need no
    network)."""
    rows = []
    for name, fen in TB_POSITIONS:
        row: dict[str, Any] = {"position": name}
        for label, tb in (("without", None), ("with", tables)):
            evaluator.clear_cache()
            searcher = Searcher(evaluator, params, pipeline=False, tablebases=tb)
            r = searcher.search(chess.Board(fen), VisitsStopper(nodes))
            searcher.close()
            row[f"nps_{label}"] = r.nps
            if tb is not None:
                row["tbhits"] = r.tbhits
                row["tbhits_per_s"] = round(r.tbhits / r.time) if r.time > 0 else 0
        row["nps_ratio"] = round(row["nps_with"] / max(1, row["nps_without"]), 3)
        rows.append(row)
    return rows
