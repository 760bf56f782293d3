"""The embedded lichess's streams: each account's event stream (``GET /api/stream/event``) and each game's
streams (``GET /api/bot/game/stream/{id}``, ``GET /api/board/game/stream/{id}`` and the page's own), and what is
pushed into them (a mixin of :class:`lichessbot.local.server.LocalLichess`, whose lock guards every field)."""

from __future__ import annotations

import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from lichessbot.local.http import END, Handler
from lichessbot.local.lila_rules import GONE_NOTICE_MS, force_resignable, gone_timeout_ms, remaining
from lichessbot.local.model import Account, Challenge, ChatLine, Game, Subscriber
from lichessbot.local.page import thinking_line
from lichessbot.local.views import challenge_json, compat, game_full, game_info

__all__ = ["GONE_TICK_S", "StreamRoutes", "chat_json"]

#: Seconds between two looks at who is gone (lila RoundSocket ``tickSeconds``).
GONE_TICK_S = 5.0


def chat_json(line: ChatLine) -> dict[str, Any]:
    """A ``chatLine`` (lila BotJsonView ``chatLine``)."""
    return {"type": "chatLine", "room": line.room, "username": line.username, "text": line.text}



class StreamRoutes:
    """Streams and pushes. lila's rules (api/EventStream, modules/bot/src/main/GameStateStream.scala): one event
    stream per account (a new one ends the old); on connection the account's ongoing games (``gameStart``) and
    pending challenges are sent; a game stream starts with ``gameFull`` and, for the Bot and Board APIs, ends
    with the game (the page's stream stays open for the goodbyes); the spectator room reaches bots (and the
    page), the player room everyone."""

    keepalive: float
    url: str
    lock: threading.RLock
    changed: threading.Condition
    games: dict[str, Game]
    challenges: dict[str, Challenge]
    event_streams: dict[str, list[queue.Queue[Any]]]
    show_thinking: bool
    _stopping: threading.Event
    if TYPE_CHECKING:
        def position_line(self, g: Game, now: float, evals: bool = True) -> dict[str, Any]: ...
        def _state(self, g: Game, now: float) -> dict[str, Any]: ...

    # pushes (call them under the lock) ------------------------------------------------------------------
    def _event(self, account_id: str, obj: Any) -> None:
        """Send ``obj`` on ``account_id``'s event stream (nothing when it is not connected)."""
        with self.lock:
            for q in self.event_streams.get(account_id, []):
                q.put(obj)
            self.changed.notify_all()

    def _challenge_event(self, ch: Challenge, account: Account) -> dict[str, Any]:
        direction = "in" if ch.dest.id == account.id else "out"
        return {"type": "challenge", "challenge": challenge_json(ch, self.url, direction), "compat": compat(ch.speed)}

    def _game_push(self, g: Game, obj: Any, kinds: tuple[str, ...] = ("bot", "board", "page")) -> None:
        """``obj`` to the game's streams of ``kinds``; a finished game's Bot and Board streams then end."""
        with self.lock:
            for sub in g.subscribers:
                if sub.kind in kinds:
                    sub.queue.put(obj)
            if g.over:
                for sub in g.subscribers:
                    if sub.kind != "page":
                        sub.queue.put(END)
            self.changed.notify_all()

    def _broadcast_state(self, g: Game) -> None:
        """The game changed: ``gameState`` to its streams (and the page's position), then, the first time it is
        over, ``gameFinish`` to both players' event streams and the spectator room to the players' pages."""
        now = time.monotonic()
        with self.lock:
            self._game_push(g, self._state(g, now))
            if any(sub.kind == "page" for sub in g.subscribers):
                self._page_push(g, self.position_line(g, now, evals=True), self.position_line(g, now, evals=g.over))
            if g.over and not g.finish_sent:
                g.finish_sent = True
                for line in g.lines:
                    if line.room == "spectator":
                        self._page_push(g, None, chat_json(line))
                self._finished(g)

    def _page_push(self, g: Game, to_watchers: Any, to_players: Any) -> None:
        """To the page's streams of ``g``: ``to_watchers`` to those who watch, ``to_players`` to its players
        (None: nothing). A player sees the spectator room and the bot's evals once the game is over, as on
        lichess, where the spectator room is the watchers' (lila GameStateStream: a person's stream has the player
        room only)."""
        with self.lock:
            for sub in g.subscribers:
                if sub.kind == "page":
                    obj = to_watchers if sub.white is None else to_players
                    if obj is not None:
                        sub.queue.put(obj)
            self.changed.notify_all()

    def _finished(self, g: Game) -> None:
        """``gameFinish`` to both players (lila: the event stream's ``gameFinish``)."""
        now = time.monotonic()
        for white in (True, False):
            self._event(g.seat(white).account.id, {"type": "gameFinish", "game": game_info(g, white, now)})

    def _game_started(self, g: Game) -> None:
        now = time.monotonic()
        for white in (True, False):
            self._event(g.seat(white).account.id, {"type": "gameStart", "game": game_info(g, white, now)})

    # serving ----------------------------------------------------------------------------------------------
    def _serve_events(self, h: Handler, account: Account) -> None:
        q: queue.Queue[Any] = queue.Queue()
        now = time.monotonic()
        with self.lock:
            olds = self.event_streams.setdefault(account.id, [])
            for old in olds:  # one event stream per account: the new one wins
                old.put(END)
            for g in self.games.values():
                white = g.color_of(account)
                if white is not None and not g.over:
                    q.put({"type": "gameStart", "game": game_info(g, white, now)})
            for ch in self.challenges.values():  # lichess sends the pending challenges again
                if ch.status == "created" and account.id in (ch.dest.id, ch.challenger.id):
                    q.put(self._challenge_event(ch, account))
            olds.append(q)
            self._connected(account)
            self.changed.notify_all()
        try:
            h.stream(q, self.keepalive, self._stopping)
        finally:
            with self.lock:
                self.event_streams[account.id].remove(q)
                self.changed.notify_all()

    @staticmethod
    def _last_thinking(g: Game) -> dict[str, Any] | None:
        """The ``thinking`` line of the bot's last eval line in ``g``'s spectator room (a page that opens the game
        mid-way shows the figures at once), or None."""
        bots = {seat.account.username for seat in (g.white, g.black) if seat.account.bot}
        for line in reversed(g.lines):
            if line.room == "spectator" and line.username in bots:
                found = thinking_line(line.text)
                if found is not None:
                    return found
        return None

    def _connected(self, account: Account) -> None:
        """``account`` opened its event stream (a hook: the test server counts connections)."""

    def _serve_game(self, h: Handler, g: Game, kind: str, white: bool | None) -> None:
        """Stream game ``g`` to a player (``white``) or a watcher (None) of ``kind`` bot, board or page."""
        q: queue.Queue[Any] = queue.Queue()
        now = time.monotonic()
        with self.lock:
            q.put(self._full(g, now))
            if kind == "page":
                q.put(self.position_line(g, now, evals=white is None or g.over))
                for line in g.lines:
                    if line.room == "player" or white is None or g.over:
                        q.put(chat_json(line))
                thinking = self._last_thinking(g) if self.show_thinking and not g.over else None
                if thinking is not None:
                    q.put(thinking)
            elif g.over:
                q.put(END)
            agent = h.headers.get("User-Agent") or ""
            if kind != "page" and white is not None:
                # one stream per player and client: a new one ends the older (lila GameStateStream ``uniqChan``,
                # the game's full id and the User-Agent)
                for old in g.subscribers:
                    if old.kind == kind and old.white == white and old.agent == agent:
                        old.queue.put(END)
            g.subscribers.append(Subscriber(q, kind, white, agent))
            if white is not None:
                self._player_online(g, white, now)
            wait = self._stream_opened(g, kind)
            self.changed.notify_all()
        if wait > 0:
            time.sleep(wait)  # the test server's slow network: the answer arrives late, its clock old on arrival
        try:
            h.stream(q, self.keepalive, self._stopping)
        finally:
            with self.lock:
                g.subscribers = [s for s in g.subscribers if s.queue is not q]
                if white is not None and not any(s.white == white for s in g.subscribers):
                    g.offline_since[0 if white else 1] = time.monotonic()
                self.changed.notify_all()

    # presence (lila modules/round/src/main/RoundAsyncActor.scala ``Player``) --------------------------------
    def _player_online(self, g: Game, white: bool, now: float) -> None:
        """``white`` opened a stream of ``g``: it is online; an opponent told it was gone hears it is back
        (``setOnline``: ``notifyGone(gone = false)``, BotJsonView ``opponentGoneIsBack``)."""
        i = 0 if white else 1
        g.offline_since[i] = None
        told = g.gone_told[i]
        if told is not None and told[0] and not g.over:
            self._tell_gone(g, white, {"type": "opponentGone", "gone": False})
        g.gone_told[i] = None

    def _tell_gone(self, g: Game, white: bool, obj: dict[str, Any]) -> None:
        """``obj`` to the Bot and Board streams of ``white``'s opponent (GameStateStream: ``BoardGone`` of the
        other colour)."""
        for sub in g.subscribers:
            if sub.kind in ("bot", "board") and sub.white is (not white):
                sub.queue.put(obj)
        self.changed.notify_all()

    def _check_gone(self, g: Game, now: float) -> None:
        """Every :data:`GONE_TICK_S` (lila RoundSocket ``tickInterval``, RoundAsyncActor ``Tick``): in a game a
        claim can end (``forceResignableNow``), a player offline while its opponent is online, for more than 5 s,
        is announced to the opponent: ``{"type": "opponentGone", "gone": true, "claimWinInSeconds": s}``, s the
        seconds until it may claim (0: now), told only while the absent player's clock has 3 s more than that
        (``showMillisToGone``, ``notifyGoneIn``, BotJsonView ``opponentGoneClaimIn``)."""
        if now - g.gone_checked_at < GONE_TICK_S or not force_resignable(g):
            return
        g.gone_checked_at = now
        for white in (True, False):
            mine, theirs = g.offline_since[0 if white else 1], g.offline_since[1 if white else 0]
            if mine is None or theirs is not None or (now - mine) * 1000 <= GONE_NOTICE_MS:
                continue
            millis = int(gone_timeout_ms(g, white) - (now - mine) * 1000)
            if millis <= 0:
                seconds = 0
            elif remaining(g, white, now) > millis + 3000:
                seconds = millis // 1000
            else:
                continue
            g.gone_told[0 if white else 1] = (True, seconds)
            self._tell_gone(g, white, {"type": "opponentGone", "gone": True, "claimWinInSeconds": seconds})

    def _full(self, g: Game, now: float) -> dict[str, Any]:
        full = game_full(g, now)
        full["state"] = self._state(g, now)
        return full

    def _stream_opened(self, g: Game, kind: str) -> float:
        """A stream of ``g`` opened: seconds to wait before answering (a hook: the test server counts the streams
        and may delay them; 0 here)."""
        return 0.0
