"""lila's request limits by endpoint class, counted as lila counts them, so the bot waits (or gives up) before
lichess would answer 429.

lichess has no single figure for a bot's requests (https://lichess.org/page/api-tips asks for one request
at a time and, after a 429, a minute's pause); it limits each endpoint on its own, each limit a window of
credits that opens at the first request and closes ``seconds`` later (lila modules/memo/src/main/RateLimit.scala:
``clearAt = now + duration``; a request costs its ``cost`` in credits). The limits the bot meets
(lila modules/web/src/main/Limiters.scala, app/controllers/Challenge.scala ``apiCreate``):

* **event stream** opens (``GET /api/stream/event``): 30 per 10 minutes per token (``eventStream``);
* **account** (``GET /api/account``): 30 per 5 minutes per user (``apiMe``: "please don't poll");
* **challenge creation** (``POST /api/challenge/{user}``): 25 credits a minute and 200 a day per user
  (``challengeUser``), a challenge to a human costing 5, to a bot 1, to someone who follows us 0;
* **arena joins** (``POST /api/tournament/{id}/join``): 30 per 10 minutes per user (``tourJoinOrResume``).

Every other request has no window here (cloud evals are the online room's: its daily budget). Each class
is also what a 429 pauses (:func:`request_class`): a 429 on creating a challenge pauses challenge
creations, never the answers to other challenges.

Imports nothing of the project.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["ACCOUNT", "ANSWER", "ARENA", "CHALLENGE", "CHAT", "CLASSES", "EVENT_STREAM", "LILA_LIMITS", "OTHER",
           "Window", "Windows", "request_class"]

#: Endpoint classes (besides move posts and game streams, which are per game).
EVENT_STREAM, ACCOUNT, CHALLENGE, ANSWER, ARENA, CHAT, OTHER = (
    "event stream", "account", "challenge creation", "challenge answers", "arenas", "chat", "other requests")
CLASSES = (EVENT_STREAM, ACCOUNT, CHALLENGE, ANSWER, ARENA, CHAT, OTHER)

_CHALLENGE_ANSWER = re.compile(r"^/api/challenge/[^/]+/(accept|decline|cancel)$")
_CHALLENGE_CREATE = re.compile(r"^/api/challenge/[^/]+$")
_ARENA = re.compile(r"^/api/tournament/[^/]+/(join|withdraw)$")
_CHAT = re.compile(r"^/api/bot/game/[^/]+/chat$")


def request_class(method: str, url: str) -> str:
    """The endpoint class of a request that is neither a move post nor a game stream (see the module)."""
    path = urlsplit(url).path
    post = method.upper() == "POST"
    if path == "/api/stream/event":
        return EVENT_STREAM
    if path == "/api/account":
        return ACCOUNT
    if post and _CHALLENGE_ANSWER.match(path):
        return ANSWER
    if post and _CHALLENGE_CREATE.match(path):
        return CHALLENGE
    if post and _ARENA.match(path):
        return ARENA
    if post and _CHAT.match(path):
        return CHAT
    return OTHER


@dataclass(frozen=True)
class Window:
    """One of lila's limits: ``credits`` per window of ``seconds``; ``key`` is lila's name for it."""

    credits: int
    seconds: float
    key: str


#: lila's limits by class (the module docstring gives the sources).
LILA_LIMITS: dict[str, tuple[Window, ...]] = {
    EVENT_STREAM: (Window(30, 600.0, "api.stream.event.bearer"),),
    ACCOUNT: (Window(30, 300.0, "api.account.user"),),
    CHALLENGE: (Window(25, 60.0, "challenge.create.user fast"), Window(200, 86_400.0, "challenge.create.user slow")),
    ARENA: (Window(30, 600.0, "tournament.user.joinOrResume"),),
}


class Windows:
    """lila's windows of each class, counted on our side (thread-safe).

    Args:
        limits: the windows of each class (default :data:`LILA_LIMITS`).
        clock: monotonic seconds (tests).
    """

    def __init__(self, limits: dict[str, tuple[Window, ...]] | None = None,
                 clock: Callable[[], float] | None = None):
        import time  # noqa: PLC0415 - the default clock only

        self.limits = LILA_LIMITS if limits is None else limits
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._used: dict[str, tuple[int, float]] = {}  # lila key -> (credits used, window end)

    def wait(self, cls: str, cost: int = 1) -> float:
        """Seconds until a request of class ``cls`` costing ``cost`` credits fits every window of its class
        (0: it fits now); counts nothing."""
        with self._lock:
            return self._wait(cls, cost, self._clock())

    def _wait(self, cls: str, cost: int, now: float) -> float:
        wait = 0.0
        for w in self.limits.get(cls, ()):
            used, end = self._used.get(w.key, (0, 0.0))
            if now >= end:
                used = 0
            if used + cost > w.credits:
                wait = max(wait, end - now)
        return wait

    def take(self, cls: str, cost: int = 1) -> float:
        """Count a request of ``cls`` costing ``cost`` if it fits now and return 0; else count nothing and
        return the seconds until it fits. A window opens at the first request it counts."""
        with self._lock:
            now = self._clock()
            wait = self._wait(cls, cost, now)
            if wait > 0:
                return wait
            for w in self.limits.get(cls, ()):
                used, end = self._used.get(w.key, (0, 0.0))
                if now >= end:
                    used, end = 0, now + w.seconds
                self._used[w.key] = (used + cost, end)
            return 0.0

    def left(self, cls: str) -> dict[str, int]:
        """Credits left in each window of ``cls`` now (lila key -> credits), for the status page."""
        with self._lock:
            now = self._clock()
            out = {}
            for w in self.limits.get(cls, ()):
                used, end = self._used.get(w.key, (0, 0.0))
                out[w.key] = w.credits - (used if now < end else 0)
            return out
