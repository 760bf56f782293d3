"""``lichessbot play``: load the config, check the account, build the engine and run the bot service until
SIGTERM or Ctrl-C (once: no new games, finish the running ones; twice: exit at once, the games left running
on lichess unless ``resign_on_quit``; ``quit_after_all_games_finish: false``: the first signal exits).
``lichessbot play --local``: the same bot on a lichess embedded in the process (:mod:`lichessbot.bot.service.local`).
Each line typed on its standard input is an operator command (``help`` lists them; ``quit`` stops as Ctrl-C does).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

import structlog

from lichessbot.bot.service.account import check_account
from lichessbot.bot.service.commands import read_commands
from lichessbot.bot.service.local import add_local_arguments, run_local
from lichessbot.bot.service.service import BotService
from lichessbot.config import BotConfig, load_config
from lichessbot.errors import LichessbotError
from lichessbot.lichess.client import ClientSettings, LichessClient
from lichessbot.logs import configure_logging
from lichessbot.thinker.engine import Engine

__all__ = ["add_arguments", "run"]

log = structlog.get_logger("lichessbot.bot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default=None,
                        help="the config file (default: config.yml; with --local: none, the local defaults)")
    parser.add_argument("--upgrade", action="store_true",
                        help="upgrade the account to a BOT account first (irreversible)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                        help="the least severe log lines shown (default info)")
    add_local_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``lichessbot play``."""
    if args.local:
        if args.upgrade:
            raise LichessbotError("--upgrade is for a lichess account, not for --local")
        return run_local(args, _install_signals)
    for flag in ("port", "clock", "fen", "color"):
        if getattr(args, flag) is not None:
            raise LichessbotError(f"--{flag} is for --local (playing here); add --local")
    config = load_config(args.config or "config.yml")  # ConfigError is a LichessbotError: one line, exit status 2
    token = config.resolved_token()
    configure_logging(level=args.log_level, secrets=[token or ""])
    if not token:
        raise LichessbotError("no API token: set LICHESS_BOT_TOKEN or `token:` in the config (or play here with "
                              "`lichessbot play --local`)")
    client = LichessClient(token, config.url, ClientSettings())
    account = check_account(client, args.upgrade)
    engine = Engine(config)
    service = BotService(config, client, engine, account=account, token=token)
    _install_signals(service, config)
    try:
        return service.run()
    finally:
        engine.close()
        client.close()


def _install_signals(service: BotService, config: BotConfig) -> None:
    """SIGINT and SIGTERM: once, no new games and the running ones finish (``quit_after_all_games_finish``);
    twice, exit at once. And the operator's commands from this terminal (its standard input; the answers go to
    its standard output: lichessbot/bot/service/commands.py)."""
    presses = 0

    def on_signal(signum: int, _frame: Any) -> None:
        nonlocal presses
        presses += 1
        leave = "resigned or aborted" if config.resign_on_quit else "left running on lichess"
        if presses == 1 and config.quit_after_all_games_finish:
            log.warning("stopping: no new games, no matchmaking; running games are finished (signal again: exit, "
                        f"games {leave})", signal=signal.Signals(signum).name, games=len(service.games))
            service.stop()
        else:
            log.warning(f"quitting: running games {leave}", signal=signal.Signals(signum).name,
                        games=len(service.games))
            service.quit()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    threading.Thread(target=read_commands, args=(sys.stdin, service.commands.run, sys.stdout.write),
                     name="commands", daemon=True).start()
