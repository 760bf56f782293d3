"""The test server's side of matchmaking: online bots the bot challenges (a mixin of
:class:`devtools.lila.server.FakeLichess`).

* ``GET /api/bot/online?nb=``: NDJSON of the users in ``online_bots`` (add them with :meth:`add_bot`);
* ``POST /api/challenge/{username}``: the API spec's form (``rated``, ``clock.limit`` + ``clock.increment``
  or ``days``, ``variant``, ``color``); a bad form or an unknown user is a 400 (lichess's answer for a
  failed creation). Over ``daily_challenge_limit`` challenges it answers **429** with lichess's
  JSON ``{"error": ..., "ratelimit": {"key": ..., "seconds": ...}}`` (``daily_limit_seconds``);
  otherwise 200 with the challenge, a ``challenge`` event (our own, ``direction: out``), and after
  ``answer_after`` seconds the bot's policy answers: accept (``gameStart``; the server plays the game),
  decline (``challengeDeclined`` with ``declineReason`` and ``declineReasonKey``), or nothing;
* ``keepAliveStream=true``: the answer is NDJSON, the challenge first, then ``{"done": "accepted" | "declined" |
  "canceled"}`` as soon as it is answered (lila modules/challenge/src/main/ChallengeKeepAliveStream.scala);
* ``POST /api/challenge/{id}/cancel``: our pending challenge is canceled (``challengeCanceled``); an accepted one
  whose game has fewer than 2 plies: **200 and that game is aborted** (lila app/controllers/Challenge.scala
  ``apiCancel``, counted in ``aborted_by_cancel``); else 404;
* ``game_start_lag``: seconds the ``gameStart`` of an accepted challenge of ours takes to reach the event stream
  (lila's event stream may lag behind the keep-alive stream).
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import chess

from devtools.lila.base import ServerBase
from devtools.lila.game import FakeChallenge
from devtools.lila.players import Opponent, random_mover
from lichessbot.local.http import Handler
from lichessbot.local.lila_rules import abortable, finish
from lichessbot.local.model import Account
from lichessbot.local.views import challenge_json

__all__ = ["ACCEPT", "IGNORE", "MatchmakingRoutes"]

ACCEPT, IGNORE = "accept", "ignore"
#: lila's decline texts (modules/challenge/src/main/DeclineReason.scala), shortened.
_DECLINE_TEXT = {"generic": "I'm not accepting challenges at the moment.", "later": "Please ask again later.",
                 "tooFast": "This time control is too fast for me.", "tooSlow": "This time control is too slow.",
                 "timeControl": "I'm not accepting this time control.", "rated": "Please send a rated challenge.",
                 "casual": "Please send a casual challenge.", "standard": "I'm only accepting standard chess.",
                 "variant": "I'm not willing to play this variant.", "noBot": "I'm not accepting bots.",
                 "onlyBot": "I'm only accepting bots."}
_DAYS = (1, 2, 3, 5, 7, 10, 14)


def _always(answer: str) -> Callable[[dict[str, Any]], str]:
    """The policy that gives ``answer`` to every challenge."""
    return lambda _ch: answer


class MatchmakingRoutes(ServerBase):
    """Mixin of :class:`devtools.lila.server.FakeLichess` (its state and helpers)."""

    lock: threading.RLock
    url: str
    _ids: int
    bot: Account
    accounts: dict[str, Account]
    challenges: dict[str, Any]
    answers: dict[str, tuple[str, str | None]]
    canceled: set[str]
    if TYPE_CHECKING:
        def _event(self, account_id: str, obj: Any) -> None: ...
        def _new_id(self) -> str: ...
        def _challenge_event(self, ch: Any, account: Account) -> dict[str, Any]: ...
        def _start_game(self, ch: Any) -> Any: ...
        def _close_challenge(self, ch: Any, status: str, reason: str | None = None) -> None: ...
        def _bot_limit_answer(self, opponent: str) -> tuple[int, dict[str, Any]] | None: ...

    def _init_matchmaking(self) -> None:
        self.online_bots: list[dict[str, Any]] = []
        self.bot_policies: dict[str, Callable[[dict[str, Any]], str]] = {}
        self.bot_players: dict[str, Callable[[], Opponent]] = {}  # how each bot plays (default: random)
        self.outgoing: list[dict[str, Any]] = []          # challenges the bot created, in order
        self.outgoing_status: dict[str, str] = {}         # id -> created | accepted | declined | canceled
        self.challenge_refusals = 0                        # 429s of the daily limit
        self.daily_challenge_limit: int | None = None
        self.daily_limit_seconds = 3600
        self.online_nb_asked = 0                           # nb of the last /api/bot/online
        self.answer_after = 0.05
        self.answer_delay_reply = 0.0  # seconds the reply to a creation is held back (the bot answers first)
        self.kept_alive = 0                                # challenges created with keepAliveStream
        self.aborted_by_cancel = 0                         # games lila aborted because our cancel came after them
        self.game_start_lag = 0.0                          # seconds our accepted challenges' gameStart lags
        self._lagging: set[str] = set()

    def add_bot(self, name: str, rating: int = 1500, *, policy: str | Callable[[dict[str, Any]], str] = ACCEPT,
                games: int = 100, tos_violation: bool = False, player: Callable[[], Opponent] | None = None) -> None:
        """An online bot rated ``rating`` in every speed; ``policy`` answers our challenges: ACCEPT, IGNORE,
        a decline reason key, or a function of the challenge returning one of those; ``player()`` makes
        the opponent the server plays for it in each game (default: a random mover)."""
        speeds = ("bullet", "blitz", "rapid", "classical", "correspondence", "chess960")
        user: dict[str, Any] = {"id": name.lower(), "username": name, "title": "BOT",
                                "perfs": {s: {"rating": rating, "games": games, "rd": 60, "prog": 0} for s in speeds}}
        if tos_violation:
            user["tosViolation"] = True
        with self.lock:
            self.online_bots.append(user)
            self.bot_policies[name.lower()] = policy if callable(policy) else _always(policy)
            if player is not None:
                self.bot_players[name.lower()] = player

    def _serve_online(self, h: Handler, query: dict[str, list[str]]) -> None:
        nb = int(query.get("nb", ["50"])[0])
        self.online_nb_asked = nb  # lila's default is 50 (the API spec)
        with self.lock:
            data = b"".join(json.dumps(u).encode() + b"\n" for u in self.online_bots[:nb])
        h.send(200, data, "application/x-ndjson")

    def _create_challenge(self, h: Handler, username: str, form: dict[str, Any]) -> None:
        if not h.is_form:
            return h.reply(400, {"error": "expected a form"})
        with self.lock:
            user = next((u for u in self.online_bots if u["id"] == username.lower()), None)
            if user is None:
                return h.reply(400, {"error": f"{username} cannot be challenged"})
            if (limited := self._bot_limit_answer(user["username"])) is not None:
                return h.reply(*limited)
            if self.daily_challenge_limit is not None and len(self.outgoing) >= self.daily_challenge_limit:
                self.challenge_refusals += 1
                return h.reply(429, {"error": "Too many challenges today. Please try again later.",
                                     "ratelimit": {"key": "bot.vsBot.day", "seconds": self.daily_limit_seconds}})
            variant = form.get("variant", "standard")
            try:
                if "days" in form:
                    days = int(form["days"])
                    if days not in _DAYS or "clock.limit" in form:
                        raise ValueError
                    limit = None
                else:
                    limit, inc = int(form["clock.limit"]), int(form["clock.increment"])
                    if not (limit in (0, 15, 30, 45, 90) or (limit % 60 == 0 and 0 < limit <= 10800)) \
                            or not 0 <= inc <= 60:
                        raise ValueError
                    days = None
            except (KeyError, ValueError):
                return h.reply(400, {"error": {"clock": ["invalid"]}})
            if form.get("rated") not in ("true", "false") or variant not in ("standard", "chess960"):
                return h.reply(400, {"error": {"rated/variant": ["invalid"]}})
            color = form.get("color", "random")
            bot_color = color if color in ("white", "black") else ("white", "black")[self._ids % 2]
            ch = self._outgoing(user, variant, form["rated"] == "true", limit, 0 if days else inc, days, bot_color)
            self._event(self.bot.id, self._challenge_event(ch, self.bot))
            policy = self.bot_policies[user["id"]]
            public = challenge_json(ch, self.url, "out")
            keep_alive = str(form.get("keepAliveStream", "false")).lower() in ("true", "1")
            watcher: queue.Queue[Any] = queue.Queue()
            if keep_alive:
                self.kept_alive += 1
                ch.watchers.append(watcher)
                watcher.put(public)
        threading.Thread(target=self._bot_answers, args=(ch, policy), daemon=True).start()
        time.sleep(self.answer_delay_reply)
        if keep_alive:
            h.stream(watcher, 60.0, self._stopping)  # lila sends nothing between the challenge and its verdict
        else:
            h.reply(200, public)
        return None

    def _outgoing(self, user: dict[str, Any], variant: str, rated: bool, limit: int | None, inc: int,
                  days: int | None, bot_color: str) -> FakeChallenge:
        """Our challenge to ``user``, its game played by the server for that bot."""
        cid = self._new_id()
        opponent = Account(user["username"], title="BOT", rating=user["perfs"]["blitz"]["rating"])
        self.accounts[opponent.id] = opponent
        fen = chess.Board.from_chess960_pos(self._ids * 37 % 960).fen() if variant == "chess960" else None
        ch = FakeChallenge(
            id=cid, challenger=self.bot, dest=opponent, variant=variant, rated=rated, limit_s=limit,
            increment_s=inc, days=days, color=bot_color, final_color=bot_color, initial_fen=fen,
            opponent=self.bot_players[user["id"]]() if user["id"] in self.bot_players else random_mover(self._ids))
        self.challenges[cid] = ch
        self.outgoing.append(challenge_json(ch, self.url, "out"))
        self.outgoing_status[cid] = "created"
        return ch

    def _bot_answers(self, ch: FakeChallenge, policy: Callable[[dict[str, Any]], str]) -> None:
        time.sleep(self.answer_after)
        answer = policy(challenge_json(ch, self.url, "in"))
        with self.lock:
            if self.outgoing_status.get(ch.id) != "created" or answer == IGNORE:
                return
            if answer == ACCEPT:
                self.outgoing_status[ch.id] = "accepted"
                self.answers[ch.id] = ("accept", None)
                if self.game_start_lag:
                    self._lagging.add(ch.id)
                self._start_game(ch)
            else:
                self.outgoing_status[ch.id] = "declined"
                self.answers[ch.id] = ("decline", answer)
                self._close_challenge(ch, "declined", answer)
                public = challenge_json(ch, self.url, "out")
                public["declineReason"] = _DECLINE_TEXT.get(answer, answer)
                public["declineReasonKey"] = answer.lower()  # lila: DeclineReason.key = toString.toLowerCase
                self._event(self.bot.id, {"type": "challengeDeclined", "challenge": public})

    def _game_started(self, g: Any) -> None:
        with self.lock:
            lag = self.game_start_lag if g.id in self._lagging else 0.0
            self._lagging.discard(g.id)
        if lag:
            threading.Timer(lag, super()._game_started, args=(g,)).start()
        else:
            super()._game_started(g)

    def _cancel_outgoing(self, h: Handler, cid: str) -> None:
        with self.lock:
            status = self.outgoing_status.get(cid)
            if status == "accepted":  # lila apiCancel: no challenge any more, but its game: aborted if abortable
                g = self.games.get(cid)
                if g is None or not abortable(g):
                    return h.reply(400, {"error": "The game can no longer be aborted"})
                self.aborted_by_cancel += 1
                finish(g, "aborted", None, time.monotonic())
                self._broadcast_state(g)
                return h.reply(200, {"ok": True})
            if status != "created":
                return h.reply(404, {"error": "No such challenge"})
            self.outgoing_status[cid] = "canceled"
            self.canceled.add(cid)
            ch = self.challenges[cid]
            self._close_challenge(ch, "canceled")
            h.reply(200, {"ok": True})
            self._event(self.bot.id, {"type": "challengeCanceled", "challenge": challenge_json(ch, self.url)})
            return None
