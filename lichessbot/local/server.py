"""The embedded lichess: lila's Bot and Board APIs and the page where a person plays the bot, on one HTTP server
with real clocks.

The bot reaches it over HTTP exactly as it reaches lichess (the same client, event stream and game streams); the
server knows nothing of the bot but its account. Accounts: the bot's (title BOT, its token given at start) and
one for every other token a request brings (a Board API user: "any token" plays, as a lichess account would),
plus the page's guests (:mod:`lichessbot.local.page`). Routes (lila's paths and answers, each cited in its module):

* ``GET /api/account``, ``POST /api/token/test``, ``POST /api/bot/account/upgrade``, ``GET /api/account/playing``,
  ``GET /api/bot/online`` (the bot, NDJSON), ``GET /api/stream/event``;
* challenges: :mod:`lichessbot.local.challenges`; a player's game: :mod:`lichessbot.local.actions`;
* the page, its stream and the PGN export: :mod:`lichessbot.local.page`.

One lock guards the state; requests run in their own threads, streams read queues, and a clock thread ends games
on time (and games whose first move never came, lila's ``expirable``) whether anyone is connected or not. Times
are ``time.monotonic()`` seconds; clocks milliseconds."""

from __future__ import annotations

import functools
import json
import queue
import secrets
import string
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Self

from lichessbot.local.actions import GameRoutes
from lichessbot.local.challenges import ChallengeRoutes
from lichessbot.local.http import END, Handler, log, make_server
from lichessbot.local.lila_rules import expiry, finish, flag
from lichessbot.local.limits import (
    BOT_GAMES,
    CHALLENGES_PER_DAY,
    CHALLENGES_PER_MINUTE,
    EVENT_STREAMS,
    RATE_LIMITED,
    Limiter,
)
from lichessbot.local.model import CHALLENGE_PING_S, CHALLENGE_UNSEEN_S, Account, Challenge, Game
from lichessbot.local.page import PageRoutes
from lichessbot.local.streams import StreamRoutes
from lichessbot.local.views import account_json, game_info, game_state

__all__ = ["LocalLichess"]

#: Seconds between the clock thread's looks at the games.
TICK = 0.02
def _urgency(a: tuple[dict[str, Any], float], b: tuple[dict[str, Any], float]) -> int:
    """lila's order of a player's games, most urgent first (modules/game/src/main/Pov.scala ``priority``): games on
    the player's move first; among those, under 30 s left before more, then not yet moved before moved, then the
    least time left; among the others the freshest (last moved) first. ``a``/``b``: (game info, last move time)."""
    (ia, ta), (ib, tb) = a, b
    if ia["isMyTurn"] != ib["isMyTurn"]:
        return -1 if ia["isMyTurn"] else 1
    if not ia["isMyTurn"]:
        return -1 if ta > tb else 1 if ta < tb else 0
    inf = 2**31
    sa, sb = ia.get("secondsLeft", inf), ib.get("secondsLeft", inf)
    if (sa < 30) != (sb < 30):
        return -1 if sa < 30 else 1
    if ia["hasMoved"] != ib["hasMoved"]:
        return 1 if ia["hasMoved"] else -1
    return -1 if sa < sb else 1 if sa > sb else 0


#: Games ``/api/account/playing`` lists by default and at most (lila app/controllers/Account.scala ``doNowPlaying``).
PLAYING_NB, PLAYING_MAX = 9, 50
_ID_CHARS = string.ascii_letters + string.digits


class LocalLichess(StreamRoutes, ChallengeRoutes, GameRoutes, PageRoutes):
    """Start with ``with LocalLichess(bot_token) as server:`` (or :meth:`start`/:meth:`stop`); ``server.url``.

    Args:
        bot_token: the bot's token (the only one that reaches the Bot API as the bot).
        bot_name: the bot's username.
        host, port: where to listen (port 0: any free port). Raises OSError when it cannot be bound.
        keepalive: seconds of silence before a stream sends an empty line (lila: about 6).
        any_token: every other token is a Board API account (False: only registered ones; others get 401).
        allowed_hosts: the names (no port) a request's ``Host`` may give besides a loopback address, ``localhost``
            and ``host`` (when not a wildcard such as 0.0.0.0): e.g. the machine's name on the network, for those
            who open the page from another machine. Any other ``Host`` gets 421 (:mod:`lichessbot.local.http`).
        rate_limits: lila's limits (:mod:`lichessbot.local.limits`); False relaxes them (tests whose traffic is
            heavier than a person's).
        show_thinking: the players' pages get the bot's figures (eval, depth, nps) during the game, read from the
            eval lines it posts in the spectator room (:func:`lichessbot.local.page.thinking_line`); off, as on
            lichess, a player sees them only after the game (the operator's ``play --local --show-thinking``).
        bot_takeback: the bot's takeback preference ("never", "casual", "always"; ValueError otherwise). lila
            sets a BOT account's to "never" (modules/pref/src/main/PrefApi.scala ``setBot``) and allows a takeback
            only where both players' allow it (:func:`lichessbot.local.lila_rules.takeback_allowed_by_prefs`), so by
            default nobody can take back a move against the bot: a ``takeback/yes`` answers 200 and changes
            nothing, as lila's does. "always" lets a person try the bot's ``max_takebacks_accepted``.

    ``challenge_unseen_s`` / ``challenge_ping_s``: lila's 20 s and 15 s of a challenge's life (a test may shorten
    them).
    """

    def __init__(self, bot_token: str, bot_name: str = "lichessbot", *, host: str = "127.0.0.1", port: int = 0,
                 keepalive: float = 6.0, any_token: bool = True, allowed_hosts: Iterable[str] = (),
                 rate_limits: bool = True, show_thinking: bool = False, bot_takeback: str = "never") -> None:
        self.keepalive = keepalive
        self.show_thinking = show_thinking
        self.rate_limits = rate_limits
        self.challenge_unseen_s, self.challenge_ping_s = CHALLENGE_UNSEEN_S, CHALLENGE_PING_S
        self.limiters = {"events": Limiter(*EVENT_STREAMS), "challenges_minute": Limiter(*CHALLENGES_PER_MINUTE),
                         "challenges_day": Limiter(*CHALLENGES_PER_DAY), "bot_games": Limiter(*BOT_GAMES)}
        self.any_token = any_token
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.accounts: dict[str, Account] = {}
        self.tokens: dict[str, str] = {}  # token -> account id
        self.games: dict[str, Game] = {}
        self.challenges: dict[str, Challenge] = {}
        self.event_streams: dict[str, list[queue.Queue[Any]]] = {}
        self._guests = 0
        self.page_extra: dict[str, Any] = {}
        self._stopping = threading.Event()
        self.bot = Account(bot_name, title="BOT", rating=2000, takeback=bot_takeback)
        self._add(self.bot, bot_token)
        self.httpd = make_server(self, host, port, frozenset(allowed_hosts))
        shown = f"[{host}]" if ":" in host else host
        self.host, self.port = host, int(self.httpd.server_address[1])
        self.url = f"http://{shown}:{self.port}"
        self._threads = [threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                          name="local-http", daemon=True),
                         threading.Thread(target=self._watch_clocks, name="local-clocks", daemon=True)]

    # lifecycle ------------------------------------------------------------------------------------------
    def start(self) -> Self:
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        """Stop serving: every stream ends, the port is freed."""
        self._stopping.set()
        with self.lock:
            for qs in self.event_streams.values():
                for q in qs:
                    q.put(END)
            for g in self.games.values():
                for sub in g.subscribers:
                    sub.queue.put(END)
            for ch in self.challenges.values():
                for w in ch.watchers:
                    w.put(END)
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 20.0) -> bool:
        """Wait until ``predicate()`` (checked under the lock at every change) is true; False after ``timeout``."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 0.1))
        return True

    # accounts -------------------------------------------------------------------------------------------
    def _add(self, account: Account, token: str | None) -> Account:
        self.accounts[account.id] = account
        if token:
            self.tokens[token] = account.id
        return account

    def register(self, token: str, web: bool = False) -> Account:
        """A new player account for ``token`` (named Player1, Player2, ...)."""
        with self.lock:
            self._guests += 1
            while f"player{self._guests}" in self.accounts:
                self._guests += 1
            return self._add(Account(f"Player{self._guests}", web=web), token)

    def account_for_token(self, token: str) -> Account | None:
        with self.lock:
            aid = self.tokens.get(token)
            return None if aid is None else self.accounts.get(aid)

    def account_named(self, username: str) -> Account | None:
        with self.lock:
            return self.accounts.get(username.lower())

    def auth(self, h: Handler) -> Account | None:
        """The account of the request's ``Authorization: Bearer`` token: a new player for a token never seen
        (``any_token``), else None."""
        header = h.headers.get("Authorization") or ""
        token = header[7:].strip() if header.startswith("Bearer ") else ""
        if not token:
            return None
        with self.lock:
            account = self.account_for_token(token)
            if account is None and self.any_token:
                account = self.register(token)
            return account

    # hooks ----------------------------------------------------------------------------------------------
    def _new_id(self) -> str:
        """A new 8-character game id (lila's ``[\\w]{8}``)."""
        with self.lock:
            while True:
                gid = "".join(secrets.choice(_ID_CHARS) for _ in range(8))
                if gid not in self.games and gid not in self.challenges:
                    return gid

    def _after_change(self, g: Game) -> None:
        """``g`` changed (a move, a takeback, its start): a hook for the test server's own players."""

    def _state(self, g: Game, now: float) -> dict[str, Any]:
        return game_state(g, now)

    def record(self, h: Handler, method: str, path: str) -> None:
        """A request was answered (a hook: the test server keeps a log)."""

    # the clocks -----------------------------------------------------------------------------------------
    def _watch_clocks(self) -> None:
        while not self._stopping.wait(TICK):
            try:
                self._tick(time.monotonic())
            except Exception as err:  # noqa: BLE001 - the clock thread outlives any one game's trouble
                log.exception("clock tick failed; the clocks run on", error=str(err))

    def _tick(self, now: float) -> None:
        """End the games whose side to move ran out of time (its grace spent), and those of an expirable source
        whose first move never came (lila modules/round/src/main/Finisher.scala ``noStart``: aborted, outside
        tournaments, where it is a loss; a challenge's game never expires: :func:`~lichessbot.local.lila_rules.expiry`);
        tell players their opponent is gone; real-time challenges unseen for 20 s go offline."""
        with self.lock:
            self._sweep_challenges(now)
            for g in list(self.games.values()):
                if g.over:
                    continue
                self._check_gone(g, now)
                if flag(g, now):
                    self._broadcast_state(g)
                    continue
                if expiry(g, now) == 0.0:
                    if g.tournament is not None:
                        finish(g, "noStart", "black" if g.board.turn else "white", now)
                    else:
                        finish(g, "aborted", None, now)
                    self._broadcast_state(g)

    # routing --------------------------------------------------------------------------------------------
    def handle(self, h: Handler, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        parts = [p for p in path.split("/") if p]
        if method == "GET" and (not parts or (len(parts) == 1 and len(parts[0]) == 8 and parts[0].isalnum())):
            return self._serve_page(h)
        if method == "GET" and path == "/favicon.ico":
            return self._serve_icon(h)
        if method == "POST" and path == "/api/token/test":
            return self._token_test(h)
        if method == "POST" and path == "/local/session":
            return self._serve_session(h, body)
        if method == "GET" and path == "/api/bot/online":
            return self._serve_online(h, query)
        if method == "GET" and parts[:2] == ["game", "export"] and len(parts) == 3:
            return self._serve_export(h, parts[2].removesuffix(".pgn"))
        if method == "GET" and parts[:2] == ["local", "game"] and parts[3:] == ["stream"]:
            return self._serve_page_stream(h, self.auth(h), parts[2])
        if method == "POST" and parts[:2] == ["local", "game"] and parts[3:] == ["rematch"]:
            return self._serve_rematch(h, self.auth(h), parts[2])
        if not path.startswith("/api/"):
            return h.reply(404, {"error": "Not found"})
        me = self.auth(h)
        if me is None:
            return h.reply(401, {"error": "No such token"})
        return self.route(h, me, method, parts, query, body)

    def route(self, h: Handler, me: Account, method: str, parts: list[str], query: dict[str, list[str]],
              body: dict[str, Any]) -> None:
        """An authenticated ``/api/...`` request of ``me``."""
        path = "/" + "/".join(parts)
        if method == "GET" and path == "/api/account":
            return h.reply(200, account_json(me))
        if method == "POST" and path == "/api/bot/account/upgrade":
            return self._upgrade(h, me)
        if method == "GET" and path == "/api/account/playing":
            return self._serve_playing(h, me, query)
        if method == "GET" and path == "/api/stream/event":
            with self.lock:
                if self.rate_limits and not self.limiters["events"].spend(me.id, time.monotonic()):
                    return h.reply(429, RATE_LIMITED)
            return self._serve_events(h, me)
        if method == "GET" and path == "/api/challenge":
            return self._serve_mine(h, me)
        if parts[:2] == ["api", "challenge"] and len(parts) >= 3:
            if method == "POST" and len(parts) == 3:
                return self._serve_create(h, me, parts[2], body)
            if method == "POST" and len(parts) == 4 and parts[3] in ("accept", "decline", "cancel"):
                return self._serve_answer(h, me, parts[2], parts[3], body)
            if method == "GET" and parts[3:] == ["show"]:
                return self._serve_show(h, me, parts[2])
        if parts[:1] == ["api"] and parts[1:2] in (["bot"], ["board"]) and parts[2:3] == ["game"]:
            return self._serve_game_api(h, me, parts[1], method, parts[3:], query, body)
        return h.reply(404, {"error": "Not found"})

    def _token_test(self, h: Handler) -> None:
        """lichess-org/api doc/specs/tags/oauth/api-token-test.yaml: the body is tokens, comma-separated; each
        maps to ``{"userId", "scopes", "expires"}`` or null (a Board API token is any other; null here only when
        ``any_token`` is off)."""
        answer: dict[str, Any] = {}
        for token in (t.strip() for t in h.raw.decode("utf-8", "replace").split(",") if t.strip()):
            account = self.account_for_token(token)
            if account is None and self.any_token:
                account = self.register(token)
            scopes = "bot:play,challenge:read,challenge:write" if account is not None and account.bot else \
                "board:play,challenge:read,challenge:write"
            answer[token] = None if account is None else {"userId": account.id, "scopes": scopes, "expires": None}
        h.reply(200, answer)

    def _upgrade(self, h: Handler, me: Account) -> None:
        """lila PlayApi ``botCommand("account/upgrade")``: an account that has played is refused."""
        with self.lock:
            if not me.bot and any(g.color_of(me) is not None for g in self.games.values()):
                return h.reply(400, {"error": "This account has played games and cannot become a BOT account"})
            me.title = "BOT"
            return h.reply(200, {"ok": True})

    def _serve_playing(self, h: Handler, me: Account, query: dict[str, list[str]]) -> None:
        try:
            nb = min(PLAYING_MAX, max(1, int((query.get("nb") or [str(PLAYING_NB)])[0])))
        except ValueError:
            nb = PLAYING_NB
        now = time.monotonic()
        with self.lock:
            mine = [(g, g.color_of(me)) for g in self.games.values() if not g.over]
            infos = [(game_info(g, white, now), g.last_move_at) for g, white in mine if white is not None]
        infos.sort(key=functools.cmp_to_key(_urgency))
        h.reply(200, {"nowPlaying": [info for info, _ in infos[:nb]]})

    def _serve_online(self, h: Handler, query: dict[str, list[str]]) -> None:
        """lila PlayApi ``botOnlineApi``: the bots online (here: this server's bots with an open event stream,
        the bot always), NDJSON, ``nb`` at most."""
        try:
            nb = max(0, int((query.get("nb") or ["50"])[0]))
        except ValueError:
            nb = 50
        with self.lock:
            bots = [a for a in self.accounts.values() if a.bot and (a is self.bot or self.event_streams.get(a.id))]
            data = b"".join(json.dumps(account_json(a, online=True)).encode() + b"\n" for a in bots[:nb])
        h.send(200, data, "application/x-ndjson")
