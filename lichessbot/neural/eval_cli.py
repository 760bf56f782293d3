"""``lichessbot eval``: the raw network's view of one position (priors of every legal move, W/D/L, Q).

    lichessbot eval --network PATH (--startpos | --fen FEN) [--moves "e2e4 e7e5 ..."] [--json]
                    [--policy-temperature T]

Priors are at temperature 1 by default (the network's own softmax; the search uses its
``policy_temperature``). Moves are printed in UCI with standard castling (e1g1). JSON output:
``{"moves": {"e2e4": 0.6606, ...}, "wdl": [w, d, l], "q": q}``, priors as probabilities, best first.
The position goes through the search's own encoder and policy map (:mod:`lichessbot.neural.position_eval`).
"""

from __future__ import annotations

import argparse
import json
import sys
import typing

import chess
import structlog

from lichessbot.config import SearchParams
from lichessbot.errors import LichessbotError
from lichessbot.neural.evaluator import PRECISIONS, Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.position_eval import evaluate_boards
from lichessbot.neural.providers import ONNX_BACKENDS, OnnxBackend

__all__ = ["EvalInputError", "add_arguments", "add_network_flags", "board_from_args", "configure_stderr_logging",
           "run"]


class EvalInputError(LichessbotError, ValueError):
    """A position or move given on the command line that cannot be used."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``lichessbot eval``."""
    parser.add_argument("--network", default="default", help="'default', a .onnx or a .pb.gz file")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--startpos", action="store_true", help="start from the standard start position")
    where.add_argument("--fen", help="start from this FEN")
    parser.add_argument("--moves", default="", help='UCI moves played from there, e.g. "e2e4 e7e5"')
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--policy-temperature", type=float, default=1.0,
                        help="softmax temperature of the priors (default 1.0, the network's own softmax; the "
                        f"search uses {SearchParams().policy_temperature})")
    parser.add_argument("--input-format", type=int, default=None,
                        help="lc0 input format of a .onnx file (default 1, classical)")
    parser.add_argument("--backend", choices=ONNX_BACKENDS, default=OnnxBackend.CPU.value,
                        help="onnxruntime execution provider (default cpu)")
    fill = SearchParams().history_fill
    parser.add_argument("--history-fill", choices=typing.get_args(SearchParams.model_fields["history_fill"].annotation),
                        default=fill, help=f"lc0 HistoryFill mode (default {fill}, the search's)")


def add_network_flags(parser: argparse.ArgumentParser, *, precision: bool = True) -> None:
    """The flags that choose the network and how it runs, shared by ``doctor`` and the benchmarks:
    ``--network``, ``--input-format``, ``--backend`` (default auto), ``--device`` and, with ``precision``,
    ``--precision``."""
    parser.add_argument("--network", default="default", help="'default', a .onnx or a .pb.gz file")
    parser.add_argument("--input-format", type=int, default=None, help="lc0 input format of a .onnx file")
    parser.add_argument("--backend", choices=ONNX_BACKENDS, default=OnnxBackend.AUTO.value,
                        help="onnxruntime execution provider (default auto)")
    parser.add_argument("--device", type=int, default=0, help="CUDA device number of the GPU (default 0)")
    if precision:
        parser.add_argument("--precision", choices=PRECISIONS, default="auto",
                            help="network precision (auto: fp16 on a GPU with tensor cores, else fp32)")


def configure_stderr_logging() -> None:
    """Send structlog output to stderr, so stdout holds only the command's result."""
    # sys.stderr is looked up at each call (it may be swapped, e.g. by test capture), not bound once.
    structlog.configure(logger_factory=lambda *args: structlog.PrintLogger(sys.stderr))


def board_from_args(fen: str | None, moves: str) -> chess.Board:
    """The board after ``moves`` from ``fen`` (None: the start position), with its move stack.

    Raises EvalInputError for an invalid FEN or an illegal or malformed move.
    """
    if fen is None:
        board = chess.Board()
    else:
        try:
            board = chess.Board(fen)
        except ValueError as err:
            raise EvalInputError(f"invalid FEN {fen!r}: {err}") from None
        status = board.status() & ~chess.STATUS_INVALID_EP_SQUARE
        if status:
            names = [str(f.name).lower().replace("_", " ") for f in chess.Status if f and status & f]
            raise EvalInputError(f"invalid FEN {fen!r}: {', '.join(names)}")
    for uci in moves.split():
        try:
            board.push_uci(uci)
        except chess.InvalidMoveError:
            raise EvalInputError(f"malformed move {uci!r} (expected UCI such as e2e4 or e7e8q)") from None
        except chess.IllegalMoveError:
            raise EvalInputError(f"illegal move {uci!r} in position {board.fen()}") from None
    return board


def run(args: argparse.Namespace) -> int:
    """Evaluate the position and print it. Returns 0; user errors raise LichessbotError (exit 2)."""
    configure_stderr_logging()
    if args.policy_temperature <= 0:
        raise EvalInputError(f"--policy-temperature must be > 0, got {args.policy_temperature}")
    board = board_from_args(None if args.startpos else args.fen, args.moves)

    net = load_network(args.network, args.input_format)
    ev = Evaluator(net, backend=args.backend, cache_size=0)
    params = SearchParams(policy_temperature=args.policy_temperature, history_fill=args.history_fill)
    (res,) = evaluate_boards(ev, [board], input_format=net.input_format, params=params)
    moves = list(res.moves)
    ranked = sorted(zip(moves, res.priors.tolist()), key=lambda mp: -mp[1])
    if args.json:
        out = {"moves": {m.uci(): round(p, 6) for m, p in ranked}, "wdl": [round(x, 6) for x in res.wdl],
               "q": round(res.q, 6)}
        print(json.dumps(out))
        return 0
    print(f"network {net.name} ({ev.provider}), {board.fen()}")
    print(f"W {res.wdl[0]:.4f}  D {res.wdl[1]:.4f}  L {res.wdl[2]:.4f}  Q {res.q:+.4f}"
          + (f"  M {res.m:.1f}" if res.m is not None else "") + "  (side to move)")
    if not moves:
        print("no legal moves")
    for m, p in ranked:
        print(f"{m.uci():6} {board.san(m):8} {100 * p:7.2f}%")
    return 0
