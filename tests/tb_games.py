"""Endgames from random starting positions, our tablebase root probe against Stockfish.

``python -m tests.tb_games [--games 10] [--nodes 20000]`` plays ``--games`` games of each of KQ v K,
KR v K and KBN v K (we have the pieces, a win for the side to move) and of drawn KP v K (we have the
lone king), and prints the results. Needs Stockfish; the tables are tests/data/syzygy.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine

from lichessbot.tablebase import Tablebases

TABLES = Path(__file__).resolve().parent / "data" / "syzygy"

#: Our pieces (white, to move) and the wanted WDL for white: wins, and KP v K draws held by the king.
ENDGAMES: dict[str, tuple[str, str, int]] = {
    "KQvK": ("KQ", "K", 2),
    "KRvK": ("KR", "K", 2),
    "KBNvK": ("KBN", "K", 2),
    "KvKP": ("K", "KP", 0),  # we defend with the lone king in a drawn position
}


@dataclass
class GameResult:
    endgame: str
    fen: str
    result: str  # "1-0", "0-1", "1/2-1/2"
    reason: str
    plies: int
    max_clock: int  # highest halfmove clock reached (plies)


def random_position(rng: random.Random, tb: Tablebases, ours: str, theirs: str, wdl: int) -> chess.Board:
    """A random legal position, white (us) to move, whose WDL for white is ``wdl``."""
    import chess.syzygy

    probe = chess.syzygy.open_tablebase(str(TABLES))
    try:
        while True:
            board = chess.Board(None)
            squares = rng.sample(chess.SQUARES, len(ours) + len(theirs))
            ok = True
            for sym, color, sq in [(s, chess.WHITE, 0) for s in ours] + [(s, chess.BLACK, 0) for s in theirs]:
                sq = squares.pop()
                piece = chess.Piece.from_symbol(sym if color == chess.WHITE else sym.lower())
                if piece.piece_type == chess.PAWN and chess.square_rank(sq) in (0, 7):
                    ok = False
                board.set_piece_at(sq, piece)
            board.turn = chess.WHITE
            if not ok or not board.is_valid() or board.is_game_over():
                continue
            if probe.probe_wdl(board) == wdl:
                return board
    finally:
        probe.close()


def play(tb: Tablebases, sf: chess.engine.SimpleEngine, board: chess.Board, endgame: str, nodes: int,
         max_plies: int = 400) -> GameResult:
    """Play from ``board``: white by the tables' root move, black by Stockfish (``nodes`` per move)."""
    start = board.fen()
    max_clock = 0
    while not board.is_game_over(claim_draw=True) and board.ply() < max_plies:
        if board.turn == chess.WHITE:
            found = tb.root_move(board)
            move = found.move if found is not None else next(iter(board.legal_moves))
        else:
            move = sf.play(board, chess.engine.Limit(nodes=nodes)).move
        board.push(move)
        max_clock = max(max_clock, board.halfmove_clock)
    outcome = board.outcome(claim_draw=True)
    result = outcome.result() if outcome is not None else "1/2-1/2"
    reason = outcome.termination.name if outcome is not None else "max plies"
    return GameResult(endgame, start, result, reason, board.ply(), max_clock)


def run(games: int, nodes: int, seed: int = 21, stockfish: str = "/usr/games/stockfish",
        endgames: list[str] | None = None) -> list[GameResult]:
    tb = Tablebases([str(TABLES)], search_probe=False)
    rng = random.Random(seed)
    out = []
    with chess.engine.SimpleEngine.popen_uci(stockfish) as sf:
        sf.configure({"Threads": 1, "Hash": 16})
        for name in endgames or list(ENDGAMES):
            ours, theirs, wdl = ENDGAMES[name]
            for _ in range(games):
                board = random_position(rng, tb, ours, theirs, wdl)
                out.append(play(tb, sf, board, name, nodes))
    tb.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--stockfish", default="/usr/games/stockfish")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    results = run(args.games, args.nodes, args.seed, args.stockfish)
    for r in results:
        print(f"{r.endgame:6} {r.result:8} {r.reason:22} plies {r.plies:3} max clock {r.max_clock:3}  {r.fen}")
    for name, (_, _, wdl) in ENDGAMES.items():
        rs = [r for r in results if r.endgame == name]
        wanted = "1-0" if wdl == 2 else "1/2-1/2"
        print(f"{name}: {sum(r.result == wanted for r in rs)}/{len(rs)} {'won' if wdl == 2 else 'drawn'}")
    print(f"{len(results)} games in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
