"""``lichessbot play``: load the config, check the directories it writes, check the account, build the engine
and run the bot service until SIGTERM or Ctrl-C (the stop policy: :mod:`lichessbot.bot.service.stopping`;
its handlers are set first, so a signal during start-up ends the command at once). ``--health-file``: a
heartbeat for ``lichessbot health`` (:mod:`lichessbot.bot.service.health`). ``lichessbot play --local``: the
same bot on a lichess embedded in the process (:mod:`lichessbot.bot.service.local`), under the same stop policy.
Each line typed on its standard input is an operator command (``help`` lists them; ``quit`` stops as a first
signal does, without the grace period's deadline: :mod:`lichessbot.bot.service.commands`)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from functools import partial

import structlog

from lichessbot.bot.service.account import check_account
from lichessbot.bot.service.attached import engine_figures
from lichessbot.bot.service.commands import read_commands
from lichessbot.bot.service.health import HEALTH_FILE_ENV, Heartbeat
from lichessbot.bot.service.local import add_local_arguments, open_log_file, run_local
from lichessbot.bot.service.service import BotService
from lichessbot.bot.service.stopping import GRACE_ENV, StartupStopped, StopPolicy, grace_default
from lichessbot.bot.service.writable import check_writable, directories_written
from lichessbot.config import BotConfig, load_config
from lichessbot.errors import LichessbotError
from lichessbot.lichess.client import ClientSettings, LichessClient
from lichessbot.logs import configure_logging
from lichessbot.neural.providers import tensorrt_may_run
from lichessbot.thinker.engine import Engine

__all__ = ["add_arguments", "run"]

log = structlog.get_logger("lichessbot.bot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default=None,
                        help="the config file (default: config.yml; with --local: none, the local defaults)")
    parser.add_argument("--upgrade", action="store_true",
                        help="upgrade the account to a BOT account first (irreversible)")
    parser.add_argument("--log-level", default=None, choices=["debug", "info", "warning", "error"],
                        help="the least severe log lines shown (default info; with --local: the log is off the "
                             "terminal unless this is given, which shows a few plain lines and the warnings)")
    parser.add_argument("--log-file", default=None, metavar="FILE",
                        help="also write the log to FILE as JSON lines (appended), at --log-level (default info)")
    parser.add_argument("--stop-grace-period", type=float, default=None, metavar="SECONDS",
                        help="the seconds a supervisor gives the bot to stop (Docker's stop_grace_period; default: "
                        f"${GRACE_ENV}, else none): the games left at SIGTERM are left shortly before it ends")
    parser.add_argument("--health-file", default=os.environ.get(HEALTH_FILE_ENV) or None, metavar="FILE",
                        help=f"keep a heartbeat in FILE for `lichessbot health` (default: ${HEALTH_FILE_ENV})")
    add_local_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``lichessbot play``."""
    try:
        grace = args.stop_grace_period if args.stop_grace_period is not None else grace_default()
    except ValueError as err:
        raise LichessbotError(str(err)) from None
    if grace is not None and not grace > 0:
        raise LichessbotError(f"--stop-grace-period: {grace}: not a positive number of seconds")
    stopper = StopPolicy(grace)
    stopper.install()  # before any file or network call: a signal during start-up ends the command at once
    try:
        if args.local:
            if args.upgrade:
                raise LichessbotError("--upgrade is for a lichess account, not for --local")
            return run_local(args, lambda service, config: _attach(stopper, service, config, local=True))
        return _play(args, stopper)
    except StartupStopped as stopped:
        log.warning("stopped during start-up", signal=str(stopped))
        return 0
    finally:
        stopper.cancel()


def _attach(stopper: StopPolicy, service: BotService, config: BotConfig, local: bool = False) -> None:
    """Signals stop ``service`` from now on, and the operator's commands are read from this terminal (its
    standard input; the answers go to its standard output). ``local``: ``play --local`` (its lichess stops with
    the process)."""
    stopper.attach(service, finish_games=config.quit_after_all_games_finish, resign=config.resign_on_quit,
                   local=local)
    threading.Thread(target=read_commands, args=(sys.stdin, service.commands.run, sys.stdout.write),
                     name="commands", daemon=True).start()


def _tensorrt_may_run(config: BotConfig) -> bool:
    """True when the engine may start onnxruntime's TensorRT provider (it then writes its cache)."""
    return tensorrt_may_run(config.engine.backend)


def _play(args: argparse.Namespace, stopper: StopPolicy) -> int:
    for flag in ("port", "clock", "fen", "color"):
        if getattr(args, flag) is not None:
            raise LichessbotError(f"--{flag} is for --local (playing here); add --local")
    if args.allowed_host:
        raise LichessbotError("--allowed-host is for --local (playing here); add --local")
    if args.show_thinking:
        raise LichessbotError("--show-thinking is for --local (playing here); add --local")
    config = load_config(args.config or "config.yml")  # ConfigError is a LichessbotError: one line, exit status 2
    token = config.resolved_token()
    log_file = open_log_file(args.log_file)
    configure_logging(level=args.log_level or "info", secrets=[token or ""], file=log_file)
    if not token:
        raise LichessbotError("no API token: set LICHESS_BOT_TOKEN or `token:` in the config (or play here with "
                              "`lichessbot play --local`)")
    check_writable(directories_written(config, tensorrt=_tensorrt_may_run(config)))
    client = LichessClient(token, config.url, ClientSettings())
    try:
        account = check_account(client, args.upgrade)
        engine = Engine(config)
        try:
            service = BotService(config, client, engine, account=account, token=token,
                                 engine_figures=partial(engine_figures, engine))
            _attach(stopper, service, config)
            heartbeat = None
            if args.health_file:
                heartbeat = Heartbeat(args.health_file, service.health_budget_s, service.event_stream_silence).start()
            try:
                return service.run()
            finally:
                if heartbeat is not None:
                    heartbeat.stop()
        finally:
            engine.close()
    finally:
        client.close()
