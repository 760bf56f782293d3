"""``lichessbot play``: load the config, check the directories it writes, check the account, build the engine
and run the bot service until SIGTERM or Ctrl-C (the stop policy: :mod:`lichessbot.bot.service.stopping`;
its handlers are set first, so a signal during start-up ends the command at once). ``--health-file``: a
heartbeat for ``lichessbot health`` (:mod:`lichessbot.bot.service.health`)."""

from __future__ import annotations

import argparse
import os

import structlog

from lichessbot.bot.service.account import check_account
from lichessbot.bot.service.health import HEALTH_FILE_ENV, Heartbeat
from lichessbot.bot.service.service import BotService
from lichessbot.bot.service.stopping import GRACE_ENV, StartupStopped, StopPolicy, grace_default
from lichessbot.bot.service.writable import check_writable, directories_written
from lichessbot.config import BotConfig, load_config
from lichessbot.engine.providers import select_providers
from lichessbot.errors import LichessbotError
from lichessbot.lichess.client import ClientSettings, LichessClient
from lichessbot.logs import configure_logging
from lichessbot.thinker.engine import Engine

__all__ = ["add_arguments", "run"]

log = structlog.get_logger("lichessbot.bot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default="config.yml", help="the config file (default: config.yml)")
    parser.add_argument("--upgrade", action="store_true",
                        help="upgrade the account to a BOT account first (irreversible)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                        help="the least severe log lines shown (default info)")
    parser.add_argument("--stop-grace-period", type=float, default=None, metavar="SECONDS",
                        help="the seconds a supervisor gives the bot to stop (Docker's stop_grace_period; default: "
                        f"${GRACE_ENV}, else none): the games left at SIGTERM are left shortly before it ends")
    parser.add_argument("--health-file", default=os.environ.get(HEALTH_FILE_ENV) or None, metavar="FILE",
                        help=f"keep a heartbeat in FILE for `lichessbot health` (default: ${HEALTH_FILE_ENV})")


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
        return _play(args, stopper)
    except StartupStopped as stopped:
        log.warning("stopped during start-up", signal=str(stopped))
        return 0
    finally:
        stopper.cancel()


def _tensorrt_may_run(config: BotConfig) -> bool:
    """True when the engine may start onnxruntime's TensorRT provider (it then writes its cache)."""
    return config.engine.backend != "triton" and "TensorrtExecutionProvider" in select_providers(config.engine.backend)


def _play(args: argparse.Namespace, stopper: StopPolicy) -> int:
    config = load_config(args.config)  # ConfigError is a LichessbotError: one line, exit status 2
    token = config.resolved_token()
    configure_logging(level=args.log_level, secrets=[token or ""])
    if not token:
        raise LichessbotError("no API token: set LICHESS_BOT_TOKEN or `token:` in the config")
    check_writable(directories_written(config, tensorrt=_tensorrt_may_run(config)))
    client = LichessClient(token, config.url, ClientSettings())
    try:
        account = check_account(client, args.upgrade)
        engine = Engine(config)
        try:
            service = BotService(config, client, engine, account=account, token=token)
            stopper.attach(service, finish_games=config.quit_after_all_games_finish, resign=config.resign_on_quit)
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
