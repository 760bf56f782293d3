"""chessdb.cn (``online_moves.chessdb_book``, and ``online_egtb`` with ``source: chessdb``).

``GET {url}?action=...&board=FEN`` answers plain text (chessdb's API page,
https://www.chessdb.cn/cloudbookc_api_en.html, and its server noobpwnftw/chessdb web/cdb.php):

* ``querypv``: ``score:S,depth:D,pv:m1|m2|...`` (S: centipawns, the side to move's view);
* ``querybest`` / ``query``: ``move:m`` (``egtb:m`` from its tables; ``search:m1|search:m2`` when its
  tables only say which moves draw);
* ``queryall``: ``move:m,score:S,rank:R,note:...|move:...`` best first. In positions of its Syzygy tables
  S is ``25000 - plies`` for a win (plies to zeroing after the move), ``20000 - plies`` for a cursed win,
  0 for a draw, the negatives for losses, ``??`` when unknown.
* no move: ``unknown``, ``nobestmove``, ``checkmate``, ``stalemate``, ``invalid board``;
* ``rate limit exceeded`` with HTTP 200: more queries from our address in the current second than it
  allows (cdb.php: ``QLimit::`` per address, 5 a second by default): the lookup is skipped
  (:class:`~lichessbot.online.base.Busy`), never read as an answer;
* within 7 pieces (and not Chess960) it answers from its Syzygy tables, ``querypv`` too: ``score`` is then
  ``+-25000 - |dtz|`` (a win or a loss), ``+-20000 - |dtz|`` (cursed win, blessed loss) or 0, and
  ``depth`` is the DTZ of its move from the opponent's view (cdb.php, the ``egtbresult`` branch of
  ``querypv``), not a search depth: such an answer is read as the tables' verdict (WDL and DTZ, no
  ``min_depth``), never as a centipawn score.

Book choice as lichess-bot (lib/engine_wrapper.py ``get_chessdb_move``): ``best`` = querypv's first
move when its depth is at least ``min_depth``, ``good`` = querybest, ``all`` = query. Tables (queryall)
as lichess-bot's ``get_chessdb_egtb_move``: WDL by score (> 20000 win, > 0 cursed win, 0 draw, < 0
blessed loss, < -20000 loss).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess

from lichessbot.config.online import ChessdbBookConfig, OnlineEgtbConfig
from lichessbot.online.base import Busy, Request, WrongAnswer, legal_move, position_key
from lichessbot.online.egtb import TableAnswer, TableMove, choose_table_move, covered, table_key
from lichessbot.online.http import Answer
from lichessbot.online.types import CHESSDB, EGTB, WDL_WORDS, OnlineMove

__all__ = ["ChessdbBook", "ChessdbTablebase", "parse_fields"]

#: Answers that mean "no move here" (an answer, cached), not a failure.
NO_MOVE = frozenset({"unknown", "nobestmove", "checkmate", "stalemate", "invalid board"})
#: Scores of its tables (cdb.php: 25000 - plies for a win, 20000 - plies for a cursed win).
WIN_SCORE, CURSED_SCORE = 25_000, 20_000
#: Its answer when our address asked too often this second (cdb.php, with HTTP 200).
RATE_LIMITED = "rate limit exceeded"
#: Pieces (kings included) up to which it answers from its Syzygy tables (cdb.php ``count_pieces( $row ) <= 7``).
TABLE_PIECES = 7
_ACTIONS = {"best": "querypv", "good": "querybest", "all": "query"}


def parse_fields(record: str) -> dict[str, str]:
    """``move:e2e4,score:30,rank:2`` as a dict (a ``note`` may hold commas: it runs to the next key)."""
    out: dict[str, str] = {}
    key = None
    for part in record.split(","):
        name, sep, value = part.partition(":")
        if sep and name.strip() in ("move", "score", "rank", "note", "winrate", "depth", "pv", "egtb", "search"):
            key = name.strip()
            out[key] = value.strip()
        elif key is not None:
            out[key] += "," + part
        else:
            raise WrongAnswer("not chessdb's key:value form")
    return out


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise WrongAnswer(f"{what} is not a number") from None


@dataclass(frozen=True)
class BookAnswer:
    """chessdb's book answer: moves (one for querybest/query; the line for querypv) and, for querypv,
    the score (side to move, cp) and depth; or, for a querypv answered from its tables, ``wdl`` (ours after
    the move: 2 win ... -2 loss) and ``dtz`` (plies to zeroing after the move) instead of cp and depth."""

    moves: tuple[str, ...]
    cp: int | None = None
    depth: int | None = None
    wdl: int | None = None
    dtz: int | None = None


def _busy(text: str) -> None:
    """:class:`Busy` for chessdb's rate-limit answer."""
    if text == RATE_LIMITED:
        raise Busy("chessdb: rate limit exceeded")


class ChessdbBook:
    """chessdb's opening book as a :class:`lichessbot.online.base.Source`."""

    name = CHESSDB
    lichess = False

    def __init__(self, config: ChessdbBookConfig):
        self.config = config

    def request(self, board: chess.Board, player: str) -> Request | None:
        if board.chess960:
            return None
        action = _ACTIONS[self.config.move_quality]
        return Request(self.config.url, {"action": action, "board": board.fen()}, f"GET chessdb {action}",
                       (CHESSDB, action, position_key(board)))

    def parse(self, board: chess.Board, answer: Answer) -> BookAnswer | None:
        text = answer.text.strip().rstrip("\x00")
        if answer.status != 200:
            raise WrongAnswer(f"answer {answer.status}")
        _busy(text)
        if text in NO_MOVE:
            return None
        if self.config.move_quality == "best":
            fields = parse_fields(text)
            if not {"score", "depth", "pv"} <= fields.keys():
                raise WrongAnswer("a line without score, depth or pv")
            score, depth = _int(fields["score"], "score"), _int(fields["depth"], "depth")
            moves = tuple(fields["pv"].split("|"))
            if chess.popcount(board.occupied) <= TABLE_PIECES:  # its tables: a verdict, not a search
                return BookAnswer(moves[:1], wdl=score_wdl(score), dtz=abs(depth))
            return BookAnswer(moves, score, depth)
        first = text.split("|")[0]
        fields = parse_fields(first)
        uci = fields.get("move") or fields.get("egtb")
        if uci is None:
            return None  # search:...: its tables name the drawing moves only; the search decides
        return BookAnswer((uci,))

    def choose(self, board: chess.Board, parsed: BookAnswer | None, rng: random.Random) -> OnlineMove | None:
        if parsed is None or not parsed.moves:
            return None
        if parsed.wdl is not None:  # its tables' move: exact, whatever min_depth says
            move = legal_move(board, parsed.moves[0])
            note = f"chessdb: tablebase {WDL_WORDS[parsed.wdl]}"
            if parsed.wdl != 0 and parsed.dtz is not None:
                note += f", DTZ {parsed.dtz} after the move"
            return OnlineMove(CHESSDB, note, move, wdl=parsed.wdl, dtz=parsed.dtz)
        if parsed.depth is not None and parsed.depth < self.config.min_depth:
            return None
        move = legal_move(board, parsed.moves[0])
        if parsed.cp is not None:
            note = f"chessdb: {parsed.cp / 100:+.2f}, depth {parsed.depth}"
        else:
            note = f"chessdb: {self.config.move_quality} move"
        return OnlineMove(CHESSDB, note, move, cp=parsed.cp, depth=parsed.depth)


def score_wdl(score: int) -> int:
    """Our WDL after a move from chessdb's table score (lichess-bot ``score_to_wdl``'s thresholds)."""
    if score > CURSED_SCORE:
        return 2
    if score > 0:
        return 1
    if score == 0:
        return 0
    return -1 if score >= -CURSED_SCORE else -2


def score_plies(score: int) -> int:
    """Plies to zeroing after the move, from chessdb's table score (0 for a draw)."""
    a = abs(score)
    return WIN_SCORE - a if a > CURSED_SCORE else (CURSED_SCORE - a if a else 0)


class ChessdbTablebase:
    """chessdb's Syzygy tables (``queryall``) as a :class:`lichessbot.online.base.Source`."""

    name = EGTB
    lichess = False

    def __init__(self, config: OnlineEgtbConfig):
        self.config = config

    def request(self, board: chess.Board, player: str) -> Request | None:
        if not covered(board, self.config) or board.chess960:
            return None
        return Request(self.config.server(), {"action": "queryall", "board": board.fen()}, "GET chessdb queryall",
                       (EGTB, "chessdb", table_key(board)))

    def parse(self, board: chess.Board, answer: Answer) -> TableAnswer:
        text = answer.text.strip().rstrip("\x00")
        if answer.status != 200:
            raise WrongAnswer(f"answer {answer.status}")
        _busy(text)
        if text in NO_MOVE:
            return TableAnswer((), None)
        rows = []
        for record in text.split("|"):
            fields = parse_fields(record)
            if "move" not in fields or "score" not in fields:
                raise WrongAnswer("a move without move or score")
            if fields["score"] == "??":
                rows.append(TableMove(fields["move"], None, None))
                continue
            score = _int(fields["score"], "score")
            rows.append(TableMove(fields["move"], score_wdl(score), score_plies(score)))
        return TableAnswer(tuple(rows), None)

    def choose(self, board: chess.Board, parsed: TableAnswer, rng: random.Random) -> OnlineMove | None:
        return choose_table_move(board, parsed, self.config.move_quality, " (chessdb)")
