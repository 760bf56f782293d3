"""Measure a network (step 4): mate-in-1 accuracy, raw-policy games, and engine matches against Stockfish.

Subcommands::

    python training/evaluate.py suites                       # (re)build training/mate_in_1.epd, openings.epd
    python training/evaluate.py mate1 [--net default] [--nodes 1 100]
    python training/evaluate.py policy-match --skill 0 --games 20   # 1 node (policy argmax) vs Stockfish
    python training/evaluate.py match --skill 5 --games 20 --nodes 400   # `lichessbot match`, lichessbot uci

* ``mate1``: share of positions of training/mate_in_1.epd (positions from random games in which the side to
  move has a mate in one) where the engine picks a mating move. ``--nodes 1`` is the raw policy argmax
  through the engine's own Evaluator (onnxruntime); larger node counts go through ``lichessbot uci``
  (``go nodes N``).
* ``policy-match``: the raw policy argmax (1 node) against Stockfish at 50 ms per move and the given Skill
  Level, openings from training/openings.epd, colours alternating; prints W/D/L, score and Elo ± 95 %.
* ``match``: the same through the project's match runner (``lichessbot match``) with our engine at
  ``--nodes`` nodes per move.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import chess
import chess.engine
import numpy as np

if TYPE_CHECKING:
    from lichessbot.neural.evaluator import Evaluator

HERE = Path(__file__).resolve().parent
MATE1 = HERE / "mate_in_1.epd"
OPENINGS = HERE / "openings.epd"
STOCKFISH = "/usr/games/stockfish"
PY = sys.executable


def mating_moves(board: chess.Board) -> list[chess.Move]:
    out = []
    for m in board.legal_moves:
        board.push(m)
        if board.is_checkmate():
            out.append(m)
        board.pop()
    return out


def build_suites(n_mate: int = 200, n_open: int = 40, seed: int = 7) -> None:
    """Mate-in-1 positions from random games (captures and checks preferred, so that games get sharp),
    and balanced openings: 6-8 plies sampled from Stockfish's MultiPV (|eval| < 80 cp)."""
    rng = random.Random(seed)
    fens: list[str] = []
    seen = set()
    while len(fens) < n_mate:
        b = chess.Board()
        for _ in range(rng.randint(20, 120)):
            moves = list(b.legal_moves)
            if not moves:
                break
            sharp = [m for m in moves if b.is_capture(m) or b.gives_check(m)]
            b.push(rng.choice(sharp if sharp and rng.random() < 0.5 else moves))
            if b.is_game_over():
                break
            mates = mating_moves(b)
            if mates and len(mates) < 4 and b.fen() not in seen and rng.random() < 0.5:
                seen.add(b.fen())
                fens.append(b.fen())
                break
    MATE1.write_text("".join(f"{f}\n" for f in fens))
    with chess.engine.SimpleEngine.popen_uci(STOCKFISH) as sf:
        opens: list[str] = []
        while len(opens) < n_open:
            b = chess.Board()
            for _ in range(rng.randint(6, 8)):
                infos = sf.analyse(b, chess.engine.Limit(nodes=20000), multipv=4)
                b.push(rng.choice([i["pv"][0] for i in infos if "pv" in i]))
            sc = sf.analyse(b, chess.engine.Limit(nodes=50000))["score"].white().score(mate_score=10000)
            if abs(sc) < 80 and b.epd() not in opens:
                opens.append(b.epd())
    OPENINGS.write_text("".join(f"{e}\n" for e in opens))
    print(f"wrote {MATE1} ({len(fens)} positions) and {OPENINGS} ({len(opens)} openings)")


def policy(evaluator: Evaluator, board: chess.Board) -> tuple[list[chess.Move], np.ndarray]:
    """The network's priors at 1 node: (legal moves, float32 [n] priors in that order, summing to 1), through
    the search's encoder, policy map and policy temperature (``lichessbot.neural.position_eval``)."""
    from lichessbot.neural.position_eval import evaluate_boards  # noqa: PLC0415

    (ev,) = evaluate_boards(evaluator, [board], input_format=evaluator.network.input_format)
    return list(ev.moves), ev.priors


def policy_move(evaluator: Evaluator, board: chess.Board) -> chess.Move:
    """The legal move with the highest prior (1 node)."""
    moves, priors = policy(evaluator, board)
    best: chess.Move = moves[int(priors.argmax())]
    return best


def make_evaluator(net: str) -> Evaluator:
    from lichessbot.neural.evaluator import Evaluator  # noqa: PLC0415
    from lichessbot.neural.network import load_network  # noqa: PLC0415

    return Evaluator(load_network(net), backend="cpu", threads=1)


def uci_cmd(net: str) -> list[str]:
    return [PY, "-m", "lichessbot", "uci", "--network", net]


def mate1(net: str, nodes_list: list[int]) -> None:
    fens = MATE1.read_text().split("\n")[:-1]
    for nodes in nodes_list:
        ok = 0
        if nodes == 1:
            ev = make_evaluator(net)
            for f in fens:
                b = chess.Board(f)
                ok += policy_move(ev, b) in mating_moves(b)
        else:
            with chess.engine.SimpleEngine.popen_uci(uci_cmd(net)) as eng:
                for f in fens:
                    b = chess.Board(f)
                    ok += eng.play(b, chess.engine.Limit(nodes=nodes)).move in mating_moves(b)
        print(f"mate-in-1 at {nodes} node(s): {ok}/{len(fens)} = {100 * ok / len(fens):.1f} %", flush=True)


def elo_summary(w: int, d: int, l: int) -> str:
    """Score and logistic Elo difference with its 95 % error bar (``lichessbot.match.elo``, docs/match.md)."""
    from lichessbot.match.elo import elo_estimate  # noqa: PLC0415

    est = elo_estimate(w, d, l)
    return f"+{w} ={d} -{l}  score {100 * est.score:.1f} %  Elo {est}"


def policy_match(net: str, skill: int, games: int, movetime: float) -> None:
    ev = make_evaluator(net)
    opens = OPENINGS.read_text().split("\n")[:-1]
    w = d = l = 0
    with chess.engine.SimpleEngine.popen_uci(STOCKFISH) as sf:
        sf.configure({"Skill Level": skill, "Threads": 1, "Hash": 16})
        for g in range(games):
            board = chess.Board(opens[(g // 2) % len(opens)])
            ours = chess.WHITE if g % 2 == 0 else chess.BLACK
            sf.configure({"Clear Hash": None})
            while not board.is_game_over(claim_draw=True) and board.ply() < 400:
                if board.turn == ours:
                    board.push(policy_move(ev, board))
                else:
                    move = sf.play(board, chess.engine.Limit(time=movetime)).move
                    assert move is not None  # Stockfish always moves in a position that is not over
                    board.push(move)
            res = board.result(claim_draw=True)
            if res == "1/2-1/2" or res == "*":
                d += 1
            elif (res == "1-0") == (ours == chess.WHITE):
                w += 1
            else:
                l += 1
            print(f"[{g + 1}/{games}] {elo_summary(w, d, l)}", file=sys.stderr, flush=True)
    print(f"policy (1 node) vs Stockfish skill {skill} at {movetime * 1000:.0f} ms: {elo_summary(w, d, l)}")


def match(net: str, skill: int, games: int, nodes: int, movetime: float, concurrency: int, pgn: str) -> int:
    cmd = [PY, "-m", "lichessbot", "match",
           "--engine", "name=lichessbot", f"option.WeightsFile={net}", f"nodes={nodes}",
           "--engine", f"cmd={STOCKFISH}", f"name=sf-skill{skill}", f"option.Skill Level={skill}",
           "option.Threads=1", f"movetime={movetime}",
           "--games", str(games), "--openings", str(OPENINGS), "--concurrency", str(concurrency), "--pgn", pgn]
    print(" ".join(cmd), flush=True)
    return subprocess.call(cmd)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("suites")
    p.add_argument("--openings", type=int, default=50, help="balanced openings to build (each played twice)")
    p = sub.add_parser("mate1")
    p.add_argument("--net", default="default")
    p.add_argument("--nodes", type=int, nargs="+", default=[1])
    for name in ("policy-match", "match"):
        p = sub.add_parser(name)
        p.add_argument("--net", default="default")
        p.add_argument("--skill", type=int, default=5)
        p.add_argument("--games", type=int, default=20)
        p.add_argument("--movetime", type=float, default=0.05, help="Stockfish seconds per move")
        if name == "match":
            p.add_argument("--nodes", type=int, default=400)
            p.add_argument("--concurrency", type=int, default=1)
            p.add_argument("--pgn", default=str(HERE / "runs" / "match.pgn"))
    a = ap.parse_args(argv)
    if a.cmd == "suites":
        build_suites(n_open=a.openings)
    elif a.cmd == "mate1":
        mate1(a.net, a.nodes)
    elif a.cmd == "policy-match":
        policy_match(a.net, a.skill, a.games, a.movetime)
    else:
        return match(a.net, a.skill, a.games, a.nodes, a.movetime, a.concurrency, a.pgn)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
