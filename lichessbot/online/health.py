"""What the online sources remember between moves: answers per position, and which sources are off.

Both are shared by every game of the bot and thread-safe. Imports nothing of the project.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import structlog

__all__ = ["AnswerCache", "SourceHealth"]

log = structlog.get_logger("lichessbot.online")

#: Answers kept (ours: a few hundred bytes each, enough for many games' openings and endgames).
CACHE_ENTRIES = 20_000


class AnswerCache:
    """The parsed answers of the sources, by (source, position key), least recently used first out.

    Only answers are kept (a move, or "this server has no move here"), never failures.
    """

    def __init__(self, entries: int = CACHE_ENTRIES):
        self._entries = entries
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable) -> tuple[bool, Any]:
        """(True, answer) when ``key`` is cached, else (False, None)."""
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return True, self._data[key]
            self.misses += 1
            return False, None

    def put(self, key: Hashable, answer: Any) -> None:
        with self._lock:
            self._data[key] = answer
            self._data.move_to_end(key)
            while len(self._data) > self._entries:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


class SourceHealth:
    """Failures in a row of each source; ``after`` of them switch the source off for ``seconds``.

    A 429 switches a source off at once for at least a minute (lichess: https://lichess.org/page/api-tips).
    Switching off is logged once (``online source switched off``, with the source, the reason and the
    seconds); the source comes back by itself when the time is over.

    Args:
        after: failed lookups in a row that switch a source off.
        seconds: how long it stays off.
        clock: monotonic seconds (tests).
    """

    #: Seconds a rate-limited source stays off at least (lichess asks for one minute).
    RATE_LIMIT_PAUSE_S = 60.0

    def __init__(self, after: int, seconds: float, clock: Callable[[], float]):
        self.after, self.seconds = after, seconds
        self._clock = clock
        self._failures: dict[str, int] = {}
        self._off_until: dict[str, float] = {}
        self._lock = threading.Lock()
        self.switched_off = 0  # times any source was switched off

    def available(self, source: str) -> bool:
        """False while ``source`` is switched off."""
        with self._lock:
            return self._clock() >= self._off_until.get(source, 0.0)

    def ok(self, source: str) -> None:
        """A lookup brought an answer: the count of failures in a row starts again."""
        with self._lock:
            self._failures[source] = 0

    def failed(self, source: str, reason: str, *, rate_limited: bool = False) -> None:
        """A lookup failed (``reason`` in words, no URL); the ``after``-th in a row (or a 429) switches
        the source off."""
        with self._lock:
            n = self._failures.get(source, 0) + 1
            self._failures[source] = n
            if n < self.after and not rate_limited:
                log.debug("online source failed", source=source, reason=reason, in_a_row=n)
                return
            seconds = max(self.seconds, self.RATE_LIMIT_PAUSE_S) if rate_limited else self.seconds
            self._off_until[source] = self._clock() + seconds
            self._failures[source] = 0
            self.switched_off += 1
        log.warning("online source switched off", source=source, reason=reason, failures_in_a_row=n,
                    seconds=round(seconds))
