"""``lichessbot bench search``: search nodes per second on fixed positions, with the real network and
with a zero-cost fake network (the tree's own cost per playout), pipelined and not; side by side with
lc0 (``--lc0``), the memory of a large tree (``--memory``) and the stop latency (``--stop-latency``).

Each search starts from an empty tree and an empty NN cache. nps, depth and seldepth are lc0's, ours as the
search gives them (:class:`lichessbot.search.SearchStats`) and lc0's as its ``info`` says them (lc0
src/search/classic/search.cc ``SendUciInfo``).

    lichessbot bench search --nodes 50000                                 # zero-cost network
    lichessbot bench search --nodes 50000 --lc0 lc0 --lc0-backend random  # ... beside lc0's tree
    lichessbot bench search --network maia.onnx --threads 2 --nodes 20000 --lc0 lc0 \
        --lc0-weights maia.pb.gz --lc0-backend onnx-cpu                   # a real network beside lc0
    lichessbot bench search --memory 1000000                              # bytes per node
    lichessbot bench search --network default --stop-latency              # stop -> bestmove
    lichessbot bench search --games 8 --only none                          # 8 games on a modelled GPU
    lichessbot bench search --network maia.onnx --threads 2 --games 4 --only none
    lichessbot bench search --syzygy ../shared/tablebases/syzygy --only none  # cost of tablebase probes
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

import chess
import structlog

from lichessbot.config import SearchParams
from lichessbot.diagnostics import bench_search_extra as bench_extra
from lichessbot.diagnostics.bench_search_extra import lc0_nps
from lichessbot.diagnostics.fake_net import FakeEvaluator, GpuModelEvaluator
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.providers import ONNX_BACKENDS, PRECISIONS, OnnxBackend
from lichessbot.neural.runner import NetworkRunner
from lichessbot.search import Searcher
from lichessbot.search.searcher import minibatch_of
from lichessbot.tablebase import Tablebases
from lichessbot.timeman import VisitsStopper

__all__ = ["POSITIONS", "add_arguments", "run", "bench"]

#: (name, FEN, moves from it). Middlegames: a Queen's Gambit Declined and a Ruy Lopez, both quiet.
POSITIONS: list[tuple[str, str, str]] = [
    ("startpos", chess.STARTING_FEN, ""),
    ("sicilian-najdorf", chess.STARTING_FEN, "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6"),
    ("middlegame-qgd", "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R2QK2R w KQ - 0 8", ""),
    ("middlegame-ruy", "r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N1P/PP1P1PP1/RNBQR1K1 b - - 0 9", ""),
]


def _board(fen: str, moves: str) -> chess.Board:
    b = chess.Board(fen)
    for m in moves.split():
        b.push_uci(m)
    return b


def bench(evaluator: NetworkRunner, nodes: int, params: SearchParams, pipeline: bool,
          report: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """One fresh search of ``nodes`` nodes per position; a row per position (also passed to ``report``)."""
    rows = []
    for name, fen, moves in POSITIONS:
        evaluator.clear_cache()
        searcher = Searcher(evaluator, params, pipeline=pipeline)
        t = time.perf_counter()
        r = searcher.search(_board(fen, moves), VisitsStopper(nodes))
        wall = time.perf_counter() - t
        searcher.close()
        rows.append({"position": name, "nodes": r.nodes, "nps": r.nps, "seconds": round(wall, 3),
                     "depth": r.depth, "seldepth": r.seldepth, "best": r.best_move.uci()})
        if report is not None:
            report(rows[-1])
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", default=None, help="a .onnx / .pb.gz network, or 'default'; "
                        "without it only the fake network runs")
    parser.add_argument("--nodes", type=int, default=20_000, help="nodes per position (default 20000)")
    parser.add_argument("--backend", default=OnnxBackend.AUTO.value, choices=ONNX_BACKENDS,
                        help="where the network runs (default: auto, the best available)")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: its default)")
    parser.add_argument("--precision", choices=PRECISIONS, default="auto",
                        help="engine.precision of --network (default auto, the engine's: int8 on the CPU)")
    parser.add_argument("--minibatch", type=int, default=SearchParams().minibatch_size,
                        help="positions per batch; 0 (default): the provider's (256 for the fake network)")
    parser.add_argument("--no-pipeline", action="store_true", help="only the unpipelined search")
    parser.add_argument("--pipeline-only", action="store_true", help="only the pipelined search")
    parser.add_argument("--lc0", default=None, help="an lc0 binary to run on the same positions (UCI)")
    parser.add_argument("--lc0-weights", default="../shared/nets/maia-1100.pb.gz", help="lc0's network")
    parser.add_argument("--lc0-backend", default=None,
                        help="lc0 backend: default random for the fake network, onnx-cpu with --network")
    parser.add_argument("--lc0-threads", type=int, default=1, help="lc0 search threads (default 1)")
    parser.add_argument("--memory", type=int, default=0, metavar="NODES",
                        help="also measure RSS bytes per node of a NODES-node tree (fake network, cache off)")
    parser.add_argument("--stop-latency", action="store_true",
                        help="also measure stop -> result latency (ms) with --network (default: the default net)")
    parser.add_argument("--games", type=int, default=0, metavar="N",
                        help="also run N concurrent searches through one evaluation service, beside 1 game "
                        "(with --network, else the modelled GPU: one call at a time, 10 ms + 2 us per position)")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per --games run (default 5)")
    parser.add_argument("--syzygy", default=None, metavar="DIR",
                        help="also measure nps without and with Syzygy probes (tables in DIR) on endgames, "
                        "and tbhits per second (fake network; also --network's)")
    parser.add_argument("--only", choices=("fake", "network", "none"), default=None,
                        help="run only the fake or only the --network nps rows ('none': only the extras)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _print_row(r: dict[str, Any]) -> None:
    print(f"  {r['position']:<18} {r['nodes']:>7} nodes {r['nps']:>7} nps  {r['seconds']:7.2f} s  "
          f"depth {r['depth']:>3} seldepth {r['seldepth']:>3}  best {r['best']}  load {os.getloadavg()[0]:.1f}",
          flush=True)


def _lc0_rows(args: argparse.Namespace, backend: str, threads: int, minibatch: int | None) -> list[dict[str, Any]]:
    rows = []
    for name, fen, moves in POSITIONS:
        r = lc0_nps(args.lc0, args.lc0_weights, backend, threads, _board(fen, moves), args.nodes, minibatch)
        rows.append({"position": name, "nodes": r["nodes"], "nps": r["nps"], "seconds": r["seconds"],
                     "depth": r["depth"], "seldepth": r["seldepth"], "best": "-"})
        if not args.json:
            _print_row(rows[-1])
    return rows


def run(args: argparse.Namespace) -> int:


    structlog.configure(logger_factory=lambda *a: structlog.PrintLogger(open(os.devnull, "w")))  # noqa: SIM115
    params = SearchParams(minibatch_size=args.minibatch)
    modes = [False] if args.no_pipeline else ([True] if args.pipeline_only else [True, False])
    report: dict[str, Any] = {"nodes": args.nodes, "minibatch": args.minibatch, "load": os.getloadavg()[0],
                              "cpus": os.cpu_count(), "runs": []}

    def say(*words: object) -> None:
        if not args.json:
            print(*words, flush=True)

    evaluators: list[tuple[str, Any]] = []  # (name, an evaluator of the search's interface)
    if args.only in (None, "fake"):
        evaluators.append(("fake", FakeEvaluator(value=0.05, cache_size=200_000)))
    net_ev = None
    if args.network or args.stop_latency:
        net = load_network(args.network or "default")
        net_ev = Evaluator(net, backend=args.backend, threads=args.threads, cache_size=200_000,
                           precision=args.precision)
        report["provider"], report["precision"] = net_ev.provider, net_ev.precision_run
        if args.network and args.only in (None, "network"):
            evaluators.append((net.name, net_ev))
    for name, ev in evaluators:
        mb = minibatch_of(params, ev)
        for pipeline in modes:
            say(f"{name} pipeline={pipeline} minibatch={mb}:")
            rows = bench(ev, args.nodes, params, pipeline, None if args.json else _print_row)
            report["runs"].append({"network": name, "pipeline": pipeline, "minibatch": mb, "positions": rows})
        if args.lc0:
            backend = args.lc0_backend or ("random" if name == "fake" else "onnx-cpu")
            lc0_mb = mb if name != "fake" else None
            say(f"lc0 backend={backend} threads={args.lc0_threads} minibatch={lc0_mb or 'lc0 default'}:")
            rows = _lc0_rows(args, backend, args.lc0_threads, lc0_mb)
            report["runs"].append({"network": f"lc0 {backend}", "minibatch": lc0_mb, "positions": rows})
    if args.games:
        ev = net_ev if net_ev is not None and args.network else GpuModelEvaluator(value=0.05, cache_size=200_000)
        name = f"{ev.network.name} ({report.get('provider')})" if ev is net_ev else "modelled GPU"
        report["concurrent"] = []
        boards = [_board(*POSITIONS[k % len(POSITIONS)][1:]) for k in range(args.games)]
        # One game: each distinct position alone (the playouts per evaluation depend on the position), for
        # 1/N of the time, so that its tree grows to the size each of the N games reaches (a bigger tree
        # finds more transpositions and so more playouts per network evaluation).
        singles = []
        for k in range(min(args.games, len(POSITIONS))):
            ev.clear_cache()
            row = bench_extra.concurrent_games(ev, [boards[k]], params, args.seconds / args.games)
            singles.append(row)
            say(f"{name}, {POSITIONS[k][0]} alone: {row['total_pps']} playouts/s; {row['batches']} calls of "
                f"{row['mean_fill']} positions")
        one = sum(r["total_pps"] for r in singles) / len(singles)
        ev.clear_cache()
        row = bench_extra.concurrent_games(ev, boards, params, args.seconds)
        report["concurrent"] = {"one_game_mean_pps": round(one), "singles": singles, "games": row}
        say(f"{name}, {args.games} concurrent games: {row['total_pps']} playouts/s in all, per game "
            f"{row['per_game_pps']} (min {row['min_share_of_mean']} of the mean); {row['batches']} calls, "
            f"{row['mean_fill']} positions and {row['mean_games']} games per call, queue wait "
            f"{row['mean_wait_ms']} ms")
        ratio = row["total_pps"] / max(1.0, one)
        report["concurrent_ratio"] = round(ratio, 2)
        say(f"  {args.games} games / one game (mean over the positions alone, 1/{args.games} of the time): "
            f"{ratio:.2f}x")
        ev.clear_cache()
        full = bench_extra.concurrent_games(ev, [boards[0]], params, args.seconds)
        report["concurrent"]["one_game_full_time"] = full
        say(f"  {args.games} games / {POSITIONS[0][0]} alone for the whole {args.seconds:g} s "
            f"({full['total_pps']} playouts/s, calls of {full['mean_fill']} positions): "
            f"{row['total_pps'] / max(1, full['total_pps']):.2f}x")
    if args.memory:
        say(f"memory: a {args.memory}-node tree, fake network, NN cache off:")
        mem = bench_extra.memory_per_node(FakeEvaluator(value=0.05, cache_size=0),
                                          _board(*POSITIONS[1][1:]), args.memory, params)
        say(f"  {mem['nodes']} nodes ({mem['tree_nodes']} tree nodes, {mem['edges']} edges): "
            f"RSS +{mem['rss_growth_bytes'] / 1e6:.1f} MB = {mem['bytes_per_node']} bytes per node")
        report["memory"] = mem
    if args.stop_latency and net_ev is not None:
        lat = bench_extra.stop_latency(net_ev, _board(*POSITIONS[1][1:]), params)
        say(f"stop -> result ({report['provider']}, minibatch {lat['minibatch']}, {lat['runs']} runs): "
            f"min {lat['min_ms']} ms, median {lat['median_ms']} ms, max {lat['max_ms']} ms")
        report["stop_latency"] = lat
    if args.syzygy:
        tables = Tablebases([args.syzygy], root_probe=False).core
        tb_evs: list[tuple[str, Any]] = [("fake", FakeEvaluator(value=0.05, cache_size=200_000))]
        if args.network and net_ev is not None:
            tb_evs.append((args.network, net_ev))
        report["tablebases"] = []
        for name, ev in tb_evs:
            say(f"tablebases {name}, unpipelined, {args.nodes} nodes:")
            rows = bench_extra.tablebase_nps(ev, tables, args.nodes, params)
            for r in rows:
                say(f"  {r['position']:<10} nps without {r['nps_without']:>7}  with {r['nps_with']:>7} "
                    f"({r['nps_ratio']:.3f})  tbhits {r['tbhits']:>7} ({r['tbhits_per_s']}/s)")
            report["tablebases"].append({"network": name, "positions": rows})
    report["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report))
    else:
        print(f"load average {report['load']:.2f} -> {report['load_after']:.2f} on {report['cpus']} CPUs")
    return 0
