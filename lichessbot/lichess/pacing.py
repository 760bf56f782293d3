"""Request pacing for one lichess account: a token bucket for every request but moves, moves first.

lichess publishes no overall figure for a bot's requests: it limits each endpoint on its own (the windows of
:mod:`lichessbot.lichess.limits`, counted there) and asks clients to make one request at a time and, after a
429, to wait a full minute (https://lichess.org/page/api-tips). This bucket is ours, on top of that: it keeps
the bot's own bursts smooth and gives chat the last place.

* **move posts** (``POST /api/bot/game/{id}/move/{uci}``) and game stream opens never wait and take no
  token: a game's clock cannot wait, and their number is set by the games, not by us (8 bullet games post
  3-5 moves a second together; a bucket they drew on would starve every other request);
* **other requests** (challenge answers, abort/resign/claims, account calls, the event stream) wait
  until a token is free (each wait is logged as ``request deferred`` with the reason);
* **chat** goes only while more than ``chat_reserve`` tokens are left; a chat line that would wait longer
  than ``chat_max_wait`` seconds is dropped (:class:`RequestDropped`, logged as ``request dropped``),
  never queued without bound.

The numbers (ours, not lichess's): ``rate`` 3 requests/s refilled, ``burst`` 10, chat only with 4 tokens
spare. Everything but moves and streams also goes one request at a time
(:class:`~lichessbot.lichess.session.BotSession`).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import structlog

from lichessbot.errors import LichessbotError
from lichessbot.lichess import limits

__all__ = ["CHAT", "MOVE", "OTHER", "Pacer", "RequestDropped", "pause_key", "request_class"]

log = structlog.get_logger("lichessbot.lichess")

MOVE, CHAT, OTHER = "move", "chat", "other"

_MOVE = re.compile(r"^/api/bot/game/([^/]+)/move/[^/]+$")
_GAME_STREAM = re.compile(r"^/api/bot/game/stream/[^/]+$")
_CHAT = re.compile(r"^/api/bot/game/[^/]+/chat$")


class RequestDropped(LichessbotError, RuntimeError):
    """A request given up before it was sent (chat while the budget is short). ``status`` is None."""

    status = None


def request_class(method: str, url: str) -> str:
    """``"move"``, ``"chat"`` or ``"other"`` for a request (its place in the line). Opening a game's
    stream is a ``"move"``: a game cannot move without it, and its clock runs meanwhile."""
    path = urlsplit(url).path
    if (method.upper() == "POST" and _MOVE.match(path)) or (method.upper() == "GET" and _GAME_STREAM.match(path)):
        return MOVE
    if method.upper() == "POST" and _CHAT.match(path):
        return CHAT
    return OTHER


def pause_key(method: str, url: str, endpoint: str) -> str:
    """What a 429 on this request pauses: a move post only *that game's* moves
    (``POST /api/bot/game/{id}/move/*``: pausing every game's moves for a minute would flag every running
    bullet and blitz game); a game stream open only that endpoint (``endpoint``); anything else its
    endpoint class (:func:`lichessbot.lichess.limits.request_class`: lila limits each endpoint on its own, so a
    429 on creating a challenge pauses challenge creations, never the answers to other challenges nor the
    event stream).
    """
    path = urlsplit(url).path
    m = _MOVE.match(path)
    if method.upper() == "POST" and m:
        return f"POST /api/bot/game/{m.group(1)}/move/*"
    if method.upper() == "GET" and _GAME_STREAM.match(path):
        return endpoint
    return limits.request_class(method, url)


class Pacer:
    """The token bucket (thread-safe). ``rate`` tokens per second, at most ``burst`` saved.

    Args:
        rate: tokens refilled per second (> 0).
        burst: bucket size, tokens.
        chat_reserve: tokens a chat line leaves for moves (chat needs ``1 + chat_reserve``).
        chat_max_wait: seconds a chat line may wait for its token before it is dropped.
        clock: monotonic seconds (tests).
    """

    def __init__(self, rate: float = 3.0, burst: float = 10.0, chat_reserve: float = 4.0, chat_max_wait: float = 2.0,
                 clock: Callable[[], float] = time.monotonic):
        if rate <= 0 or burst < 1:
            raise ValueError("pacing needs rate > 0 and burst >= 1")
        self.rate, self.burst = rate, burst
        self.chat_reserve, self.chat_max_wait = chat_reserve, chat_max_wait
        self._clock = clock
        self._tokens = burst
        self._at = clock()
        self._lock = threading.Lock()
        self.deferred = 0  # requests that waited for a token
        self.dropped = 0   # chat lines given up

    def _refill(self) -> float:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        return self._tokens

    @property
    def tokens(self) -> float:
        with self._lock:
            return self._refill()

    def acquire(self, kind: str, endpoint: str, sleep: Callable[[float], None]) -> None:
        """Take a token for a request of class ``kind``; ``sleep(seconds)`` waits (and may raise to cut).

        Raises:
            RequestDropped: a chat line whose token would take longer than ``chat_max_wait``.
        """
        need = 1.0 + (self.chat_reserve if kind == CHAT else 0.0)
        waited = 0.0
        logged = False
        while True:
            if kind == MOVE:
                return  # outside the bucket: never waits, takes nothing from the other requests
            with self._lock:
                tokens = self._refill()
                if tokens >= need:
                    self._tokens = max(-self.burst, tokens - 1.0)
                    return
                wait = (need - tokens) / self.rate
                if kind == CHAT and waited + wait > self.chat_max_wait:
                    self.dropped += 1
                    log.warning("request dropped", endpoint=endpoint, reason="request budget short; chat gives way "
                                "to moves", tokens=round(tokens, 2), wait_s=round(wait, 2))
                    raise RequestDropped(f"{endpoint}: dropped, the request budget is short")
                if not logged:
                    self.deferred += 1
                    logged = True
                    log.warning("request deferred", endpoint=endpoint, reason="request budget short",
                                wait_s=round(wait, 2))
            sleep(wait)
            waited += wait
