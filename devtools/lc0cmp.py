"""``python -m devtools.lc0cmp`` (developer-only, from a clone): how close is our search's root visit
distribution to lc0's?

For each position both engines search ``--nodes`` nodes from an empty tree with the same network,
the same minibatch size and lc0's default search parameters. The root visit distributions
(N of each root move / sum of N) are compared by total variation distance,
TV = 0.5 * sum |p_ours(m) - p_lc0(m)| over the union of moves (0: identical, 1: disjoint).

lc0 is a yardstick only: it runs as a separate UCI process (python-chess), never imported or linked.
Its root visits are read from the ``VerboseMoveStats`` lines it prints at the end of the search, right
before ``bestmove``. ``--ours-vs-ours MB2`` and ``--lc0-vs-lc0 MB2`` compare one engine with itself at
another minibatch size, which measures the noise floor of the comparison.

Fairness: lc0 runs one search thread, no task workers, no NN-cache prefetch, no smart pruning
(:data:`LC0_OPTIONS`); our search runs unpipelined unless ``--pipeline``. lc0 does not shrink its last
batch to fit ``go nodes``, so it overshoots the limit (by up to a minibatch plus out-of-order visits)
while ours stops at the limit: the table shows the visits counted on each side, and ``--match-nodes``
gives ours lc0's final root N. lc0's printed P has two decimals (in %); its printed WL/D/Q go through
lc0's display-only WDL rescale with approximate log/logistic, so they are a few 1e-3 off its real values.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from typing import Any

import chess
import chess.engine
import structlog

from devtools.lc0cmp_stats import (
    MoveStat,
    Side,
    normalize_move,
    parse_verbose_block,
    parse_verbose_line,
    tv_distance,
)
from lichessbot.config import SearchParams
from lichessbot.errors import LichessbotError
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.providers import OnnxBackend
from lichessbot.search import Searcher
from lichessbot.timeman import VisitsStopper

__all__ = [
    "DEFAULT_POSITIONS", "LC0_OPTIONS", "MoveStat", "Side", "add_arguments", "normalize_move", "parse_positions",
    "parse_verbose_line", "parse_verbose_block", "run", "search_lc0", "search_ours", "tv_distance",
]

#: Built-in positions, one per line: ``label | position``. A position is a FEN (or EPD),
#: ``startpos [moves ...]`` or ``fen <FEN> [moves ...]``.
DEFAULT_POSITIONS = """\
startpos            | startpos
italian             | startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 f8c5
najdorf             | startpos moves e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6
qgd                 | startpos moves d2d4 d7d5 c2c4 e7e6 b1c3 g8f6
french-advance      | startpos moves e2e4 e7e6 d2d4 d7d5 e4e5 c7c5
kings-indian        | startpos moves d2d4 g8f6 c2c4 g7g6 b1c3 f8g7 e2e4 d7d6
caro-kann           | startpos moves e2e4 c7c6 d2d4 d7d5
ruy-after-castling  | startpos moves e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1
ep-alekhine         | startpos moves e2e4 g8f6 e4e5 d7d5
ep-fen              | rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3
castling-both       | r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 9
castling-black-only | r3k2r/ppp2ppp/2n1bn2/3qp3/8/2NP1N2/PPP2PPP/R1BQ1RK1 b kq - 1 9
middlegame-qgd      | r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R2QK2R w KQ - 0 8
middlegame-ruy      | r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N1P/PP1P1PP1/RNBQR1K1 b - - 0 9
kiwipete            | r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1
sicilian-attack     | r4rk1/pp2ppbp/2np1np1/q7/3NP3/2N1BP2/PPPQ2PP/2KR1B1R w - - 5 11
endgame-rook        | 8/8/4k3/8/2R5/4K3/4P3/r7 w - - 0 1
endgame-kp          | 8/8/8/4k3/8/8/4P3/4K3 w - - 0 1
endgame-minor       | 8/5pk1/6p1/8/4B3/5N2/5PPP/6K1 w - - 0 1
endgame-queens      | 8/6k1/8/8/2Q5/8/5K2/3q4 w - - 0 1
promotion-ep        | 4k3/P7/8/3pP3/8/8/8/4K3 w - d6 0 1
promotion-race      | 8/5P1k/8/8/8/8/6p1/4K3 b - - 0 1
mate-in-one         | 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1
mate-or-stalemate   | 7k/5Q2/6K1/8/8/8/8/8 w - - 0 1
"""

#: lc0 UCI options set on top of WeightsFile/Backend/Threads/MinibatchSize, and why (see run()).
LC0_OPTIONS: dict[str, str | int | bool | None] = {
    "VerboseMoveStats": True,   # the per-move N/P/Q lines we compare
    "SmartPruningFactor": 0,    # no early stop: the search runs to the node limit (ours has no smart pruning)
    "MaxPrefetch": 0,           # no NN-cache prefetch of unvisited nodes (ours has none; it adds out-of-order hits)
    "TaskWorkers": 0,           # picking/processing in the search thread only (determinism; ours has no task workers)
    "MaxConcurrentSearchers": 1,  # default, made explicit
    "NodesAsPlayouts": False,   # `go nodes` counts total nodes (root N), like our VisitsStopper(...)
    "CacheHistoryLength": 0,    # default: NN-cache key is the position only (ours: position_key)
    "UCI_ShowWDL": False,
}


# --------------------------------------------------------------------------------------------------
# Positions
# --------------------------------------------------------------------------------------------------
def _position(spec: str) -> chess.Board:
    toks = spec.split()
    if not toks:
        raise ValueError("empty position")
    if toks[0] == "startpos":
        board, rest = chess.Board(), toks[1:]
    elif toks[0] == "fen":
        i = toks.index("moves") if "moves" in toks else len(toks)
        board, rest = chess.Board(" ".join(toks[1:i])), toks[i:]
    else:
        i = toks.index("moves") if "moves" in toks else len(toks)
        fen = " ".join(toks[:i])
        rest = toks[i:]
        board = chess.Board(fen)  # not a FEN: the caller tries EPD
    if rest:
        if rest[0] != "moves":
            raise ValueError(f"expected 'moves' in {spec!r}")
        for m in rest[1:]:
            board.push_uci(m)
    return board


def parse_positions(text: str) -> list[tuple[str, chess.Board]]:
    """(label, board) for each non-empty, non-comment line of ``text``.

    A line is ``[label |] position``; position is a FEN/EPD, ``startpos [moves ...]`` or
    ``fen <FEN> [moves ...]``. Without a label: an EPD ``id`` opcode, else ``pos<N>``.
    """
    out: list[tuple[str, chess.Board]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        label = None
        if "|" in line:
            label, line = (s.strip() for s in line.split("|", 1))
        try:
            board = _position(line)
        except ValueError:
            board = chess.Board()
            ops = board.set_epd(line)
            label = label or (str(ops["id"]) if "id" in ops else None)
        if not board.is_valid():
            raise ValueError(f"invalid position: {line!r} ({board.status()!r})")
        out.append((label or f"pos{len(out) + 1}", board))
    return out


def _uci_position(board: chess.Board) -> tuple[chess.Board, list[chess.Move]]:
    """The root board (without moves) and the moves, so that both engines see the same history."""
    root = board.root()
    return root, list(board.move_stack)


# --------------------------------------------------------------------------------------------------
# Engines
# --------------------------------------------------------------------------------------------------
class Lc0:
    """lc0 as a UCI engine; one process for all positions, ``ucinewgame`` before each."""

    def __init__(self, path: str, weights: str, minibatch: int, threads: int, backend: str) -> None:


        try:
            self.engine = chess.engine.SimpleEngine.popen_uci([path], stderr=subprocess.DEVNULL)
        except (OSError, chess.engine.EngineError) as err:
            raise LichessbotError(f"cannot start lc0 {path!r}: {err}") from err
        opts: dict[str, str | int | bool | None] = {
            "WeightsFile": os.path.abspath(weights), "Backend": backend, "Threads": threads,
            "MinibatchSize": minibatch, **LC0_OPTIONS}
        known = self.engine.options
        self.options = {k: v for k, v in opts.items() if k in known}
        self.skipped = sorted(set(opts) - set(self.options))
        self.engine.configure(self.options)
        self.name = self.engine.id.get("name", "lc0")

    def search(self, board: chess.Board, nodes: int) -> Side:
        lines: list[str] = []
        t = time.perf_counter()
        # A fresh ``game`` object makes python-chess send ``ucinewgame`` (empty tree and NN cache in lc0).
        with self.engine.analysis(board, chess.engine.Limit(nodes=nodes), game=object()) as analysis:
            for info in analysis:
                if "string" in info:
                    lines.append(info["string"])
            analysis.wait()
        secs = time.perf_counter() - t
        moves, node = parse_verbose_block(lines)
        for m in moves:
            m.move = normalize_move(board, m.move)
        return Side(moves, node, secs, [ln for ln in lines if parse_verbose_line(ln) is not None])

    def close(self) -> None:
        try:
            self.engine.quit()
        except Exception:  # noqa: BLE001
            self.engine.close()


class Ours:
    """Our Searcher in-process, through its public API only."""

    def __init__(self, network: str, minibatch: int, threads: int, pipeline: bool, precision: str = "fp32") -> None:
        self.params = SearchParams(minibatch_size=minibatch)
        self.evaluator = Evaluator(load_network(network), backend=OnnxBackend.CPU, threads=threads, precision=precision)
        try:
            self.searcher = Searcher(self.evaluator, self.params, pipeline=pipeline)
        except TypeError:  # a Searcher without the pipeline switch
            self.searcher = Searcher(self.evaluator, self.params)
        self.name = "lichessbot"

    def search(self, board: chess.Board, nodes: int) -> Side:
        self.searcher.new_game()
        self.evaluator.clear_cache()  # lc0's ucinewgame clears its NN cache too
        t = time.perf_counter()
        r = self.searcher.search(board, VisitsStopper(nodes))
        secs = time.perf_counter() - t
        moves = [MoveStat(move=rm.move.uci(), n=rm.n, in_flight=rm.in_flight, p=rm.p, q=rm.q, wl=rm.wl, d=rm.d,
                          u=rm.u) for rm in r.root_moves]
        verbose: list[str] = []
        node = None
        if hasattr(self.searcher, "verbose_stats"):
            verbose = list(self.searcher.verbose_stats())
            _, node = parse_verbose_block(verbose)
        return Side(moves, node, secs, verbose)

    def close(self) -> None:
        if hasattr(self.searcher, "close"):
            self.searcher.close()


def search_lc0(args: argparse.Namespace, minibatch: int) -> Lc0:
    return Lc0(args.lc0, args.lc0_weights, minibatch, args.threads, args.backend)


def search_ours(args: argparse.Namespace, minibatch: int) -> Ours:
    return Ours(args.network, minibatch, args.ours_threads, args.pipeline, args.precision)


# --------------------------------------------------------------------------------------------------
# Command
# --------------------------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lc0", required=True, help="path of the lc0 binary (the yardstick)")
    parser.add_argument("--lc0-weights", default="../shared/nets/maia-1100.pb.gz", help="lc0's weights file")
    parser.add_argument("--network", default="../shared/nets/maia-1100.onnx", help="our network (same net)")
    parser.add_argument("--nodes", type=int, default=1600, help="nodes per search (default 1600)")
    parser.add_argument("--minibatch", type=int, default=256,
                        help="MinibatchSize on both sides (default 256)")
    parser.add_argument("--positions", default=None, help="file of positions: '[label |] FEN/EPD' or "
                        "'[label |] startpos moves ...' lines (default: 24 built-in positions)")
    parser.add_argument("--threads", type=int, default=1, help="lc0 search threads (default 1)")
    parser.add_argument("--backend", default="onnx-cpu", choices=("onnx-cpu", "blas", "eigen"),
                        help="lc0 backend (default onnx-cpu)")
    parser.add_argument("--ours-threads", type=int, default=0, help="our onnxruntime intra-op threads (0: default)")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "int8"),
                        help="our network's precision (int8: the CPU's int8 copy, engine.precision int8)")
    parser.add_argument("--pipeline", action="store_true",
                        help="our search pipelined (gathers the next batch while one is evaluated); off by "
                        "default: lc0 with one search thread does not, and pipelining alone adds ~0.015 mean TV")
    parser.add_argument("--match-nodes", action="store_true",
                        help="run the second side first, then the first side with the root N the second ended "
                        "with (lc0 overshoots `go nodes` by up to a batch; this removes that difference)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N positions")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--ours-vs-ours", type=int, metavar="MB2", default=None,
                      help="compare our search at --minibatch with ours at MB2 (noise floor)")
    mode.add_argument("--lc0-vs-lc0", type=int, metavar="MB2", default=None,
                      help="compare lc0 at --minibatch with lc0 at MB2 (noise floor)")
    parser.add_argument("--verbose", action="store_true", help="print both sides' VerboseMoveStats per position")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def _row_text(r: dict[str, Any]) -> str:
    a, b = r["a"], r["b"]
    return (f"  {r['position']:<20} TV {r['tv']:.3f}   {a['top']:<6}{a['top_share']:6.1%} {a['nodes']:>6}   "
            f"{b['top']:<6}{b['top_share']:6.1%} {b['nodes']:>6}   max|dP| {r['max_dp']:.4f}")


def _side_json(s: Side) -> dict[str, Any]:
    top, share = s.top()
    return {"top": top, "top_share": share, "nodes": s.total, "root_n": s.node.n if s.node else None,
            "seconds": round(s.seconds, 3), "visits": s.visits,
            "moves": [asdict(m) for m in s.moves], "verbose": s.verbose}


def run(args: argparse.Namespace) -> int:
    structlog.configure(logger_factory=lambda *a: structlog.PrintLogger(open(os.devnull, "w")))  # noqa: SIM115

    mb = args.minibatch or SearchParams().minibatch_size
    if args.positions:
        with open(args.positions, encoding="utf-8") as f:
            positions = parse_positions(f.read())
    else:
        positions = parse_positions(DEFAULT_POSITIONS)
    if args.limit:
        positions = positions[: args.limit]

    a: Lc0 | Ours
    b: Lc0 | Ours
    if args.lc0_vs_lc0:
        mode, labels = "lc0-vs-lc0", (f"lc0 mb{mb}", f"lc0 mb{args.lc0_vs_lc0}")
        a, b = search_lc0(args, mb), search_lc0(args, args.lc0_vs_lc0)
    elif args.ours_vs_ours:
        mode, labels = "ours-vs-ours", (f"ours mb{mb}", f"ours mb{args.ours_vs_ours}")
        a, b = search_ours(args, mb), search_ours(args, args.ours_vs_ours)
    else:
        mode, labels = "ours-vs-lc0", (f"ours mb{mb}", f"lc0 mb{mb}")
        a = search_ours(args, mb)
        try:
            b = search_lc0(args, mb)
        except BaseException:
            a.close()
            raise

    report: dict[str, Any] = {"mode": mode, "sides": labels, "nodes": args.nodes, "minibatch": mb,
                              "pipeline": args.pipeline, "match_nodes": args.match_nodes, "precision": args.precision,
                    "lc0": args.lc0, "lc0_threads": args.threads, "lc0_backend": args.backend,
                    "network": args.network, "lc0_weights": args.lc0_weights, "cpus": os.cpu_count(),
                    "load": os.getloadavg()[0], "rows": []}
    for eng in (a, b):
        if isinstance(eng, Lc0):
            report["lc0_options"] = {k: v for k, v in eng.options.items()}
            report["lc0_options_unknown"] = eng.skipped
            report["lc0_name"] = eng.name
    if not args.json:
        print(f"{mode}: {len(positions)} positions, {args.nodes} nodes, minibatch {mb}", flush=True)
        print(f"  {'position':<20} {'':9}   {labels[0]:<20}        {labels[1]:<20}", flush=True)
    try:
        for label, board in positions:
            if args.match_nodes:  # b first; a then searches as many nodes as b's root ended with
                sb = b.search(board, args.nodes)
                sa = a.search(board, sb.node.n if sb.node is not None else sb.total + 1)
            else:
                sa, sb = a.search(board, args.nodes), b.search(board, args.nodes)
            dps = [abs(ma.p - mb_.p) for ma in sa.moves for mb_ in sb.moves
                   if ma.move == mb_.move and ma.p is not None and mb_.p is not None]
            row = {"position": label, "fen": board.root().fen(), "moves": [m.uci() for m in board.move_stack],
                   "tv": tv_distance(sa.visits, sb.visits), "max_dp": max(dps, default=0.0),
                   "a": _side_json(sa), "b": _side_json(sb)}
            report["rows"].append(row)
            if not args.json:
                print(_row_text(row), flush=True)
                if args.verbose:
                    for name, s in zip(labels, (sa, sb), strict=True):
                        print(f"    {name}:")
                        for ln in s.verbose:
                            print(f"      {ln}")
    finally:
        a.close()
        b.close()
    rows = report["rows"]
    report["mean_tv"] = sum(r["tv"] for r in rows) / len(rows) if rows else 0.0
    report["max_dp"] = max((r["max_dp"] for r in rows), default=0.0)
    report["mean_nodes"] = [sum(r[k]["nodes"] for r in rows) / max(1, len(rows)) for k in ("a", "b")]
    report["load_after"] = os.getloadavg()[0]
    if args.json:
        json.dump(report, sys.stdout)
        print()
    else:
        print(f"mean TV {report['mean_tv']:.4f} over {len(rows)} positions; max |P_a - P_b| {report['max_dp']:.4f}; "
              f"mean visits counted {report['mean_nodes'][0]:.0f} / {report['mean_nodes'][1]:.0f}; "
              f"load {report['load']:.1f} -> {report['load_after']:.1f} on {report['cpus']} CPUs")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m devtools.lc0cmp [flags]`` from a clone (a developer tool: not shipped in the package)."""
    parser = argparse.ArgumentParser(prog="python -m devtools.lc0cmp", description=__doc__.splitlines()[0])
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except LichessbotError as err:
        print(f"lc0cmp: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
