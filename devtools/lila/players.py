"""Opponents the test server plays for the challenger: functions ``board -> Move | RESIGN | DRAW | None``.

None means "does not move" (the clock runs); :data:`RESIGN` resigns; :data:`OFFER_DRAW` offers a draw
and moves on the next call.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import chess

__all__ = ["OFFER_DRAW", "RESIGN", "Opponent", "mate_or_random", "random_mover", "resign_after", "scripted",
           "shuffler", "staller"]

Opponent = Callable[[chess.Board], "chess.Move | str | None"]
RESIGN = "resign"
OFFER_DRAW = "offer-draw"


def random_mover(seed: int = 0) -> Opponent:
    rng = random.Random(seed)

    def move(board: chess.Board) -> chess.Move | None:
        return rng.choice(sorted(board.legal_moves, key=lambda m: m.uci()))
    return move


def mate_or_random(seed: int = 0) -> Opponent:
    """Mates in one when it can, else a random move."""
    rnd = random_mover(seed)

    def move(board: chess.Board) -> chess.Move | str | None:
        for m in board.legal_moves:
            board.push(m)
            mate = board.is_checkmate()
            board.pop()
            if mate:
                return m
        return rnd(board)
    return move


def scripted(ucis: list[str], then: Opponent | None = None) -> Opponent:
    """Plays ``ucis`` in order (each when legal, else falls through to ``then``); then ``then`` or stalls."""
    it = iter(ucis)

    def move(board: chess.Board) -> chess.Move | str | None:
        for u in it:
            if u in (RESIGN, OFFER_DRAW):
                return u
            m = chess.Move.from_uci(u)
            if m in board.legal_moves:
                return m
            break
        return then(board) if then else None
    return move


def staller() -> Opponent:
    return lambda board: None


def resign_after(plies: int, then: Opponent | None = None) -> Opponent:
    """Plays ``then`` (random by default) and resigns once the game has ``plies`` plies."""
    then = then or random_mover(7)

    def move(board: chess.Board) -> chess.Move | str | None:
        return RESIGN if len(board.move_stack) >= plies else then(board)
    return move


def shuffler(squares: tuple[str, str]) -> Opponent:
    """Moves a piece back and forth between two squares (repetition), else a random move."""
    rnd = random_mover(5)

    def move(board: chess.Board) -> chess.Move | str | None:
        for a, b in (squares, squares[::-1]):
            m = chess.Move.from_uci(a + b)
            if m in board.legal_moves:
                return m
        return rnd(board)
    return move


def drops_first(then: Opponent | None = None) -> Opponent:
    """Crazyhouse: plays a drop move whenever it has a piece in hand, else ``then`` (random)."""
    then = then or random_mover(3)

    def move(board: chess.Board) -> chess.Move | str | None:
        drops = [m for m in board.legal_moves if m.drop]
        return drops[0] if drops else then(board)
    return move
