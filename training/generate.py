"""Generate training games labelled by Stockfish (step 1 of the training pipeline).

Each worker process plays games with Stockfish on both sides and writes one JSON line per finished game
to ``<out>/raw/w<worker>-<shard>.jsonl``. A line holds the game's moves from the standard start position
(UCI strings) and, for every recorded position, the Stockfish labels:

* ``policy``: the MultiPV moves and their probabilities, ``p_i ∝ exp((s_i - s_best) / T)`` with ``s`` the
  MultiPV score in centipawns from the side to move's view (mates as ±(10000 - 300·moves)) and ``T`` =
  ``--policy-temp`` centipawns;
* ``wdl``: Stockfish's own win/draw/loss estimate for the side to move (``UCI_ShowWDL``), per mille;
* the game result (``result``: "1-0", "0-1", "1/2-1/2") is stored once per game; train.py blends it in.

Variety: the first ``--random-plies`` plies (2..8, drawn per game) are random legal moves or moves sampled
from Stockfish's MultiPV at a high temperature (recorded too: ``--record-from 0``, so the start position with
its empty history is in the data; a fraction ``--fen-start`` of the games forgets its history after them and
is stored from that FEN, the ``"fen"`` key, as a match opening would be played); later moves are sampled
from the MultiPV at
``--play-temp`` centipawns during the first 30 plies and greedy after that, except that with probability
``--blunder`` a uniformly random legal move is played (so that positions with hanging pieces appear).

Our own engine's games (``--net PATH --net-games F``): in a fraction F of the games one side, drawn at
random, is the network itself after the opening phase. It plays from its policy (1 node, through the
engine's own Evaluator): sampled from the priors during the first 30 plies, the top prior after that. With
``--net-nodes N`` (N > 1) that side is our whole engine instead: the search core (``lichessbot.search.Searcher``,
PUCT, tree reuse within the game) at N nodes per move, the move sampled from the root visits at temperature
1 during the first 30 plies (lc0's ``--temperature``), the most visited move after that. Every
position is still labelled by Stockfish, so the value head sees the positions its own mistakes lead to, and
what they are worth. Such games carry ``"net": "white"`` or ``"black"`` (and ``"net_nodes"``).

Resumable: a worker counts the games already in its files and continues with the next seed. Stop it with
Ctrl-C or SIGTERM at any time; only whole games are written.

Usage::

    python training/generate.py --workers 2 --minutes 35 --nodes 4000 --blunder 0.05 --fen-start 0.2 --prefix x --seed 7
    python training/generate.py --workers 1 --minutes 60 --net lichessbot/data/default.onnx --net-games 1 --prefix z
    python training/generate.py --workers 1 --minutes 45 --net default --net-games 1 --net-nodes 200 --prefix t
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import random
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import chess
import chess.engine

if TYPE_CHECKING:
    from lichessbot.neural.evaluator import Evaluator
    from lichessbot.search import Searcher

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaluate  # noqa: E402  (the network's 1-node policy, shared with the evaluation step)

MATE_CP = 10000


def score_cp(score: chess.engine.PovScore, turn: chess.Color) -> float:
    """Centipawns from ``turn``'s view; a mate in n moves counts as ±(10000 - 300·min(n, 20)).

    Mates are spread 300 cp apart per move so that the policy target prefers the shortest mate.
    """
    s = score.pov(turn)
    mate = s.mate()
    if mate is None:
        cp = s.score()
        assert cp is not None  # not a mate: a centipawn score
        return float(max(-5000, min(5000, cp)))
    if mate > 0:
        return float(MATE_CP - 300 * min(mate, 20))
    return float(-MATE_CP + 300 * min(-mate, 20))


def softmax_probs(scores: list[float], temp: float) -> list[float]:
    best = max(scores)
    ex = [math.exp(max(-50.0, (s - best) / temp)) for s in scores]
    tot = sum(ex)
    return [e / tot for e in ex]


def analyse(engine: chess.engine.SimpleEngine, board: chess.Board, nodes: int, multipv: int
            ) -> tuple[list[chess.Move], list[float], tuple[int, int, int] | None]:
    """MultiPV analysis: list of (move, cp from STM view), best first, and STM's WDL per mille or None."""
    infos = engine.analyse(board, chess.engine.Limit(nodes=nodes), multipv=multipv)
    moves: list[chess.Move] = []
    scores: list[float] = []
    wdl: tuple[int, int, int] | None = None
    for info in infos:
        pv = info.get("pv")
        if not pv or "score" not in info:
            continue
        moves.append(pv[0])
        scores.append(score_cp(info["score"], board.turn))
        if wdl is None and "wdl" in info:
            w = info["wdl"].pov(board.turn)
            wdl = (w.wins, w.draws, w.losses)
    return moves, scores, wdl


def search_move(searcher: Searcher, board: chess.Board, nodes: int, rng: random.Random, sample: bool) -> chess.Move:
    """Our engine's move at ``nodes`` nodes (the search core; the tree is reused within a game): sampled with
    probability proportional to the root visits N if ``sample`` (temperature 1, lc0's ``--temperature`` with
    TempVisitOffset 0), else the best move."""
    from lichessbot.timeman import VisitsStopper  # noqa: PLC0415

    res = searcher.search(board, VisitsStopper(nodes))
    if not sample or not res.root_moves:
        return res.best_move
    visited = [rm for rm in res.root_moves if rm.n > 0]
    if not visited:
        return res.best_move
    return rng.choices([rm.move for rm in visited], [rm.n for rm in visited])[0]


def net_move(evaluator: Evaluator, board: chess.Board, rng: random.Random, sample: bool,
             searcher: Searcher | None = None, nodes: int = 1) -> chess.Move:
    """The network's move: at 1 node sampled from its priors if ``sample``, else the top prior; with a
    ``searcher`` and ``nodes`` > 1, the search's move (``search_move``)."""
    if searcher is not None and nodes > 1:
        return search_move(searcher, board, nodes, rng, sample)
    if not sample:
        return evaluate.policy_move(evaluator, board)
    moves, priors = evaluate.policy(evaluator, board)
    move: chess.Move = rng.choices(moves, [float(p) for p in priors])[0]
    return move


def play_game(engine: chess.engine.SimpleEngine, rng: random.Random, args: argparse.Namespace,
              evaluator: Evaluator | None = None, searcher: Searcher | None = None) -> dict[str, Any]:
    board = chess.Board()
    net_color = None
    if evaluator is not None and rng.random() < args.net_games:
        net_color = rng.choice([chess.WHITE, chess.BLACK])
    if searcher is not None:
        searcher.new_game()
    start_fen = None
    random_plies = rng.randint(2, args.random_plies)
    fen_start = rng.random() < args.fen_start
    positions = []
    adjudicated = None
    big = 0
    n = 0  # plies played since the standard start position (the first random_plies are the opening phase)
    while not board.is_game_over(claim_draw=True) and n < args.max_plies:
        if fen_start and n == random_plies and start_fen is None:
            # forget the history: the rest of the game is recorded from this FEN, as a match opening would be
            start_fen = board.fen()
            board = chess.Board(start_fen)
        moves, scores, wdl = analyse(engine, board, args.nodes, args.multipv)
        if not moves:
            break
        if n >= args.record_from and (start_fen is not None or not fen_start):
            probs = softmax_probs(scores, args.policy_temp)
            positions.append({
                "ply": len(board.move_stack),
                "moves": [m.uci() for m in moves],
                "probs": [round(p, 4) for p in probs],
                "wdl": list(wdl) if wdl else None,
                "cp": scores[0],
            })
        # choose the move to play
        if n < random_plies:
            if rng.random() < 0.5:
                move = rng.choice(list(board.legal_moves))
            else:
                move = rng.choices(moves, softmax_probs(scores, 150.0))[0]
        elif board.turn == net_color and evaluator is not None:  # net_color is None without a network
            move = net_move(evaluator, board, rng, sample=n < 30, searcher=searcher, nodes=args.net_nodes)
        elif rng.random() < args.blunder:
            move = rng.choice(list(board.legal_moves))
        elif n < 30 + random_plies:
            move = rng.choices(moves, softmax_probs(scores, args.play_temp))[0]
        else:
            move = moves[0]
        # adjudicate long-decided games to save time: |eval| > 2000 cp for 8 plies
        big = big + 1 if abs(scores[0]) > 2000 else 0
        if big >= 8 and abs(scores[0]) <= 5000:
            stm_wins = scores[0] > 0
            adjudicated = "1-0" if (stm_wins == (board.turn == chess.WHITE)) else "0-1"
            break
        board.push(move)
        n += 1
    if adjudicated:
        result = adjudicated
    elif board.is_game_over(claim_draw=True):
        result = board.result(claim_draw=True)
    else:
        result = "1/2-1/2"
    game = {"moves": [m.uci() for m in board.move_stack], "result": result, "positions": positions}
    if start_fen is not None:
        game["fen"] = start_fen
    if net_color is not None:
        game["net"] = "white" if net_color == chess.WHITE else "black"
        if args.net_nodes > 1:
            game["net_nodes"] = args.net_nodes
    return game


def _interrupt(signum: int, frame: object) -> NoReturn:
    raise KeyboardInterrupt


def worker(idx: int, args: argparse.Namespace) -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    raw = Path(args.out) / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    done = 0
    for f in raw.glob(f"{args.prefix}{idx}-*.jsonl"):
        with f.open() as fh:
            done += sum(1 for _ in fh)
    shard = len(list(raw.glob(f"{args.prefix}{idx}-*.jsonl")))
    engine = chess.engine.SimpleEngine.popen_uci(args.stockfish)
    engine.configure({"Threads": 1, "Hash": 16, "UCI_ShowWDL": True})
    evaluator = evaluate.make_evaluator(args.net) if args.net else None
    searcher = None
    if evaluator is not None and args.net_nodes > 1:
        from lichessbot.search.searcher import Searcher  # noqa: PLC0415

        searcher = Searcher(evaluator)
    deadline = time.time() + args.minutes * 60
    n_pos = 0
    try:
        g = done
        while g < args.games_per_worker and time.time() < deadline:
            path = raw / f"{args.prefix}{idx}-{shard:03d}.jsonl"
            shard += 1
            with path.open("a") as out:
                for _ in range(args.shard_games):
                    if g >= args.games_per_worker or time.time() >= deadline:
                        break
                    rng = random.Random(args.seed * 1_000_003 + idx * 10_000_019 + g)
                    game = play_game(engine, rng, args, evaluator, searcher)
                    out.write(json.dumps(game, separators=(",", ":")) + "\n")
                    out.flush()
                    n_pos += len(game["positions"])
                    g += 1
                    if g % 20 == 0:
                        print(f"worker {idx}: {g} games, {n_pos} new positions", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        engine.quit()
        if searcher is not None:
            searcher.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).parent / "data"))
    ap.add_argument("--stockfish", default="/usr/games/stockfish")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--games", type=int, default=100_000, help="total games over all workers")
    ap.add_argument("--minutes", type=float, default=40.0, help="stop after this many minutes")
    ap.add_argument("--nodes", type=int, default=4000, help="Stockfish nodes per position")
    ap.add_argument("--multipv", type=int, default=5)
    ap.add_argument("--policy-temp", type=float, default=60.0, help="centipawns")
    ap.add_argument("--play-temp", type=float, default=40.0, help="centipawns")
    ap.add_argument("--random-plies", type=int, default=8)
    ap.add_argument("--blunder", type=float, default=0.03)
    ap.add_argument("--record-from", type=int, default=0,
                    help="record positions from this ply on (0: all, including the randomised opening)")
    ap.add_argument("--fen-start", type=float, default=0.0,
                    help="fraction of games recorded from a FEN after the opening phase, without history")
    ap.add_argument("--prefix", default="w", help="shard file prefix (a new prefix starts a new series)")
    ap.add_argument("--net", default=None, help="network for our own engine's games (ONNX, .pb.gz or 'default')")
    ap.add_argument("--net-games", type=float, default=0.0, help="fraction of games where the network plays a side")
    ap.add_argument("--net-nodes", type=int, default=1,
                    help="nodes per move of the network's side (1: its policy; more: the search core)")
    ap.add_argument("--max-plies", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shard-games", type=int, default=100, help="games per shard file")
    args = ap.parse_args(argv)
    args.games_per_worker = math.ceil(args.games / args.workers)
    if args.workers == 1:
        worker(0, args)
        return 0
    procs = [mp.Process(target=worker, args=(i, args)) for i in range(args.workers)]
    for p in procs:
        p.start()
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        for p in procs:
            p.join()
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: let every worker finish its file cleanly
        for p in procs:
            p.terminate()
            p.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
