"""The test server's streams: the account's event stream and each game's stream (NDJSON, as lila serves them:
``GET /api/stream/event``, ``GET /api/bot/game/stream/{id}``), and what is pushed into them (a mixin of
:class:`lichessbot.fakelichess.routes.Routes`)."""

from __future__ import annotations

import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from lichessbot.fakelichess.game import FakeGame
from lichessbot.fakelichess.http import DROP, END, Handler

__all__ = ["StreamRoutes"]


class StreamRoutes:
    """Mixin of :class:`lichessbot.fakelichess.routes.Routes` (the state below is the server's)."""

    keepalive: float
    lock: threading.RLock
    changed: threading.Condition
    games: dict[str, FakeGame]
    challenges: dict[str, dict[str, Any]]
    answers: dict[str, tuple[str, str | None]]
    canceled: set[str]
    event_subscribers: list[queue.Queue]
    event_connections: int
    duplicate_states: bool
    _stopping: threading.Event
    if TYPE_CHECKING:
        def _challenge_event(self, ch: dict[str, Any]) -> dict[str, Any]: ...
        def _game_info(self, g: FakeGame) -> dict[str, Any]: ...
        def _full(self, g: FakeGame) -> dict[str, Any]: ...

    # broadcasting ------------------------------------------------------------------------------
    def _event(self, obj: Any) -> None:
        with self.lock:
            for q in self.event_subscribers:
                q.put(obj)
            self.changed.notify_all()

    def _game_push(self, g: Any, obj: Any) -> None:
        with self.lock:
            if g.blackout_push and obj is not DROP:
                g.blackout_push = False
                obj = DROP
            for q in g.subscribers:
                q.put(obj)
                if self.duplicate_states and isinstance(obj, dict) and obj.get("type") == "gameState":
                    q.put(obj)
            if g.over:
                for q in g.subscribers:
                    q.put(END)
            self.changed.notify_all()

    def push_event_raw(self, line: bytes) -> None:
        self._event(line)

    def push_game_raw(self, game_id: str, line: bytes) -> None:
        self._game_push(self.games[game_id], line)

    def push_game(self, game_id: str, obj: dict[str, Any]) -> None:
        self._game_push(self.games[game_id], obj)

    def drop_event_streams(self) -> None:
        self._event(DROP)

    def drop_game_streams(self, game_id: str) -> None:
        self._game_push(self.games[game_id], DROP)

    def _serve_events(self, h: Handler) -> None:
        q: queue.Queue = queue.Queue()
        with self.lock:
            self.event_connections += 1
            for old in self.event_subscribers:  # one event stream per token: the new one wins
                old.put(END)
            for g in self.games.values():
                if not g.over:
                    q.put({"type": "gameStart", "game": self._game_info(g)})
            for cid, ch in self.challenges.items():  # lichess re-sends the pending challenges
                if cid not in self.answers and cid not in self.canceled:
                    q.put(self._challenge_event(ch))
            self.event_subscribers.append(q)
            self.changed.notify_all()
        try:
            h.stream(q, self.keepalive, self._stopping)
        finally:
            with self.lock:
                self.event_subscribers.remove(q)

    def _serve_game(self, h: Handler, game_id: str) -> None:
        q: queue.Queue = queue.Queue()
        with self.lock:
            g = self.games.get(game_id)
            if g is None:
                return h.reply(404, {"error": "No such game"})
            g.stream_connections += 1
            q.put(self._full(g))  # clocks as at this moment (lila: scalachess Clock.remainingTime)
            if g.over:
                q.put(END)
            g.subscribers.append(q)
            wait = g.blackout_until - time.monotonic()
            self.changed.notify_all()
        if wait > 0:
            time.sleep(wait)  # the answer is delivered late (a slow network): its clock is old on arrival
        try:
            h.stream(q, self.keepalive, self._stopping)
        finally:
            with self.lock:
                g.subscribers.remove(q)
