"""NDJSON streams (the account's events, a game's states) that reconnect on error, on end and on silence,
each line parsed at the door into a typed value (:mod:`lichessbot.lichess.events`).

Silence is a read timeout: the session reads streams with ``ClientSettings.stream_read_timeout``
(20 s, above lichess's 7 s keepalive), so a stream with no line and no keepalive for that long raises
and is reopened. Malformed lines (not JSON, no ``type``, a known key of the wrong type) are logged and
skipped. After every (re)connection the iterator yields :class:`~lichessbot.lichess.events.Connected`
(``reconnect``, ``opened_at``: monotonic seconds when the request was sent; nothing on the stream was
computed by the server before it) so the consumer can resync (lichess re-sends ``gameFull`` on a game
stream; after an event-stream reconnect the bot lists its ongoing games).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

import requests
import structlog

from lichessbot.lichess.client import LichessClient, LichessError, iter_lines
from lichessbot.lichess.events import (
    Connected,
    GameEvent,
    MalformedEvent,
    StreamEvent,
    parse_event,
    parse_game_event,
)

__all__ = ["ReconnectingStream", "event_stream", "game_stream"]

E = TypeVar("E")


class ReconnectingStream(Generic[E]):
    """Iterate over the parsed lines of a stream, reopening it until ``keep_going()`` is false.

    Args:
        opener: opens the stream and returns the open response (raises :class:`LichessError`).
        name: for logs ("events", "game abcd1234").
        parse: one JSON line -> its value (raises ``ValueError`` for a malformed line, which is skipped).
        stop: set to end the iteration (``close()`` also drops the open connection).
        keep_going: asked before each reconnection; False ends the iteration.
        backoff: first wait before reopening, seconds; doubled after each failure up to ``max_backoff``.

    Raises (from iteration):
        LichessError: opening failed with a 4xx other than 429 (bad token, unknown game).
    """

    def __init__(self, opener: Callable[[], requests.Response], name: str, parse: Callable[[Any], E], *,
                 stop: threading.Event | None = None, keep_going: Callable[[], bool] = lambda: True,
                 backoff: float = 1.0, max_backoff: float = 30.0, log: Any = None):
        self._opener = opener
        self.name = name
        self._parse_line = parse
        self.stop = stop or threading.Event()
        self._keep_going = keep_going
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._log = log or structlog.get_logger("lichessbot.lichess")
        self._response: requests.Response | None = None
        self._closed = threading.Event()
        self.connections = 0
        self.malformed = 0
        #: Monotonic seconds of the last sign of life: the stream opened, or a line came (keep-alives
        #: included); None before the first opening. Read by health checks from any thread.
        self.alive_at: float | None = None

    def close(self) -> None:
        """End the iteration from another thread (the open connection is shut)."""
        self._closed.set()
        self.drop()

    def drop(self) -> None:
        """Cut the open connection (from another thread): the iterator reconnects, unless closed."""
        resp = self._response
        if resp is not None:
            try:
                resp.raw._fp.fp.raw._sock.shutdown(2)  # unblock a reader stuck in recv
            except Exception:  # noqa: BLE001 - best effort: the connection may already be gone
                pass

    def _running(self) -> bool:
        return not self.stop.is_set() and not self._closed.is_set()

    def _wait(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while self._running() and (left := deadline - time.monotonic()) > 0:
            self._closed.wait(min(left, 0.1))

    def __iter__(self) -> Iterator[Connected | E]:
        delay = self._backoff
        while self._running() and (self.connections == 0 or self._keep_going()):
            opened_at = time.monotonic()
            try:
                response = self._opener()
            except LichessError as err:
                if err.status is not None and 400 <= err.status < 500 and err.status != 429:
                    raise
                self._log.warning("stream open failed", stream=self.name, error=str(err), retry_in_s=round(delay, 2))
                self._wait(delay)
                delay = min(delay * 2, self._max_backoff)
                continue
            self._response = response
            self.alive_at = time.monotonic()
            yield Connected(reconnect=self.connections > 0, opened_at=opened_at)
            self.connections += 1
            try:
                for line in iter_lines(response):
                    if not self._running():
                        return
                    self.alive_at = time.monotonic()
                    if not line.strip():
                        continue  # keepalive
                    event = self._parse(line)
                    if event is not None:
                        delay = self._backoff
                        yield event
                if self._running():
                    self._log.info("stream ended", stream=self.name)
            except Exception as err:  # noqa: BLE001 - any read failure means: reconnect
                if self._running():
                    self._log.warning("stream dropped", stream=self.name, error=type(err).__name__)
            finally:
                response.close()
                self._response = None
            if self._running() and self._keep_going():
                self._wait(delay)
                delay = min(delay * 2, self._max_backoff)

    def _parse(self, line: bytes) -> E | None:
        try:
            return self._parse_line(json.loads(line))
        except (UnicodeDecodeError, ValueError) as err:  # MalformedEvent is a ValueError
            self.malformed += 1
            self._log.warning("malformed line skipped", stream=self.name, line=line[:200].decode("utf-8", "replace"),
                              error=str(err) if isinstance(err, MalformedEvent) else None)
            return None


def event_stream(client: LichessClient, **kwargs: Any) -> ReconnectingStream[StreamEvent]:
    """The account's ``/api/stream/event``, parsed (:func:`~lichessbot.lichess.events.parse_event`)."""
    return ReconnectingStream(client.open_event_stream, "events", parse_event, **kwargs)


def game_stream(client: LichessClient, game_id: str, **kwargs: Any) -> ReconnectingStream[GameEvent]:
    """Game ``game_id``'s ``/api/bot/game/stream/{id}``, parsed
    (:func:`~lichessbot.lichess.events.parse_game_event`)."""
    return ReconnectingStream(lambda: client.open_game_stream(game_id), f"game {game_id}", parse_game_event, **kwargs)
