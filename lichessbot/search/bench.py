"""``lichessbot bench search``: search nodes per second on fixed positions, with the real network and
with a zero-cost fake network (the tree's own cost per playout), pipelined and not.

Each search starts from an empty tree and an empty NN cache. nps is lc0's (playouts / seconds since
the first playout, lc0-facts §5.10).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import chess

from lichessbot.config import SearchParams

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


def bench(evaluator, nodes: int, params: SearchParams, pipeline: bool, report=None) -> list[dict]:
    """One fresh search of ``nodes`` nodes per position; a row per position (also passed to ``report``)."""
    from lichessbot.search import Limits, Searcher

    rows = []
    for name, fen, moves in POSITIONS:
        evaluator.clear_cache()
        searcher = Searcher(evaluator, params, pipeline=pipeline)
        t = time.perf_counter()
        r = searcher.search(_board(fen, moves), Limits(nodes=nodes))
        wall = time.perf_counter() - t
        searcher.close()
        rows.append({"position": name, "nodes": r.nodes, "nps": round(r.nps), "seconds": round(wall, 3),
                     "depth": round(r.depth, 2), "seldepth": r.seldepth, "best": r.best_move.uci()})
        if report is not None:
            report(rows[-1])
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", default=None, help="a .onnx / .pb.gz network, or 'default'; "
                        "without it only the fake network runs")
    parser.add_argument("--nodes", type=int, default=20_000, help="nodes per position (default 20000)")
    parser.add_argument("--backend", default="auto", choices=("auto", "tensorrt", "cuda", "cpu"))
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: its default)")
    parser.add_argument("--minibatch", type=int, default=SearchParams().minibatch_size)
    parser.add_argument("--no-pipeline", action="store_true", help="only the unpipelined search")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _print_row(r: dict) -> None:
    print(f"  {r['position']:<18} {r['nodes']:>7} nodes {r['nps']:>7} nps  {r['seconds']:7.2f} s  "
          f"depth {r['depth']:5.2f} seldepth {r['seldepth']:>3}  best {r['best']}  load {os.getloadavg()[0]:.1f}",
          flush=True)


def run(args: argparse.Namespace) -> int:
    import structlog

    from lichessbot.search.fake import FakeEvaluator

    structlog.configure(logger_factory=lambda *a: structlog.PrintLogger(open(os.devnull, "w")))  # noqa: SIM115
    params = SearchParams(minibatch_size=args.minibatch)
    modes = [False] if args.no_pipeline else [True, False]
    report: dict = {"nodes": args.nodes, "minibatch": args.minibatch, "load": os.getloadavg()[0],
                    "cpus": os.cpu_count(), "runs": []}
    evaluators = [("fake", FakeEvaluator(value=0.05, cache_size=200_000))]
    if args.network:
        from lichessbot.engine.evaluator import Evaluator
        from lichessbot.engine.network import load_network

        ev = Evaluator(load_network(args.network), backend=args.backend, threads=args.threads, cache_size=200_000)
        report["provider"] = ev.provider
        evaluators.append((load_network(args.network).name, ev))
    for name, ev in evaluators:
        for pipeline in modes:
            if not args.json:
                print(f"{name} pipeline={pipeline}:", flush=True)
            rows = bench(ev, args.nodes, params, pipeline, None if args.json else _print_row)
            report["runs"].append({"network": name, "pipeline": pipeline, "positions": rows})
    report["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report))
    else:
        print(f"load average {report['load']:.2f} -> {report['load_after']:.2f} on {report['cpus']} CPUs")
    return 0
