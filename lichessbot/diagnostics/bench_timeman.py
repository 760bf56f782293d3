"""``lichessbot bench timeman``: games of our engine against Stockfish on a clock with added latency.

Our engine runs as ``lichessbot uci`` (a subprocess, through python-chess ``chess.engine``); Stockfish
plays at a low Skill Level. The bench keeps both clocks: each of our moves is charged its measured
time plus ``--latency-ms`` milliseconds (slept before the move is played, as a slow network would), then credited
the increment. It prints per game and in total: losses on time, the share of the clock we used, the
share of our moves stopped early (immediate, smart pruning, early stop) or extended (late stop), and
W/D/L. The stop kinds are read from our engine's ``info string`` lines (the stop reason).
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine

from lichessbot.errors import LichessbotError

__all__ = ["BenchError", "GameStats", "add_arguments", "classify", "play_game", "run"]

EARLY_KINDS = ("immediate", "smart-pruning", "early-stop")
EXTENDED_KINDS = ("late-stop",)
MAX_PLIES = 400  # adjudicated a draw after this many plies (ours)


class BenchError(LichessbotError, RuntimeError):
    """The bench cannot run: no Stockfish, a bad time control, an engine that does not start."""


def classify(info_string: str | None) -> str:
    """The stop kind of a move from our engine's last ``info string``: "early", "extended" or "normal"."""
    text = (info_string or "").lower()
    if any(k in text for k in EXTENDED_KINDS):
        return "extended"
    if any(k in text for k in EARLY_KINDS):
        return "early"
    return "normal"


def parse_tc(text: str) -> tuple[float, float]:
    """``"60+0"`` or ``"180+2"`` -> (base s, increment s).

    Raises:
        BenchError: not of that form.
    """
    try:
        base, _, inc = text.partition("+")
        b, i = float(base), float(inc or 0)
    except ValueError:
        raise BenchError(f"time control {text!r} is not base+inc in seconds, e.g. 60+0") from None
    if b <= 0 or i < 0:
        raise BenchError(f"time control {text!r}: base must be > 0 and inc >= 0 seconds")
    return b, i


@dataclass
class GameStats:
    """One game from our side. Times in seconds."""

    ours_white: bool
    result: str = "*"  # "1-0", "0-1", "1/2-1/2"
    score: float = 0.5  # ours: 1, 0.5, 0
    lost_on_time: bool = False
    won_on_time: bool = False
    clock_share: float = 0.0  # share of (base + increments received) we used
    kinds: list[str] = field(default_factory=list)  # per our move: early / extended / normal
    move_times: list[float] = field(default_factory=list)
    min_clock: float = float("inf")
    reasons: list[str] = field(default_factory=list)
    plies: int = 0


def play_game(ours: chess.engine.SimpleEngine, sf: chess.engine.SimpleEngine, ours_white: bool, base: float,
              inc: float, latency: float, sf_nodes: int | None) -> GameStats:
    """One game from the start position; ``latency`` (s) is added to each of our moves."""
    board = chess.Board()
    clocks = {chess.WHITE: base, chess.BLACK: base}
    us = chess.WHITE if ours_white else chess.BLACK
    st = GameStats(ours_white=ours_white)
    received = base
    for eng in (ours, sf):
        eng.protocol.send_line("ucinewgame")  # python-chess also sends it when the game object changes
    game_id = object()
    while not board.is_game_over(claim_draw=True) and board.ply() < MAX_PLIES:
        mine = board.turn == us
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                   white_inc=inc, black_inc=inc)
        if not mine and sf_nodes:
            limit.nodes = sf_nodes
        eng = ours if mine else sf
        t0 = time.monotonic()
        played = eng.play(board, limit, game=game_id, info=chess.engine.INFO_ALL)
        spent = time.monotonic() - t0
        if mine:
            time.sleep(latency)
            spent += latency
            st.move_times.append(spent)
            reason = played.info.get("string")
            st.reasons.append(reason or "")
            st.kinds.append(classify(reason))
        clocks[board.turn] -= spent
        if clocks[board.turn] <= 0:
            st.lost_on_time, st.won_on_time = mine, not mine
            st.result = "0-1" if board.turn == chess.WHITE else "1-0"
            break
        clocks[board.turn] += inc
        if mine:
            received += inc
            st.min_clock = min(st.min_clock, clocks[us])
        if played.move is None:  # resignation is not expected from either engine
            break
        board.push(played.move)
    else:
        outcome = board.outcome(claim_draw=True)
        st.result = outcome.result() if outcome is not None else "1/2-1/2"
    st.plies = board.ply()
    st.score = {"1-0": 1.0, "0-1": 0.0}.get(st.result, 0.5)
    if not ours_white:
        st.score = 1.0 - st.score
    used = received - max(0.0, clocks[us])
    st.clock_share = used / received if received > 0 else 0.0
    return st


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", default="default", help="our network: 'default' or a .onnx/.pb.gz path")
    parser.add_argument("--tc", action="append", default=None, help="base+inc in seconds (repeatable; default 60+0)")
    parser.add_argument("--games", type=int, default=30, help="games per time control (colours alternate)")
    parser.add_argument("--latency-ms", "--latency", dest="latency", type=float, default=50.0, metavar="MS",
                        help="milliseconds charged to our clock per move (default 50)")
    parser.add_argument("--skill", type=int, default=0, help="Stockfish Skill Level (0-20)")
    parser.add_argument("--sf-nodes", type=int, default=0, help="cap Stockfish's nodes per move (0: no cap)")
    parser.add_argument("--stockfish", default=None, help="Stockfish binary (default: from PATH or /usr/games)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="extra UCI option for our engine (repeatable)")
    parser.add_argument("--engine-cmd", default=None,
                        help="our engine's command line (default: this python -m lichessbot uci)")
    parser.add_argument("--verbose", action="store_true", help="print every move's stop reason")


def _stockfish(path: str | None) -> str:
    found = path or shutil.which("stockfish") or ("/usr/games/stockfish" if Path("/usr/games/stockfish").exists()
                                                  else None)
    if not found:
        raise BenchError("Stockfish not found: install it (apt-get install stockfish) or pass --stockfish")
    return found


def _our_options(engine: chess.engine.SimpleEngine, network: str, extra: list[str]) -> dict[str, str]:
    opts: dict[str, str] = {}
    if network != "default":
        for name in ("WeightsFile", "Network", "Weights"):
            if name in engine.options:
                opts[name] = network
                break
        else:
            raise BenchError(f"our engine has no network option (options: {', '.join(engine.options)})")
    for item in extra:
        name, sep, value = item.partition("=")
        if not sep:
            raise BenchError(f"--option {item!r} is not NAME=VALUE")
        opts[name] = value
    return opts


def run(args: argparse.Namespace) -> int:
    tcs = [parse_tc(t) for t in (args.tc or ["60+0"])]
    if args.games < 1:
        raise BenchError("--games must be at least 1")
    sf_path = _stockfish(args.stockfish)
    if not args.verbose:  # python-chess logs each stderr line of an engine (our structlog lines) as a warning
        logging.getLogger("chess.engine").setLevel(logging.ERROR)
    cmd = args.engine_cmd.split() if args.engine_cmd else [sys.executable, "-m", "lichessbot", "uci"]
    try:
        ours = chess.engine.SimpleEngine.popen_uci(cmd, timeout=120)
        sf = chess.engine.SimpleEngine.popen_uci(sf_path)
    except (OSError, chess.engine.EngineError, TimeoutError) as err:
        raise BenchError(f"an engine did not start: {err}") from None
    try:
        ours.configure(_our_options(ours, args.network, args.option))
        sf.configure({"Skill Level": args.skill, "Threads": 1, "Hash": 16})
        for base, inc in tcs:
            _run_tc(ours, sf, base, inc, args)
    finally:
        ours.quit()
        sf.quit()
    return 0


def _run_tc(ours: chess.engine.SimpleEngine, sf: chess.engine.SimpleEngine, base: float, inc: float,
            args: argparse.Namespace) -> list[GameStats]:
    latency = args.latency / 1000.0
    print(f"== {base:g}+{inc:g}, {args.games} games, latency {args.latency:g} ms, Stockfish Skill Level "
          f"{args.skill}{f', {args.sf_nodes} nodes' if args.sf_nodes else ''}", flush=True)
    games: list[GameStats] = []
    for i in range(args.games):
        g = play_game(ours, sf, i % 2 == 0, base, inc, latency, args.sf_nodes or None)
        games.append(g)
        n = len(g.kinds) or 1
        flag = " LOST ON TIME" if g.lost_on_time else (" (won on time)" if g.won_on_time else "")
        print(f"game {i + 1:3d} ours {'white' if g.ours_white else 'black'} {g.result:7s} plies {g.plies:3d} "
              f"clock used {g.clock_share:5.1%} min clock {g.min_clock:6.2f} s max move "
              f"{max(g.move_times, default=0):5.2f} s early {g.kinds.count('early') / n:5.1%} extended "
              f"{g.kinds.count('extended') / n:5.1%}{flag}", flush=True)
        if args.verbose:
            for t, r in zip(g.move_times, g.reasons):
                print(f"    {t:6.3f} s  {r}")
    _summary(games)
    return games


def _summary(games: list[GameStats]) -> None:
    kinds = [k for g in games for k in g.kinds]
    n = len(kinds) or 1
    w = sum(g.score == 1 for g in games)
    d = sum(g.score == 0.5 for g in games)
    losses = sum(g.score == 0 for g in games)
    print(f"games {len(games)}: W/D/L {w}/{d}/{losses}; losses on time {sum(g.lost_on_time for g in games)}; "
          f"median clock used {statistics.median(g.clock_share for g in games):.1%}; "
          f"moves {len(kinds)}: stopped early {kinds.count('early') / n:.1%}, extended "
          f"{kinds.count('extended') / n:.1%}; lowest clock {min(g.min_clock for g in games):.2f} s", flush=True)
