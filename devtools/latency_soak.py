"""``python -m devtools.latency_soak``: the bot with its real engine and time manager against the test server
(:mod:`devtools.lila`: the embedded lichess with fault injection) with network latency each way, at bullet clocks
without increment.

The fake server (on 127.0.0.1) answers every request ``--latency`` ms late (the way up: a move is played when it
arrives, and lila charges the bot's clock until then, MovePlayer's ``botLag`` compensating nothing) and sends every
streamed line as late (the way down: a game state's clocks are computed when it is sent), each with a uniform
jitter of +-``--jitter`` of it. The opponent is Stockfish at a low Skill Level on a few hundred nodes, thinking 50-250
ms a move, and resigns after ``--resign-after`` plies (as ``devtools.soak``'s opponents). The wire alone
limits a game: with ``L`` ms each way a move costs at least ``2 L`` ms of our clock, so a ``B``-second clock without
increment holds at most ``B / 2L`` moves, whatever the engine does (the report prints that bound beside each game).
The bot is the real service (games, client, time manager) with the engine on
``--network``, one thread; it learns its move overhead from lichess's clocks (timeman.learn_overhead).

Printed per game: the clock, the latency, the result, the plies, the share of our clock used (of the base plus the
increments received), our lowest clock seen by the time manager, and the overhead the game learned; then the time
losses and the share of the clock used in the long games (``--long`` plies and more). Exit status 1 on a time loss.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

import chess
import chess.engine

from devtools.lila import BotRun, FakeLichess, resign_after
from devtools.lila.game import FakeGame
from devtools.lila.players import Opponent
from lichessbot.config import parse_config
from lichessbot.errors import LichessbotError
from lichessbot.logs import configure_logging
from lichessbot.thinker.engine import Engine

__all__ = ["SoakGame", "add_arguments", "main", "run", "soak_game", "stockfish_opponent"]


@dataclass
class SoakGame:
    """One game of the soak, from the bot's side. Times in seconds unless said.

    Attributes:
        tc: "base+inc"; latency_ms: one way; status, result: lichess's (``outoftime``, ``mate``, ...), "1-0"...
        lost_on_time: the bot's flag fell; plies: of the game; clock_share: our clock used of base + increments
        received; min_clock_ms: our lowest clock when a search started; overhead: the "move overhead" log line
        of the game (estimate_ms, samples, median_ms, max_ms).
    """

    tc: str
    latency_ms: float
    status: str
    result: str
    lost_on_time: bool
    plies: int
    clock_share: float
    min_clock_ms: int | None
    overhead: dict[str, Any]


def stockfish_opponent(path: str, skill: int, nodes: int) -> Opponent:
    """Stockfish at ``skill`` (0-20) on ``nodes`` nodes a move; resigns nothing, mates when it can."""
    engine = chess.engine.SimpleEngine.popen_uci(path)
    engine.configure({"Skill Level": skill, "Threads": 1, "Hash": 16})

    def move(board: chess.Board) -> chess.Move | None:
        return engine.play(board, chess.engine.Limit(nodes=nodes)).move

    move.engine = engine  # type: ignore[attr-defined]  # closed by the caller
    return move


def _log_lines(buf: io.StringIO, game_id: str, start: int = 0) -> list[dict[str, Any]]:
    lines = []
    for line in buf.getvalue()[start:].splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            if d.get("game_id") == game_id:
                lines.append(d)
    return lines


def soak_game(server: FakeLichess, bot: BotRun, buf: io.StringIO, base: float, inc: float, latency_ms: float,
              bot_white: bool, opponent: Opponent, timeout: float) -> SoakGame:
    """Play one game and read its figures from the server and the bot's log (``buf``: only what is logged from
    now on, since a new server numbers its games afresh and a game id may come again)."""
    start = len(buf.getvalue())
    game: FakeGame = bot.play(timeout=timeout, limit=int(base), increment=int(inc), opponent=opponent,
                              bot_color="white" if bot_white else "black",
                              speed="bullet" if base + 40 * inc < 180 else None)
    ours = game.wtime if bot_white else game.btime
    our_moves = (game.ply() + (1 if bot_white else 0)) // 2
    received = base * 1000 + inc * 1000 * max(0, our_moves - 1)
    deadline = time.monotonic() + 10  # the game's thread logs what it learned as it ends
    lines = _log_lines(buf, game.id, start)
    while not any(d["event"] == "move overhead" for d in lines) and time.monotonic() < deadline:
        time.sleep(0.1)
        lines = _log_lines(buf, game.id, start)
    overhead = next((d for d in lines if d["event"] == "move overhead"), {})
    charged = [d["overhead_ms"] for d in lines if d["event"] == "timeman.budget" and d.get("clocked")]
    clocks = [d["time_ms"] for d in lines if d["event"] == "timeman.budget" and d.get("time_ms") is not None]
    lost = game.status == "outoftime" and game.winner is not None and game.winner != game.bot_color
    result = {"white": "1-0", "black": "0-1"}.get(game.winner or "", "1/2-1/2")
    return SoakGame(tc=f"{base:g}+{inc:g}", latency_ms=latency_ms, status=game.status, result=result,
                    lost_on_time=lost, plies=game.ply(), clock_share=(received - max(0, ours)) / received,
                    min_clock_ms=min(clocks) if clocks else None,
                    overhead={**{k: overhead.get(k) for k in ("estimate_ms", "samples", "median_ms", "max_ms")},
                              "charged_ms": charged})


def _line(g: SoakGame) -> str:
    o = g.overhead
    base = float(g.tc.split("+")[0])
    bound = int(base * 1000 / (2 * g.latency_ms)) if g.tc.endswith("+0") else None
    return (f"{g.tc:>6} latency {g.latency_ms:4.0f} ms (the wire alone: <= {bound} moves) {g.status:>10} "
            f"{g.result:7s} plies {g.plies:3d} clock used "
            f"{g.clock_share:6.1%} lowest {g.min_clock_ms} ms; overhead learned {o.get('estimate_ms')} ms (median "
            f"{o.get('median_ms')}, max {o.get('max_ms')}, {o.get('samples')} moves)"
            f"{' LOST ON TIME' if g.lost_on_time else ''}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", required=True, help="the bot's network (.onnx or .pb.gz)")
    parser.add_argument("--tc", default="30+0,60+0,180+0", help="clocks BASE+INC in seconds, comma-separated")
    parser.add_argument("--latency", default="100,250", help="one-way latencies in ms, comma-separated")
    parser.add_argument("--jitter", type=float, default=0.25, help="+- this share of the latency (uniform)")
    parser.add_argument("--games", type=int, default=2, help="games per clock and latency (colours alternate)")
    parser.add_argument("--long", type=int, default=80, help="plies from which a game counts as long")
    parser.add_argument("--stockfish", default=shutil.which("stockfish") or "/usr/games/stockfish")
    parser.add_argument("--skill", type=int, default=0, help="the opponent's Stockfish Skill Level")
    parser.add_argument("--sf-nodes", type=int, default=500, help="the opponent's nodes a move")
    parser.add_argument("--resign-after", type=int, default=160, help="the opponent resigns after this many plies")
    parser.add_argument("--jsonl", default=None, help="append each game's figures to this file")
    parser.add_argument("--seed", type=int, default=1)


def run(args: argparse.Namespace) -> int:
    try:
        tcs = [tuple(float(x) for x in tc.split("+")) for tc in args.tc.split(",")]
        latencies = [float(x) for x in args.latency.split(",")]
    except ValueError:
        raise LichessbotError(f"--tc {args.tc!r} / --latency {args.latency!r}: BASE+INC,... and MS,...") from None
    if not os.access(args.stockfish, os.X_OK):
        raise LichessbotError(f"--stockfish {args.stockfish!r}: not an executable")
    rng = random.Random(args.seed)
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    cfg = parse_config({"engine": {"network": args.network, "backend": "cpu", "threads": 1}})
    games: list[SoakGame] = []
    print(f"latency soak: {args.network}, clocks {args.tc}, latency {args.latency} ms each way +-{args.jitter:.0%}, "
          f"{args.games} games each, opponent Stockfish Skill {args.skill} at {args.sf_nodes} nodes, load "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    with Engine(cfg) as engine:
        for latency in latencies:
            lo, hi = latency * (1 - args.jitter) / 1000, latency * (1 + args.jitter) / 1000
            with FakeLichess(keepalive=1.0, opponent_delay=lambda: rng.uniform(0.05, 0.25)) as server:
                server.latency = (lo, hi)
                server.stream_latency = (lo, hi)
                with BotRun(server, engine, {"challenge": {"concurrency": 1}}) as bot:
                    for base, inc in tcs:
                        for k in range(args.games):
                            opp = stockfish_opponent(args.stockfish, args.skill, args.sf_nodes)
                            try:
                                g = soak_game(server, bot, buf, base, inc, latency, k % 2 == 0,
                                              resign_after(args.resign_after, opp), timeout=4 * base + 600)
                            finally:
                                opp.engine.quit()  # type: ignore[attr-defined]
                            games.append(g)
                            if args.jsonl:
                                with open(args.jsonl, "a", encoding="utf-8") as fh:
                                    fh.write(json.dumps(vars(g)) + "\n")
                            print(_line(g), flush=True)
    losses = sum(g.lost_on_time for g in games)
    long_games = [g for g in games if g.plies >= args.long]
    share = f"{statistics.median(g.clock_share for g in long_games):.1%}" if long_games else "-"
    print(f"games {len(games)}: time losses {losses}; long games (>= {args.long} plies) {len(long_games)}, median "
          f"share of the clock used {share}", flush=True)
    return 1 if losses else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m devtools.latency_soak [flags]`` from a clone (a developer tool: not shipped in the package)."""
    parser = argparse.ArgumentParser(prog="python -m devtools.latency_soak", description=__doc__.splitlines()[0])
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except LichessbotError as err:
        print(f"latency_soak: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
