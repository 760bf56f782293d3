"""Move loss: how much expected score the engine's moves give away, by Stockfish's judgement.

A cheap, paired measure of search settings and networks, steadier than a short match: the engine plays
one move (``go nodes N`` through ``lichessbot uci``) in each of a fixed set of positions, and Stockfish
values the position before and after it. The loss of a move is ``max(0, E(before) - E(after))`` where
``E`` is the expected score (win + draw / 2, 0..1) of the side to move, from Stockfish's centipawn score
through python-chess's ``Score.wdl(model="sf15.1", ply=...)`` (Stockfish 15.1's WDL model, the version
Debian ships). Finished positions score 1, 0.5 or 0 exactly.

Positions come from match PGNs (``lichessbot match``, ``evaluate.py match``): every position from ply 10
on where ``--player`` is to move, deduplicated, shuffled with ``--seed``; ``--skip`` and ``--positions``
pick a slice. Stockfish's values are cached in ``--cache`` (JSON, FEN -> expected score), so a second
setting on the same positions costs only the positions whose move changed.

::

    python training/moveloss.py run --pgn training/runs/eval5/*.pgn --positions 1200 --out base.json
    python training/moveloss.py run --pgn ... --option PolicyTemperature=1.0 --out pt1.json
    python training/moveloss.py compare base.json pt1.json

``compare`` prints the paired mean difference of the per-position losses with its standard error.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import chess
import chess.engine
import chess.pgn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate import STOCKFISH, uci_cmd  # noqa: E402  (the evaluation step's engine commands)

BLUNDER = 0.2  # expected score given away by a move counted as a blunder


def positions_from_pgns(paths: list[str], player: str, n: int, skip: int = 0, seed: int = 1,
                        min_ply: int = 10) -> list[str]:
    """FENs where ``player`` (a PGN White/Black name) is to move, ply >= ``min_ply``, game not over;
    deduplicated, shuffled with ``seed``, then ``[skip : skip + n]``. Files are read in sorted order."""
    fens: list[str] = []
    for path in sorted(paths):
        with open(path, encoding="utf-8") as f:
            while (game := chess.pgn.read_game(f)) is not None:
                if player not in (game.headers.get("White"), game.headers.get("Black")):
                    continue
                ours = chess.WHITE if game.headers.get("White") == player else chess.BLACK
                board = game.board()
                for move in game.mainline_moves():
                    if board.turn == ours and board.ply() >= min_ply and not board.is_game_over():
                        fens.append(board.fen())
                    board.push(move)
    fens = list(dict.fromkeys(fens))
    random.Random(seed).shuffle(fens)
    return fens[skip:skip + n]


def expected_score(sf: chess.engine.SimpleEngine, board: chess.Board, nodes: int) -> float:
    """Expected score (0..1) of the side to move: exact for a finished game, else Stockfish at ``nodes``
    nodes through the sf15.1 WDL model."""
    outcome = board.outcome(claim_draw=False)
    if outcome is not None:
        return 0.5 if outcome.winner is None else float(outcome.winner == board.turn)
    score = sf.analyse(board, chess.engine.Limit(nodes=nodes))["score"].pov(board.turn)
    return score.wdl(model="sf15.1", ply=board.ply()).expectation()


def move_losses(fens: list[str], moves: list[chess.Move], sf_nodes: int, cache: dict[str, float],
                workers: int = 2, stockfish: str = STOCKFISH) -> list[float]:
    """Loss of each move, in points of expected score (0..1), for ``moves[i]`` played in ``fens[i]``;
    Stockfish runs in ``workers`` processes at ``sf_nodes`` nodes per position and ``cache`` (FEN ->
    expected score of the side to move) is read and filled. Raises chess.engine.EngineTerminatedError
    (or OSError) when Stockfish cannot run."""
    local = threading.local()
    engines: list[chess.engine.SimpleEngine] = []
    lock = threading.Lock()

    def value(sf: chess.engine.SimpleEngine, board: chess.Board) -> float:
        fen = board.fen()
        with lock:
            if fen in cache:
                return cache[fen]
        v = expected_score(sf, board, sf_nodes)
        with lock:
            cache[fen] = v
        return v

    def one(item: tuple[str, chess.Move]) -> float:
        fen, move = item
        if not hasattr(local, "sf"):
            local.sf = chess.engine.SimpleEngine.popen_uci(stockfish)
            local.sf.configure({"Threads": 1, "Hash": 64})
            with lock:
                engines.append(local.sf)
        board = chess.Board(fen)
        before = value(local.sf, board)
        board.push(move)
        after = 1.0 - value(local.sf, board)
        return max(0.0, before - after)

    try:
        with ThreadPoolExecutor(workers) as ex:
            return list(ex.map(one, zip(fens, moves)))
    finally:
        for e in engines:
            e.quit()


def engine_moves(fens: list[str], nodes: int, net: str, options: dict[str, str]) -> list[chess.Move]:
    """The move ``lichessbot uci`` plays in each position at ``go nodes`` ``nodes`` (no tree reuse: each
    position is a new game)."""
    with chess.engine.SimpleEngine.popen_uci(uci_cmd(net)) as eng:
        eng.configure(options)
        moves = [eng.play(chess.Board(f), chess.engine.Limit(nodes=nodes), game=object()).move for f in fens]
    assert all(m is not None for m in moves)  # an engine moves in every position that is not over
    return [m for m in moves if m is not None]


def paired(a: list[float], b: list[float]) -> tuple[float, float]:
    """Mean of ``b - a`` over the same positions and its standard error. Raises ValueError when the
    lists differ in length or hold fewer than 2 positions."""
    if len(a) != len(b) or len(a) < 2:
        raise ValueError(f"need two loss lists over the same positions (got {len(a)} and {len(b)})")
    d = [y - x for x, y in zip(a, b)]
    m = sum(d) / len(d)
    sd = math.sqrt(sum((x - m) ** 2 for x in d) / (len(d) - 1))
    return m, sd / math.sqrt(len(d))


def run(args: argparse.Namespace) -> None:
    fens = positions_from_pgns(args.pgn, args.player, args.positions, args.skip, args.seed)
    if not fens:
        raise SystemExit(f"no positions with {args.player!r} to move in {args.pgn}")
    options = dict(o.split("=", 1) for o in args.option)
    moves = engine_moves(fens, args.nodes, args.net, options)
    cache_path = Path(args.cache)
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    losses = move_losses(fens, moves, args.sf_nodes, cache, args.workers)
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    cache_path.write_text(json.dumps(cache))
    mean = sum(losses) / len(losses)
    blunders = sum(x > BLUNDER for x in losses)
    print(f"{len(losses)} positions, {args.nodes} nodes, options {options or 'default'}: "
          f"mean loss {mean:.4f}, blunders (> {BLUNDER}) {blunders}")
    if args.out:
        Path(args.out).write_text(json.dumps({"nodes": args.nodes, "net": args.net, "options": options,
                                              "fens": fens, "moves": [m.uci() for m in moves],
                                              "losses": losses}))


def compare(paths: list[str]) -> None:
    base = json.loads(Path(paths[0]).read_text())
    for p in paths[1:]:
        other = json.loads(Path(p).read_text())
        if other["fens"] != base["fens"]:
            raise SystemExit(f"{p} was measured on other positions than {paths[0]}")
        m, se = paired(base["losses"], other["losses"])
        changed = sum(x != y for x, y in zip(base["moves"], other["moves"]))
        print(f"{p} - {paths[0]}: mean loss {m:+.4f} +/- {se:.4f} (1 s.e.), {changed} moves differ")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--pgn", nargs="+", required=True)
    r.add_argument("--player", default="lichessbot", help="the PGN name whose positions are used")
    r.add_argument("--positions", type=int, default=1200)
    r.add_argument("--skip", type=int, default=0)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--net", default="default")
    r.add_argument("--nodes", type=int, default=400)
    r.add_argument("--option", nargs="*", default=[], help="UCI options, NAME=VALUE")
    r.add_argument("--sf-nodes", type=int, default=300_000)
    r.add_argument("--workers", type=int, default=2, help="Stockfish processes")
    r.add_argument("--cache", default=str(Path(__file__).parent / "runs" / "moveloss-cache.json"))
    r.add_argument("--out", default=None, help="JSON with the positions, moves and losses")
    c = sub.add_parser("compare")
    c.add_argument("results", nargs="+", help="the baseline first")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        run(a)
    else:
        compare(a.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
