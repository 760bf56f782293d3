"""The fake lichess server's behaviour: broadcasting, the games' progress and the API routes (a mixin of
:class:`lichessbot.fakelichess.server.FakeLichess`, which holds the state)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import chess

from lichessbot.fakelichess.account import AccountRoutes
from lichessbot.fakelichess.botlimit import BotLimitRoutes
from lichessbot.fakelichess.game import FakeGame
from lichessbot.fakelichess.http import Handler, request_kind
from lichessbot.fakelichess.players import OFFER_DRAW, RESIGN
from lichessbot.fakelichess.streams import StreamRoutes
from lichessbot.fakelichess.takeback import TakebackRoutes

__all__ = ["DECLINE_KEYS", "Routes"]

#: lichess's decline reason keys (lila modules/challenge/src/main/DeclineReason.scala).
DECLINE_KEYS = {"generic", "later", "tooFast", "tooSlow", "timeControl", "rated", "casual", "standard", "variant",
                "noBot", "onlyBot"}


class Routes(StreamRoutes, AccountRoutes, BotLimitRoutes, TakebackRoutes):
    # The server's state and helpers this mixin uses (lichessbot.fakelichess.server.FakeLichess and
    # lichessbot.fakelichess.matchmaking.MatchmakingRoutes define them; StreamRoutes declares the streams'
    # share: keepalive, lock, changed, games, challenges, answers, canceled, event_subscribers,
    # event_connections, duplicate_states, _stopping).
    token: str
    username: str
    title: str | None
    opponent_delay: float | Callable[[], float]
    quota: tuple[float, float] | None
    no_start_after: float | None
    answer_attempts: Counter[str]
    rate_limited: Counter[str]
    bad_auth: int
    move_failures: list[int]
    failures: dict[str, list[int]]
    limit_seconds: int | None
    chat_status: int
    chat_delay: float
    skip_game_finish: int
    stall_moves: list[float]
    stalled: int
    ignore_claims: int
    answer_delay: float
    answering: int
    _tokens: float
    _tokens_at: float
    if TYPE_CHECKING:
        @staticmethod
        def _compat(ch: dict[str, Any]) -> dict[str, bool]: ...
        def _challenge_event(self, ch: dict[str, Any]) -> dict[str, Any]: ...
        def _start_game(self, ch: dict[str, Any]) -> FakeGame: ...
        def _game_info(self, g: FakeGame) -> dict[str, Any]: ...
        def _state(self, g: FakeGame) -> dict[str, Any]: ...
        def _full(self, g: FakeGame) -> dict[str, Any]: ...
        def _serve_online(self, h: Any, query: dict[str, list[str]]) -> None: ...
        def _create_challenge(self, h: Any, username: str, form: dict[str, Any]) -> None: ...
        def _cancel_outgoing(self, h: Any, cid: str) -> None: ...
        def _push_broadcast(self, h: Any, round_id: str, body: bytes) -> None: ...
        def _serve_arena(self, h: Any, method: str, parts: list[str], query: dict[str, list[str]],
                         body: dict[str, Any]) -> None: ...

    def say(self, game_id: str, text: str, room: str = "player", username: str | None = None) -> None:
        g = self.games[game_id]
        self._game_push(g, {"type": "chatLine", "room": room, "username": username or g.opponent_name, "text": text})

    def opponent_gone(self, game_id: str, claim_in: int = 0) -> None:
        """``opponentGone`` with ``claimWinInSeconds``: claims are allowed after that many seconds."""
        g = self.games[game_id]
        with self.lock:
            g.claim_at = time.monotonic() + claim_in
        self._game_push(g, {"type": "opponentGone", "gone": True, "claimWinInSeconds": claim_in})

    # the game's progress -----------------------------------------------------------------------
    def _apply(self, g: Any, move: chess.Move, keep_offer: bool = False) -> None:
        """Play ``move``; a standing draw offer lapses when the other side moves (``keep_offer``: the
        offering side moved)."""
        now = time.monotonic()
        if g.ply() >= 2 and g.initial_ms:
            spent = int((now - g.last_move_at) * 1000)
            if g.board.turn == chess.WHITE:
                g.wtime = g.wtime - spent + g.increment_ms
            else:
                g.btime = g.btime - spent + g.increment_ms
        g.last_move_at = now
        g.board.push(move)
        g.opp_draw_offer, g.opp_takeback = g.opp_draw_offer and keep_offer, False  # lila: a move ends a takeback offer
        outcome = g.board.outcome()
        if outcome is not None:
            g.status = "mate" if outcome.termination == chess.Termination.CHECKMATE else (
                "stalemate" if outcome.termination == chess.Termination.STALEMATE else "draw")
            g.winner = None if outcome.winner is None else ("white" if outcome.winner else "black")
        elif g.board.is_repetition(3):  # lichess draws threefold repetition automatically
            g.status, g.winner = "draw", None
        self._broadcast_state(g)

    def _broadcast_state(self, g: Any) -> None:
        self._game_push(g, self._state(g))
        if g.over and not g.finish_sent:
            g.finish_sent = True
            if self.skip_game_finish > 0:
                self.skip_game_finish -= 1
            else:
                self._event({"type": "gameFinish", "game": self._game_info(g)})

    def _finish(self, g: Any, status: str, winner: str | None) -> None:
        g.status, g.winner = status, winner
        self._broadcast_state(g)

    def _maybe_opponent(self, g: Any, delay: float | None = None) -> None:
        if g.over or g.bot_turn():
            return
        ply = g.ply()

        def play() -> None:
            d = self.opponent_delay if delay is None else delay
            time.sleep(d() if callable(d) else d)  # the opponent thinks (outside the server lock)
            with self.lock:
                if g.over or g.ply() != ply:
                    return
                move = g.opponent(g.board.copy())
                if move == RESIGN:
                    self._finish(g, "resign", g.bot_color)
                elif move == OFFER_DRAW:
                    g.opp_draw_offer = True
                    self._game_push(g, self._state(g))
                    self._maybe_opponent(g)
                elif move is not None:
                    self._apply(g, move, keep_offer=True)
        threading.Thread(target=play, daemon=True).start()

    def _watch_clocks(self) -> None:
        while not self._stopping.wait(0.02):
            with self.lock:
                now = time.monotonic()
                for g in self.games.values():
                    if g.over:
                        continue
                    if self.no_start_after is not None and g.ply() < 2 and now - g.started_at > self.no_start_after:
                        self._finish(g, "noStart", None)
                        continue
                    if not g.initial_ms or g.ply() < 2:
                        continue
                    left = (g.wtime if g.board.turn == chess.WHITE else g.btime) - (now - g.last_move_at) * 1000
                    if left <= 0:
                        if g.board.turn == chess.WHITE:
                            g.wtime = 0
                        else:
                            g.btime = 0
                        self._finish(g, "outoftime", "black" if g.board.turn == chess.WHITE else "white")

    # request handling (called from the handler under no lock) --------------------------------------
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

    def handle(self, h: Handler, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        parts = [p for p in path.split("/") if p]
        if method == "POST" and path == "/api/token/test":
            return self._token_test(h)
        if h.headers.get("Authorization") != f"Bearer {self.token}":
            self.bad_auth += 1
            return h.reply(401, {"error": "No such token"})
        if method == "GET" and path == "/api/stream/event":
            return self._serve_events(h)
        if method == "GET" and parts[:4] == ["api", "bot", "game", "stream"]:
            return self._serve_game(h, parts[4])
        kind = request_kind(method, parts)
        status = self._over_quota(kind)
        if status is not None:
            with self.lock:
                g = self.games.get(parts[3]) if kind == "move" else None
                if g is not None:
                    g.rejected_posts.append((g.ply(), parts[5], status))
            if status == 429:
                self.rate_limited[kind] += 1
                if (limited_body := self._json_limited(kind)) is not None:  # lila JsonLimited, never Retry-After
                    return h.reply(429, limited_body)
                return h.reply_html(429)
            return h.reply(status, {"error": "injected failure"})
        if method == "GET" and path == "/api/account":
            return self._serve_account(h)
        if method == "POST" and path == "/api/bot/account/upgrade":
            self.title = "BOT"
            return h.reply(200, {"ok": True})
        if method == "GET" and path == "/api/account/playing":
            with self.lock:
                now = [self._game_info(g) for g in self.games.values() if not g.over]
            return h.reply(200, {"nowPlaying": now})
        if method == "GET" and path == "/api/bot/online":
            return self._serve_online(h, query)
        if method == "POST" and parts[:2] == ["api", "challenge"] and len(parts) == 3:
            return self._create_challenge(h, parts[2], body)
        if method == "POST" and parts[:2] == ["api", "challenge"] and parts[3:] == ["cancel"]:
            return self._cancel_outgoing(h, parts[2])
        if method == "POST" and parts[:2] == ["api", "challenge"] and len(parts) == 4:
            return self._answer_challenge(h, parts[2], parts[3], body)
        if (method == "POST" and parts[:2] == ["api", "tournament"] and len(parts) == 4
                and parts[3] in ("join", "withdraw")) or (method == "GET" and parts[:2] == ["api", "team"]
                                                          and parts[3:] == ["arena"]) \
                or (method == "GET" and parts[:2] == ["api", "tournament"] and len(parts) == 3):
            return self._serve_arena(h, method, parts, query, body)
        if method == "POST" and parts[:3] == ["api", "broadcast", "round"] and parts[4:] == ["push"]:
            return self._push_broadcast(h, parts[3], h.raw)
        if method == "POST" and parts[:3] == ["api", "bot", "game"] and len(parts) >= 5:
            with self.lock:
                g = self.games.get(parts[3])
            if g is None:
                return h.reply(404, {"error": "No such game"})
            return self._game_action(h, g, parts[4:], query, body)
        h.reply(404, {"error": "Not found"})

    def _answer_challenge(self, h: Handler, cid: str, action: str, body: dict[str, Any]) -> None:
        if self.answer_delay:
            with self.lock:
                self.answering += 1
                self.changed.notify_all()
            time.sleep(self.answer_delay)
            with self.lock:
                self.answering -= 1
        with self.lock:
            self.answer_attempts[cid] += 1
            ch = self.challenges.get(cid)
            if ch is None or cid in self.answers or cid in self.canceled:
                return h.reply(404, {"error": "No such challenge"})
            if action == "accept":
                if not self._compat(ch)["bot"]:
                    return h.reply(400, {"error": "This game cannot be played with the Bot API."})
                if (limited := self._accept_limit(ch)) is not None:
                    return h.reply(*limited)
                self.answers[cid] = ("accept", None)
                h.reply(200, {"ok": True})
                self._start_game(ch)
            elif action == "decline":
                reason = body.get("reason", "generic")
                if not h.is_form or reason not in DECLINE_KEYS:  # the API spec's body is a form
                    return h.reply(400, {"error": {"reason": ["invalid"]}})
                self.answers[cid] = ("decline", reason)
                h.reply(200, {"ok": True})
            else:
                return h.reply(404, {"error": "Not found"})
            self.changed.notify_all()

    def _game_action(self, h: Handler, g: Any, rest: list[str], query: dict[str, list[str]],
                     body: dict[str, Any]) -> None:
        action = rest[0]
        if action == "chat":
            time.sleep(self.chat_delay)
            if self.chat_status != 200:
                return h.reply(self.chat_status, {"error": "chat refused"})
            room, text = body.get("room", ""), body.get("text", "")
            with self.lock:
                g.chat.append((room, text))
                h.reply(200, {"ok": True})
                self._game_push(g, {"type": "chatLine", "room": room, "username": self.username, "text": text})
            return None
        if action == "move" and self.stall_moves:
            with self.lock:
                seconds = self.stall_moves.pop(0) if self.stall_moves else 0.0
                self.stalled += 1
            time.sleep(seconds)  # a post lost on the way: no answer, then the connection is cut
            with self.lock:
                self.stalled -= 1
            h.close_connection = True
            h.connection.shutdown(2)
            return None
        with self.lock:
            if action == "move" and len(rest) == 2:
                return self._move(h, g, rest[1], query)
            if action == "takeback" and len(rest) == 2:
                return self._takeback_locked(h, g, rest[1])
            if action == "abort":
                if g.over or g.ply() >= 2 or g.tournament:
                    return h.reply(400, {"error": "This game can no longer be aborted"})
                h.reply(200, {"ok": True})
                return self._finish(g, "aborted", None)
            if action == "resign":
                if g.over:
                    return h.reply(400, {"error": "This game cannot be resigned"})
                h.reply(200, {"ok": True})
                if g.ply() < 2 and not g.tournament:
                    return self._finish(g, "aborted", None)  # lila: resigning an abortable game aborts it
                return self._finish(g, "resign", "black" if g.bot_color == "white" else "white")
            if action in ("claim-victory", "claim-draw"):
                if g.over or g.claim_at is None or time.monotonic() < g.claim_at:
                    return h.reply(400, {"error": "You cannot claim yet"})
                h.reply(200, {"ok": True})
                if self.ignore_claims > 0:
                    self.ignore_claims -= 1
                    return None
                if action == "claim-draw":
                    return self._finish(g, "draw", None)
                return self._finish(g, "timeout", g.bot_color)
            if action == "draw" and len(rest) == 2:
                if rest[1] == "yes" and g.opp_draw_offer and not g.over:
                    h.reply(200, {"ok": True})
                    return self._finish(g, "draw", None)
                return h.reply(200, {"ok": True})
        h.reply(404, {"error": "Not found"})

    def _move(self, h: Handler, g: Any, uci: str, query: dict[str, list[str]]) -> None:
        if g.over or not g.bot_turn():
            g.rejected_posts.append((g.ply(), uci, 400))
            return h.reply(400, {"error": "Not your turn, or game already over"})
        try:
            move = g.board.parse_uci(uci)
        except ValueError:
            g.rejected_posts.append((g.ply(), uci, 400))
            return h.reply(400, {"error": f"Illegal move {uci}"})
        offering = query.get("offeringDraw", ["false"])[0] == "true"
        g.posts.append((g.ply(), uci, offering))
        h.reply(200, {"ok": True})
        accepted = offering and g.opp_draw_offer
        self._apply(g, move)
        if accepted and not g.over:  # lila: offering a draw while the opponent offers one accepts it
            self._finish(g, "draw", None)
        self._maybe_opponent(g)
        return None
