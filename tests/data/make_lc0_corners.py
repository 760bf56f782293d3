"""Make tests/data/lc0_corners.txt: positions for ``python -m devtools.lc0cmp --positions`` in lc0's corners
(issue 31): lost positions where several replies allow mate, rook endgames reached through repetitions
with a rule-50 counter above 0, and ordinary middlegames. Deterministic (fixed seed):

    python tests/data/make_lc0_corners.py > tests/data/lc0_corners.txt

Each line is ``label | fen FEN [moves ...]``; the label's first word is the class (lost, rookrep, middle).
"""

from __future__ import annotations

import random

import chess

SEED = 31


def _mates_in_one(board: chess.Board) -> int:
    n = 0
    for m in board.legal_moves:
        board.push(m)
        n += board.is_checkmate()
        board.pop()
    return n


def lost_positions(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """The defender to move, not in check, 3+ legal moves, and 3+ of them allow a mate in one (all of
    them for about half the set): several children of the root are proven losses within a few visits."""
    out: list[tuple[str, str]] = []
    want_all = count // 2
    tries = 0
    while len(out) < count and tries < 2_000_000:
        tries += 1
        board = chess.Board(None)
        squares = rng.sample(chess.SQUARES, 7)
        board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        attackers = rng.choice([(chess.QUEEN, chess.ROOK), (chess.QUEEN, chess.BISHOP), (chess.ROOK, chess.ROOK),
                                (chess.QUEEN, chess.KNIGHT), (chess.QUEEN,)])
        for sq, pt in zip(squares[2:], attackers, strict=False):
            board.set_piece_at(sq, chess.Piece(pt, chess.WHITE))
        for sq in squares[2 + len(attackers):]:
            if chess.square_rank(sq) in (0, 7):
                continue
            board.set_piece_at(sq, chess.Piece(chess.PAWN, chess.BLACK))
        board.turn = chess.BLACK
        if not board.is_valid() or board.is_check() or board.is_game_over():
            continue
        moves = list(board.legal_moves)
        if len(moves) < 3:
            continue
        losing = 0
        for m in moves:
            board.push(m)
            losing += _mates_in_one(board) > 0
            board.pop()
        if losing < 3:
            continue
        every = losing == len(moves)
        if every and sum(1 for _, k in out if k == "all") >= want_all:
            continue
        if not every and sum(1 for _, k in out if k == "some") >= count - want_all:
            continue
        if rng.random() < 0.5:  # the same with colours swapped: white is the one being mated
            board = board.mirror()
        out.append((board.fen(), "all" if every else "some"))
    return out


def _quiet(board: chess.Board) -> list[chess.Move]:
    return [m for m in board.legal_moves
            if not board.is_capture(m) and board.piece_type_at(m.from_square) != chess.PAWN]


def _shuffle(board: chess.Board, rng: random.Random, last: bool) -> list[str] | None:
    """Play w, b, w back, b back (without the last move when ``last``); None (board unchanged) if none fits."""
    for _ in range(50):
        w = rng.choice(_quiet(board) or [chess.Move.null()])
        if not w:
            return None
        board.push(w)
        bs = _quiet(board)
        if board.is_game_over() or not bs:
            board.pop()
            continue
        b = rng.choice(bs)
        board.push(b)
        wb, bb = chess.Move(w.to_square, w.from_square), chess.Move(b.to_square, b.from_square)
        if board.is_game_over() or wb not in board.legal_moves:
            board.pop()
            board.pop()
            continue
        board.push(wb)
        if board.is_game_over() or bb not in board.legal_moves:
            for _ in range(3):
                board.pop()
            continue
        if last:
            return [w.uci(), b.uci(), wb.uci()]
        board.push(bb)
        return [w.uci(), b.uci(), wb.uci(), bb.uci()]
    return None


def _mate_in_two(board: chess.Board) -> bool:
    """White to move mates in one or two."""
    for m in board.legal_moves:
        board.push(m)
        if board.is_checkmate():
            board.pop()
            return True
        replies = list(board.legal_moves)
        every = bool(replies)
        for r in replies:
            board.push(r)
            every = every and _mates_in_one(board) > 0
            board.pop()
            if not every:
                break
        board.pop()
        if every:
            return True
    return False


def rook_repetitions(rng: random.Random, count: int, mating: bool = False) -> list[tuple[str, list[str]]]:
    """K+R vs K (and a few with a pawn), white to move, the rule-50 counter at 5..40 in the FEN, then a shuffle
    of both sides back to the start (lc0's repetition count 1), and for every other position a second,
    unfinished shuffle and another black move. White (the rook) is to move at the root; moves back into the
    repeated positions are draws in the tree (threefold, or two-fold inside the tree). With ``mating``: K+R vs
    K only, the black king on the edge and a mate in one or two at the root (proven wins in the tree)."""
    out: list[tuple[str, list[str]]] = []
    while len(out) < count:
        board = chess.Board(None)
        sqs = rng.sample(chess.SQUARES, 4)
        board.set_piece_at(sqs[0], chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(sqs[1], chess.Piece(chess.KING, chess.BLACK))
        board.set_piece_at(sqs[2], chess.Piece(chess.ROOK, chess.WHITE))
        edge = chess.square_file(sqs[1]) in (0, 7) or chess.square_rank(sqs[1]) in (0, 7)
        if mating and (not edge or chess.square_distance(sqs[0], sqs[1]) > 3):
            continue
        if not mating and len(out) % 4 == 3 and chess.square_rank(sqs[3]) not in (0, 7):
            board.set_piece_at(sqs[3], chess.Piece(chess.PAWN, rng.choice([chess.WHITE, chess.BLACK])))
        board.turn = chess.WHITE
        board.halfmove_clock = rng.randrange(5, 41)
        board.fullmove_number = 60
        if not board.is_valid() or board.is_game_over():
            continue
        start = board.fen()
        moves: list[str] = []
        ok = True
        # Two shuffles: (w, b, w back, b back) returns to the start (repetition count 1); the second uses
        # other moves and stops one ply before its return (which would be the third time).
        for shuffle in range(1 + len(out) % 2):
            played = _shuffle(board, rng, last=shuffle == 1)
            if played is None:
                ok = False
                break
            moves += played
        if ok and len(moves) == 7:  # then another black move than the way back: white to move
            back = chess.Move.from_uci(moves[4][2:] + moves[4][:2])
            others = [m for m in _quiet(board) if m != back]
            if not others:
                continue
            m = rng.choice(others)
            board.push(m)
            moves.append(m.uci())
        if not ok or board.is_game_over() or board.is_repetition(3) or len(list(board.legal_moves)) < 3:
            continue
        if mating and not _mate_in_two(board):
            continue
        out.append((start, moves))
    return out


MIDDLEGAMES = [
    "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R2QK2R w KQ - 0 8",
    "r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N1P/PP1P1PP1/RNBQR1K1 b - - 0 9",
    "r4rk1/pp2ppbp/2np1np1/q7/3NP3/2N1BP2/PPPQ2PP/2KR1B1R w - - 5 11",
    "r2q1rk1/pp1nbppp/2p1pn2/3p4/2PP4/1PN1PN2/PB3PPP/R2QKB1R w KQ - 1 9",
    "r1b2rk1/pp1nqppp/2pbpn2/3p4/2PP4/2NBPN2/PPQ2PPP/R1B2RK1 w - - 4 9",
    "2rq1rk1/pb2bppp/1pn1pn2/2pp4/3P4/1PNBPN2/PB3PPP/2RQ1RK1 w - - 2 11",
    "r1bqr1k1/pp3pbp/2np1np1/2p5/4P3/2NP1NP1/PPP2PBP/R1BQR1K1 w - - 0 10",
    "rn1qkb1r/pp3ppp/2p1pn2/3p1b2/2PP4/1QN1P3/PP3PPP/R1B1KBNR w KQkq - 2 6",
    "r2qkb1r/1p1n1ppp/p2pbn2/4p3/4P3/1NN1BP2/PPP3PP/R2QKB1R w KQkq - 1 9",
    "r1bq1rk1/ppp1npbp/3p1np1/3Pp3/2P1P3/2N2N2/PP2BPPP/R1BQ1RK1 w - - 1 9",
    "r2q1rk1/1b1nbppp/p2ppn2/1p6/3NP3/1BN1BP2/PPPQ2PP/2KR3R w - - 2 11",
    "r1bq1rk1/4bppp/p1np1n2/1pp1p3/4P3/2PP1N1P/PPB2PP1/RNBQR1K1 w - - 0 11",
    "2kr1b1r/pppq1ppp/2n1bn2/4p3/4P3/2N1BN2/PPPQ1PPP/2KR1B1R w - - 6 8",
    "r3kb1r/pp1n1ppp/2p1pn2/q2p4/2PP2b1/2N1PN2/PPQ2PPP/R1B1KB1R w KQkq - 2 8",
]


def main() -> None:
    rng = random.Random(SEED)
    print("# Positions in lc0's corners (issue 31), made by tests/data/make_lc0_corners.py (seed 31).")
    print("# lost: the side to move is being mated (several or all replies allow mate in one);")
    print("# rookrep: K+R vs K (+ pawn) through repetitions with rule50 > 0; rookmate: the same with a mate in")
    print("# one or two at the root; middle: ordinary middlegames.")
    for i, (fen, kind) in enumerate(lost_positions(rng, 14)):
        print(f"lost-{kind}-{i:02d} | fen {fen}")
    for i, (fen, moves) in enumerate(rook_repetitions(rng, 14)):
        print(f"rookrep-{i:02d} | fen {fen} moves {' '.join(moves)}")
    for i, (fen, moves) in enumerate(rook_repetitions(rng, 8, mating=True)):
        print(f"rookmate-{i:02d} | fen {fen} moves {' '.join(moves)}")
    for i, fen in enumerate(MIDDLEGAMES):
        print(f"middle-{i:02d} | fen {fen}")


if __name__ == "__main__":
    main()
