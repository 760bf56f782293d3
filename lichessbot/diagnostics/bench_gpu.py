"""``lichessbot bench gpu``: the GPU path measured end to end (it runs on the CPU too, for CI).

    lichessbot bench gpu [--network default] [--backend auto] [--device 0] [--precision fp32]
                         [--precisions fp32,tf32,fp16] [--batches 8,16,...,1024] [--seconds 1.0]
                         [--search-seconds 3] [--games 8] [--json]

It prints, in one run:

- **start**: seconds to load the network, to make the onnxruntime session, and to warm it up (every batch
  bucket once on a GPU: :meth:`~lichessbot.neural.evaluator.Evaluator.warm_up`), and the precision that runs;
- **first move**: milliseconds of the first search after the start (``--first-nodes`` playouts from the
  initial position, fresh tree and NN cache) and of the same search again, so the cold cost shows; at the
  end, the batch shapes the run sent that the warm-up had not planned (each cost a plan mid-search on a
  GPU; the goal is none);
- **network alone**, per batch size: evaluations per second with as many calls in flight as the
  evaluation service runs (real positions from seeded random games);
- **search**: nps of one game and of ``--games`` games merged by one evaluation service (lc0's nps:
  playouts / seconds since the first playout);
- **stop -> bestmove**: milliseconds from ``stop`` to the search's result (min, median, max);
- **compact input** (``--compact`` runs everything above on it): the core's gather per leaf writing the
  planes beside writing the compact form (with a zero-cost network, so the tree and the encoding are all
  that is timed), the network alone on the planes beside the network with its prologue on the compact
  form, and the bytes a position takes in each;
- **check**: the outputs against onnxruntime's CPU provider in fp32 on the same positions (max |Δ| of the
  logits, share of positions with the same best policy move, max |ΔWDL|), so a GPU that returns garbage
  (or zeros) cannot pass unseen, held to the limits of the precision that ran (:func:`within_limits`);
- **precisions** (``--precisions``): for each precision, side by side, the session and warm-up seconds,
  the network alone at each batch size and the check against the CPU.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from functools import partial
from typing import Any

import chess
import numpy as np

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.diagnostics import bench_search_extra as bench_extra
from lichessbot.diagnostics.bench_nn import bench_positions, timed_calls
from lichessbot.diagnostics.bench_search import POSITIONS
from lichessbot.errors import LichessbotError
from lichessbot.neural.compact import compact_of
from lichessbot.neural.eval_cli import add_network_flags
from lichessbot.neural.evaluator import PRECISIONS, Evaluator
from lichessbot.neural.network import Network, load_network
from lichessbot.neural.position_eval import encode_boards
from lichessbot.neural.providers import OnnxBackend
from lichessbot.neural.runner import COMPACT_BYTES, NetOutputs
from lichessbot.neural.service import EvalService
from lichessbot.neural.session import BATCH_BUCKETS
from lichessbot.search import Searcher
from lichessbot.search.searcher import core_params
from lichessbot.timeman import VisitsStopper

__all__ = ["add_arguments", "check_against_cpu", "run", "within_limits"]

#: Limits the check holds a run to (docs/gpu.md, "Precision"): fp32 logits; tf32 and fp16 the share of positions with
#: the same best move and the WDL.
FP32_MAX_LOGIT_DELTA = 1e-3
FP16_MIN_ARGMAX_SHARE = 0.99
FP16_MAX_WDL_DELTA = 0.01
#: int8 (the CPU's int8 copy, what precision auto runs on the CPU): the share of positions with fp32's best move,
#: the limit tests/neural/test_int8.py holds the copy to (measured 0.916 for maia-1100 and 0.960 for maia-1900 on
#: 227 held-out positions: docs/engine.md, "int8"); no |ΔWDL| limit (the mean |ΔQ| measured 0.012-0.019, the
#: largest 0.09-0.16: quantization, not a fault).
INT8_MIN_ARGMAX_SHARE = 0.85


def within_limits(check: dict[str, Any], precision: str) -> bool:
    """True when ``check`` (:func:`check_against_cpu`) is within the limits of ``precision``, the one that
    ran: fp32 max |Δlogit| <= :data:`FP32_MAX_LOGIT_DELTA`; tf32 and fp16 the same best move on >=
    :data:`FP16_MIN_ARGMAX_SHARE` of the positions and max |ΔWDL| <= :data:`FP16_MAX_WDL_DELTA`; int8 the same
    best move on >= :data:`INT8_MIN_ARGMAX_SHARE`."""
    if precision == "fp32":
        return bool(check["max_logit_delta"] <= FP32_MAX_LOGIT_DELTA)
    if precision == "int8":
        return bool(check["argmax_share"] >= INT8_MIN_ARGMAX_SHARE)
    return bool(check["argmax_share"] >= FP16_MIN_ARGMAX_SHARE and check["max_wdl_delta"] <= FP16_MAX_WDL_DELTA)


#: The ``engine.backend`` that asks for an onnxruntime provider.
_BACKEND_OF = {"CPUExecutionProvider": OnnxBackend.CPU, "CUDAExecutionProvider": OnnxBackend.CUDA,
               "TensorrtExecutionProvider": OnnxBackend.TENSORRT}


class BenchInputError(LichessbotError, ValueError):
    """A bad flag of ``bench gpu``."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``lichessbot bench gpu``."""
    add_network_flags(parser)
    parser.add_argument("--compact", action="store_true", help="the network takes the compact input")
    parser.add_argument("--threads", type=int, default=0, help="CPU: batches at once (0: one per core)")
    parser.add_argument("--batches", default=",".join(map(str, BATCH_BUCKETS)),
                        help="comma-separated batch sizes for the network alone (default: the buckets)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per batch size (default 1)")
    parser.add_argument("--search-seconds", type=float, default=3.0, help="seconds per search figure (default 3)")
    parser.add_argument("--games", type=int, default=8, help="games searched at once (default 8)")
    parser.add_argument("--first-nodes", type=int, default=800, help="playouts of the first-move search")
    parser.add_argument("--stop-runs", type=int, default=5, help="searches stopped for stop -> bestmove")
    parser.add_argument("--check-positions", type=int, default=256, help="positions of the check against the CPU")
    parser.add_argument("--precisions", default="",
                        help="comma-separated precisions measured side by side (network alone and check), e.g. "
                        "fp32,tf32,fp16 (default: none beyond --precision)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def check_against_cpu(ev: Evaluator, network: Network, boards: list[chess.Board], *,
                      compact: bool = False) -> dict[str, Any]:
    """``ev``'s outputs on ``boards`` beside onnxruntime's CPU provider in fp32 (the reference), in
    batches of up to 256 run from two threads at once (the bound path under concurrency):
    ``max_logit_delta`` (max |Δ| over every logit), ``argmax_share`` (positions whose highest legal
    logit is the same move), ``max_wdl_delta``, ``positions``. ``compact``: ``ev`` takes the compact input
    (made from the same planes)."""
    ref = Evaluator(network, backend=OnnxBackend.CPU, threads=1, cache_size=0)
    planes = encode_boards(boards, input_format=network.input_format, history_fill=SearchParams().history_fill)[0]
    inputs = compact_of(planes) if compact else planes
    chunks = [inputs[i:i + 256] for i in range(0, len(inputs), 256)] or [inputs]
    got: list[NetOutputs | None] = [None] * len(chunks)

    def worker(k: int) -> None:
        for i in range(k, len(chunks), 2):
            got[i] = ev.run(chunks[i])

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outputs = [g for g in got if g is not None]  # every chunk was run
    logits = np.concatenate([g.logits for g in outputs])
    wdl = np.concatenate([g.wdl for g in outputs])
    want = ref.run(planes)
    legal = encode_boards(boards, input_format=network.input_format, history_fill=SearchParams().history_fill)[1]
    same = 0
    for row, moves in enumerate(legal):
        idx = np.fromiter(moves.values(), dtype=np.int64)
        same += int(idx[np.argmax(logits[row, idx])] == idx[np.argmax(want.logits[row, idx])])
    return {"positions": len(boards), "max_logit_delta": float(np.abs(logits - want.logits).max()),
            "argmax_share": same / len(boards), "max_wdl_delta": float(np.abs(wdl - want.wdl).max())}


def compact_figures(ev: Evaluator, network: Network, boards: list[chess.Board], batch: int,
                    seconds: float) -> dict[str, Any]:
    """The compact input beside the planes: the core's gather per leaf (microseconds, zero-cost network),
    the network alone at ``batch`` positions (evaluations per second, one call at a time, ``ev``'s
    provider) and the bytes of one position."""
    fill = SearchParams().history_fill
    gather = {}
    for kind in ("planes", "compact"):
        core = _core.SearchCore(core_params(SearchParams(), input_format=network.input_format, minibatch_size=256),
                                _core.NNCache(0))
        core.set_position(chess.STARTING_FEN, [], False, False)
        compact_buf = np.zeros((256, COMPACT_BYTES), np.uint8)
        planes_buf = np.zeros((256, 112, 8, 8), np.float32)
        logits, wdl = np.zeros((256, 1858), np.float32), np.tile(np.array([0.3, 0.4, 0.3], np.float32), (256, 1))
        leaves, spent, start = 0, 0.0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            t = time.perf_counter()
            rows = core.gather_compact(compact_buf, None) if kind == "compact" else core.gather(planes_buf, None)
            spent += time.perf_counter() - t
            core.apply(logits[:rows], wdl[:rows])
            leaves += rows
        gather[kind] = round(1e6 * spent / max(leaves, 1), 3)
    planes = encode_boards(boards[:batch], input_format=network.input_format, history_fill=fill)[0]
    network_eps = {}
    for kind in ("planes", "compact"):
        runner = Evaluator(network, backend=_BACKEND_OF.get(ev.provider, OnnxBackend.CPU), threads=1, cache_size=0,
                           precision=ev.precision, device=ev.device, compact=kind == "compact")
        x = compact_of(planes) if kind == "compact" else planes
        calls, elapsed = timed_calls(partial(runner.run, x), seconds)
        network_eps[kind] = round(batch * calls / elapsed, 1)
        runner.close()
    return {"gather_us_per_leaf": gather, "network_evals_per_s": network_eps, "batch": batch,
            "bytes_per_position": {"planes": 112 * 64 * 4, "compact": COMPACT_BYTES}}


def _network_alone(ev: Evaluator, network: Network, boards: list[chess.Board], batches: list[int],
                   seconds: float, inflight: int) -> list[dict[str, Any]]:
    rows = []
    fill = SearchParams().history_fill
    for b in batches:
        planes = encode_boards(boards[:b], input_format=network.input_format, history_fill=fill)[0]
        if ev.compact:
            planes = compact_of(planes)
        calls, elapsed = timed_calls(partial(ev.run, planes), seconds, inflight)
        rows.append({"batch": b, "evals_per_s": round(b * calls / elapsed, 1),
                     "ms_per_call": round(1000 * elapsed * inflight / calls, 3)})
    return rows


def _first_move(ev: Evaluator, nodes: int) -> dict[str, Any]:
    times = []
    for _ in range(2):
        ev.clear_cache()
        with Searcher(ev, SearchParams()) as searcher:
            t = time.perf_counter()
            searcher.search(chess.Board(), VisitsStopper(nodes))
            times.append(round(1000 * (time.perf_counter() - t), 1))
    return {"nodes": nodes, "first_ms": times[0], "again_ms": times[1]}


def _position(k: int) -> chess.Board:
    """Position ``k`` (cyclic) of ``bench search``'s :data:`~lichessbot.diagnostics.bench_search.POSITIONS`."""
    _, fen, moves = POSITIONS[k % len(POSITIONS)]
    board = chess.Board(fen)
    for uci in moves.split():
        board.push_uci(uci)
    return board


def _one_game_nps(service: EvalService, seconds: float) -> float:
    with Searcher(service, SearchParams(), game="one") as searcher:
        handle = searcher.start(_position(1))
        time.sleep(seconds)
        handle.stop()
        result = handle.wait()
    return result.nps


def run(args: argparse.Namespace) -> int:
    """Run the benchmark and print its figures (or JSON). Returns 0, or 1 when the check against the CPU
    is outside the limits. Raises BenchInputError for bad flags, NetworkError for a bad network."""
    try:
        batches = [int(b) for b in args.batches.split(",") if b.strip()]
    except ValueError:
        raise BenchInputError(f"--batches must be comma-separated integers, got {args.batches!r}") from None
    if not batches or min(batches) < 1 or max(batches) > 1024:
        raise BenchInputError("--batches must hold sizes from 1 to 1024")
    if min(args.seconds, args.search_seconds) <= 0 or args.games < 1:
        raise BenchInputError("--seconds and --search-seconds must be > 0 and --games >= 1")
    precisions = [p.strip() for p in args.precisions.split(",") if p.strip()]
    if any(p not in PRECISIONS for p in precisions):
        raise BenchInputError(f"--precisions takes {', '.join(PRECISIONS)}, got {args.precisions!r}")
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    network = load_network(args.network, args.input_format)
    t1 = time.perf_counter()
    ev = Evaluator(network, backend=args.backend, threads=args.threads, precision=args.precision,
                   device=args.device, compact=args.compact)
    t2 = time.perf_counter()
    ev.warm_up()  # every shape the evaluation service can send, as the bot's start-up does
    t3 = time.perf_counter()
    out["network"], out["provider"], out["precision"] = network.name, ev.provider, args.precision
    out["precision_run"], out["device"], out["compact"] = ev.precision_run, args.device, args.compact
    out["providers_failed"] = [{"provider": f.provider, "reason": f.reason} for f in ev.failures]
    out["start"] = {"load_s": round(t1 - t0, 3), "session_s": round(t2 - t1, 3), "warm_up_s": round(t3 - t2, 3),
                    "buckets": ev.buckets, "pinned": ev._runs.pinned,
                    "shapes_planned": sorted(ev.shapes_planned)}
    out["first_move"] = _first_move(ev, args.first_nodes)
    service = EvalService(ev)
    boards = bench_positions(max(max(batches), args.check_positions))
    out["network_alone"] = _network_alone(ev, network, boards, batches, args.seconds, service.concurrency)
    out["search"] = {"one_game_nps": round(_one_game_nps(service, args.search_seconds))}
    games = [_position(k) for k in range(args.games)]
    merged = bench_extra.concurrent_games(ev, games, SearchParams(), args.search_seconds)
    out["search"].update({"games": args.games, "games_nps": merged["total_pps"], "mean_fill": merged["mean_fill"],
                          "mean_games_per_call": merged["mean_games"]})
    service.close()
    out["stop"] = bench_extra.stop_latency(ev, chess.Board(), SearchParams(), runs=args.stop_runs)
    out["compact_input"] = compact_figures(ev, network, boards, min(max(batches), 256), args.seconds)
    check = check_against_cpu(ev, network, boards[:args.check_positions], compact=args.compact)
    ok = within_limits(check, ev.precision_run)
    out["check"] = {**check, "precision": ev.precision_run, "ok": ok}
    out["unplanned_shapes"] = ev.unplanned_shapes() if ev.buckets else None  # without buckets nothing is planned
    ev.close()
    out["precisions"] = []
    for precision in precisions:
        row = _precision_row(network, args, precision, boards, batches)
        ok = ok and row["check"]["ok"]
        out["precisions"].append(row)
    if args.json:
        print(json.dumps(out))
    else:
        _print(out)
    return 0 if ok else 1


def _precision_row(network: Network, args: argparse.Namespace, precision: str, boards: list[chess.Board],
                   batches: list[int]) -> dict[str, Any]:
    """One precision's figures for the side-by-side table: start, network alone, check."""
    t0 = time.perf_counter()
    ev = Evaluator(network, backend=args.backend, threads=args.threads, precision=precision, device=args.device,
                   compact=args.compact, cache_size=0)
    t1 = time.perf_counter()
    ev.warm_up()
    t2 = time.perf_counter()
    rows = _network_alone(ev, network, boards, batches, args.seconds, 1 if ev.info.gpu else ev.concurrency)
    check = check_against_cpu(ev, network, boards[:args.check_positions], compact=args.compact)
    ev.close()
    return {"precision": precision, "precision_run": ev.precision_run, "provider": ev.provider,
            "session_s": round(t1 - t0, 3), "warm_up_s": round(t2 - t1, 3), "network_alone": rows,
            "check": {**check, "ok": within_limits(check, ev.precision_run)}}


def _print(out: dict[str, Any]) -> None:
    s, f = out["start"], out["first_move"]
    print(f"network {out['network']} on {out['provider']} (device {out['device']}, {out['precision_run']}"
          f"{' for ' + out['precision'] if out['precision_run'] != out['precision'] else ''}"
          f"{', compact input' if out['compact'] else ''})")
    for failed in out["providers_failed"]:
        print(f"provider not started: {failed['provider']}: {failed['reason']}")
    print(f"start: load {s['load_s']:.2f} s, session {s['session_s']:.2f} s, warm-up {s['warm_up_s']:.2f} s "
          f"(buckets {'on' if s['buckets'] else 'off'}, pinned buffers {'yes' if s['pinned'] else 'no'}, "
          f"shapes planned {', '.join(map(str, s['shapes_planned'])) or 'none'})")
    print(f"first move: {f['nodes']} playouts in {f['first_ms']:.1f} ms (again: {f['again_ms']:.1f} ms)")
    for r in out["network_alone"]:
        print(f"network alone, batch {r['batch']:5d}: {r['evals_per_s']:12.1f} evals/s  "
              f"{r['ms_per_call']:8.3f} ms/call")
    sr = out["search"]
    print(f"search: one game {sr['one_game_nps']} nps; {sr['games']} games merged {sr['games_nps']} nps "
          f"(mean fill {sr['mean_fill']}, {sr['mean_games_per_call']} games per call)")
    st = out["stop"]
    print(f"stop -> bestmove: min {st['min_ms']} ms, median {st['median_ms']} ms, max {st['max_ms']} ms")
    ci = out["compact_input"]
    g, n, by = ci["gather_us_per_leaf"], ci["network_evals_per_s"], ci["bytes_per_position"]
    print(f"compact input: gather {g['planes']:.2f} -> {g['compact']:.2f} us/leaf; network alone at batch "
          f"{ci['batch']} {n['planes']:.1f} -> {n['compact']:.1f} evals/s; {by['planes']} -> {by['compact']} "
          f"bytes/position")
    unplanned = out["unplanned_shapes"]
    print("shapes sent but not planned at warm-up: " + ("n/a (no batch buckets)" if unplanned is None
                                                        else ", ".join(map(str, unplanned)) or "none"))
    _print_check("check against the CPU (fp32)", out["check"], out["check"]["precision"])
    for row in out["precisions"]:
        rates = ", ".join(f"{r['batch']}: {r['evals_per_s']:.0f}" for r in row["network_alone"])
        print(f"precision {row['precision']} (runs {row['precision_run']} on {row['provider']}): session "
              f"{row['session_s']:.2f} s, warm-up {row['warm_up_s']:.2f} s; evals/s by batch {rates}")
        _print_check("  check against the CPU (fp32)", row["check"], row["precision_run"])


def _print_check(title: str, c: dict[str, Any], precision: str) -> None:
    print(f"{title}, {c['positions']} positions: max |dlogit| {c['max_logit_delta']:.2e}, same best move "
          f"{100 * c['argmax_share']:.1f} %, max |dWDL| {c['max_wdl_delta']:.2e}: "
          f"{'OK' if c['ok'] else 'OUT OF LIMITS'} for {precision}")
