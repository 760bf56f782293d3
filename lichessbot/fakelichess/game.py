"""One game on the fake lichess server: its board, clocks (ms), players, streams and what was posted."""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field

import chess
import chess.variant

from lichessbot.fakelichess.players import Opponent

__all__ = ["FOREVER", "FakeGame", "make_board"]

FOREVER = 2_147_483_647  # lichess's wtime/btime in games without a clock


def make_board(variant: str, fen: str) -> chess.Board:
    if variant == "crazyhouse":
        return chess.variant.CrazyhouseBoard() if fen == "startpos" else chess.variant.CrazyhouseBoard(fen)
    start = chess.STARTING_FEN if fen == "startpos" else fen
    return chess.Board(start, chess960=variant == "chess960")


@dataclass
class FakeGame:
    id: str
    bot_color: str
    board: chess.Board
    initial_fen: str
    initial_ms: int
    increment_ms: int
    opponent: Opponent
    opponent_name: str
    rated: bool = False
    opponent_rating: int = 1500  # the challenger's rating, in gameFull and gameStart
    speed: str = "blitz"
    variant: str = "standard"
    days: int | None = None
    tournament: str | None = None
    opponent_bot: bool = False
    wtime: int = 0
    btime: int = 0
    status: str = "started"
    winner: str | None = None
    started_at: float = field(default_factory=time.monotonic)
    last_move_at: float = field(default_factory=time.monotonic)
    subscribers: list[queue.Queue] = field(default_factory=list)
    chat: list[tuple[str, str]] = field(default_factory=list)
    posts: list[tuple[int, str, bool]] = field(default_factory=list)  # (ply, uci, offering_draw) accepted
    rejected_posts: list[tuple[int, str, int]] = field(default_factory=list)  # (ply, uci, status)
    stream_connections: int = 0
    opp_draw_offer: bool = False
    opp_takeback: bool = False   # the opponent offers a takeback (lichessbot/fakelichess/takeback.py)
    takebacks: int = 0           # takebacks the bot accepted
    claim_at: float | None = None  # opponentGone: claims allowed from then on
    blackout_until: float = 0.0    # stream connections wait until then before gameFull
    blackout_push: bool = False    # the next push is replaced by cutting the streams
    finish_sent: bool = False

    @property
    def over(self) -> bool:
        return self.status not in ("created", "started")

    def ply(self) -> int:
        return len(self.board.move_stack)

    def bot_turn(self) -> bool:
        return self.board.turn == (self.bot_color == "white")
