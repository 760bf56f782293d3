"""GET requests of the online sources, each within a deadline: pacing, timeouts, bounded retries.

* Every attempt ends by the deadline the caller gives (monotonic seconds): the request runs in a small
  pool of worker threads and the caller waits for it until the deadline only (a server that hangs keeps
  a worker until its own connect and read timeouts, the time that was left, end it); the body is cut at
  the deadline; nothing is started with less than :data:`MIN_REQUEST_S` left.
* Requests to lichess (explorer, cloud eval, tablebase) take a token from the bot's pacer first
  (:class:`Pacer`, e.g. :class:`lichessbot.lichess.pacing.Pacer`) in the ``other`` class, which never
  delays a move post; a wait for a token that would pass the deadline gives up instead. They carry the
  bot's token (the explorer requires one: lichess-org/api doc/specs/tags/openingexplorer, ``OAuth2``)
  only when their URL is lichess's own (:func:`lichess_url`: lichess.org, lichess.ovh and their
  subdomains, or the server the bot plays on); a source pointed anywhere else is neither paced nor sent
  the token. Other servers never see it. The token is never in a log line or an error message.
* A connection error, a timeout or a 5xx is retried ``retries`` times while time is left; 404 is an
  answer (cloud eval: no evaluation of that position); 429 is :class:`RateLimited` at once (lichess
  asks for a full minute's pause: https://lichess.org/page/api-tips); any other status is a failure.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

import requests

from lichessbot import __version__
from lichessbot.errors import LichessbotError

__all__ = ["LICHESS_DOMAINS", "MIN_REQUEST_S", "Answer", "Fetcher", "NotAsked", "Pacer", "RateLimited",
           "SourceFailure", "lichess_url"]

#: A request is not started with less time than this left (seconds; ours: below it even a nearby
#: server's answer would arrive too late).
MIN_REQUEST_S = 0.05
#: The largest answer read (bytes; ours: an explorer answer with 100 moves is about 30 kB).
MAX_BODY = 2 << 20
#: Seconds between two tries of a failed request, at most (lichess-bot's constant backoff is 0.1 s).
RETRY_PAUSE_S = 0.1
#: Worker threads that run requests (ours: a few games asking at once).
WORKERS = 8
#: The pacer's class of these requests (lichessbot.lichess.pacing.OTHER: they wait for a token, moves never).
PACER_CLASS = "other"
#: lichess's own domains: lichess.org (the site, explorer.lichess.org, tablebase.lichess.org) and
#: lichess.ovh (the servers' own names, e.g. explorer.lichess.ovh, tablebase.lichess.ovh; lichess-org/api
#: doc/specs/lichess-api.yaml ``servers``). Only these (and the bot's own server) get the bot's token.
LICHESS_DOMAINS = ("lichess.org", "lichess.ovh")


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme.lower(), (parts.hostname or "").lower(), port or default


def lichess_url(url: str, own: str | None = None) -> bool:
    """Whether ``url`` is lichess's own, so it may get the bot's token: https on lichess.org, lichess.ovh
    or one of their subdomains (:data:`LICHESS_DOMAINS`), or the same scheme, host and port as ``own`` (the
    server the bot plays on, which has the token anyway: ``lichessbot play --local``, a test server).
    A look-alike (``lichess.org.example.com``, ``notlichess.org``) is not."""
    scheme, host, port = _origin(url)
    if own and (scheme, host, port) == _origin(own):
        return True
    return scheme == "https" and any(host == d or host.endswith("." + d) for d in LICHESS_DOMAINS)


class Pacer(Protocol):
    """The bot's request budget (:class:`lichessbot.lichess.pacing.Pacer` has this method)."""

    def acquire(self, kind: str, endpoint: str, sleep: Callable[[float], None]) -> None:
        """Take a token for a request of class ``kind``; ``sleep(seconds)`` waits and may raise to give up."""
        ...


class SourceFailure(LichessbotError, RuntimeError):
    """A request that brought no usable answer: ``reason`` in words (no URL, no token)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class RateLimited(SourceFailure):
    """The server answered 429 Too Many Requests."""


class NotAsked(SourceFailure):
    """The deadline came before the first try could start (waiting for a pacer token, or too little
    time left): not the server's fault, so not counted against the source."""


class _OutOfTime(Exception):
    """The deadline came before a token or a try."""


@dataclass(frozen=True)
class Answer:
    """A server's answer: HTTP ``status`` (200 or 404) and the ``text`` of the body. ``complete`` is
    False when an NDJSON stream was cut at the deadline and ``text`` is its last whole line."""

    status: int
    text: str
    complete: bool = True


class Fetcher:
    """GETs within deadlines, shared by every game (thread-safe: one requests session per thread).

    Args:
        token: the bot's lichess token, sent only to the lichess sources.
        pacer: the bot's request budget for lichess sources; None: not paced.
        retries: extra tries after a connection error, a timeout or a 5xx.
        clock: monotonic seconds (tests).
    """

    def __init__(self, *, token: str | None = None, pacer: Pacer | None = None, retries: int = 2,
                 clock: Callable[[], float] = time.monotonic):
        self._token = token
        self.pacer = pacer
        self.retries = retries
        self._clock = clock
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="online")

    def close(self) -> None:
        """Stop the workers (requests in flight finish in the background). Never raises."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.headers["User-Agent"] = f"lichessbot/{__version__}"
            self._local.session = session
        return session

    def get(self, url: str, params: dict[str, str | int], *, deadline: float, lichess: bool, endpoint: str,
            ndjson: bool = False) -> Answer:
        """GET ``url`` with ``params`` by ``deadline`` (monotonic seconds).

        Args:
            lichess: a lichess server: paced and sent the token.
            endpoint: the request in words for the pacer's log (e.g. ``"GET explorer/masters"``).
            ndjson: the body is a stream of JSON lines (the explorer's ``/player``); ``text`` is its
                last whole line.

        Raises:
            SourceFailure: no usable answer (the reason says why: timeout, connection, status, time).
            RateLimited: a 429.
            NotAsked: the deadline came before the first try (a pacer wait, too little time).
        """
        headers = {"Authorization": f"Bearer {self._token}"} if lichess and self._token else {}
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                pause = min(RETRY_PAUSE_S, deadline - self._clock() - MIN_REQUEST_S)
                if pause > 0:
                    time.sleep(pause)
            try:
                if lichess and self.pacer is not None:
                    self.pacer.acquire(PACER_CLASS, endpoint, lambda s: self._sleep(s, deadline))
                if deadline - self._clock() < MIN_REQUEST_S:
                    raise _OutOfTime
                try:
                    future = self._pool.submit(self._once, url, params, headers, deadline, ndjson)
                except RuntimeError:  # closed
                    raise SourceFailure("closed") from None
                try:
                    return future.result(timeout=max(0.0, deadline - self._clock()))
                except FutureTimeout:
                    raise SourceFailure("timeout") from None
            except _OutOfTime:
                if attempt == 0:
                    raise NotAsked("no time left for a request") from None
                raise SourceFailure(f"{last}; no time left for another try") from None
            except RateLimited:
                raise
            except SourceFailure as err:
                last = err.reason
                if not _retryable(err.reason):
                    raise
        raise SourceFailure(last)

    def _sleep(self, seconds: float, deadline: float) -> None:
        if self._clock() + seconds > deadline - MIN_REQUEST_S:
            raise _OutOfTime
        time.sleep(seconds)

    def _once(self, url: str, params: dict[str, str | int], headers: dict[str, str], deadline: float,
              ndjson: bool) -> Answer:
        left = deadline - self._clock()  # a request that waited for a free worker has less
        if left < MIN_REQUEST_S:
            raise SourceFailure("timeout")
        try:
            with self._session().get(url, params=params, headers=headers, timeout=(left, left), stream=True) as r:
                if r.status_code == 429:
                    raise RateLimited("429 Too Many Requests")
                if r.status_code >= 500:
                    raise SourceFailure(f"server error {r.status_code}")
                if r.status_code not in (200, 404):
                    raise SourceFailure(f"answer {r.status_code}")
                return self._body(r, deadline, ndjson)
        except requests.Timeout:
            raise SourceFailure("timeout") from None
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as err:
            if self._clock() >= deadline - MIN_REQUEST_S:  # a read cut by its timeout mid-body
                raise SourceFailure("timeout") from None
            raise SourceFailure(f"connection failed ({type(err).__name__})") from None
        except requests.RequestException as err:
            raise SourceFailure(f"request failed ({type(err).__name__})") from None

    def _body(self, r: requests.Response, deadline: float, ndjson: bool) -> Answer:
        data = bytearray()
        complete = True
        for chunk in r.iter_content(8192):
            data += chunk
            if len(data) > MAX_BODY:
                raise SourceFailure(f"answer over {MAX_BODY} bytes")
            if self._clock() > deadline:
                complete = False
                break
        text = data.decode("utf-8", errors="replace")
        if ndjson:
            lines = [line for line in text.split("\n") if line.strip()]
            if not complete:  # the last line may be cut: keep the whole ones
                lines = lines[:-1] if not text.endswith("\n") else lines
            if not lines:
                raise SourceFailure("timeout" if not complete else "empty answer")
            return Answer(r.status_code, lines[-1], complete)
        if not complete:
            raise SourceFailure("timeout")
        return Answer(r.status_code, text)


def _retryable(reason: str) -> bool:
    """Transient failures: connection errors, timeouts, server errors (not a refused request)."""
    return reason.startswith(("timeout", "connection", "server error"))
