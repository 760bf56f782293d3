"""The account's HTTP session: the token, timeouts, retries, pacing and 429 pauses of every request
(:class:`BotSession`), the errors a call ends with, and the network settings. Wire only: imports no config.

* Timeouts (seconds): ordinary calls ``timeout`` (10); streams ``stream_read_timeout`` (20), above
  lichess's 7 s keepalive, so a stream silent for that long raises and is reconnected by the caller.
  Move posts read for ``move_timeout`` (3) only and retry while their ``deadline`` (from the clock) allows.
* Connection errors and 5xx answers on ordinary calls are retried ``retries`` times with exponential
  backoff (``backoff``, doubled each time). A call that fails for good names the server and the cause
  (name resolution, refused, timeout, TLS: :mod:`lichessbot.lichess.unreachable`) and what to check; a
  call with a ``budget`` (the first contact: ``first_contact``, 8 s) gives up within it, retries included.
* Every request goes through the account's token bucket (:mod:`lichessbot.lichess.pacing`): move posts
  first, chat last and dropped when the budget is short.
* Everything but move posts and streams goes one request at a time (api-tips); moves never wait for it.
* lila's own limits by endpoint class (:mod:`lichessbot.lichess.limits`: event-stream opens, account reads,
  challenge creations with their cost, arena joins) are counted here before a request is sent: a request
  over its class's window waits for the window to close (logged ``request deferred``), or, with
  ``over_limit="refuse"`` (challenge creations), is not sent at all (:class:`OverLimit`, with the seconds).
* A 429 pauses its endpoint class only (:func:`~lichessbot.lichess.pacing.pause_key`; move posts: that
  game's moves only; a game stream open: that stream) for the ``ratelimit.seconds``
  of lila's ``JsonLimited`` body
  (``{"error", "ratelimit": {"key", "seconds"}}``; lila never sends Retry-After, read only as a fallback),
  or ``rate_limit_pause`` (60) without one (an HTML 429 page; lichess asks for one minute:
  https://lichess.org/page/api-tips). Challenge answers and creations are never retried after a 429
  (``retry_429=False``: the caller reads the limit from :class:`LichessError`); a 429 with key
  ``bot.vsBot.day`` (lila BotLimit: games against bots a day) limits games, not requests: it is never
  retried and pauses nothing. Calls to a paused class wait for the pause to end; chat is
  dropped; a move waits no longer than its deadline, and a move lichess accepts ends its game's pause.
* The token lives in the session's Authorization header only; it is never formatted into a message.
"""

from __future__ import annotations

import contextlib
import random
import re
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
import structlog

from lichessbot import __version__
from lichessbot.errors import LichessbotError
from lichessbot.lichess.events import RateLimit, parse_rate_limit
from lichessbot.lichess.limits import Windows
from lichessbot.lichess.limits import request_class as endpoint_class
from lichessbot.lichess.pacing import CHAT, MOVE, Pacer, RequestDropped, pause_key, request_class
from lichessbot.lichess.unreachable import describe
from lichessbot.lichess.users import BOT_GAMES_KEY

__all__ = ["BotSession", "ChallengeLimited", "ClientSettings", "LichessError", "OverLimit", "body_rate_limit",
           "endpoint_key", "retry_after"]

log = structlog.get_logger("lichessbot.lichess")


class LichessError(LichessbotError, RuntimeError):
    """A lichess call that failed for good. ``status`` is the HTTP status (None: no answer);
    ``rate_limit`` lichess's ``ratelimit`` (key and seconds) when its error body has one."""

    def __init__(self, message: str, status: int | None = None, rate_limit: RateLimit | None = None):
        super().__init__(message)
        self.status = status
        self.rate_limit = rate_limit


class OverLimit(LichessError):
    """A request not sent: it would pass lila's limit of its endpoint class (:mod:`lichessbot.lichess.limits`).
    ``seconds``: until it fits. ``status`` is None (lichess was not asked)."""

    def __init__(self, message: str, seconds: float):
        super().__init__(message)
        self.seconds = seconds


class ChallengeLimited(LichessError):
    """lichess refused to create a challenge with a 429 (e.g. the daily limit of bot challenges).

    ``seconds``: how long lichess says to wait (the body's ``ratelimit.seconds``, else Retry-After), or None.
    """

    def __init__(self, message: str, seconds: float | None, rate_limit: RateLimit | None = None):
        super().__init__(message, 429, rate_limit)
        self.seconds = seconds


@dataclass(frozen=True)
class ClientSettings:
    """Network behaviour. All times in seconds."""

    timeout: float = 10.0              # connect and read timeout of ordinary calls
    move_timeout: float = 3.0          # read timeout of a move post (a bullet move cannot wait 10 s)
    stream_read_timeout: float = 20.0  # silence after which a stream is dropped (lichess keepalive: 7 s)
    retries: int = 3                   # extra attempts after a connection error or a 5xx
    backoff: float = 1.0               # first retry delay; doubled each retry, with 0-25 % jitter
    rate_limit_pause: float = 60.0     # pause after a 429 without Retry-After (lichess: one minute, api-tips)
    max_backoff: float = 30.0
    pace_rate: float = 3.0             # request budget refilled per second (ours: lichess has no overall figure)
    pace_burst: float = 10.0           # requests that may go in a row (ours)
    chat_reserve: float = 4.0          # tokens a chat line leaves for move posts (ours)
    chat_max_wait: float = 2.0         # a chat line waiting longer for its token is dropped
    first_contact: float = 8.0         # the first call (the token test), retries included: an unreachable
    #                                    server is named with its cause within it (ours: "within 10 s")

_ID_PATTERNS = [
    (re.compile(r"^/api/bot/game/stream/[^/]+$"), "/api/bot/game/stream/*"),
    (re.compile(r"^/api/bot/game/[^/]+/move/[^/]+$"), "/api/bot/game/*/move/*"),
    (re.compile(r"^/api/bot/game/[^/]+/draw/[^/]+$"), "/api/bot/game/*/draw/*"),
    (re.compile(r"^/api/bot/game/[^/]+/([a-z-]+)$"), r"/api/bot/game/*/\1"),
    (re.compile(r"^/api/challenge/[^/]+/(accept|decline|cancel)$"), r"/api/challenge/*/\1"),
    (re.compile(r"^/api/challenge/[^/]+$"), "/api/challenge/*"),
]


def endpoint_key(method: str, url: str) -> str:
    """``"POST /api/bot/game/*/move/*"`` for ``POST https://lichess.org/api/bot/game/abc/move/e2e4``."""
    path = urlsplit(url).path
    for pattern, repl in _ID_PATTERNS:
        if pattern.match(path):
            path = pattern.sub(repl, path)
            break
    return f"{method.upper()} {path}"


class BotSession(requests.Session):
    """A requests session that adds the token, default timeouts, retries, pacing and 429 pauses.

    ``stop`` (an Event) cuts waits short at shutdown; a cut wait raises :class:`LichessError`.
    A request may carry ``deadline=`` (monotonic seconds, move posts): waits for a 429 pause or a retry
    never go past it, and at the deadline the move is posted anyway (waiting longer loses on time). A
    request may carry ``budget=`` (seconds for the whole call, retries included): each attempt's connect and
    read timeouts are cut to what is left, and no retry starts with less than a second left.
    Counters: ``rate_limited`` (429 answers), ``posted_in_pause`` (moves sent at their deadline during a
    pause), ``dropped_in_pause`` / ``deferred_in_pause`` (chat lines dropped, other calls made to wait, while
    their class is paused by a 429); ``pacer.deferred`` /
    ``pacer.dropped`` (the request budget).
    """

    def __init__(self, token: str, settings: ClientSettings, stop: threading.Event | None = None):
        super().__init__()
        self.headers["Authorization"] = f"Bearer {token}"
        self.headers["User-Agent"] = f"lichessbot/{__version__}"
        self.settings = settings
        self.stop = stop or threading.Event()
        self.pacer = Pacer(settings.pace_rate, settings.pace_burst, settings.chat_reserve, settings.chat_max_wait)
        #: lila's windows by endpoint class, counted before each request (lichessbot.lichess.limits)
        self.windows = Windows()
        self.deferred_by_limit = 0  # requests that waited for a window of lila's to close
        self.refused_by_limit = 0   # requests not sent (over_limit="refuse") because a window was full
        self._paused_until: dict[str, float] = {}
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()  # every request but moves and streams (api-tips)
        self.rate_limited = 0
        self.posted_in_pause = 0
        self.dropped_in_pause = 0
        self.deferred_in_pause = 0

    def __repr__(self) -> str:  # never show the headers
        return "BotSession()"

    def pause_left(self, key: str) -> float:
        """Seconds the pause key ``key`` stays paused (0 when not paused); see :func:`pause_key`."""
        with self._lock:
            return max(0.0, self._paused_until.get(key, 0.0) - time.monotonic())

    def pauses(self) -> dict[str, float]:
        """Every pause key paused now (after a 429) -> seconds left."""
        now = time.monotonic()
        with self._lock:
            return {k: round(t - now, 1) for k, t in self._paused_until.items() if t > now}

    def _pause(self, key: str, seconds: float) -> None:
        with self._lock:
            self._paused_until[key] = max(self._paused_until.get(key, 0.0), time.monotonic() + seconds)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0 and self.stop.wait(seconds):
            raise LichessError("stopped while waiting to retry")

    def _wait_pause(self, pkey: str, kind: str, deadline: float | None) -> None:
        left = self.pause_left(pkey)
        if left <= 0:
            return
        if kind == CHAT:
            self.dropped_in_pause += 1
            log.warning("request dropped", endpoint=pkey, reason="rate limited (429): chat waits for no pause",
                        pause_left_s=round(left, 1))
            raise RequestDropped(f"{pkey}: dropped, rate limited")
        if deadline is not None and time.monotonic() + left > deadline:
            self._sleep(deadline - time.monotonic())
            if self.pause_left(pkey) > 0:
                self.posted_in_pause += 1
                log.warning("posting during a 429 pause", endpoint=pkey, reason="the clock runs out before the "
                            "pause ends", pause_left_s=round(self.pause_left(pkey), 1))
            return
        self.deferred_in_pause += 1
        log.warning("request deferred", endpoint=pkey, reason="rate limited (429)", wait_s=round(left, 1))
        self._sleep(left)

    def _fresh(self, method: str, url: str, fresh_for: float, *args: Any, **kwargs: Any) -> requests.Response:
        """A request sent within ``fresh_for`` seconds or not at all (see :meth:`request`)."""
        key = endpoint_key(method, url)
        pkey = pause_key(method, url, key)
        if self.pause_left(pkey) > 0:
            self.dropped_in_pause += 1
            log.warning("request dropped", endpoint=key, reason="rate limited (429): it would be stale when sent")
            raise RequestDropped(f"{key}: dropped, rate limited")
        if self.pacer.tokens < 1 or not self._one_at_a_time.acquire(timeout=fresh_for):
            log.warning("request dropped", endpoint=key, reason="it would be stale when sent")
            raise RequestDropped(f"{key}: dropped, it would be stale when sent")
        try:
            self.pacer.acquire(request_class(method, url), key, self._sleep)
            kwargs.setdefault("timeout", (self.settings.timeout, self.settings.timeout))
            retries = kwargs.pop("retries", None)
            retry_429 = kwargs.pop("retry_429", True)
            if retries not in (0, None) or retry_429:
                raise ValueError("a fresh request is never retried")
            return super().request(method, url, *args, **kwargs)
        except (requests.ConnectionError, requests.Timeout) as err:
            raise type(err)(f"cannot reach {_without_query(url)}: {type(err).__name__}") from err
        finally:
            self._one_at_a_time.release()

    def _within_limits(self, method: str, url: str, kind: str, cost: int, over_limit: str) -> None:
        """Count the request in lila's window of its class; a full window waits (or, ``over_limit="refuse"``,
        raises :class:`OverLimit`). Move posts and game streams have no window."""
        if kind == MOVE:
            return
        cls = endpoint_class(method, url)
        logged = False
        while True:
            wait = self.windows.take(cls, cost)
            if wait <= 0:
                return
            if over_limit == "refuse":
                self.refused_by_limit += 1
                log.warning("request not sent", endpoint=cls, reason="lichess's limit of this endpoint reached",
                            wait_s=round(wait, 1))
                raise OverLimit(f"{cls}: lichess's limit reached; it fits again in {wait:.0f} s", wait)
            if not logged:
                logged = True
                self.deferred_by_limit += 1
                log.warning("request deferred", endpoint=cls, reason="lichess's limit of this endpoint reached",
                            wait_s=round(wait, 1))
            self._sleep(wait)

    def request(self, method: str, url: str, *args: Any, deadline: float | None = None,  # type: ignore[override]
                retry_429: bool = True, cost: int = 1, over_limit: str = "wait", retries: int | None = None,
                budget: float | None = None, fresh_for: float | None = None,
                **kwargs: Any) -> requests.Response:
        """A request with the session's timeouts, retries, pacing, lila's windows and 429 pauses.

        ``cost``: its credits in lila's window (a challenge: 5 to a human, 1 to a bot); ``over_limit``:
        ``"wait"`` for a full window to close, or ``"refuse"`` (raise :class:`OverLimit`); ``retries``: the
        tries after a connection error or a 5xx (None: the settings'; 0 for a request that must not reach
        lichess twice); ``budget``: seconds the whole request may take; ``fresh_for``: seconds after which the
        request is stale: one that would wait longer for a 429 pause, a token or its turn is given up
        (:class:`RequestDropped`) rather than sent late (a takeback answer: lila reads a late ``yes`` as a proposal)."""
        s = self.settings
        if fresh_for is not None:
            return self._fresh(method, url, fresh_for, *args, retries=retries, retry_429=retry_429, **kwargs)
        max_tries = s.retries if retries is None else retries
        end = None if budget is None else time.monotonic() + budget
        stream = bool(kwargs.get("stream"))
        kind = request_class(method, url)
        key = endpoint_key(method, url)
        pkey = pause_key(method, url, key)
        read = s.stream_read_timeout if stream else s.move_timeout if kind == MOVE else s.timeout
        kwargs.setdefault("timeout", (s.timeout, read))
        delay = s.backoff
        attempt = 0
        while True:
            self._wait_pause(pkey, kind, deadline)
            self.pacer.acquire(kind, key, self._sleep)
            self._within_limits(method, url, kind, cost, over_limit)
            if end is not None:
                left = max(0.1, end - time.monotonic())
                kwargs["timeout"] = (min(s.timeout, left), min(read, left))
            try:
                with self._one_at_a_time if kind != MOVE and not stream else contextlib.nullcontext():
                    response = super().request(method, url, *args, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as err:
                if stream or attempt >= max_tries or _past(deadline) or _past(end, 1.0):
                    # Name the server, the path and the cause (never the token: it travels in a header).
                    limits = kwargs["timeout"]
                    connect, read_s = limits if isinstance(limits, tuple) else (limits, limits)
                    waited = read_s if isinstance(err, requests.ReadTimeout) else connect
                    raise type(err)(f"cannot reach {_without_query(url)}: {describe(err, url, waited)}") from err
                log.warning("http retry", endpoint=key, error=type(err).__name__, attempt=attempt + 1)
            else:
                if response.status_code == 429:
                    limit = None if stream else body_rate_limit(response)
                    after = limit.seconds if limit is not None else retry_after(response)
                    pause = after if after is not None else s.rate_limit_pause
                    self.rate_limited += 1
                    if limit is None or limit.key != BOT_GAMES_KEY:  # a limit of games, not of requests
                        self._pause(pkey, pause)
                    log.warning("rate limited: paused", endpoint=pkey, pause_s=round(pause, 1),
                                limit=limit.key if limit is not None else None)
                    if (stream or kind == CHAT or not retry_429 or (limit is not None and limit.key == BOT_GAMES_KEY)
                            or attempt >= max_tries or _past(deadline)):
                        return response
                    response.close()
                    attempt += 1
                    continue
                if kind == MOVE and response.status_code < 400 and self.pause_left(pkey) > 0:
                    with self._lock:  # lichess accepts this game's moves again: its pause is over
                        self._paused_until.pop(pkey, None)
                if response.status_code < 500 or stream or attempt >= max_tries or _past(deadline):
                    return response
                log.warning("http retry", endpoint=key, status=response.status_code, attempt=attempt + 1)
                response.close()
            attempt += 1
            wait = min(delay, s.max_backoff) * (1 + 0.25 * random.random())
            for until in (deadline, end):
                if until is not None:
                    wait = min(wait, max(0.0, until - time.monotonic()))
            self._sleep(wait)
            delay *= 2


def _without_query(url: str) -> str:
    """``url`` without its query string and fragment (scheme, host, port and path)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _past(deadline: float | None, margin: float = 0.0) -> bool:
    """True when ``deadline`` (monotonic seconds) is less than ``margin`` seconds away."""
    return deadline is not None and time.monotonic() >= deadline - margin


def body_rate_limit(response: requests.Response) -> RateLimit | None:
    """The ``ratelimit`` of a JSON error body (lila ``JsonLimited``), or None (HTML, no body, another error).
    Reads the body (a non-stream response keeps it for the caller)."""
    if "json" not in response.headers.get("Content-Type", ""):
        return None
    try:
        return parse_rate_limit(response.json())
    except ValueError:
        return None


def retry_after(response: requests.Response) -> float | None:
    """Seconds of the Retry-After header (None when absent or not a number of seconds)."""
    try:
        value = response.headers.get("Retry-After")
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None
