"""``lichessbot play --local``: the bot plays on the embedded lichess (:mod:`lichessbot.local`) in this process,
on 127.0.0.1, with no token, no config and no internet needed.

The bot reaches the server as it reaches lichess: the same client, event stream, config and challenge rules,
move pipeline, clocks and time manager; only the server is local. Without ``--config`` the bot takes the
defaults of :data:`LOCAL_CONFIG` (it accepts people's challenges from bullet to classical, two games at once);
with one, that file's rules apply, without matchmaking or arenas (no other bot is here). Either way its state and
finished games go to :func:`local_data_dir` unless the config names a ``pgn_directory``; the live status page is
on the next free port. A port in use, a bad ``--fen`` or ``--clock``: one line naming the value, nothing started."""

from __future__ import annotations

import argparse
import errno
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any

import structlog

from lichessbot.bot.service.account import check_account
from lichessbot.bot.service.attached import engine_figures
from lichessbot.bot.service.service import BotService
from lichessbot.bot.service.terminal import GameLines
from lichessbot.config import BotConfig, load_config, parse_config
from lichessbot.config.base import user_data_path
from lichessbot.errors import LichessbotError
from lichessbot.lichess.client import ClientSettings, LichessClient
from lichessbot.local import LocalLichess
from lichessbot.local.challenges import check_fen
from lichessbot.local.model import CLOCK_LIMITS, MAX_INCREMENT, speed_of
from lichessbot.logs import configure_logging
from lichessbot.thinker.engine import Engine

__all__ = ["DEFAULT_PORT", "LOCAL_CONFIG", "add_local_arguments", "local_config", "local_data_dir", "open_log_file",
           "parse_clock", "run_local"]

log = structlog.get_logger("lichessbot.bot")

#: The page's port when ``--port`` is not given (the next free one after it when taken).
DEFAULT_PORT = 8080
#: Ports tried after :data:`DEFAULT_PORT` before giving up.
PORT_TRIES = 20
#: Seconds the start-up line waits for the status page to listen.
ANNOUNCE_WAIT = 10.0
#: The bot's config without ``--config``: people's challenges from bullet to classical, standard, chess960 or a
#: position, casual or rated, two games at once, three takebacks a game (a person learning may want them), and
#: the eval line after each of its moves (the spectator room; the page's PGN has them).
LOCAL_CONFIG: dict[str, Any] = {
    "challenge": {"concurrency": 2, "accept_bot": False, "variants": ["standard", "chess960", "fromPosition"],
                  "time_controls": ["bullet", "blitz", "rapid", "classical"], "modes": ["casual", "rated"]},
    "max_takebacks_accepted": 3,
    "chat": {"eval_every": 1},
}


def add_local_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("playing here (--local)")
    g.add_argument("--local", action="store_true",
                   help="play on a lichess embedded in this process: open the page it prints and play the bot "
                        "(no token, no config, no internet)")
    g.add_argument("--port", type=int, default=None,
                   help=f"--local: the page's port (default {DEFAULT_PORT}, or the next free one)")
    g.add_argument("--host", default="127.0.0.1",
                   help="--local: the address to listen on (default 127.0.0.1: this machine only)")
    g.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="--local: a name the page may be opened under besides localhost, 127.0.0.1 and --host (e.g. "
                        "this machine's name on the network with --host 0.0.0.0); repeat for more. Others get 421")
    g.add_argument("--clock", default=None, help="--local: the page's time control, minutes+increment (e.g. 5+3)")
    g.add_argument("--fen", default=None, help="--local: the page's start position (default: the usual one)")
    g.add_argument("--color", choices=["white", "black", "random"], default=None,
                   help="--local: the colour the page offers you first")
    g.add_argument("--show-thinking", action="store_true",
                   help="--local: show the players the bot's eval, depth and nps during the game (its spectator-room "
                        "eval lines, chat.eval_every); off, a player sees them after the game, as on lichess")


def parse_clock(text: str) -> tuple[float, int]:
    """``"5+3"`` -> (5.0, 3): minutes and seconds of increment, as lichess writes a time control. Raises
    LichessbotError naming the value: not of that form, a base lichess does not offer, an increment over 180 s,
    or UltraBullet (bots may not play it)."""
    try:
        minutes_text, inc_text = text.split("+")
        minutes, inc = float(minutes_text), int(inc_text)
    except ValueError:
        raise LichessbotError(f"--clock {text!r}: write minutes+increment, e.g. 5+3") from None
    if minutes * 60 not in CLOCK_LIMITS:
        raise LichessbotError(f"--clock {text!r}: {minutes:g} minutes is not a lichess clock (0, 1/4, 1/2, 3/4, "
                              "1, 1.5, or whole minutes up to 180)")
    if not 0 <= inc <= MAX_INCREMENT:
        raise LichessbotError(f"--clock {text!r}: the increment must be 0 to {MAX_INCREMENT} seconds")
    if speed_of(minutes * 60, inc) == "ultraBullet":
        raise LichessbotError(f"--clock {text!r}: that is UltraBullet, which lichess does not let bots play")
    return minutes, inc


def open_log_file(path: str | None) -> IO[str] | None:
    """``--log-file``'s file opened for appending, line-buffered (None: no ``path``); it stays open until the
    process ends. Raises LichessbotError naming the path and the reason when it cannot be written."""
    if not path:
        return None
    try:
        return open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - open for the process's life
    except OSError as err:
        raise LichessbotError(f"--log-file {path}: cannot be written ({err.strerror or err})") from None


def local_data_dir() -> Path:
    """Where local mode keeps its state and games, apart from the bot's on lichess: ``local`` in the user's data
    directory (:func:`lichessbot.config.base.user_data_path`: Linux ``$XDG_DATA_HOME/lichessbot/local``,
    ``~/.local/share/lichessbot/local`` when unset; macOS ``~/Library/Application Support/lichessbot/local``;
    Windows ``%LOCALAPPDATA%\\lichessbot\\local``)."""
    return Path(user_data_path()) / "local"


def local_config(path: str | None, data_dir: Path, status_port: int, host: str,
                 allowed_hosts: Sequence[str] = ()) -> BotConfig:
    """The bot's config in local mode: ``path``'s (or :data:`LOCAL_CONFIG`), with its state in ``data_dir``, its
    games there unless the file names a ``pgn_directory``, the status page on ``host``:``status_port`` answering
    the names of ``--allowed-host`` too (``allowed_hosts``, added to the file's ``status.allowed_hosts``), and no
    matchmaking nor arenas. Raises ConfigError (the file's path and the key)."""
    base = load_config(path) if path else parse_config(LOCAL_CONFIG)
    named = path and "pgn_directory" in base.model_fields_set and base.pgn_directory is not None
    pgn = base.pgn_directory if named else str(data_dir / "games")
    return base.model_copy(update={
        "state_directory": str(data_dir), "pgn_directory": pgn,
        "status": base.status.model_copy(update={
            "enabled": True, "host": host, "port": status_port,
            "allowed_hosts": [*base.status.allowed_hosts,
                              *(h.lower() for h in allowed_hosts if h.lower() not in base.status.allowed_hosts)]}),
        "matchmaking": base.matchmaking.model_copy(update={"allow_matchmaking": False}),
        "tournaments": base.tournaments.model_copy(update={"join": [], "teams": []}),
    })


def _bind(token: str, host: str, port: int | None, allowed_hosts: list[str],
          show_thinking: bool = False) -> LocalLichess:
    """The server on ``port`` (None: :data:`DEFAULT_PORT` or the next free one). Raises LichessbotError naming
    the address when it cannot be had. The bot's takeback preference is "always" here, not lila's "never" for
    a BOT account (:class:`~lichessbot.local.server.LocalLichess` ``bot_takeback``), so that the person at the
    page can try the bot's ``max_takebacks_accepted``."""
    ports = [port] if port is not None else list(range(DEFAULT_PORT, DEFAULT_PORT + PORT_TRIES))
    for p in ports:
        try:
            return LocalLichess(token, host=host, port=p, allowed_hosts=allowed_hosts, show_thinking=show_thinking,
                                bot_takeback="always")
        except OSError as err:
            if err.errno == errno.EADDRINUSE and port is None:
                continue
            in_use = err.errno == errno.EADDRINUSE
            why = "is in use by another program" if in_use else f"cannot be used ({err.strerror})"
            raise LichessbotError(f"port {p} on {host} {why}: choose another with --port") from None
    raise LichessbotError(f"ports {ports[0]}-{ports[-1]} on {host} are all in use: choose one with --port")


def _free_port(host: str, after: int) -> int:
    """The first port after ``after`` that ``host`` can listen on (for the status page); 0 (any free port) when none
    is near. Another program may take it before the status page binds it: that page then says so in the log."""
    for p in range(after + 1, after + 1 + PORT_TRIES):
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            try:
                s.bind((host, p))
                return p
            except OSError:
                continue
    return 0


def run_local(args: argparse.Namespace, install_signals: Callable[[BotService, BotConfig], None]) -> int:
    """Entry point of ``lichessbot play --local`` (``install_signals(service, config)``: Ctrl-C's handling, as
    ``lichessbot play``'s)."""
    defaults: dict[str, str] = {}
    if args.clock is not None:
        minutes, inc = parse_clock(args.clock)
        defaults["clock"] = f"{minutes:g}+{inc}"
    if args.fen is not None:
        try:
            defaults["fen"] = check_fen(args.fen)
        except ValueError as err:
            raise LichessbotError(f"--fen: {err}") from None
    if args.color is not None:
        defaults["color"] = args.color
    token = "lip_" + secrets.token_urlsafe(24)
    log_file = open_log_file(args.log_file)
    if args.log_level is None:  # a person playing: plain lines (terminal.py) and the warnings, the log in the file
        configure_logging(level="info" if log_file else "warning", json=False, stream_level="warning",
                          secrets=[token], file=log_file)
    else:
        configure_logging(level=args.log_level, secrets=[token], file=log_file)
    data_dir = local_data_dir()
    # before anything else: a taken port starts nothing
    server = _bind(token, args.host, args.port, args.allowed_host, args.show_thinking)
    try:
        config = local_config(args.config, data_dir, _free_port(args.host, server.port), args.host,
                              args.allowed_host)
        server.page_extra["defaults"] = defaults
        if args.host not in ("127.0.0.1", "::1", "localhost"):
            log.warning("the page and the Board API are open to the network: anyone who reaches this address can "
                        "play the bot and use its chat", url=server.url,
                        answers_to=["localhost", "127.0.0.1", "::1", *([] if args.host in ("0.0.0.0", "::", "")
                                                                          else [args.host]), *args.allowed_host])
        engine = Engine(config)
    except BaseException:
        server.httpd.server_close()
        raise
    server.start()
    # the bot reaches the server on this machine even when it listens on every address
    wildcard = args.host in ("0.0.0.0", "::", "")
    client = LichessClient(token, f"http://127.0.0.1:{server.port}" if wildcard else server.url, ClientSettings())
    try:
        account = check_account(client, upgrade=False)
        service = BotService(config, client, engine, account=account, token=token,
                                 engine_figures=partial(engine_figures, engine))
        install_signals(service, config)
        threading.Thread(target=_announce, args=(server, service, account.username, config), name="announce",
                         daemon=True).start()
        return service.run()
    finally:
        engine.close()
        client.close()
        server.stop()


def _announce(server: LocalLichess, service: BotService, name: str, config: BotConfig) -> None:
    """Once the service runs and its status page listens (or :data:`ANNOUNCE_WAIT` s passed): the status page's
    address to the page, the start-up line (stdout), then a line at each game's start and end
    (:class:`~lichessbot.bot.service.terminal.GameLines`)."""
    deadline = time.monotonic() + ANNOUNCE_WAIT
    while service.status_server is None and time.monotonic() < deadline:
        time.sleep(0.02)
    status = service.status_server.url if service.status_server is not None else None
    server.page_extra["status"] = status
    print(f"lichessbot: play {name} at {server.url} (Board API on the same address, any token; games saved in "
          f"{config.pgn_directory}; live status {status or 'off'}; Ctrl-C stops)", flush=True)
    GameLines(server, lambda line: print(line, flush=True)).start()
