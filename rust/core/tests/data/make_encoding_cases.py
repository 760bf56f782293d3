"""Generate ``encoding_cases.jsonl``: the Python encoder and policy map as the oracle of the Rust ones.

The Rust test ``rust/core/tests/encoding_vs_python.rs`` replays every case with shakmaty and compares
``lichessbot_core::encoding::encode`` and ``lichessbot_core::policy::nn_index`` with the values here,
which come from ``lichessbot.engine.encoding.encode`` / ``choose_transform`` and
``lichessbot.engine.policy_map.move_index`` (themselves tested against lc0's outputs).

Regenerate (needs python-chess and numpy, and the ``lichessbot`` package importable)::

    cd /work/main   # the repository root
    PYTHONPATH=. python3 rust/core/tests/data/make_encoding_cases.py

It is deterministic (seeded) and overwrites ``rust/core/tests/data/encoding_cases.jsonl``.

One line per position, a JSON object:

* ``fen``: the first position ("startpos" or a FEN; X-FEN castling for Chess960), ``moves``: UCI moves
  played from it (python-chess notation: e1g1 castling in standard chess, king-takes-rook in
  Chess960), ``chess960``: castling mode, ``tag``: what the case covers.
* ``cases``: one per (input format, fill mode) tried: ``format``, ``fill``, ``transform`` (the
  canonical transform of the current position), ``planes``: ``[plane, mask_hex, value]`` for every
  plane that is not all zeros (every plane holds one value on the squares of its mask).
* ``canon_t``: the canonical transform of the current position for formats >= 3.
* ``legal``: ``[uci, index_with_transform_0, index_with_canon_t]`` for every legal move, in
  python-chess order.

Chess960 castling: ``policy_map.move_index`` turns a king move of two files along the back rank into
king-takes-the-corner-rook (right for python-chess's standard e1g1/e1c1), which is wrong for a
Chess960 castling move whose rook stands two files from the king (e.g. king e1, rook c1: lc0's index
is e1c1 = 99, the oracle gives e1a1 = 97). Here such moves use lc0's rule directly (king takes its
own rook, src/chess/board.cc ``ParseMove``); the script prints how many indices it corrected.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import chess
import numpy as np

from lichessbot.engine.encoding import FILL_MODES, INPUT_FORMATS, choose_transform, encode, game_history
from lichessbot.engine.policy_map import _PACKED_LIST, _PROMO_CODE, _transform_sq, move_index

OUT = Path(__file__).with_name("encoding_cases.jsonl")
ALL_COMBOS = [(f, m) for f in INPUT_FORMATS for m in FILL_MODES]
corrected = 0


def lc0_index(board: chess.Board, move: chess.Move, snap, t: int) -> int:
    """The policy index lc0 gives ``move``; the oracle's, except for Chess960 castling (see above)."""
    global corrected
    oracle = move_index(move, snap, t)
    if not (board.chess960 and board.is_castling(move)):
        return oracle
    frm, to = move.from_square, move.to_square  # python-chess Chess960: king takes rook
    if not board.turn:
        frm, to = frm ^ 56, to ^ 56
    if t:
        frm, to = _transform_sq(frm, t), _transform_sq(to, t)
    idx = _PACKED_LIST[_PROMO_CODE[None] * 4096 + frm * 64 + to]
    assert idx >= 0
    if idx != oracle:
        corrected += 1
    return idx


def record(fen: str, moves: list[str], chess960: bool, tag: str, combos) -> dict:
    board = chess.Board(chess.STARTING_FEN if fen == "startpos" else fen, chess960=chess960)
    for m in moves:
        board.push_uci(m)
    hist = game_history(board)
    cur = hist[-1]
    cases = []
    for fmt, fill in combos:
        planes = encode([hist], fmt, fill)[0].reshape(112, 64)
        rows = []
        for p in range(112):
            nz = planes[p] != 0
            if not nz.any():
                continue
            vals = np.unique(planes[p][nz])
            assert len(vals) == 1, (tag, fmt, fill, p)
            mask = int(sum(1 << int(k) for k in np.flatnonzero(nz)))
            rows.append([p, f"{mask:x}", float(vals[0])])
        cases.append({"format": fmt, "fill": fill, "transform": choose_transform(cur, fmt), "planes": rows})
    ct = choose_transform(cur, 3)
    legal = [[m.uci(), lc0_index(board, m, cur, 0), lc0_index(board, m, cur, ct)] for m in board.legal_moves]
    return {"tag": tag, "fen": fen, "moves": moves, "chess960": chess960, "canon_t": ct, "cases": cases,
            "legal": legal}


def random_moves(board: chess.Board, rng: random.Random, plies: int, prefer=None) -> list[str]:
    out = []
    b = board.copy()
    for _ in range(plies):
        legal = list(b.legal_moves)
        if not legal:
            break
        pick = [m for m in legal if prefer(b, m)] if prefer else []
        m = rng.choice(pick or legal)
        out.append(m.uci())
        b.push(m)
    return out


def main() -> None:
    rng = random.Random(20261123)
    lines = []

    def combos(full: bool):
        if full:
            return ALL_COMBOS
        return [(1, "fen_only")] + rng.sample(ALL_COMBOS[1:], 3)

    def add(fen, moves, chess960, tag, full=False):
        lines.append(record(fen, moves, chess960, tag, combos(full)))

    add("startpos", [], False, "start", full=True)
    add("startpos", ["g1f3"], False, "start+Nf3", full=True)
    # Random games from the start position, 0..60 plies.
    for i in range(40):
        plies = [0, 1, 2, 3, 5, 7, 8, 9, 12, 15, 20, 30, 45, 60][i % 14] if i < 14 else rng.randint(0, 60)
        add("startpos", random_moves(chess.Board(), rng, plies), False, f"random game {i}", full=i % 8 == 0)
    # En passant: after moves, and from FENs (with and without a pawn that can take).
    add("startpos", ["e2e4", "a7a6", "e4e5", "d7d5"], False, "ep after move (d6)", full=True)
    add("startpos", ["e2e4", "d7d5", "e4d5", "c7c5", "d5c6"], False, "ep capture played")
    add("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3", [], False, "fen ep b", full=True)
    add("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3", ["d4e3", "d2e3"], False, "fen ep taken")
    add("rnbqkbnr/pppp1ppp/8/8/4p3/8/PPPPPPPP/RNBQKBNR w KQkq - 0 3", ["d2d4"], False, "ep for black")
    add("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1", [], False, "fen ep without capturer", full=True)
    add("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", [], False, "fen ep white to move", full=True)
    add("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", ["e1e2", "e8e7"], False, "fen ep then moves")
    # Castling rights of both colours, partial rights, rights lost by moves.
    add("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1", [], False, "all rights", full=True)
    add("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b Kq - 3 10", [], False, "Kq black", full=True)
    add("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", ["e1g1", "e8c8", "f1f7", "d8d2"], False, "both castle")
    add("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", ["h1h2", "a8a7", "e1d1", "h8g8"], False, "rights lost",
        full=True)
    add("r3k2r/8/8/8/8/8/8/R3K2R b kq - 0 1", [], False, "black only")
    # Promotions.
    add("3qk3/4P3/8/8/8/8/8/4K3 w - - 0 1", [], False, "promo + capture promo", full=True)
    add("4k3/8/8/8/8/8/1p6/R3K3 b Q - 0 1", [], False, "black promo", full=True)
    add("r1n1k3/1P4P1/8/8/8/8/5p1p/K5N1 w q - 0 1", ["b7a8n", "f2g1q"], False, "promos played")
    # Repetitions (knight shuffles: counts 1 and 2).
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"]
    add("startpos", shuffle * 2, False, "repetition x2", full=True)
    add("startpos", shuffle * 2 + ["g1f3"], False, "repetition x2 +1", full=True)
    add("startpos", ["e2e4", "e7e5"] + shuffle * 3, False, "repetitions after pawns", full=True)
    add("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 10 30", ["e1d1", "e8d8", "d1e1", "d8e8", "a1a2", "a8a7", "a2a1",
                                                    "a7a8"], False, "castling lost then shuffle", full=True)
    # rule50 near 100.
    add("8/8/4k3/8/8/3K4/8/7R w - - 95 120", ["h1h2", "e6e5", "h2h3", "e5e6", "h3h1"], False, "rule50 ~100",
        full=True)
    add("8/5k2/8/8/8/3K4/8/7R b - - 99 120", [], False, "rule50 99")
    # Pawnless, castling-free: canonical transforms (incl. lc0's encoder_test vectors and tie breaks).
    for fen in ["3r4/4k3/8/1K6/8/8/8/8 w - - 0 1", "3r4/4k3/2K5/8/8/8/8/8 w - - 0 1",
                "8/8/8/8/4K3/8/8/k7 w - - 0 1", "8/8/8/8/8/5K2/8/2k5 w - - 0 1", "7k/8/8/8/8/8/6K1/8 w - - 0 1",
                "7k/8/8/8/8/2q5/6K1/R7 w - - 0 1", "8/8/8/3k4/8/8/8/K6R b - - 4 40", "8/2k5/8/8/8/1N3K2/8/8 w - - 0 1",
                "8/8/8/8/4K3/2n5/8/k2B4 w - - 7 60", "6k1/8/8/8/8/8/1K6/8 b - - 0 1"]:
        add(fen, [], False, f"pawnless {fen}", full=True)
        add(fen, random_moves(chess.Board(fen), rng, 9), False, f"pawnless {fen} + moves")
    add("8/8/8/8/4K3/8/3P4/k7 w - - 0 1", ["e4f5", "a1b2"], False, "pawn: flip only", full=True)
    # FEN positions without history.
    for fen in ["r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",
                "2r3k1/pp3ppp/8/3p4/3P4/8/PP3PPP/2R3K1 b - - 12 30",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w Qk - 0 1"]:
        add(fen, [], False, f"fen {fen}", full=True)
    # Chess960: starting positions with unusual rooks, games that castle.
    def castles(b, m):
        return b.is_castling(m)
    for n in [0, 7, 100, 333, 518, 959, 200, 42]:
        b = chess.Board.from_chess960_pos(n)
        fen = b.fen()
        moves = random_moves(b, rng, rng.randint(0, 40), prefer=castles)
        add(fen, moves, True, f"chess960 #{n}", full=n in (0, 959))
        add(fen, [], True, f"chess960 #{n} start")
    for fen in ["4k3/8/8/8/8/8/8/2R1K3 w C - 0 1", "4k3/8/8/8/8/8/8/4KR2 w F - 0 1",
                "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
                "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 b EAea - 0 1", "1rk5/8/8/8/8/8/8/1RK5 w Bb - 0 1"]:
        add(fen, [], True, f"960 fen {fen}", full=True)
        b = chess.Board(fen, chess960=True)
        add(fen, random_moves(b, rng, 6, prefer=castles), True, f"960 fen {fen} + castling")

    with OUT.open("w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    n_cases = sum(len(x["cases"]) for x in lines)
    print(f"{len(lines)} positions, {n_cases} encode cases, {sum(len(x['legal']) for x in lines)} moves, "
          f"{OUT.stat().st_size} bytes; {corrected} Chess960 castling indices corrected", file=sys.stderr)


if __name__ == "__main__":
    main()
