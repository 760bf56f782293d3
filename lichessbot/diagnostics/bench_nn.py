"""``lichessbot bench nn``: network evaluations per second by batch size.

    lichessbot bench nn --network PATH [--json] [--backend B] [--threads N] [--precision P] [--seconds S]

For each batch size (1, 8, 32, 64, 128, 256 by default) it runs the network on real positions from
seeded random games for about ``--seconds`` seconds after one warm-up batch and reports evaluations
per second (batch size x batches / wall seconds), with as many batches at once as the evaluator runs
(``--threads`` > 1 on the CPU: one batch per thread). It also measures the path around the network:
the core's ``encode_positions`` (replaying each game and encoding its last position) in microseconds per
position at the largest batch, and the whole of :func:`lichessbot.neural.position_eval.evaluate_boards`
(encode, run, priors over the legal moves) in positions per second.
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from collections.abc import Callable
from functools import partial

import chess

from lichessbot.config import SearchParams
from lichessbot.neural.eval_cli import EvalInputError, configure_stderr_logging
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.position_eval import encode_boards, evaluate_boards
from lichessbot.neural.providers import ONNX_BACKENDS, PRECISIONS, OnnxBackend

__all__ = ["add_arguments", "bench_positions", "run", "timed_calls"]

DEFAULT_BATCHES = (1, 8, 32, 64, 128, 256)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``lichessbot bench nn``."""
    parser.add_argument("--network", default="default", help="'default', a .onnx or a .pb.gz file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--backend", choices=ONNX_BACKENDS, default=OnnxBackend.AUTO.value,
                        help="onnxruntime execution provider (default auto)")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: its default)")
    parser.add_argument("--precision", choices=PRECISIONS, default="auto",
                        help="engine.precision of the network (default auto, the engine's: int8 on the CPU)")
    parser.add_argument("--seconds", type=float, default=1.5, help="time per batch size, seconds (default 1.5)")
    parser.add_argument("--batches", default=",".join(map(str, DEFAULT_BATCHES)),
                        help="comma-separated batch sizes (default 1,8,32,64,128,256)")
    parser.add_argument("--input-format", type=int, default=None, help="lc0 input format of a .onnx file")


def bench_positions(n: int, seed: int = 1) -> list[chess.Board]:
    """``n`` boards (with their move stacks): every position of seeded random games of up to 120 plies."""
    rng = random.Random(seed)
    out: list[chess.Board] = []
    while len(out) < n:
        board = chess.Board()
        while not board.is_game_over() and board.ply() < 120 and len(out) < n:
            board.push(rng.choice(list(board.legal_moves)))
            out.append(board.copy())
    return out


def timed_calls(fn: Callable[[], object], seconds: float, concurrency: int = 1) -> tuple[int, float]:
    """Calls of ``fn`` completed in about ``seconds`` (after a warm-up), from ``concurrency`` threads, and the
    seconds they took. Each thread completes at least one call, so the count is never 0 (a loaded machine
    may take longer than ``seconds`` for the first)."""
    fn()  # warm-up
    counts = [0] * concurrency
    start = time.perf_counter()

    def loop(k: int) -> None:
        while True:
            fn()
            counts[k] += 1
            if time.perf_counter() - start >= seconds:
                return

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts), time.perf_counter() - start


def run(args: argparse.Namespace) -> int:
    """Run the benchmark and print the table (or JSON). Returns 0."""
    configure_stderr_logging()
    try:
        batches = [int(b) for b in args.batches.split(",") if b.strip()]
    except ValueError:
        raise EvalInputError(f"--batches must be comma-separated integers, got {args.batches!r}") from None
    if not batches or min(batches) < 1 or max(batches) > 1024:
        raise EvalInputError("--batches must hold sizes from 1 to 1024")
    if args.seconds <= 0:
        raise EvalInputError("--seconds must be > 0")

    net = load_network(args.network, args.input_format)
    ev = Evaluator(net, backend=args.backend, threads=args.threads, cache_size=0, precision=args.precision)
    boards = bench_positions(max(batches))
    fill = SearchParams().history_fill
    rows = []
    for b in batches:
        planes = encode_boards(boards[:b], input_format=net.input_format, history_fill=fill)[0]
        count, elapsed = timed_calls(partial(ev.run, planes), args.seconds, ev.concurrency)
        rows.append({"batch": b, "evals_per_s": round(b * count / elapsed, 1),
                     "ms_per_batch": round(1000 * elapsed / count, 3)})
        if not args.json:
            r = rows[-1]
            print(f"batch {b:5d}: {r['evals_per_s']:10.1f} evals/s  {r['ms_per_batch']:8.3f} ms/batch", flush=True)
    big = max(batches)
    count, elapsed = timed_calls(lambda: encode_boards(boards[:big], input_format=net.input_format, history_fill=fill),
                            min(args.seconds, 1.0))
    encode_us = 1e6 * elapsed / (count * big)
    count, elapsed = timed_calls(lambda: evaluate_boards(ev, boards[:big], input_format=net.input_format), args.seconds)
    evaluate_ps = big * count / elapsed
    result = {"network": net.name, "provider": ev.provider, "precision": ev.precision_run, "threads": args.threads,
              "concurrency": ev.concurrency, "results": rows,
              "encode_us_per_position": round(encode_us, 2), "encode_batch": big,
              "evaluate_per_s": round(evaluate_ps, 1)}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"encode (core): {encode_us:.1f} us/position at batch {big}; evaluate (encode + run + priors): "
              f"{evaluate_ps:.1f} positions/s at batch {big}  [{net.name}, {ev.provider}, {ev.precision_run}]")
    return 0
