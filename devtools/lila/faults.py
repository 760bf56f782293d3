"""The test server's fault injection (never in the product): an account request quota answered with lichess's
429s, injected answers by request kind, moves that hang then are cut, latency added to every answer, and the
account endpoints with their test knobs (a mixin of :class:`devtools.lila.server.FakeLichess`).

* ``quota=(rate, burst)``: one token bucket per account across all non-stream endpoints; a request over it gets a
  **429 with an HTML body and no Retry-After** (lichess's front), or lila's ``JsonLimited`` body with
  ``ratelimit.seconds`` = ``limit_seconds`` when that is set;
* ``fail_next(kind, status)``: the next requests of ``kind`` (move, chat, challenge, answer, action, broadcast,
  account, playing) get ``status``; ``move_failures``: answers of the next move posts;
* ``stall_moves``: the next move posts hang this many seconds, then are cut unanswered;
* ``latency=(min, max)``: seconds added to every answer (the way up: a move is played when it arrives);
* ``stream_latency=(min, max)``: seconds each streamed line reaches the bot after the server sent it (the way
  down: a game state's clocks are computed when it is sent), lines kept in order and each delayed on its own."""

from __future__ import annotations

import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from devtools.lila.base import ServerBase
from lichessbot.local.http import DROP, END, Handler

__all__ = ["TOO_MANY_HTML", "FaultRoutes", "LateQueue", "late_stream", "request_kind"]

#: What lichess's front answers with a 429 (an HTML page, no Retry-After).
TOO_MANY_HTML = (b"<!DOCTYPE html><html><head><title>429 Too Many Requests</title></head><body><h1>Too many "
                 b"requests</h1><p>Please wait a minute before trying again.</p></body></html>")


def request_kind(method: str, parts: list[str]) -> str:
    """The kind of an API request for quotas and injected failures: move, chat, action, challenge (a creation),
    answer (accept, decline, cancel), broadcast, playing or account (``parts``: the path split on ``/``)."""
    if parts[:3] == ["api", "bot", "game"] and len(parts) >= 5:
        return {"move": "move", "chat": "chat"}.get(parts[4], "action")
    if parts[:2] == ["api", "challenge"]:
        return "challenge" if len(parts) == 3 else "answer"  # a creation, or an answer to one (accept/decline/cancel)
    if parts[:2] == ["api", "broadcast"]:
        return "broadcast"
    if parts[:2] == ["api", "account"] and parts[2:3] == ["playing"]:
        return "playing"
    return "account"


class LateQueue:
    """The lines of a stream, each handed on ``late`` (min, max) seconds after it was queued, in order: a slow
    network's way down. A thread forwards ``source`` until END, DROP or ``stopping``; :meth:`get` is what the
    stream reads."""

    def __init__(self, source: queue.Queue[Any], late: tuple[float, float], stopping: threading.Event) -> None:
        self.out: queue.Queue[Any] = queue.Queue()
        self._due = 0.0
        threading.Thread(target=self._forward, args=(source, late, stopping), daemon=True,
                         name="test-server-late-stream").start()

    def _forward(self, source: queue.Queue[Any], late: tuple[float, float], stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                item = source.get(timeout=0.2)
            except queue.Empty:
                continue
            self._due = due = max(self._due, time.monotonic() + random.uniform(*late))
            timer = threading.Timer(max(0.0, due - time.monotonic()), self.out.put, (item,))
            timer.daemon = True
            timer.start()
            if item is END or item is DROP:
                return

    def get(self, timeout: float | None = None) -> Any:
        return self.out.get(timeout=timeout)


def late_stream(h: Handler, late: tuple[float, float]) -> Callable[[queue.Queue[Any], float, threading.Event], None]:
    """``h.stream`` with every line ``late`` seconds late (:class:`LateQueue`)."""
    product_stream = h.stream

    def stream(q: queue.Queue[Any], keepalive: float, stopping: threading.Event) -> None:
        product_stream(LateQueue(q, late, stopping), keepalive, stopping)  # type: ignore[arg-type]
    return stream


class FaultRoutes(ServerBase):
    lock: threading.RLock
    changed: threading.Condition
    games: dict[str, Any]

    def _init_faults(self, quota: tuple[float, float] | None) -> None:
        self.quota = quota
        self.requests: list[tuple[str, str, int]] = []  # (method, path, status)
        self.rate_limited: Counter[str] = Counter()     # kind -> 429s answered
        self.bad_auth = 0
        self.move_failures: list[int] = []
        self.failures: dict[str, list[int]] = {}
        self.latency: tuple[float, float] | None = None  # seconds added to every answer (min, max)
        self.stream_latency: tuple[float, float] | None = None  # seconds each streamed line arrives late (min, max)
        self.limit_seconds: int | None = None  # injected 429s: JSON ratelimit.seconds (None: lila's HTML page)
        self.stall_moves: list[float] = []  # the next move posts hang this many seconds, then are cut unanswered
        self.stalled = 0                    # move posts hanging now
        self.token_scopes = "bot:play,challenge:read,challenge:write"
        self.token_tests = 0
        self.user_agents: set[str] = set()  # every User-Agent a request came with
        self._tokens = quota[1] if quota else 0.0
        self._tokens_at = time.monotonic()

    def fail_next(self, kind: str, status: int, n: int = 1) -> None:
        """The next ``n`` requests of ``kind`` get ``status`` (a 429 as lichess sends it: never a Retry-After)."""
        with self.lock:
            self.failures.setdefault(kind, []).extend([status] * n)

    def _json_limited(self, kind: str) -> dict[str, Any] | None:
        """An injected 429's body: lila's ``JsonLimited`` when ``limit_seconds`` is set, else None (HTML)."""
        if self.limit_seconds is None:
            return None
        return {"error": "Too many requests. Try again later.",
                "ratelimit": {"key": f"api.{kind}", "seconds": self.limit_seconds}}

    def _over_quota(self, kind: str) -> int | None:
        """The status of an injected failure, or 429 when the account's quota is spent."""
        with self.lock:
            if kind == "move" and self.move_failures:
                return self.move_failures.pop(0)
            if self.failures.get(kind):
                return self.failures[kind].pop(0)
            if self.quota is None:
                return None
            rate, burst = self.quota
            now = time.monotonic()
            self._tokens = min(burst, self._tokens + (now - self._tokens_at) * rate)
            self._tokens_at = now
            if self._tokens < 1:
                return 429
            self._tokens -= 1
            return None

    def _faults(self, h: Handler, method: str, parts: list[str]) -> bool:
        """Answer the request with an injected fault (True) or let it through (False)."""
        if self.latency:
            time.sleep(random.uniform(*self.latency))
        if self.stream_latency:
            h.stream = late_stream(h, self.stream_latency)  # type: ignore[method-assign,assignment]
        if parts[:2] == ["api", "stream"] or parts[:4] == ["api", "bot", "game", "stream"]:
            return False
        kind = request_kind(method, parts)
        status = self._over_quota(kind)
        if status is not None:
            with self.lock:
                g = self.games.get(parts[3]) if kind == "move" else None
                if g is not None:
                    g.rejected_posts.append((g.ply(), parts[5], status))
            if status == 429:
                self.rate_limited[kind] += 1
                if (limited := self._json_limited(kind)) is not None:  # lila JsonLimited, never Retry-After
                    h.reply(429, limited)
                else:
                    h.reply_html(429, TOO_MANY_HTML)
            else:
                h.reply(status, {"error": "injected failure"})
            return True
        if kind == "move" and self.stall_moves:
            with self.lock:
                seconds = self.stall_moves.pop(0) if self.stall_moves else 0.0
                self.stalled += 1
            time.sleep(seconds)  # a post lost on the way: no answer, then the connection is cut
            with self.lock:
                self.stalled -= 1
            h.close_connection = True
            h.connection.shutdown(2)
            return True
        return False

    def record(self, h: Handler, method: str, path: str) -> None:
        with self.lock:
            self.requests.append((method, path, h.status))
            self.user_agents.add(h.headers.get("User-Agent", ""))
            self.changed.notify_all()

    def _token_test(self, h: Handler) -> None:
        """lichess-org/api doc/specs/tags/oauth/api-token-test.yaml, with ``token_scopes`` for the server's token."""
        self.token_tests += 1
        tokens = [t.strip() for t in h.raw.decode(errors="replace").split(",") if t.strip()]
        name = getattr(self, "username", "").lower()
        h.reply(200, {t: ({"userId": name, "scopes": self.token_scopes, "expires": None}
                          if t == getattr(self, "token", None) else None) for t in tokens})
