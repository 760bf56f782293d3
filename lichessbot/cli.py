"""The ``lichessbot`` command.

Each subcommand lives in the module of the room that owns it. That module provides
``add_arguments(parser)`` and ``run(args) -> int``; it is imported only when its subcommand runs,
so ``lichessbot uci`` starts without loading the lichess client and ``lichessbot play`` without the
match runner.

Errors meant for the user (:class:`lichessbot.errors.LichessbotError`) are printed as one line on
stderr, with exit status 2 and no traceback. So is a missing onnxruntime (:data:`NO_ONNXRUNTIME`): the
package installs it only with an extra, ``[cpu]`` or ``[gpu]`` (pyproject.toml).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from lichessbot import __version__
from lichessbot.errors import ConfigError, LichessbotError
from lichessbot.logs import configure_logging

#: What a command that needs onnxruntime says when neither install extra brought it (pyproject.toml).
NO_ONNXRUNTIME = ('onnxruntime is not installed: install lichessbot with one of its extras, '
                  'pip install "lichessbot-nn[cpu]" (or "lichessbot-nn[gpu]" for an NVIDIA GPU; '
                  'from a clone: pip install -e ".[cpu]")')

# name -> (module, help). "bench" has its own sub-subcommands, listed in _BENCH.
_COMMANDS: dict[str, tuple[str, str]] = {
    "play": ("lichessbot.bot.service.cli", "run the lichess bot"),
    "check-config": ("lichessbot.bot.setup.check_config", "validate a config file and exit"),
    "health": ("lichessbot.bot.service.health",
               "exit 0 if the running bot's heartbeat says healthy, else 1 (Docker's HEALTHCHECK)"),
    "migrate-config": ("lichessbot.bot.setup.migrate", "convert a lichess-bot config.yml into ours"),
    "uci": ("lichessbot.uci", "speak UCI on stdin/stdout (for GUIs and tournament managers)"),
    "eval": ("lichessbot.neural.eval_cli", "print the raw network's view of a position"),
    "convert": ("lichessbot.neural.convert_cli", "convert lc0 .pb.gz weights to ONNX"),
    "export-triton": ("lichessbot.neural.triton_cli", "write a Triton Inference Server model repository"),
    "match": ("lichessbot.match", "play a match between two UCI engines"),
    "doctor": ("lichessbot.diagnostics.doctor", "print what a bug report needs: versions, GPU, providers, nps"),
    "calibrate": ("lichessbot.strength.calibrate",
                  "measure strength levels against Stockfish's UCI_Elo, write the table"),
}
_BENCH: dict[str, tuple[str, str]] = {
    "nn": ("lichessbot.diagnostics.bench_nn", "network evaluations per second by batch size"),
    "search": ("lichessbot.diagnostics.bench_search", "search nodes per second"),
    "gpu": ("lichessbot.diagnostics.bench_gpu",
            "the GPU path: start-up, network alone per batch, nps, stop, check vs CPU"),
    "timeman": ("lichessbot.diagnostics.bench_timeman",
                "games against lc0 on the same network: time per move by phase, score, time losses"),
    "uci": ("lichessbot.diagnostics.bench_uci",
            "lichessbot uci under python-chess at a fixed move time: wall time and nodes"),
}


def _add(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, module: str, help_: str) -> None:
    p = sub.add_parser(name, help=help_, description=help_)
    p.set_defaults(_module=module)
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name != module:
            raise
        p.set_defaults(_missing=True)
        return
    mod.add_arguments(p)


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The argument parser. Only the module of the chosen subcommand is imported."""
    parser = argparse.ArgumentParser(prog="lichessbot", description=__doc__.splitlines()[0].replace("``", ""))
    parser.add_argument("--version", action="version", version=f"lichessbot {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_) in _COMMANDS.items():
        if name == chosen:
            _add(sub, name, module, help_)
        else:
            sub.add_parser(name, help=help_)
    bench = sub.add_parser("bench", help="benchmarks (nn, search, gpu, timeman, uci)")
    bsub = bench.add_subparsers(dest="bench", required=True, metavar="WHAT")
    rest = [a for a in argv if not a.startswith("-")]
    bchosen = rest[1] if len(rest) > 1 and rest[0] == "bench" else None
    for name, (module, help_) in _BENCH.items():
        if name == bchosen:
            _add(bsub, name, module, help_)
        else:
            bsub.add_parser(name, help=help_)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lichessbot`` console script. Returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(args_list)
    except ModuleNotFoundError as err:
        if (err.name or "").partition(".")[0] != "onnxruntime":
            raise
        print(f"lichessbot: {NO_ONNXRUNTIME}", file=sys.stderr)
        return 2


def _lichess_bot_hint(path: str) -> None:
    """After a config ``play`` refused: when it is a lichess-bot config, where its keys live here and the
    command that converts it (as ``check-config`` says)."""
    from lichessbot.bot.setup.check_config import MIGRATE_HINT, lichess_bot_lines  # noqa: PLC0415 - lazy, as every subcommand

    lines = lichess_bot_lines(path)
    for line in lines:
        print(f"  {line}", file=sys.stderr)
    if lines:
        print(f"  {MIGRATE_HINT}", file=sys.stderr)


def _main(args_list: list[str]) -> int:
    parser = build_parser(args_list)
    args = parser.parse_args(args_list)
    if getattr(args, "_missing", False):
        print(f"lichessbot: '{args.command}' is not available in this build", file=sys.stderr)
        return 2
    # Logs go to stderr (stdout belongs to UCI and to --json output); subcommands may reconfigure.

    configure_logging()
    try:
        mod = importlib.import_module(args._module)
        return int(mod.run(args) or 0)
    except LichessbotError as err:
        print(f"lichessbot: {err}", file=sys.stderr)
        if args.command == "play" and isinstance(err, ConfigError):
            _lichess_bot_hint(getattr(args, "config", None) or "config.yml")
        return 2
    except KeyboardInterrupt:
        return 130

if __name__ == "__main__":
    raise SystemExit(main())
