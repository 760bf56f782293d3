"""Write tests/data/search_equivalence.json: root visit counts of the Python PUCT search.

The Python search (lichessbot/search/searcher.py and tree.py at commit 6498496, deleted once the Rust
core replaced it) searched each position below with minibatch 1 and the deterministic evaluator of
tests/equivalence.py; tests/search/test_search_equivalence.py checks that the Rust core gives the same root
visit counts. To regenerate, check out that commit, take tests/equivalence.py from commit 2923088 (its
``evaluate`` is what the Python search called) and run from the repository root:

    python tests/data/make_search_equivalence.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import chess

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

S = "startpos"
NAJDORF = "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6"
# (label, fen or "startpos", moves, chess960)
POSITIONS = [
    ("start", S, "", False),
    ("e4", S, "e2e4", False),
    ("ruy lopez", S, "e2e4 e7e5 g1f3 b8c6 f1b5", False),
    ("najdorf", S, NAJDORF, False),
    ("qgd", S, "d2d4 d7d5 c2c4 e7e6 b1c3 g8f6 c1g5 f8e7", False),
    ("italian", S, "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 c2c3 g8f6 d2d4", False),
    ("kings indian", S, "d2d4 g8f6 c2c4 g7g6 b1c3 f8g7 e2e4 d7d6 g1f3 e8g8", False),
    ("french advance ep", S, "e2e4 e7e6 d2d4 d7d5 e4e5 c7c5", False),
    ("ep capture available", "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", "", False),
    ("ep after move", S, "e2e4 g8f6 e4e5 d7d5", False),
    ("black ep", "rnbqkbnr/pppp1ppp/8/8/3Pp3/5N2/PPP1PPPP/RNBQKB1R b KQkq d3 0 3", "", False),
    ("promotion", "8/P5k1/8/8/8/8/6K1/8 w - - 0 1", "", False),
    ("promotion with capture", "3r4/4P1k1/8/8/8/8/6K1/8 w - - 0 1", "", False),
    ("black promotion", "8/8/8/8/8/1k6/p7/4K3 b - - 0 1", "", False),
    ("underpromotion to knight mates", "8/8/8/8/8/8/k1K1p3/3R4 b - - 0 1", "", False),
    ("castling both", "r3k2r/pppq1ppp/2np1n2/2b1p1B1/2B1P1b1/2NP1N2/PPPQ1PPP/R3K2R w KQkq - 4 8", "", False),
    ("castling white kingside only", "r3k2r/8/8/8/8/8/8/R3K2R w Kk - 0 1", "", False),
    ("castling black queenside", "r3k2r/8/8/8/8/8/8/R3K2R b Qq - 0 1", "", False),
    ("castle through check", "r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1", "", False),
    ("knight shuffle once", S, "g1f3 g8f6 f3g1 f6g8", False),
    ("knight shuffle twice", S, "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8", False),
    ("repetition middlegame", S, NAJDORF + " f1e2 e7e5 d4b3 f8e7 b3d4 e7f8 d4b3 f8e7", False),
    ("rule50 97", "8/8/4k3/8/8/4K3/4R3/8 w - - 97 120", "", False),
    ("rule50 99 black", "8/8/4k3/8/8/4K3/4R3/8 b - - 99 120", "", False),
    ("rule50 98 with pawn", "8/5k2/8/4P3/8/4K3/8/8 w - - 98 130", "", False),
    ("mate in 1 back rank", "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "", False),
    ("mate in 1 black", "3r2k1/8/8/8/8/8/5PPP/6K1 b - - 0 1", "", False),
    ("mate in 1 smothered", "6rk/6pp/8/6N1/8/8/8/6K1 w - - 0 1", "", False),
    ("mate in 2 rooks", "1r4k1/5ppp/8/8/8/8/4RPPP/4R1K1 w - - 0 1", "", False),
    ("mate in 2 queen", "6k1/5p1p/6p1/8/8/8/1Q3PPP/6K1 w - - 0 1", "", False),
    ("stalemate trap", "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", "", False),
    ("perpetual", "6k1/5pp1/8/8/8/r7/1r6/4Q2K w - - 0 1", "", False),
    ("kq vs k", "8/8/8/4k3/8/8/8/3QK3 w - - 0 1", "", False),
    ("kr vs k", "8/8/8/4k3/8/8/8/R3K3 w - - 10 40", "", False),
    ("insufficient after capture", "8/8/4k3/8/3n4/4K3/8/8 w - - 0 60", "", False),
    ("kbn vs k", "8/8/8/4k3/8/8/8/2B1KN2 w - - 0 1", "", False),
    ("pawn endgame", "8/5pk1/6p1/8/5P2/6P1/6K1/8 w - - 0 40", "", False),
    ("rook endgame", "8/8/5k2/R7/5P2/4K3/r7/8 b - - 3 50", "", False),
    ("middlegame 1", "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQ - 2 9", "", False),
    ("middlegame 2", "r2q1rk1/1b2bppp/p2p1n2/1p2p3/4P3/1BN2N2/PPP2PPP/R2QR1K1 b - - 1 12", "", False),
    ("middlegame 3", "2rq1rk1/pp1bppbp/3p1np1/4n3/3NP3/1BN1BP2/PPPQ2PP/2KR3R w - - 9 12", "", False),
    ("tactics hanging queen", "rnb1kbnr/pppp1ppp/8/4p1q1/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", "", False),
    ("in check", "rnbqk1nr/pppp1ppp/8/4p3/1b1PP3/8/PPP2PPP/RNBQKBNR w KQkq - 1 3", "", False),
    ("double check", "4k3/8/8/8/8/8/4q3/R3K2n w Q - 0 1", "", False),
    ("chess960 start 1", "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", "", True),
    ("chess960 start 2", "nrbbqknr/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKNR w HBhb - 0 1", "", True),
    ("chess960 castle soon", "rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1", "", True),
    ("chess960 with moves", "qrkbbnrn/pppppppp/8/8/8/8/PPPPPPPP/QRKBBNRN w GBgb - 0 1",
     "e2e4 e7e5 h1g3 h8g6", True),
    ("game history 20 plies", S, "d2d4 g8f6 c2c4 e7e6 g1f3 d7d5 b1c3 f8e7 c1f4 e8g8 e2e3 c7c5 d4c5 e7c5 "
     "a2a3 b8c6 d1c2 d8a5 a1d1 f8d8", False),
    ("black to move opening", S, "d2d4", False),
    ("fen with history fill", "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", "", False),
    ("fen black to move", "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3", "", False),
]
NODES = 400


def main() -> None:
    from lichessbot.config import SearchParams
    from lichessbot.search import Limits, Searcher
    from tests.equivalence import DeterministicEvaluator
    from tests.tinynet import build_tiny_onnx

    tiny = build_tiny_onnx(Path(tempfile.mkdtemp()) / "tiny.onnx", seed=1)
    ev = DeterministicEvaluator(str(tiny))
    out = []
    for label, fen, moves, c960 in POSITIONS:
        board = chess.Board(None if fen == S else fen, chess960=c960) if fen != S else chess.Board()
        for mv in moves.split():
            board.push_uci(mv)
        ev.reset()
        searcher = Searcher(ev, SearchParams(minibatch_size=1), pipeline=False)
        res = searcher.search(board, Limits(nodes=NODES))
        visits = {rm.move.uci(): rm.n for rm in res.root_moves}
        out.append({"label": label, "fen": fen, "moves": moves, "chess960": c960, "nodes": NODES,
                    "visits": visits, "best": res.best_move.uci()})
        print(f"{label:32s} {res.best_move.uci():6s} N={sum(visits.values())}", flush=True)
    path = Path(__file__).with_name("search_equivalence.json")
    path.write_text(json.dumps({"minibatch": 1, "nodes": NODES, "positions": out}, indent=1) + "\n")
    print(f"wrote {path} ({len(out)} positions)")


if __name__ == "__main__":
    main()
