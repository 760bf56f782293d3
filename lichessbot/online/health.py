"""What the online sources remember between moves: answers per position, and which sources are off.

Both are shared by every game of the bot and thread-safe. Imports nothing of the project.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import structlog

__all__ = ["AnswerCache", "DailyBudget", "SourceHealth"]

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


class DailyBudget:
    """Requests a source may send in a day, counted as lila counts them: a fixed window that opens at the
    first request and lasts a day (lila modules/memo/src/main/RateLimit.scala: ``clearAt = now + duration``
    at the first request of a window), not a rolling one. At the cap the source is not asked until the window
    closes (logged once, ``online source daily budget spent``).

    Args:
        name: the source (logs).
        per_day: requests a window allows (0: none; lila's cloud eval, app/controllers/Api.scala
            ``cloudEval``: 3,000 a day per address, a request with a token costing 1).
        clock: monotonic seconds (tests).
    """

    DAY_S = 86_400.0

    def __init__(self, name: str, per_day: int, clock: Callable[[], float]):
        self.name, self.per_day = name, per_day
        self._clock = clock
        self._lock = threading.Lock()
        self._window_end: float | None = None
        self.used = 0
        self._logged = False

    def take(self) -> bool:
        """Count one request; False (nothing counted) when the day's budget is spent."""
        with self._lock:
            now = self._clock()
            if self._window_end is None or now >= self._window_end:
                self._window_end, self.used, self._logged = now + self.DAY_S, 0, False
            if self.used < self.per_day:
                self.used += 1
                return True
            if not self._logged:
                self._logged = True
                log.warning("online source daily budget spent", source=self.name, requests=self.used,
                            seconds_left=round(self._window_end - now))
            return False

    def refund(self) -> None:
        """Give back the request of the last :meth:`take` (it was never sent: no time left for it)."""
        with self._lock:
            self.used = max(0, self.used - 1)
