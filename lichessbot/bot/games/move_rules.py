"""Small pure rules of a running game: reading the server's moves, resign/draw decisions from our
scores, and how long a move post may wait."""

from __future__ import annotations

import chess

from lichessbot.config import DrawOrResignConfig
from lichessbot.timeman import Clock, OverheadEstimator

__all__ = ["FAKE_THINK_SHARE", "POST_PATIENCE", "POST_PATIENCE_MAX", "POST_PATIENCE_MIN", "UNLIMITED_MS",
           "ScoreRules", "Unplayable", "clocks_now", "fake_think_s", "parse_moves", "post_patience"]

#: lila's wtime/btime of a game without any clock (BotJsonView: ``Int.MaxValue`` ms).
UNLIMITED_MS = 2_147_483_647


def clocks_now(times: tuple[int, int, int, int], color: chess.Color | None, since_state_s: float, *, clocked: bool,
               correspondence: bool, initial: int | None = None,
               overhead: OverheadEstimator | None = None) -> tuple[Clock | None, float | None]:
    """Our real-time clock now (:meth:`lichessbot.timeman.Clock.from_lichess` from lichess's last ``(wtime,
    btime, winc, binc)`` less ``since_state_s`` seconds spent since that state, with the game's ``initial``
    clock and the move overhead ``overhead`` measured (its high percentile and median), ms; None without one:
    ``clocked`` False or ``correspondence``) and, in correspondence, the seconds its clock leaves us (None:
    unlimited, lila's ``Int.MaxValue``, or not known yet: ``times`` all 0)."""
    if color is None or not (clocked or correspondence):
        return None, None
    clock = Clock.from_lichess(times, color, elapsed_ms=int(since_state_s * 1000), initial=initial,
                               overhead=None if overhead is None else overhead.estimate_ms,
                               overhead_typical=None if overhead is None else overhead.typical_ms)
    if correspondence:
        return None, (clock.time / 1000 if 0 < max(times[:2]) < UNLIMITED_MS else None)
    return clock, None


#: Share of the clock left (after move_overhead) a move post may spend waiting out retries and 429
#: pauses, and its bounds in seconds (ours: a tenth keeps a paused game's clock; 2 s caps slow games).
POST_PATIENCE = 0.1
POST_PATIENCE_MIN = 0.2
POST_PATIENCE_MAX = 2.0


#: lichess-bot's fake_think_time (lib/lichess_bot.py ``fake_think_time``): from the 11th ply on, a move takes
#: at least this share of the clock left after the move overhead, shrinking by FAKE_THINK_DECAY a ply after.
FAKE_THINK_SHARE = 0.025
FAKE_THINK_DECAY = 0.99
FAKE_THINK_FROM_PLY = 10


def fake_think_s(clock_ms: int, overhead_ms: int, ply: int) -> float:
    """Seconds a move at ``ply`` (plies played before it) takes at least with ``fake_think_time``: 0 before
    ply 10, then 2.5 % of ``clock_ms - overhead_ms`` times 0.99 per ply past 10 (lichess-bot's formula)."""
    if ply < FAKE_THINK_FROM_PLY:
        return 0.0
    left_s = max(0, clock_ms - overhead_ms) / 1000
    return left_s * FAKE_THINK_SHARE * FAKE_THINK_DECAY ** (ply - FAKE_THINK_FROM_PLY)


class Unplayable(ValueError):
    """The server's game cannot be played by the engine (a variant it does not play, a move it cannot read)."""


def parse_moves(initial: chess.Board, moves: str) -> chess.Board:
    """The board after ``moves`` (space-separated UCI; castling as e1g1 or e1h1). Raises ValueError
    (e.g. for a crazyhouse drop such as ``P@e4`` on a standard board)."""
    board = initial.copy()
    for uci in moves.split():
        board.push(board.parse_uci(uci))  # python-chess maps king-takes-rook to the board's castling form
    return board


def post_patience(clock_ms: int, move_overhead_ms: int) -> float:
    """Seconds a move post may wait (retries, 429 pauses) with ``clock_ms`` on our clock (milliseconds)."""
    left_s = max(0.0, (clock_ms - move_overhead_ms) / 1000)
    return min(POST_PATIENCE_MAX, max(POST_PATIENCE_MIN, POST_PATIENCE * left_s))


class ScoreRules:
    """Resign and draw decisions from our searched scores (centipawns, our view; None: book move) and from the
    endgame tables' verdict of our last move (lichess-bot lib/engine_wrapper.py: ``resign_for_egtb_minus_two``,
    ``offer_draw_for_egtb_zero``, ``offer_draw_pieces``), limited by the opponent (BotLi lichess_game.py:
    ``against_humans``, ``min_rating``, ``min_game_length``)."""

    def __init__(self, config: DrawOrResignConfig):
        self.config = config
        self.scores: list[int | None] = []
        self.tablebase_wdl: int | None = None  # the tables' WDL of our last move (our view), None: not theirs
        self.opponent_rating = 0  # the opponent's rating (0: unknown), from gameFull
        self.opponent_is_bot = False

    def opponent(self, rating: int | None, is_bot: bool) -> None:
        """The opponent of the game (gameFull): its rating (None: unrated, counted as 0) and whether it is a bot."""
        self.opponent_rating, self.opponent_is_bot = rating or 0, is_bot

    def add(self, score_cp: int | None, tablebase_wdl: int | None = None) -> None:
        """Our move's score and, for a move of the tables (Syzygy, Gaviota, online), their WDL."""
        self.scores.append(score_cp)
        self.tablebase_wdl = tablebase_wdl

    def _last(self, n: int) -> list[int] | None:
        tail = self.scores[-n:]
        if len(tail) < n or any(s is None for s in tail):
            return None
        return tail  # type: ignore[return-value]

    def _against(self, humans: bool, min_rating: int | None) -> bool:
        """The opponent is one the rule applies to (BotLi ``against_humans``, ``min_rating``)."""
        return (humans or self.opponent_is_bot) and (min_rating is None or self.opponent_rating >= min_rating)

    def should_resign(self) -> bool:
        """Each of our last ``resign_moves`` scores is <= ``resign_score``, or the tables say our last move loses
        (WDL -2, ``resign_for_egtb_minus_two``); resigning enabled, against this opponent."""
        c = self.config
        if not c.resign_enabled or not self._against(c.resign_against_humans, c.resign_min_rating):
            return False
        if c.resign_for_egtb_minus_two and self.tablebase_wdl == -2:
            return True
        tail = self._last(c.resign_moves)
        return tail is not None and all(s <= c.resign_score for s in tail)

    def should_offer_draw(self, board: chess.Board | None = None) -> bool:
        """Each of our last ``offer_draw_moves`` scores is within +-``offer_draw_score`` with at most
        ``offer_draw_pieces`` pieces on ``board`` past full move ``offer_draw_min_game_length``, or the tables
        say our last move draws (WDL 0, ``offer_draw_for_egtb_zero``); offers enabled, against this opponent."""
        c = self.config
        if not c.offer_draw_enabled or not self._against(c.offer_draw_against_humans, c.offer_draw_min_rating):
            return False
        if c.offer_draw_for_egtb_zero and self.tablebase_wdl == 0:
            return True
        if board is not None and (chess.popcount(board.occupied) > c.offer_draw_pieces
                                  or board.fullmove_number <= c.offer_draw_min_game_length):
            return False
        tail = self._last(c.offer_draw_moves)
        return tail is not None and all(abs(s) <= c.offer_draw_score for s in tail)
