"""``lichessbot match``: play a match between two UCI engines and print W/D/L and Elo with an error bar.

Each engine is given as ``--engine KEY=VALUE ...`` (twice; the first is the one the score is counted for):

* ``cmd=COMMAND`` the command line (split like a shell); absent: our engine, ``python -m lichessbot uci``
* ``name=NAME`` shown in the PGN and the result (default: from the command)
* ``option.NAME=VALUE`` a UCI option, e.g. ``"option.Skill Level=0"`` or ``option.WeightsFile=net.onnx``
* ``tc=10+0.1``, ``nodes=400``, ``movetime=0.05`` this side's own limits (else ``--tc/--nodes/--movetime``)

``--broadcast ROUND_ID`` pushes every game live, move by move, to a lichess broadcast round (create the
broadcast and its round on lichess first; the token, with the ``study:write`` scope, is read from the
environment variable LICHESS_BROADCAST_TOKEN). A failed push never stops the match.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from lichessbot.logs import configure_logging
from lichessbot.match.broadcast import BroadcastPusher
from lichessbot.match.openings import load_openings
from lichessbot.match.runner import run_match
from lichessbot.match.types import (
    Adjudication,
    EngineSpec,
    GameRecord,
    MatchConfig,
    MatchError,
    MatchResult,
    TimeControl,
    our_engine_command,
)

__all__ = ["BROADCAST_TOKEN_ENV", "add_arguments", "failure_lines", "parse_engine", "run"]

#: The environment variable with the token (``study:write``) of ``--broadcast`` (never a command-line
#: argument: other users of the machine can read those).
BROADCAST_TOKEN_ENV = "LICHESS_BROADCAST_TOKEN"


def _tc(tc: str | None, nodes: int | None, movetime: float | None) -> TimeControl | None:
    if tc is None and nodes is None and movetime is None:
        return None
    base = TimeControl.parse(tc) if tc is not None else None
    return TimeControl(
        base=base.base if base else None, inc=base.inc if base else 0.0, nodes=nodes, movetime=movetime
    )


def parse_engine(tokens: list[str]) -> EngineSpec:
    """An :class:`EngineSpec` from ``KEY=VALUE`` tokens (keys in the module docstring).

    Raises:
        MatchError: an unknown key, a token without ``=``, a bad number.
    """
    command: list[str] | None = None
    name = ""
    options: dict[str, str | int | bool] = {}
    tc = nodes = movetime = None
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            raise MatchError(f"engine setting {token!r} is not KEY=VALUE")
        try:
            if key == "cmd":
                command = shlex.split(value)
            elif key == "name":
                name = value
            elif key.startswith("option."):
                options[key[len("option.") :]] = value
            elif key == "tc":
                tc = value
            elif key == "nodes":
                nodes = int(value)
            elif key in ("movetime", "st"):
                movetime = float(value)
            else:
                raise MatchError(f"unknown engine setting {key!r} (cmd, name, option.NAME, tc, nodes, movetime)")
        except ValueError as err:
            if isinstance(err, MatchError):
                raise
            raise MatchError(f"engine setting {token!r}: {err}") from None
    if not command:
        command = our_engine_command()
        name = name or "lichessbot"
    else:
        name = name or Path(command[0]).name
    return EngineSpec(name=name, command=command, options=options, tc=_tc(tc, nodes, movetime))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``lichessbot match``."""
    parser.epilog = __doc__.split("\n\n", 1)[1]
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--engine", nargs="+", action="append", metavar="KEY=VALUE", required=True,
                        help="an engine: cmd=..., name=..., option.NAME=VALUE, tc=, nodes=, movetime= (twice)")
    parser.add_argument("--tc", help="time control of both sides, base+inc in seconds, e.g. 10+0.1")
    parser.add_argument("--nodes", type=int, help="nodes per move for both sides")
    parser.add_argument("--movetime", type=float, help="seconds per move for both sides")
    parser.add_argument("--games", type=int, default=2, help="games in all (each opening twice, colours swapped)")
    parser.add_argument("--openings", help="an .epd or .pgn file of start positions (default: the start position)")
    parser.add_argument("--opening-plies", type=int, help="book plies taken from each PGN opening (default: all)")
    parser.add_argument("--concurrency", type=int, default=1, help="games played at once")
    parser.add_argument("--latency-s", "--latency", dest="latency", type=float, default=0.0, metavar="SECONDS",
                        help="seconds charged to the mover's clock per move (default 0)")
    parser.add_argument("--pgn", default="match.pgn", help="PGN file of all games (default: match.pgn)")
    parser.add_argument("--event", default="lichessbot match", help="PGN Event tag")
    parser.add_argument("--engine-stderr", action="store_true", help="show what the engines write on stderr")
    parser.add_argument("--broadcast", metavar="ROUND_ID",
                        help=f"push each game live to this lichess broadcast round (token: ${BROADCAST_TOKEN_ENV})")
    parser.add_argument("--broadcast-server", default="https://lichess.org", metavar="URL",
                        help="the lichess server of --broadcast (default: https://lichess.org)")
    adj = parser.add_argument_group("adjudication (off by default)")
    adj.add_argument("--resign-score", type=int, help="centipawns: both engines agree on a win this large...")
    adj.add_argument("--resign-moves", type=int, default=3, help="...for this many moves each (default 3)")
    adj.add_argument("--draw-score", type=int, help="centipawns: both engines within +-this...")
    adj.add_argument("--draw-moves", type=int, default=8, help="...for this many moves each (default 8)...")
    adj.add_argument("--draw-after", type=int, default=40, help="...from this full move on (default 40)")
    adj.add_argument("--max-plies", type=int, help="a game still running after this many plies is drawn")


def _progress(total: int) -> Callable[[GameRecord, MatchResult], None]:
    tty = sys.stderr.isatty()

    def on_game(record: GameRecord, result: MatchResult) -> None:
        g = record.pgn.headers
        line = (
            f"[{len(result.games)}/{total}] +{result.wins} ={result.draws} -{result.losses}  "
            f"score {100 * result.score:.1f}%  Elo {result.elo}  | #{record.number} {g['White']} - "
            f"{g['Black']} {record.result} ({record.reason})"
        )
        print(("\r\x1b[K" if tty else "") + line, end="" if tty else "\n", file=sys.stderr, flush=True)

    return on_game


def failure_lines(result: MatchResult) -> list[str]:
    """One line per engine that lost games to an engine failure: the engine, the games, the last failure and
    the engine's last words."""
    lines = []
    for name, games in result.engine_failures().items():
        last = games[-1]
        numbers = ", ".join(str(g.number) for g in games)
        lines.append(f"{name} failed in {len(games)} game{'s' if len(games) > 1 else ''} ({numbers}); the last, "
                     f"game {last.number}: {last.reason}; its last words: {last.engine_error}")
    return lines


def run(args: argparse.Namespace) -> int:
    """Run the match; prints the progress on stderr and the summary on stdout. Returns 0, or 1 when an
    engine failed in a game (crash, ``info string error``, illegal move, no answer): each such engine is
    named on stderr with its last words."""
    if len(args.engine) != 2:
        raise MatchError(f"give exactly two engines with --engine (got {len(args.engine)})")
    first, second = (parse_engine(tokens) for tokens in args.engine)
    if not args.engine_stderr:  # python-chess logs each stderr line of an engine as a warning
        logging.getLogger("chess.engine").setLevel(logging.ERROR)
    if first.name == second.name:
        second = EngineSpec(second.name + " (2)", second.command, second.options, second.tc)
    config = MatchConfig(
        first=first,
        second=second,
        games=args.games,
        tc=_tc(args.tc, args.nodes, args.movetime),
        openings=load_openings(args.openings, plies=args.opening_plies) if args.openings else [],
        concurrency=args.concurrency,
        latency=args.latency,
        adjudication=Adjudication(
            resign_score=args.resign_score, resign_moves=args.resign_moves, draw_score=args.draw_score,
            draw_moves=args.draw_moves, draw_after_move=args.draw_after, max_plies=args.max_plies,
        ),
        pgn_path=args.pgn or None,
        event=args.event,
    )
    pusher: BroadcastPusher | None = None
    if args.broadcast:
        token = os.environ.get(BROADCAST_TOKEN_ENV)
        if not token:
            raise MatchError(f"--broadcast needs a token with the study:write scope in ${BROADCAST_TOKEN_ENV}")
        configure_logging(secrets=[token])  # never written, even by a library's log line
        pusher = BroadcastPusher(args.broadcast_server, token, args.broadcast)
    print(f"{first.name} ({config.tc_of(first)}) vs {second.name} ({config.tc_of(second)}), "
          f"{config.games} games, concurrency {config.concurrency}", file=sys.stderr)
    with pusher if pusher is not None else contextlib.nullcontext():
        result = run_match(config, on_game=_progress(config.games), on_move=pusher.update if pusher else None)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(result.summary())
    if config.pgn_path:
        print(f"  PGN: {config.pgn_path}")
    if pusher is not None:
        print(f"  broadcast: {pusher.pushes} pushes, {pusher.failures} failed"
              + (f", stopped ({pusher.stopped})" if pusher.stopped else ""))
    failures = failure_lines(result)
    for line in failures:
        print(f"lichessbot match: {line}", file=sys.stderr)
    return 1 if failures else 0
