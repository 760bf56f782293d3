"""What every online source is: a request for a position, a parser of the answer, a choice of move.

A source (:class:`Source`) is pure apart from its config: :meth:`Source.request` says what to ask (or
None: this source has nothing to say here, e.g. too many pieces), :meth:`Source.parse` turns the text
into a value that is cached per position, :meth:`Source.choose` picks the move from it. The lookup
itself (budget, pacing, retries, cache, switch-off) is :mod:`lichessbot.online.sources`'s.
"""

from __future__ import annotations

import json
import random
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Protocol

import chess

from lichessbot.online.http import Answer, SourceFailure
from lichessbot.online.types import OnlineMove

__all__ = ["Busy", "Request", "Source", "WrongAnswer", "expect", "legal_move", "load_json", "position_key"]


class WrongAnswer(SourceFailure):
    """An answer that cannot be read, or that names an illegal move (a failure of the source)."""


class Busy(SourceFailure):
    """The server said, in an ordinary answer, that it will not answer now (chessdb's ``rate limit
    exceeded`` with HTTP 200: more than its few queries a second from one address). This lookup is
    skipped: not a failure of the source (no switch-off), not an answer (nothing cached), never a move."""


@dataclass(frozen=True)
class Request:
    """One GET: ``url`` with ``params``; ``endpoint`` names it in logs; ``key`` is the cache key of
    its answer (the position and whatever else shapes the answer); ``ndjson``: a stream of JSON lines."""

    url: str
    params: dict[str, str | int]
    endpoint: str
    key: Hashable
    ndjson: bool = False


class Source(Protocol):
    """One online source (see the module docstring)."""

    #: the config key (``chessdb_book``, ...)
    name: str
    #: a lichess server: paced with the bot's requests and sent its token
    lichess: bool

    def request(self, board: chess.Board, player: str) -> Request | None:
        """What to ask for ``board`` (``player``: our account's name), or None when this source does
        not cover the position (variant, pieces, castling rights)."""
        ...

    def parse(self, board: chess.Board, answer: Answer) -> Any:
        """The answer as a value to cache (immutable).

        Raises:
            WrongAnswer: unreadable, or shaped unlike the service's documented answer.
        """
        ...

    def choose(self, board: chess.Board, parsed: Any, rng: random.Random) -> OnlineMove | None:
        """The move (with its note) from a parsed answer, or None when the answer has none.

        Raises:
            WrongAnswer: the chosen move is not legal in ``board``.
        """
        ...


def position_key(board: chess.Board) -> str:
    """The position without the move counters (books: the same position is the same answer)."""
    return board.epd()


def load_json(text: str) -> Any:
    """Parse JSON; :class:`WrongAnswer` when it is not."""
    try:
        return json.loads(text)
    except ValueError:
        raise WrongAnswer("not JSON") from None


def expect(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    """``value`` when it is of ``kind`` (bool is not an int here), else :class:`WrongAnswer` naming ``what``."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise WrongAnswer(f"{what} has the wrong type")
    return value


def legal_move(board: chess.Board, uci: Any) -> chess.Move:
    """The legal move ``uci`` (UCI; castling also as king-takes-rook, as lichess writes it in Chess960).

    Raises:
        WrongAnswer: not a string, not UCI, or not legal in ``board``.
    """
    if not isinstance(uci, str):
        raise WrongAnswer("a move is not a string")
    try:
        return board.parse_uci(uci)
    except ValueError:
        raise WrongAnswer(f"illegal move {uci[:10]!r}") from None
