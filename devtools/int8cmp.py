"""``python -m devtools.int8cmp`` (developer-only, from a clone): the int8 copy of a network against its fp32
original, on positions the int8 copy was not calibrated on, and both networks' speed.

    python -m devtools.int8cmp [--network PATH] [--variants default,qdq-s8,qop-u8,...] [--batch 64]
                               [--threads 1,2] [--seconds 1.5] [--rounds 5] [--pgn FILE] [--json]

Accuracy, over the held-out positions (:func:`holdout_boards`: lc0cmp's 24 built-in positions and every
position from ply 4 of lichessbot/data/openings.pgn, less any calibration position; ``--pgn`` adds every
position of more games), each seen as the search sees it (the core's encoder, priors as the softmax of the
legal moves' logits at the policy temperature: :func:`lichessbot.neural.position_eval.evaluate_boards`):

- policy: mean total variation 0.5 * sum |P_int8 - P_fp32| over the legal moves, and top-1 agreement (the
  same move has the highest prior);
- value: mean and max |Q_int8 - Q_fp32|, Q = W - L from the WDL head.

Speed: evaluations per second of each network at ``--batch`` through the evaluator's own path
(:class:`~lichessbot.neural.evaluator.Evaluator`, backend cpu: ``threads`` batches side by side, one
onnxruntime thread each), on positions of seeded random games (``lichessbot bench nn``'s): the median of
``--rounds`` rounds of ``--seconds``, the networks taking turns within each round. The load average
is printed with the figures: they mean nothing on a busy machine.

``default`` is ``engine.precision: int8`` itself (:data:`lichessbot.neural.quantize.DEFAULT_SETTINGS`, through
the cache); the other variants (:data:`VARIANTS`) are quantized here, uncached, to choose the default.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from dataclasses import asdict, dataclass
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import numpy as np
import structlog

from devtools.lc0cmp import DEFAULT_POSITIONS, parse_positions
from lichessbot.config import SearchParams
from lichessbot.diagnostics.bench_nn import bench_positions, timed_calls
from lichessbot.errors import LichessbotError
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import Network, load_network
from lichessbot.neural.position_eval import PositionEval, encode_boards, evaluate_boards
from lichessbot.neural.quantize import (
    DEFAULT_SETTINGS,
    QuantSettings,
    calibration_games,
    calibration_planes,
    calibration_plies,
    quantize_model,
)

__all__ = ["VARIANTS", "Agreement", "agreement", "calibration_epds", "holdout_boards", "main", "run"]

#: Quantization settings to compare (name -> settings); ``default`` is what engine.precision int8 runs.
VARIANTS: dict[str, QuantSettings] = {
    "default": DEFAULT_SETTINGS,
    "qdq-u8": QuantSettings(quant_format="qdq", activations="u8"),
    "qdq-s8": QuantSettings(quant_format="qdq", activations="s8"),
    "qop-u8": QuantSettings(quant_format="qoperator", activations="u8"),
    "qop-s8": QuantSettings(quant_format="qoperator", activations="s8"),
    "qdq-u8-rr": QuantSettings(quant_format="qdq", activations="u8", reduce_range=True),
    "qdq-u8-minmax": QuantSettings(quant_format="qdq", activations="u8", calibration="minmax"),
    "qdq-u8-float-input": QuantSettings(quant_format="qdq", activations="u8", keep_float=("/inputconv",)),
    "qdq-u8-all": QuantSettings(quant_format="qdq", activations="u8", op_types=()),
    "qop-u8-all": QuantSettings(quant_format="qoperator", activations="u8", op_types=()),
    "qdq-s8-all": QuantSettings(quant_format="qdq", activations="s8", op_types=()),
    "qdq-u8-all-float-heads": QuantSettings(quant_format="qdq", activations="u8", op_types=(), float_heads=True),
    "qop-u8-all-float-heads": QuantSettings(quant_format="qoperator", activations="u8", op_types=(), float_heads=True),
}


@dataclass(frozen=True)
class Agreement:
    """Two networks' views of the same positions: ``positions``, ``mean_tv`` (policy total variation over the
    legal moves), ``top1`` (share of positions with the same highest-prior move), ``mean_dq`` and ``max_dq``
    (|ΔQ|, Q = W - L)."""

    positions: int
    mean_tv: float
    top1: float
    mean_dq: float
    max_dq: float


def agreement(ref: list[PositionEval], other: list[PositionEval]) -> Agreement:
    """:class:`Agreement` of ``other`` with ``ref`` (the same positions, in order). Raises ValueError for
    lists of different lengths or positions with other moves."""
    if len(ref) != len(other) or any(a.moves != b.moves for a, b in zip(ref, other)):
        raise ValueError("agreement: the two lists are not the same positions")
    tv = [0.5 * float(np.abs(a.priors - b.priors).sum()) for a, b in zip(ref, other)]
    top = [int(np.argmax(a.priors)) == int(np.argmax(b.priors)) for a, b in zip(ref, other)]
    dq = [abs(a.q - b.q) for a, b in zip(ref, other)]
    return Agreement(len(ref), float(np.mean(tv)), float(np.mean(top)), float(np.mean(dq)), float(np.max(dq)))


def calibration_epds() -> set[str]:
    """The EPD (position, no counters) of every calibration position."""
    out = set()
    for fen, moves in calibration_games():
        board = chess.Board(fen)
        plies = set(calibration_plies(len(moves)))
        for ply, uci in enumerate([*moves, None]):
            if ply in plies:
                out.add(board.epd())
            if uci is not None:
                board.push_uci(uci)
    return out


def _pgn_boards(text: str, first_ply: int) -> list[chess.Board]:
    out = []
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        board = game.board()
        for move in game.mainline_moves():
            board.push(move)
            if board.ply() >= first_ply and not board.is_game_over():
                out.append(board.copy())
    return out


def holdout_boards(pgn: str | None = None) -> list[chess.Board]:
    """The held-out boards (with their move stacks): lc0cmp's built-in positions, every position from ply 4 of
    lichessbot/data/openings.pgn, and every position of ``pgn``'s games (a PGN text), once each, less the
    calibration positions and finished games."""
    openings = Path(str(resources.files("lichessbot") / "data" / "openings.pgn")).read_text(encoding="utf-8")
    boards = [b for _, b in parse_positions(DEFAULT_POSITIONS)] + _pgn_boards(openings, 4)
    if pgn:
        boards += _pgn_boards(pgn, 1)
    seen = calibration_epds()
    out = []
    for board in boards:
        if board.epd() not in seen and not board.is_game_over():
            seen.add(board.epd())
            out.append(board)
    return out


def _variant_network(net: Network, name: str) -> Network:
    """``net`` with its model replaced by the int8 copy of variant ``name`` (runs as "fp32": as it is)."""
    model = quantize_model(net.model, calibration_planes(net.input_format), VARIANTS[name], source=net.source)
    return Network(model=model, input_format=net.input_format, has_wdl=net.has_wdl, has_mlh=net.has_mlh,
                   name=f"{net.name}:{name}", source=net.source)


def _speeds(makers: dict[str, Any], threads: list[int], batch: int, seconds: float, rounds: int,
            input_format: int) -> dict[str, dict[str, float]]:
    """Median evals/s of each network (``makers``: name -> evaluator of ``threads``) by thread count, over
    ``rounds`` rounds of ``seconds`` each; within a round the networks take turns, so that another job on the
    machine slows them alike."""
    planes = encode_boards(bench_positions(batch), input_format=input_format,
                           history_fill=SearchParams().history_fill)[0]
    out: dict[str, dict[str, float]] = {name: {} for name in makers}
    for t in threads:
        evs = {name: make(t) for name, make in makers.items()}
        rates: dict[str, list[float]] = {name: [] for name in makers}
        for _ in range(rounds):
            for name, ev in evs.items():
                count, elapsed = timed_calls(partial(ev.run, planes), seconds, ev.concurrency)
                rates[name].append(batch * count / elapsed)
        for name in makers:
            out[name][str(t)] = round(float(np.median(rates[name])), 1)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Measure and return the report (printed by :func:`main`). Raises LichessbotError for a bad network."""
    structlog.configure(logger_factory=lambda *a: structlog.PrintLogger(open(os.devnull, "w")))  # noqa: SIM115
    net = load_network(args.network, args.input_format)
    threads = [int(t) for t in args.threads.split(",") if t.strip()]
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise LichessbotError(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    pgn = Path(args.pgn).read_text(encoding="utf-8") if args.pgn else None
    boards = holdout_boards(pgn)
    fmt = net.input_format
    report: dict[str, Any] = {"network": args.network, "positions": len(boards), "batch": args.batch,
                              "threads": threads, "cpus": os.cpu_count(), "load": os.getloadavg()[0], "rows": []}

    def fp32_of(t: int, n: Network = net) -> Evaluator:
        return Evaluator(n, backend="cpu", threads=t, cache_size=0)

    def default_of(t: int) -> Evaluator:
        return Evaluator(net, backend="cpu", threads=t, cache_size=0, precision="int8")

    ref = evaluate_boards(fp32_of(1), boards, input_format=fmt)
    makers: dict[str, Any] = {"fp32": fp32_of}
    accuracy = {}
    for name in names:
        makers[name] = default_of if name == "default" else partial(fp32_of, n=_variant_network(net, name))
        accuracy[name] = agreement(ref, evaluate_boards(makers[name](1), boards, input_format=fmt))
    speeds = _speeds(makers, threads, args.batch, args.seconds, args.rounds, fmt)
    report["fp32_evals_per_s"] = speeds["fp32"]
    for name in names:
        speed = speeds[name]
        row = {"variant": name, "settings": VARIANTS[name].tag, **asdict(accuracy[name]), "evals_per_s": speed,
               "speedup": {t: round(speed[t] / speeds["fp32"][t], 2) for t in speed}}
        report["rows"].append(row)
        if not args.json:
            print(_row_text(row), flush=True)
    report["load_after"] = os.getloadavg()[0]
    return report


def _row_text(r: dict[str, Any]) -> str:
    speed = "  ".join(f"{t}t {v:8.1f}/s ({r['speedup'][t]:.2f}x)" for t, v in r["evals_per_s"].items())
    return (f"{r['variant']:<20} TV {r['mean_tv']:.4f}  top1 {r['top1']:.3f}  |dQ| mean {r['mean_dq']:.4f} "
            f"max {r['max_dq']:.4f}  {speed}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", default="../shared/nets/maia-1100.onnx", help="the fp32 network")
    parser.add_argument("--input-format", type=int, default=None, help="lc0 input format of a .onnx file")
    parser.add_argument("--variants", default="default", help=f"comma-separated, of: {', '.join(VARIANTS)}")
    parser.add_argument("--batch", type=int, default=64, help="positions per network call for the speed (64)")
    parser.add_argument("--threads", default="1,2", help="comma-separated evaluator threads for the speed (1,2)")
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds per speed figure and round (1.5)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds, the networks taking turns; the median (5)")
    parser.add_argument("--pgn", default=None, help="a PGN file whose games' positions are added to the held-out set")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def main(argv: list[str] | None = None) -> int:
    """``python -m devtools.int8cmp [flags]`` from a clone (a developer tool: not shipped in the package)."""
    parser = argparse.ArgumentParser(prog="python -m devtools.int8cmp", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        if not args.json:
            print(f"int8 vs fp32: {args.network}, batch {args.batch}, threads {args.threads}", flush=True)
        report = run(args)
    except (LichessbotError, OSError) as err:
        print(f"int8cmp: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report))
    else:
        fp32 = "  ".join(f"{t}t {v:8.1f}/s" for t, v in report["fp32_evals_per_s"].items())
        print(f"fp32 {fp32}; {report['positions']} held-out positions; load {report['load']:.2f} -> "
              f"{report['load_after']:.2f} on {report['cpus']} CPUs", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
