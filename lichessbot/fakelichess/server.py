"""A lichess Bot API server for tests and the soak bench: real HTTP on 127.0.0.1, as strict as lichess.

Streams are chunked NDJSON with keepalive newlines every ``keepalive`` seconds. Clocks are real (ms):
they start after each side's first move, as on lichess, and a flag watcher ends games on time. The
opponent is played by the server (see :mod:`lichessbot.fakelichess.players`).

Strict like lichess (shapes from the lichess-org/api OpenAPI files and lila's bot controllers):

* ``quota=(rate, burst)``: one token bucket per account across all non-stream endpoints; a request
  over it gets a **429 with an HTML body and no Retry-After**; ``fail_next(kind, status)`` injects
  answers (kinds: move, chat, challenge, action, broadcast, account, playing);
* one event stream per token (a second connection ends the first); pending challenges are re-sent on
  every connection, after the ``gameStart`` of each ongoing game;
* challenges carry ``compat`` (event level); UltraBullet is not bot-compatible and accepting it is
  refused (400); variants chess960 / fromPosition (with ``initialFen``) and crazyhouse (drop moves
  such as ``P@e4``); correspondence (``daysPerTurn``) and unlimited time controls; ``tournamentId``;
* draws: the opponent's offer (``OFFER_DRAW``) is accepted by a move posted with ``offeringDraw=true``
  or by ``/draw/yes``; threefold repetition ends the game in a draw (lichess draws it automatically);
* the bot's own chat lines come back on the game stream; claim victory/draw only after
  ``opponentGone``'s ``claimWinInSeconds``; abort only before both sides moved and never in a
  tournament game; a game whose first moves are not made within ``no_start_after`` s ends ``noStart``;
* keys lichess omits are omitted (no ``clock: null``, no ``wdraw: false``, no ``winner: null``);
* the decline body is accepted only as a form with a known reason key.

Broadcast rounds (``POST /api/broadcast/round/{id}/push``): :mod:`lichessbot.fakelichess.broadcast`.

Fault injection: ``drop_event_streams()``, ``drop_game_streams(id)``, ``skip_game_finish`` (the next
gameFinish events are not sent), ``chat_status``/``chat_delay``, ``push_event_raw``/``push_game_raw``,
``duplicate_states``, ``castling_as_rook``, ``move_failures`` (answers of the next move posts),
``stall_moves`` (move posts that hang, then are cut unanswered). lila's bot-vs-bot daily limit (ours:
``bot_games_per_day``, the opponent's: ``limited_bots``): :mod:`lichessbot.fakelichess.botlimit`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

import chess
import chess.variant

from lichessbot.fakelichess.arenas import ArenaRoutes
from lichessbot.fakelichess.broadcast import BroadcastRoutes
from lichessbot.fakelichess.game import FOREVER, FakeGame, make_board
from lichessbot.fakelichess.http import END, make_handler
from lichessbot.fakelichess.matchmaking import MatchmakingRoutes
from lichessbot.fakelichess.players import Opponent, random_mover
from lichessbot.fakelichess.routes import Routes

__all__ = ["FakeGame", "FakeLichess"]

class FakeLichess(Routes, MatchmakingRoutes, BroadcastRoutes, ArenaRoutes):
    """Start with ``with FakeLichess(...) as server:``; ``server.url`` is the base URL."""

    def __init__(self, token: str = "lip_TESTTOKEN0123456789", username: str = "TestBot", title: str | None = "BOT",
                 keepalive: float = 0.2, opponent_delay: float | Callable[[], float] = 0.02,
                 quota: tuple[float, float] | None = None,
                 no_start_after: float | None = None):
        self.token, self.username, self.title = token, username, title
        self.keepalive = keepalive
        self.opponent_delay = opponent_delay
        self.quota = quota
        self.no_start_after = no_start_after
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.games: dict[str, FakeGame] = {}
        self.challenges: dict[str, dict[str, Any]] = {}
        self.answers: dict[str, tuple[str, str | None]] = {}  # challenge id -> ("accept", None) | ("decline", reason)
        self.answer_attempts: Counter[str] = Counter()       # challenge id -> accept/decline calls
        self.canceled: set[str] = set()
        self.event_subscribers: list[queue.Queue] = []
        self.event_connections = 0
        self.requests: list[tuple[str, str, int]] = []  # (method, path, status)
        self.rate_limited: Counter[str] = Counter()     # kind -> 429s answered
        self.bad_auth = 0
        self.move_failures: list[int] = []
        self.failures: dict[str, list[int]] = {}
        self.latency: tuple[float, float] | None = None  # seconds added to every answer (min, max)
        self.stream_latency: tuple[float, float] | None = None  # seconds each streamed line arrives late (min, max)
        self.limit_seconds: int | None = None  # injected 429s: JSON ratelimit.seconds (None: lila's HTML page)
        self.chat_status = 200
        self.chat_delay = 0.0
        self.duplicate_states = False
        self.castling_as_rook = False
        self.skip_game_finish = 0
        self.stall_moves: list[float] = []  # the next move posts hang this many seconds, then are cut unanswered
        self.stalled = 0                    # move posts hanging now
        self.ignore_claims = 0              # the next claims are answered 200 without effect (as lila may)
        self.answer_delay = 0.0             # seconds a challenge answer takes
        self.answering = 0                  # challenge answers in progress
        #: the most real-time games at once against the bot: in all, against bots, with one opponent
        self.peak_games = self.peak_bot_games = self.peak_games_per_user = 0
        self._tokens = quota[1] if quota else 0.0
        self._tokens_at = time.monotonic()
        self._ids = 0
        self._init_matchmaking()
        self._init_bot_limit()
        self._init_tokens()
        self._init_broadcast()
        self._init_arenas()
        self._stopping = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._threads = [threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True),
                         threading.Thread(target=self._watch_clocks, daemon=True),
                         threading.Thread(target=self._pair_arenas, daemon=True)]

    # lifecycle ---------------------------------------------------------------------------------
    def __enter__(self) -> FakeLichess:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        with self.lock:
            for q in self.event_subscribers:
                q.put(END)
            for g in self.games.values():
                for q in g.subscribers:
                    q.put(END)
        self.httpd.shutdown()
        self.httpd.server_close()

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 0.1))
        return True

    def fail_next(self, kind: str, status: int, n: int = 1) -> None:
        """The next ``n`` requests of ``kind`` (move, chat, challenge, action, account, playing) get ``status``
        (a 429 as lichess sends it: never a Retry-After; HTML, or lila's ``JsonLimited`` body with
        ``ratelimit.seconds`` = ``limit_seconds`` when that is set)."""
        with self.lock:
            self.failures.setdefault(kind, []).extend([status] * n)

    # challenges and games ----------------------------------------------------------------------
    def _new_id(self) -> str:
        self._ids += 1
        return f"g{self._ids:07d}"

    def challenge(self, *, challenger: str = "alice", title: str | None = None, rating: int = 1500,
                  variant: str = "standard", rated: bool = False, limit: float | None = 60, increment: int = 0,
                  days: int | None = None, speed: str | None = None, bot_color: str = "white", fen: str | None = None,
                  tournament: str | None = None, opponent: Opponent | None = None,
                  rematch_of: str | None = None, announce: bool = True) -> str:
        """Send a challenge event; on accept the game starts with the server playing ``opponent``.

        ``limit`` None: correspondence with ``days`` per move (None: unlimited). chess960 without ``fen``
        gets a random start position; fromPosition needs ``fen``. ``rematch_of``: the game this challenge
        is a rematch of (lichess's ``rematchOf``; :meth:`rematch` builds one from the game). ``announce``
        False: no challenge event (a game lila pairs itself, as an arena pairing: :meth:`start_game`).
        """
        with self.lock:
            cid = self._new_id()
            if variant == "standard" and fen is not None:
                variant = "fromPosition"
            if variant == "chess960" and fen is None:
                fen = chess.Board.from_chess960_pos(self._ids * 37 % 960).fen()
            if limit is not None:
                est = limit + 40 * increment
                speed = speed or ("ultraBullet" if est < 30 else "bullet" if est < 180 else "blitz" if est < 480
                                  else "rapid" if est < 1500 else "classical")
                tc: dict[str, Any] = {"type": "clock", "limit": limit, "increment": increment,
                                      "show": f"{limit}+{increment}"}
            elif days is not None:
                speed, tc = "correspondence", {"type": "correspondence", "daysPerTurn": days}
            else:
                speed, tc = "correspondence", {"type": "unlimited"}
            challenger_obj = {"id": challenger.lower(), "name": challenger, "rating": rating}
            if title:
                challenger_obj["title"] = title
            dest = {"id": self.username.lower(), "name": self.username, "rating": 2000}
            if self.title:
                dest["title"] = self.title
            ch = {"id": cid, "url": f"{self.url}/{cid}", "status": "created", "challenger": challenger_obj,
                  "destUser": dest, "variant": {"key": variant, "name": variant, "short": variant[:3]},
                  "rated": rated, "speed": speed, "timeControl": tc,
                  "color": "black" if bot_color == "white" else "white",
                  "finalColor": "black" if bot_color == "white" else "white", "perf": {"name": speed},
                  "direction": "in", "_opponent": opponent or random_mover(self._ids), "_bot_color": bot_color,
                  "_tournament": tournament}
            if fen is not None and variant in ("chess960", "fromPosition", "crazyhouse"):
                ch["initialFen"] = fen
            if rematch_of is not None:
                ch["rematchOf"] = rematch_of
            self.challenges[cid] = ch
            if announce:
                self._event(self._challenge_event(ch))
            return cid

    def rematch(self, game_id: str, opponent: Opponent | None = None) -> str:
        """The opponent of finished game ``game_id`` offers a rematch: a challenge with ``rematchOf``, the
        same game with the colors swapped (lila: the rematch of a game with a bot is a challenge)."""
        with self.lock:
            g = self.games[game_id]
            return self.challenge(
                challenger=g.opponent_name, title="BOT" if g.opponent_bot else None, variant=g.variant,
                rated=g.rated, limit=g.initial_ms / 1000 if g.initial_ms else None, increment=g.increment_ms // 1000,
                days=g.days, bot_color="black" if g.bot_color == "white" else "white", opponent=opponent,
                rematch_of=game_id)

    @staticmethod
    def _compat(ch: dict[str, Any]) -> dict[str, bool]:
        """lila: bots may not play UltraBullet (lila modules/challenge ... Challenge.isBotCompatible)."""
        return {"bot": ch["speed"] != "ultraBullet", "board": ch["speed"] not in ("ultraBullet", "bullet")}

    def _challenge_event(self, ch: dict[str, Any]) -> dict[str, Any]:
        return {"type": "challenge", "challenge": {k: v for k, v in ch.items() if not k.startswith("_")},
                "compat": self._compat(ch)}

    def cancel_challenge(self, cid: str) -> None:
        """The challenger cancels: a ``challengeCanceled`` event; accepting it afterwards gets a 404."""
        with self.lock:
            self.canceled.add(cid)
            ch = {k: v for k, v in self.challenges[cid].items() if not k.startswith("_")}
            self._event({"type": "challengeCanceled", "challenge": {**ch, "status": "canceled"}})

    def start_game(self, **challenge: Any) -> str:
        """A game that starts without a challenge to answer (a tournament pairing, an old acceptance)."""
        with self.lock:
            cid = self.challenge(announce=False, **challenge)
            self.answers[cid] = ("accept", None)
            self._start_game(self.challenges[cid])
            return cid

    def blackout(self, game_id: str, seconds: float) -> None:
        """The game's next push is lost (its streams are cut instead) and the answers to reconnections
        arrive only ``seconds`` after they were made (a slow network). Callable under the server lock."""
        with self.lock:
            g = self.games[game_id]
            g.blackout_until = time.monotonic() + seconds
            g.blackout_push = True

    def _start_game(self, ch: dict[str, Any]) -> FakeGame:
        fen = ch.get("initialFen", "startpos")
        variant = ch["variant"]["key"]
        tc = ch["timeControl"]
        initial = int(tc["limit"] * 1000) if tc["type"] == "clock" else 0
        g = FakeGame(id=ch["id"], bot_color=ch["_bot_color"], board=make_board(variant, fen), initial_fen=fen,
                     initial_ms=initial, increment_ms=int(tc.get("increment", 0) * 1000), opponent=ch["_opponent"],
                     opponent_name=ch.get("_opponent_name") or ch["challenger"]["name"], rated=ch["rated"],
                     speed=ch["speed"], variant=variant,
                     opponent_rating=int(ch.get("_opponent_rating") or ch["challenger"].get("rating") or 1500),
                     days=tc.get("daysPerTurn"), tournament=ch["_tournament"],
                     opponent_bot="_opponent_name" in ch or ch["challenger"].get("title") == "BOT",
                     # lila BotJsonView: a correspondence game's wtime/btime are its clock (days per turn)
                     wtime=initial or (tc.get("daysPerTurn") or 0) * 86_400_000 or FOREVER,
                     btime=initial or (tc.get("daysPerTurn") or 0) * 86_400_000 or FOREVER)
        self.games[g.id] = g
        if g.opponent_bot:
            self._count_bot_game()
        if g.initial_ms:
            live = [x for x in self.games.values() if not x.over and x.initial_ms]
            names = Counter(x.opponent_name.lower() for x in live)
            self.peak_games = max(self.peak_games, len(live))
            self.peak_bot_games = max(self.peak_bot_games, sum(x.opponent_bot for x in live))
            self.peak_games_per_user = max(self.peak_games_per_user, max(names.values()))
        self._event({"type": "gameStart", "game": self._game_info(g)})
        self._maybe_opponent(g)
        return g

    def _game_info(self, g: FakeGame) -> dict[str, Any]:
        info: dict[str, Any] = {
            "gameId": g.id, "fullId": g.id + "abcd", "id": g.id, "color": g.bot_color, "fen": g.board.fen(),
            "isMyTurn": g.bot_turn() and not g.over, "hasMoved": g.ply() > 1, "lastMove": "",
            "opponent": {"id": g.opponent_name.lower(), "username": g.opponent_name, "rating": g.opponent_rating},
            "rated": g.rated, "speed": g.speed, "perf": g.speed, "source": "arena" if g.tournament else "friend",
            "status": {"id": 20, "name": g.status}, "variant": {"key": g.variant, "name": g.variant},
            "compat": {"bot": True, "board": g.speed != "bullet"}}
        if g.initial_ms:
            info["secondsLeft"] = (g.wtime if g.bot_color == "white" else g.btime) // 1000
        if g.winner:
            info["winner"] = g.winner
        if g.tournament:
            info["tournamentId"] = g.tournament
        return info

    def _moves(self, g: FakeGame) -> str:
        if not self.castling_as_rook:
            return " ".join(m.uci() for m in g.board.move_stack)
        moves = []
        b = g.board.root()
        for m in g.board.move_stack:
            u = m.uci()
            if not b.chess960 and b.is_castling(m):
                u = chess.square_name(m.from_square) + chess.square_name(
                    chess.H1 if m.to_square == chess.G1 else chess.A1 if m.to_square == chess.C1 else
                    chess.H8 if m.to_square == chess.G8 else chess.A8)
            b.push(m)
            moves.append(u)
        return " ".join(moves)

    def _state(self, g: FakeGame) -> dict[str, Any]:
        wtime, btime = g.wtime, g.btime
        if not g.over and g.ply() >= 2 and g.initial_ms:  # the running clock, as at the moment of sending
            spent = int((time.monotonic() - g.last_move_at) * 1000)
            if g.board.turn == chess.WHITE:
                wtime = max(0, wtime - spent)
            else:
                btime = max(0, btime - spent)
        st: dict[str, Any] = {"type": "gameState", "moves": self._moves(g), "wtime": wtime, "btime": btime,
                              "winc": g.increment_ms, "binc": g.increment_ms, "status": g.status}
        if g.opp_draw_offer:  # lichess omits wdraw/bdraw unless true
            st["bdraw" if g.bot_color == "white" else "wdraw"] = True
        if g.opp_takeback:  # and wtakeback/btakeback
            st["btakeback" if g.bot_color == "white" else "wtakeback"] = True
        if g.winner:
            st["winner"] = g.winner
        return st

    def _full(self, g: FakeGame) -> dict[str, Any]:
        bot = {"id": self.username.lower(), "name": self.username, "rating": 2000}
        if self.title:
            bot["title"] = self.title
        opp = {"id": g.opponent_name.lower(), "name": g.opponent_name, "rating": g.opponent_rating}
        if g.opponent_bot:  # lila BotJsonView playerJson: the title of each player
            opp["title"] = "BOT"
        full: dict[str, Any] = {
            "type": "gameFull", "id": g.id, "rated": g.rated, "variant": {"key": g.variant, "name": g.variant},
            "speed": g.speed, "perf": {"name": g.speed}, "createdAt": int(time.time() * 1000),
            "white": bot if g.bot_color == "white" else opp, "black": opp if g.bot_color == "white" else bot,
            "initialFen": g.initial_fen, "state": self._state(g)}
        if g.initial_ms:
            full["clock"] = {"initial": g.initial_ms, "increment": g.increment_ms}
        if g.days is not None:
            full["daysPerTurn"] = g.days
        if g.tournament:
            full["tournamentId"] = g.tournament
        return full
