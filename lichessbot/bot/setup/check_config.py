"""``lichessbot check-config FILE``: validate a config file and exit (0: usable, 2: not). A file with bad
keys gets one line per key (dotted path and reason); a lichess-bot key also says where that setting
lives here (:func:`lichessbot.bot.setup.migrate.hint`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from pydantic import ValidationError

from lichessbot.book import Book
from lichessbot.bot.challenges.handlers import Handlers
from lichessbot.bot.setup.migrate import hint
from lichessbot.config import BotConfig, ConfigError, load_config
from lichessbot.errors import LichessbotError
from lichessbot.neural import registry
from lichessbot.tablebase import Tablebases

__all__ = ["MIGRATE_HINT", "add_arguments", "lichess_bot_lines", "run"]

#: The line that points a lichess-bot config to ``migrate-config`` (check-config, play).
MIGRATE_HINT = "(a lichess-bot config? `lichessbot migrate-config FILE` converts it)"


def lichess_bot_lines(path: str) -> list[str]:
    """The bad keys of the file at ``path``, one line each with where lichess-bot's keys live here, when any
    of them is lichess-bot's; else [] (the file is not a lichess-bot config, or it is fine)."""
    lines = _key_errors(path)
    return lines if any("lichess-bot" in line for line in lines) else []


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the config file (YAML)")


def _key_errors(path: str) -> list[str]:
    """One line per bad key of the YAML file at ``path`` ("dotted.key: reason"), with a hint for
    lichess-bot keys; empty when the file cannot be read as a mapping (load_config says why)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        BotConfig.model_validate(data or {})
    except ValidationError as err:
        lines = []
        for e in err.errors():
            key = ".".join(str(p) for p in e["loc"]) or "(top level)"
            if e["type"] == "extra_forbidden":
                where = hint(key)
                lines.append(f"{key}: unknown key" + (f" (lichess-bot's {key}: {where})" if where else ""))
            else:
                lines.append(f"{key}: {e['msg'].removeprefix('Value error, ')}")
        return lines
    except Exception:  # noqa: BLE001 - unreadable or not YAML: load_config reports it
        return []
    return []


def run(args: argparse.Namespace) -> int:
    """Print ``<file>: OK`` and a summary (exit 0), or one line per bad key on stderr (exit 2)."""
    try:
        config = load_config(args.file)
    except ConfigError:
        lines = _key_errors(args.file)
        if len(lines) <= 1 and not any("lichess-bot" in line for line in lines):
            raise
        print(f"lichessbot: {args.file}: {len(lines)} errors:" if len(lines) > 1 else f"lichessbot: {args.file}:",
              file=sys.stderr)
        for line in lines:
            print(f"  {line}", file=sys.stderr)
        if any("lichess-bot" in line for line in lines):
            print(f"  {MIGRATE_HINT}", file=sys.stderr)
        return 2
    network = config.engine.network
    if network != "default" and not Path(network).exists():
        raise LichessbotError(f"{args.file}: engine.network: file {network} does not exist")
    try:
        registry.check(config.engine.backend)  # the runners' names are the registry's, not the config's
    except ConfigError as err:
        raise ConfigError(f"{args.file}: {err}") from None
    if config.book.enabled:
        Book.from_config(config.book)  # checks every book file (BookError names a bad one)
    if config.tablebases.syzygy:
        tables = Tablebases.from_config(config.tablebases)  # TablebaseError names the key and the directory
        if tables is not None:
            tables.close()
    if config.extra_game_handlers.enabled:
        Handlers(config.extra_game_handlers)  # imports them (ConfigError names the key and the reason)
    c = config.challenge
    token = "set" if config.resolved_token() else "MISSING (set LICHESS_BOT_TOKEN or token:)"
    print(f"{args.file}: OK")
    print(f"  server {config.url}; token {token}")
    print(f"  network {network} on {config.engine.backend}; ponder {config.engine.ponder}; "
          f"book {'on' if config.book.enabled else 'off'}")
    print(f"  challenges: concurrency {c.concurrency}, {', '.join(c.time_controls)}; {', '.join(c.variants)}; "
          f"{', '.join(c.modes)}; bots {'only' if c.only_bot else 'yes' if c.accept_bot else 'no'}")
    if "correspondence" in c.time_controls:
        k = config.correspondence
        print(f"  correspondence: {c.min_days}..{c.max_days} days per move, {k.move_time} s a move, check-in every "
              f"{k.checkin_period} s")
    print(f"  chat: evals to {config.chat.eval_room} every {config.chat.eval_every} moves")
    mm = config.matchmaking
    print(f"  bots: at most {c.max_bot_games_per_day} games a day, {c.games_reserved_for_humans} of "
          f"{c.concurrency} slots kept for humans; {c.max_simultaneous_games_per_user} games at once per user; "
          f"queue {c.queue_wait:g} s ({c.sort_by}, preference {c.preference})")
    overrides = f" or one of {len(mm.overrides)} overrides" if mm.overrides else ""
    print("  matchmaking: " + (f"on, after {mm.challenge_timeout:g} min idle, {mm.challenge_variant} "
                               f"{mm.challenge_mode}{overrides}, declines kept in {mm.decline_file}"
                               if mm.allow_matchmaking else "off"))
    print(f"  PGN: {config.pgn_directory or 'not saved'}; state: {config.state_directory}")
    return 0
