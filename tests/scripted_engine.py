"""A tiny scripted UCI engine for tests: ``python tests/scripted_engine.py [KEY=VALUE ...]``.

It plays a mate in one if there is one, else the capture of the most valuable piece, else a move drawn
from a generator seeded by ``seed`` and the position (so games repeat), and reports ``info depth 1
score cp <material balance>``. Settings (arguments, or UCI options of the same name):

* ``seed=N``            the move choice (default 0)
* ``crash_once=PATH``   exit abruptly on the first ``go`` if PATH does not exist (creating it first),
                        so the restarted process plays on
* ``crash_after=N``     exit abruptly on the N-th ``go`` of every process
  (a crash writes "scripted engine: crashing on purpose at go N" on stderr first: its last words)
* ``illegal_at=N``      answer the N-th ``go`` of the process with an illegal move (a1a1)
* ``sleep=S``           sleep S seconds before each answer (to lose on time)
"""

from __future__ import annotations

import os
import random
import sys
import time

import chess
import chess.polyglot

VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}


def choose(board: chess.Board, seed: int) -> chess.Move:
    moves = sorted(board.legal_moves, key=lambda m: m.uci())
    for m in moves:
        board.push(m)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return m
    captures = [m for m in moves if board.is_capture(m) and board.piece_at(m.to_square)]
    if captures:
        return max(captures, key=lambda m: VALUES[board.piece_at(m.to_square).piece_type])
    rng = random.Random(chess.polyglot.zobrist_hash(board) ^ seed)
    return rng.choice(moves)


def material(board: chess.Board) -> int:
    total = 0
    for piece in board.piece_map().values():
        total += VALUES[piece.piece_type] * (1 if piece.color == board.turn else -1)
    return 100 * total


def crash(gos: int) -> None:
    """Exit abruptly (status 3) after saying why on stderr."""
    print(f"scripted engine: crashing on purpose at go {gos}", file=sys.stderr, flush=True)
    os._exit(3)


def main(argv: list[str]) -> None:
    settings = dict(a.split("=", 1) for a in argv)
    board = chess.Board()
    gos = 0
    out = sys.stdout
    for line in sys.stdin:
        tokens = line.split()
        if not tokens:
            continue
        cmd = tokens[0]
        if cmd == "uci":
            out.write("id name scripted\nid author tests\n")
            for key in ("seed", "crash_once", "crash_after", "illegal_at", "sleep"):
                out.write(f"option name {key} type string default {settings.get(key, '<empty>')}\n")
            out.write("uciok\n")
        elif cmd == "isready":
            out.write("readyok\n")
        elif cmd == "setoption" and "value" in tokens:
            name = " ".join(tokens[tokens.index("name") + 1 : tokens.index("value")])
            settings[name] = " ".join(tokens[tokens.index("value") + 1 :])
        elif cmd == "position":
            if tokens[1] == "startpos":
                board = chess.Board()
                rest = tokens[2:]
            else:
                board = chess.Board(" ".join(tokens[2:8]))
                rest = tokens[8:]
            for uci in rest[1:] if rest[:1] == ["moves"] else []:
                board.push_uci(uci)
        elif cmd == "go":
            gos += 1
            marker = settings.get("crash_once", "<empty>")
            if marker != "<empty>" and not os.path.exists(marker):
                open(marker, "w").close()
                crash(gos)
            if gos == int(settings.get("crash_after", 0) or 0):
                crash(gos)
            time.sleep(float(settings.get("sleep", 0) or 0))
            if gos == int(settings.get("illegal_at", 0) or 0):
                out.write("bestmove a1a1\n")
            else:
                move = choose(board, int(settings.get("seed", 0) or 0))
                out.write(f"info depth 1 score cp {material(board)} nodes 1\nbestmove {move.uci()}\n")
        elif cmd == "quit":
            break
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
