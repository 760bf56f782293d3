"""``lichessbot check-config FILE``: validate a config file and exit (0: usable, 2: not, with the reason)."""

from __future__ import annotations

import argparse
from pathlib import Path

from lichessbot.config import ConfigError, load_config
from lichessbot.errors import LichessbotError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the config file (YAML)")


def run(args: argparse.Namespace) -> int:
    """Print ``<file>: OK`` and a summary, or raise a one-line error naming the key and the reason."""
    try:
        config = load_config(args.file)
    except ConfigError as err:
        raise LichessbotError(str(err)) from None
    network = config.engine.network
    if network != "default" and not Path(network).exists():
        raise LichessbotError(f"{args.file}: engine.network: file {network} does not exist")
    if config.book.enabled:
        from lichessbot.book import Book  # checks every book file (BookError names a bad one)

        Book.from_config(config.book)
    if config.tablebases.syzygy:
        from lichessbot.tablebase import Tablebases  # TablebaseError names the key and the directory

        Tablebases.from_config(config.tablebases).close()
    c = config.challenge
    token = "set" if config.resolved_token() else "MISSING (set LICHESS_BOT_TOKEN or token:)"
    print(f"{args.file}: OK")
    print(f"  server {config.url}; token {token}")
    print(f"  network {network} on {config.engine.backend}; ponder {config.engine.ponder}; "
          f"book {'on' if config.book.enabled else 'off'}")
    print(f"  challenges: concurrency {c.concurrency}, {', '.join(c.time_controls)}; {', '.join(c.variants)}; "
          f"{', '.join(c.modes)}; bots {'only' if c.only_bot else 'yes' if c.accept_bot else 'no'}")
    print(f"  PGN: {config.pgn_directory or 'not saved'}")
    return 0
