"""The ``lichessbot uci`` command: its arguments, and the loop that reads UCI commands on stdin."""

from __future__ import annotations

import argparse
import importlib
import sys

from lichessbot.config import load_config
from lichessbot.errors import LichessbotError
from lichessbot.logs import configure_logging
from lichessbot.neural import registry
from lichessbot.neural.providers import ONNX_BACKENDS
from lichessbot.online import OnlineMoves
from lichessbot.uci.engine import UciEngine

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", default=None,
                        help="the network (WeightsFile): 'default', a .onnx or an lc0 .pb.gz; loaded at start, "
                        "and a network that does not load ends the command with status 2")
    parser.add_argument("--backend", default=None, choices=registry.names(),
                        help="where the network runs: a registered runner's name (Backend; default: auto, the best "
                        "onnxruntime provider available)")
    parser.add_argument("--config", default=None,
                        help="a config file whose online_moves section (and token, for lichess's explorer) the "
                        "engine asks before searching (docs/online.md); nothing else of it is read")
    parser.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"),
                        help="lowest level of the log lines written on stderr (default: warning)")


def run(args: argparse.Namespace) -> int:
    """Speak UCI on stdin/stdout until ``quit`` or end of input. Logs go to stderr (``--log-level``).

    Raises:
        LichessbotError: ``--network`` does not load (before anything is written on stdout; exit status 2).
        lichessbot.config.ConfigError: ``--config`` cannot be read (a LichessbotError: exit status 2).
    """
    configure_logging(level=getattr(args, "log_level", None) or "warning")
    if (getattr(args, "backend", None) or "auto") in ONNX_BACKENDS:
        # before a GUI sees "uciok": a bare install (no [cpu]/[gpu] extra) fails here with ModuleNotFoundError,
        # which lichessbot.cli.main turns into one line naming the extra (NO_ONNXRUNTIME), not at the first go
        importlib.import_module("onnxruntime")
    engine = UciEngine()
    if getattr(args, "network", None):
        engine.apply("engine.network", args.network)
    if getattr(args, "backend", None):
        engine.apply("engine.backend", args.backend)
    if getattr(args, "network", None):
        try:
            engine.load_network()
        except Exception as err:  # noqa: BLE001 - any reason the file is not a network: fatal here
            raise LichessbotError(f"--network {args.network}: the network does not load: {err}") from None
    online = None
    if getattr(args, "config", None):
        config = load_config(args.config)  # ConfigError: one line, exit status 2
        token = config.resolved_token()
        configure_logging(level=getattr(args, "log_level", None) or "warning", secrets=[token or ""])
        online = OnlineMoves(config.online_moves, token=token, lichess=config.url)
        engine.use_online(online)
    try:
        for line in sys.stdin:
            if not engine.handle(line):
                break
        else:
            engine.handle("quit")
    finally:
        if online is not None:
            online.close()
    return 0
