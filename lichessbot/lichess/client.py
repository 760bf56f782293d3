"""The HTTP side of the bot: a berserk client over a requests session with timeouts, retries and 429 pauses.

* Timeouts (seconds): ordinary calls ``timeout`` (10); streams ``stream_read_timeout`` (20), above
  lichess's 7 s keepalive, so a stream silent for that long raises and is reconnected by the caller.
* Connection errors and 5xx answers on ordinary calls are retried ``retries`` times with exponential
  backoff (``backoff``, doubled each time).
* A 429 pauses *that endpoint* (the path with its ids replaced, e.g. ``POST /api/bot/game/*/move/*``)
  for ``max(rate_limit_pause, Retry-After)`` seconds (lichess asks for one minute:
  https://lichess.org/page/api-tips); calls to a paused endpoint wait for the pause to end.
* The token lives in the session's Authorization header only; it is never formatted into a message.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import berserk
import requests
import structlog
from berserk.formats import JSON, FormatHandler
from berserk.session import Requestor

from lichessbot import __version__
from lichessbot.errors import LichessbotError

__all__ = ["ClientSettings", "LichessClient", "LichessError", "BotSession", "endpoint_key"]

log = structlog.get_logger("lichessbot.lichess")


class LichessError(LichessbotError, RuntimeError):
    """A lichess call that failed for good. ``status`` is the HTTP status (None: no answer)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ClientSettings:
    """Network behaviour. All times in seconds."""

    timeout: float = 10.0              # connect and read timeout of ordinary calls
    stream_read_timeout: float = 20.0  # silence after which a stream is dropped (lichess keepalive: 7 s)
    retries: int = 3                   # extra attempts after a connection error or a 5xx
    backoff: float = 1.0               # first retry delay; doubled each retry, with 0-25 % jitter
    rate_limit_pause: float = 60.0     # minimum pause of an endpoint after a 429 (lichess: one minute)
    max_backoff: float = 30.0


_ID_PATTERNS = [
    (re.compile(r"^/api/bot/game/stream/[^/]+$"), "/api/bot/game/stream/*"),
    (re.compile(r"^/api/bot/game/[^/]+/move/[^/]+$"), "/api/bot/game/*/move/*"),
    (re.compile(r"^/api/bot/game/[^/]+/draw/[^/]+$"), "/api/bot/game/*/draw/*"),
    (re.compile(r"^/api/bot/game/[^/]+/([a-z-]+)$"), r"/api/bot/game/*/\1"),
    (re.compile(r"^/api/challenge/[^/]+/(accept|decline)$"), r"/api/challenge/*/\1"),
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
    """A requests session that adds the token, default timeouts, retries and per-endpoint 429 pauses.

    ``stop`` (an Event) cuts waits short at shutdown; a cut wait raises :class:`LichessError`.
    """

    def __init__(self, token: str, settings: ClientSettings, stop: threading.Event | None = None):
        super().__init__()
        self.headers["Authorization"] = f"Bearer {token}"
        self.headers["User-Agent"] = f"lichessbot/{__version__}"
        self.settings = settings
        self.stop = stop or threading.Event()
        self._paused_until: dict[str, float] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never show the headers
        return "BotSession()"

    def pause_left(self, key: str) -> float:
        """Seconds the endpoint ``key`` stays paused (0 when not paused)."""
        with self._lock:
            return max(0.0, self._paused_until.get(key, 0.0) - time.monotonic())

    def _pause(self, key: str, seconds: float) -> None:
        with self._lock:
            self._paused_until[key] = max(self._paused_until.get(key, 0.0), time.monotonic() + seconds)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0 and self.stop.wait(seconds):
            raise LichessError("stopped while waiting to retry")

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        s = self.settings
        stream = bool(kwargs.get("stream"))
        kwargs.setdefault("timeout", (s.timeout, s.stream_read_timeout if stream else s.timeout))
        key = endpoint_key(method, url)
        delay = s.backoff
        attempt = 0
        while True:
            self._sleep(self.pause_left(key))
            try:
                response = super().request(method, url, *args, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as err:
                if stream or attempt >= s.retries:
                    raise
                log.warning("http retry", endpoint=key, error=type(err).__name__, attempt=attempt + 1)
            else:
                if response.status_code == 429:
                    pause = max(s.rate_limit_pause, _retry_after(response))
                    self._pause(key, pause)
                    log.warning("rate limited: endpoint paused", endpoint=key, pause_s=round(pause, 1))
                    if stream or attempt >= s.retries:
                        return response
                    response.close()
                    attempt += 1
                    continue
                if response.status_code < 500 or stream or attempt >= s.retries:
                    return response
                log.warning("http retry", endpoint=key, status=response.status_code, attempt=attempt + 1)
                response.close()
            attempt += 1
            self._sleep(min(delay, s.max_backoff) * (1 + 0.25 * random.random()))
            delay *= 2


def _retry_after(response: requests.Response) -> float:
    try:
        return float(response.headers.get("Retry-After", 0))
    except ValueError:
        return 0.0


class _Raw(FormatHandler[Any]):
    """berserk format handler that hands back the open response of a stream (the caller reads lines)."""

    def __init__(self) -> None:
        super().__init__(mime_type="application/x-ndjson")

    def handle(self, response, is_stream, converter=None):  # noqa: ANN001
        return response


def _short(err: Exception) -> str:
    """A one-line description of a berserk/requests error (status and lichess's message, no headers)."""
    if isinstance(err, berserk.exceptions.ResponseError):
        cause = err.cause
        detail = cause.get("error") if isinstance(cause, dict) else None
        return f"HTTP {err.status_code}" + (f": {detail}" if detail else "")
    return type(getattr(err, "error", err)).__name__


class LichessClient:
    """The calls the bot makes. Every failure is a :class:`LichessError` with the HTTP status."""

    def __init__(self, token: str, url: str = "https://lichess.org", settings: ClientSettings | None = None,
                 stop: threading.Event | None = None):
        if not token:
            raise LichessError("no API token: set LICHESS_BOT_TOKEN or `token` in the config")
        self.url = url.rstrip("/")
        self.settings = settings or ClientSettings()
        self.session = BotSession(token, self.settings, stop)
        self.api = berserk.Client(session=self.session, base_url=self.url)
        self._r = Requestor(self.session, self.url, default_fmt=JSON)
        self._streams = Requestor(self.session, self.url, default_fmt=_Raw())

    def _call(self, what: str, fn, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN001
        try:
            return fn(*args, **kwargs)
        except berserk.exceptions.ResponseError as err:
            raise LichessError(f"{what}: {_short(err)}", err.status_code) from None
        except (berserk.exceptions.ApiError, requests.RequestException) as err:
            raise LichessError(f"{what}: {_short(err)}") from None

    # account -----------------------------------------------------------------------------------
    def account(self) -> dict[str, Any]:
        """``/api/account``: id, username, title ("BOT" for bot accounts)."""
        return self._call("reading the account", self.api.account.get)

    def upgrade_to_bot(self) -> None:
        self._call("upgrading to a BOT account", self.api.account.upgrade_to_bot)

    def ongoing_games(self) -> list[dict[str, Any]]:
        """``/api/account/playing?nb=50``: the games in progress (each has gameId, color, isMyTurn...)."""
        return self._call("listing ongoing games", self.api.games.get_ongoing, 50)

    # challenges --------------------------------------------------------------------------------
    def accept_challenge(self, challenge_id: str) -> None:
        self._call(f"accepting challenge {challenge_id}", self.api.bots.accept_challenge, challenge_id)

    def decline_challenge(self, challenge_id: str, reason: str) -> None:
        self._call(f"declining challenge {challenge_id}", self.api.bots.decline_challenge, challenge_id,
                   reason=reason)

    # games -------------------------------------------------------------------------------------
    def make_move(self, game_id: str, uci: str, offering_draw: bool = False) -> None:
        """POST the move (``?offeringDraw=true`` to offer a draw with it)."""
        params = {"offeringDraw": "true"} if offering_draw else None
        self._call(f"posting move {uci}", self._r.post, f"/api/bot/game/{game_id}/move/{uci}", params=params)

    def post_chat(self, game_id: str, room: str, text: str) -> None:
        """Post ``text`` to ``room`` ("player" or "spectator")."""
        self._call("posting chat", self._r.post, f"/api/bot/game/{game_id}/chat",
                   data={"room": room, "text": text})

    def abort_game(self, game_id: str) -> None:
        self._call("aborting", self.api.bots.abort_game, game_id)

    def resign_game(self, game_id: str) -> None:
        self._call("resigning", self.api.bots.resign_game, game_id)

    def claim_victory(self, game_id: str) -> None:
        self._call("claiming victory", self._r.post, f"/api/bot/game/{game_id}/claim-victory")

    def handle_draw(self, game_id: str, accept: bool) -> None:
        self._call("answering a draw offer", self._r.post,
                   f"/api/bot/game/{game_id}/draw/{'yes' if accept else 'no'}")

    # streams -----------------------------------------------------------------------------------
    def open_event_stream(self) -> requests.Response:
        """The open ``/api/stream/event`` response (read it with ``iter_lines``; close it when done)."""
        return self._call("opening the event stream", self._streams.get, "/api/stream/event", stream=True)

    def open_game_stream(self, game_id: str) -> requests.Response:
        """The open ``/api/bot/game/stream/{id}`` response."""
        return self._call(f"opening the stream of game {game_id}", self._streams.get,
                          f"/api/bot/game/stream/{game_id}", stream=True)

    def close(self) -> None:
        """Close the HTTP session; a call waiting to retry (in another thread) gives up at once."""
        self.session.stop.set()
        self.session.close()


def iter_lines(response: requests.Response) -> Iterator[bytes]:
    """The raw lines of an open stream, keepalive (empty) lines included."""
    yield from response.iter_lines()
