"""The test server's routes over the embedded lichess's (a mixin of :class:`devtools.lila.server.FakeLichess`): only
the server's token is known, faults come first, the test-only endpoints (arenas, broadcasts, the online bots'
challenges) are served, the bot's answers to challenges are recorded, and the game actions the tests pin keep the
test server's strictness (a claim before ``claimWinInSeconds`` is a 400). Takeback answers are lila's: 200 whatever
happens, a ``yes`` without the opponent's proposal proposes one (counted in the game's ``bot_proposals``);
``lose_takeback_answers``: the next answers are handled but their answer is lost (the connection cut)."""

from __future__ import annotations

import time
from typing import Any, cast

from devtools.lila.base import ServerBase
from devtools.lila.game import FakeGame
from lichessbot.local.http import Handler
from lichessbot.local.lila_rules import finish, takeback
from lichessbot.local.model import Account, Game

__all__ = ["TestRoutes"]


class TestRoutes(ServerBase):
    __test__ = False  # not a pytest class

    def handle(self, h: Handler, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        parts = [p for p in path.split("/") if p]
        if method == "POST" and path == "/api/token/test":
            if self.latency:
                self._faults(h, method, ["token"])
            return self._token_test(h)
        if h.headers.get("Authorization") != f"Bearer {self.token}":
            self.bad_auth += 1
            return h.reply(401, {"error": "No such token"})
        if self._faults(h, method, parts):
            return None
        return super().handle(h, method, path, query, body)

    def route(self, h: Handler, me: Account, method: str, parts: list[str], query: dict[str, list[str]],
              body: dict[str, Any]) -> None:
        path = "/" + "/".join(parts)
        if method == "GET" and path == "/api/account":
            return self._serve_account(h)
        if (method == "POST" and parts[:2] == ["api", "tournament"] and len(parts) == 4
                and parts[3] in ("join", "withdraw")) or (method == "GET" and parts[:2] == ["api", "team"]
                                                          and parts[3:] == ["arena"]) \
                or (method == "GET" and parts[:2] == ["api", "tournament"] and len(parts) == 3):
            return self._serve_arena(h, method, parts, query, body)
        if method == "POST" and parts[:3] == ["api", "broadcast", "round"] and parts[4:] == ["push"]:
            return self._push_broadcast(h, parts[3], h.raw)
        return super().route(h, me, method, parts, query, body)

    def _serve_account(self, h: Handler) -> None:
        bot = self.bot
        acc: dict[str, Any] = {"id": bot.id, "username": bot.username,
                               "perfs": {s: {"rating": 2000, "games": 50} for s in ("bullet", "blitz", "rapid",
                                                                                   "classical")}}
        if bot.title:
            acc["title"] = bot.title
        h.reply(200, acc)

    # challenges ----------------------------------------------------------------------------------------
    def _serve_create(self, h: Handler, me: Account, username: str, form: dict[str, Any]) -> None:
        return self._create_challenge(h, username, form)

    def _serve_answer(self, h: Handler, me: Account, cid: str, action: str, body: dict[str, Any]) -> None:
        if action == "cancel":
            return self._cancel_outgoing(h, cid)
        if self.answer_delay:
            with self.lock:
                self.answering += 1
                self.changed.notify_all()
            time.sleep(self.answer_delay)
            with self.lock:
                self.answering -= 1
        with self.lock:
            self.answer_attempts[cid] += 1
            if action == "accept" and cid in self.cancel_on_accept:  # the challenger's cancel gets there first
                self.cancel_on_accept.discard(cid)
                self.cancel_challenge(cid)
            ch = self.challenges.get(cid)
            if action == "accept" and ch is not None and ch.status == "created":
                if (limited := self._accept_limit(ch)) is not None:
                    return h.reply(*limited)
            super()._serve_answer(h, me, cid, action, body)
        return None

    def _close_challenge(self, ch: Any, status: str, reason: str | None = None) -> None:
        """A challenge to the bot is answered: recorded before the answer is sent."""
        super()._close_challenge(ch, status, reason)
        if ch.dest.id == self.bot.id and ch.id not in self.answers:
            if status == "accepted":
                self.answers[ch.id] = ("accept", None)
            elif status == "declined":
                self.answers[ch.id] = ("decline", reason)

    # game actions --------------------------------------------------------------------------------------
    def _accepted_move(self, g: Game, uci: str, offering_draw: bool) -> None:
        cast(FakeGame, g).posts.append((g.ply(), uci, offering_draw))

    def _refuse_move(self, h: Handler, g: Game, uci: str, message: str) -> None:
        cast(FakeGame, g).rejected_posts.append((g.ply(), uci, 400))
        h.reply(400, {"error": message})

    def _chat(self, h: Handler, me: Account, g: Game, white: bool, body: dict[str, Any]) -> None:
        time.sleep(self.chat_delay)
        if self.chat_status != 200:
            return h.reply(self.chat_status, {"error": "chat refused"})
        return super()._chat(h, me, g, white, body)

    def _command(self, h: Handler, g: Game, white: bool, action: str, arg: str | None) -> None:
        if action == "takeback" and arg in ("yes", "no"):
            # lila round Takebacker: 200 whatever happens; a yes without the opponent's proposal is our own
            # proposal (counted: a post a bot should never make)
            fake = cast(FakeGame, g)
            if arg == "yes":
                if fake.opp_takeback and not g.over and g.tournament is None:
                    fake.takebacks += 1
                elif not g.over:
                    fake.bot_proposals += 1
            takeback(g, white, arg == "yes", time.monotonic())
            if self.lose_takeback_answers > 0:  # handled, but the answer is lost on the way: the connection is cut
                self.lose_takeback_answers -= 1
                self._changed(g)
                h.close_connection = True
                h.connection.shutdown(2)
                return None
            h.reply(200, {"ok": True})
            return self._changed(g)
        return super()._command(h, g, white, action, arg)

    def _claim(self, h: Handler, g: Game, white: bool, action: str, now: float) -> None:
        if g.over or g.claim_at is None or now < g.claim_at:
            return h.reply(400, {"error": "You cannot claim yet"})
        h.reply(200, {"ok": True})
        if self.ignore_claims > 0:
            self.ignore_claims -= 1
            return None
        finish(g, "draw" if action == "claim-draw" else "timeout",
               None if action == "claim-draw" else ("white" if white else "black"), now)
        return self._changed(g)
