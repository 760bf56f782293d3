"""lichess's opening explorer (``online_moves.lichess_opening_explorer``): masters, lichess or one player.

Requests and answers as lichess-org/api doc/specs/tags/openingexplorer/{masters,lichess,player}.yaml:
``GET {url}/masters|lichess|player?fen=...&moves=...``; the answer's ``moves[]`` carry ``uci``, ``white``,
``draws`` and ``black`` (games won by white, drawn, won by black). ``/player`` streams NDJSON snapshots
while it indexes (the last one counts) and needs ``player`` and ``color`` (the side the player had: the
side to move). The masters database has standard chess only.

The choice is lichess-bot's (lib/engine_wrapper.py ``get_opening_explorer_move``): among the moves with
at least ``min_games`` games, the best by ``sort`` (``winrate``: points of the side to move per game,
draws half; ``games_played``), the other figure breaking ties.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess

from lichessbot.config.online import OpeningExplorerConfig
from lichessbot.online.base import Request, WrongAnswer, expect, legal_move, load_json, position_key
from lichessbot.online.http import Answer
from lichessbot.online.types import EXPLORER, OnlineMove

__all__ = ["ExplorerMove", "OpeningExplorer"]

#: Moves asked for (lichess-bot asks for 100; the server's default is 12).
MOVES = 100


@dataclass(frozen=True)
class ExplorerMove:
    """One row of ``moves[]``: the move and its games (won by white, drawn, won by black)."""

    uci: str
    white: int
    draws: int
    black: int

    @property
    def games(self) -> int:
        return self.white + self.draws + self.black

    def winrate(self, turn: chess.Color) -> float:
        """Points per game of the side to move ``turn`` (a draw is half a point)."""
        won = self.white if turn == chess.WHITE else self.black
        return (won + 0.5 * self.draws) / self.games if self.games else 0.0


class OpeningExplorer:
    """The explorer as a :class:`lichessbot.online.base.Source`."""

    name = EXPLORER
    lichess = True

    def __init__(self, config: OpeningExplorerConfig):
        self.config = config

    @property
    def wants_opponent(self) -> bool:
        """BotLi's ``anti``: the player database of the game's opponent (``player``) as their colour."""
        return self.config.anti and self.config.source == "player" and not self.config.player_name

    def request(self, board: chess.Board, player: str) -> Request | None:
        db = self.config.source
        variant = "chess960" if board.chess960 else "standard"
        if db == "masters" and board.chess960:
            return None
        params: dict[str, str | int] = {"fen": board.fen(), "moves": MOVES}
        if db == "masters":
            params["topGames"] = 0
        elif db == "lichess":
            params.update(variant=variant, topGames=0, recentGames=0)
        else:
            name = self.config.player_name or player  # anti: ``player`` is the opponent (OnlineMoves.lookup)
            if not name:
                return None
            anti = self.wants_opponent
            color = "white" if (board.turn == chess.WHITE) != anti else "black"
            params.update(player=name, color=color, variant=variant, recentGames=0)
            return Request(f"{self.config.url}/player", params, "GET explorer/player",
                           (EXPLORER, db, name.lower(), variant, position_key(board)), ndjson=True)
        return Request(f"{self.config.url}/{db}", params, f"GET explorer/{db}",
                       (EXPLORER, db, variant, position_key(board)))

    def parse(self, board: chess.Board, answer: Answer) -> tuple[ExplorerMove, ...]:
        if answer.status != 200:
            raise WrongAnswer(f"answer {answer.status}")
        data = expect(load_json(answer.text), dict, "the answer")
        rows = expect(data.get("moves"), list, "moves")
        out = []
        for row in rows:
            row = expect(row, dict, "a move")
            counts = [expect(row.get(k), int, k) for k in ("white", "draws", "black")]
            if min(counts) < 0:
                raise WrongAnswer("a negative game count")
            out.append(ExplorerMove(expect(row.get("uci"), str, "uci"), *counts))
        return tuple(out)

    def choose(self, board: chess.Board, parsed: tuple[ExplorerMove, ...], rng: random.Random) -> OnlineMove | None:
        rows = [m for m in parsed if m.games >= self.config.min_games]
        if self.config.only_with_wins:  # BotLi: a move the side to move has won with
            rows = [m for m in rows if (m.white if board.turn == chess.WHITE else m.black) > 0]
        if not rows:
            return None
        if self.config.sort == "winrate":
            best = max(rows, key=lambda m: (m.winrate(board.turn), m.games))
        else:
            best = max(rows, key=lambda m: (m.games, m.winrate(board.turn)))
        move = legal_move(board, best.uci)
        note = (f"explorer: {self.config.source}, {best.games:,} games, "
                f"{100 * best.winrate(board.turn):.0f}% score")
        return OnlineMove(EXPLORER, note, move)
