"""``lichessbot bench uci``: ``lichessbot uci`` driven by python-chess with a fixed move time, as GUIs
and tournament managers drive it: the wall time of each ``engine.play(board, Limit(time=...))`` (from
sending ``go`` to reading ``bestmove``) and the nodes searched. Prints one summary line."""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import chess
import chess.engine

from lichessbot.neural.providers import ONNX_BACKENDS, OnnxBackend

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--movetime-s", type=float, default=0.2, metavar="SECONDS",
                        help="python-chess Limit(time=...) per move, seconds (default 0.2)")
    parser.add_argument("--moves", type=int, default=10, help="moves played from the start position (default 10)")
    parser.add_argument("--network", default="default", help="WeightsFile (default: the embedded network)")
    parser.add_argument("--backend", default=OnnxBackend.CPU.value, choices=ONNX_BACKENDS,
                        help="where the network runs (default: cpu)")


def run(args: argparse.Namespace) -> int:
    """Play ``--moves`` moves at ``--movetime-s`` and print wall time (ms) and nodes: median and extremes."""
    with chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "lichessbot", "uci"], timeout=120) as engine:
        engine.configure({"WeightsFile": args.network, "Backend": args.backend})
        board = chess.Board()
        engine.play(board, chess.engine.Limit(nodes=1))  # load the network before timing
        walls, nodes = [], []
        for _ in range(args.moves):
            if board.is_game_over():
                break
            t0 = time.perf_counter()
            result = engine.play(board, chess.engine.Limit(time=args.movetime_s), info=chess.engine.INFO_BASIC)
            walls.append(1000 * (time.perf_counter() - t0))
            nodes.append(int(result.info.get("nodes", 0)))
            if result.move is None:  # the engine resigned or had nothing to play
                break
            board.push(result.move)
    print(f"Limit(time={args.movetime_s}) x {len(walls)} on {args.backend}: wall median "
          f"{statistics.median(walls):.0f} ms (min {min(walls):.0f}, max {max(walls):.0f}); nodes median "
          f"{statistics.median(nodes):.0f} (min {min(nodes)}, max {max(nodes)})")
    return 0
