"""Online endgame tablebases (``online_moves.online_egtb``): the choice among the tables' moves, and
lichess's tablebase server (chessdb's tables: :mod:`lichessbot.online.chessdb`).

lichess's server, as lichess-org/api doc/specs/tags/tablebase/standard.yaml and schemas/TablebaseJson.yaml:
``GET {url}/standard?fen=...``; the answer has the position's ``category`` and ``dtz`` (the side to
move's view) and ``moves[]``, best first, each with ``uci``, ``category`` and ``dtz`` from the view of the
side that moves *next* (the opponent): a move whose category is ``loss`` wins for us. ``cursed-win`` /
``blessed-loss``: the 50-move rule draws it; ``maybe-*``: the 50-move result is unknown (counted with the
cursed ones, as lichess-bot does); ``syzygy-*``: decisive, DTZ rounded; ``unknown``: not in the tables.

Asked like lichess-bot (lib/engine_wrapper.py ``get_online_egtb_move``): at most ``max_pieces`` pieces
and no castling rights. ``best`` plays the first move; ``suggest`` gives every move of the first
move's result (one such move is played at once).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess

from lichessbot.config.online import OnlineEgtbConfig
from lichessbot.online.base import Request, WrongAnswer, expect, legal_move, load_json
from lichessbot.online.http import Answer
from lichessbot.online.types import EGTB, WDL_WORDS, OnlineMove

__all__ = ["LichessTablebase", "TableMove", "choose_table_move", "covered", "table_key"]

#: Our WDL after a move, from the category lichess gives it (the opponent's view).
_OUR_WDL = {"loss": 2, "syzygy-loss": 2, "maybe-loss": 1, "blessed-loss": 1, "draw": 0, "cursed-win": -1,
            "maybe-win": -1, "syzygy-win": -2, "win": -2, "unknown": None}


@dataclass(frozen=True)
class TableMove:
    """One move of the tables: UCI, our WDL after it (None: not in the tables), and the plies to
    zeroing after it (as the server says; None: unknown)."""

    uci: str
    wdl: int | None
    dtz_after: int | None


@dataclass(frozen=True)
class TableAnswer:
    """The moves best first and the position's own DTZ (side to move's view, None: unknown)."""

    moves: tuple[TableMove, ...]
    dtz: int | None


def covered(board: chess.Board, config: OnlineEgtbConfig) -> bool:
    """The tables are asked: few enough pieces and no castling rights."""
    return chess.popcount(board.occupied) <= config.max_pieces and not board.castling_rights


def table_key(board: chess.Board) -> str:
    """The position and its 50-move counter (which shapes cursed wins and blessed losses)."""
    return f"{board.epd()} {board.halfmove_clock}"


def choose_table_move(board: chess.Board, answer: TableAnswer, quality: str, where: str) -> OnlineMove | None:
    """``best``: the first move; ``suggest``: every move of the first move's result (a single one is
    played). ``where`` names the server in the note (``""`` for lichess's).

    Raises:
        WrongAnswer: a move is not legal.
    """
    first = answer.moves[0] if answer.moves else None
    if first is None or first.wdl is None:
        return None
    wdl = first.wdl
    keep = [m for m in answer.moves if m.wdl == wdl] if quality == "suggest" else [first]
    moves = tuple(legal_move(board, m.uci) for m in keep)
    dtz = abs(answer.dtz) if answer.dtz is not None else None
    label = f"tablebase {WDL_WORDS[wdl]}{where}"
    if len(moves) > 1:
        return OnlineMove(EGTB, f"{label}: {len(moves)} moves keep it", None, moves, wdl=wdl, dtz=dtz)
    if dtz is not None and wdl != 0:
        label += f", DTZ {dtz}"
    elif first.dtz_after is not None and wdl != 0:
        label += f", DTZ {abs(first.dtz_after)} after the move"
    return OnlineMove(EGTB, label, moves[0], wdl=wdl, dtz=dtz)


class LichessTablebase:
    """lichess's tablebase server as a :class:`lichessbot.online.base.Source`."""

    name = EGTB
    lichess = True

    def __init__(self, config: OnlineEgtbConfig):
        self.config = config

    def request(self, board: chess.Board, player: str) -> Request | None:
        if not covered(board, self.config):
            return None
        return Request(f"{self.config.server()}/standard", {"fen": board.fen()}, "GET tablebase/standard",
                       (EGTB, "lichess", table_key(board)))

    def parse(self, board: chess.Board, answer: Answer) -> TableAnswer:
        if answer.status != 200:
            raise WrongAnswer(f"answer {answer.status}")
        data = expect(load_json(answer.text), dict, "the answer")
        expect(data.get("category"), str, "category")
        rows = []
        for row in expect(data.get("moves"), list, "moves"):
            row = expect(row, dict, "a move")
            category = expect(row.get("category"), str, "category")
            if category not in _OUR_WDL:
                raise WrongAnswer("an unknown category")
            rows.append(TableMove(expect(row.get("uci"), str, "uci"), _OUR_WDL[category],
                                  expect(row.get("dtz"), (int, type(None)), "dtz")))
        return TableAnswer(tuple(rows), expect(data.get("dtz"), (int, type(None)), "dtz"))

    def choose(self, board: chess.Board, parsed: TableAnswer, rng: random.Random) -> OnlineMove | None:
        return choose_table_move(board, parsed, self.config.move_quality, "")
