"""A lichess Bot API server for the tests: real HTTP on 127.0.0.1, the subset of the API the bot uses.

Streams are chunked NDJSON with keepalive newlines every ``keepalive`` seconds. Clocks are real (ms):
they start after each side's first move, as on lichess, and a flag watcher ends games on time. The
opponent is played by the server (a function board -> Move | None; None: it does not move).

Fault injection: ``drop_event_streams()``, ``drop_game_streams(id)``, ``move_failures`` (statuses the
next move posts answer, e.g. [429] or [500, 502]), ``chat_status``/``chat_delay``, ``push_event_raw`` /
``push_game_raw`` (malformed lines), ``duplicate_states`` (every gameState sent twice),
``castling_as_rook`` (castling sent as e1h1).

Shapes follow https://lichess.org/api#tag/Bot (gameStart, gameFinish, challenge, challengeCanceled,
challengeDeclined; gameFull, gameState, chatLine, opponentGone).
"""

from __future__ import annotations

import json
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import chess

Opponent = Callable[[chess.Board], "chess.Move | None"]
_DROP = object()
_END = object()


def random_mover(seed: int = 0) -> Opponent:
    rng = random.Random(seed)

    def move(board: chess.Board) -> chess.Move | None:
        return rng.choice(list(board.legal_moves))
    return move


def mate_or_random(seed: int = 0) -> Opponent:
    """Mates in one when it can, else a random move."""
    rnd = random_mover(seed)

    def move(board: chess.Board) -> chess.Move | None:
        for m in board.legal_moves:
            board.push(m)
            mate = board.is_checkmate()
            board.pop()
            if mate:
                return m
        return rnd(board)
    return move


def scripted(ucis: list[str], then: Opponent | None = None) -> Opponent:
    """Plays ``ucis`` in order (each when legal, else falls through to ``then``); then ``then`` or stalls."""
    it = iter(ucis)

    def move(board: chess.Board) -> chess.Move | None:
        for u in it:
            m = chess.Move.from_uci(u)
            if m in board.legal_moves:
                return m
            break
        return then(board) if then else None
    return move


def staller() -> Opponent:
    return lambda board: None


RESIGN = "resign"


def resign_after(plies: int, then: Opponent | None = None) -> Opponent:
    """Plays ``then`` (random by default) and resigns once the game has ``plies`` plies."""
    then = then or random_mover(7)

    def move(board: chess.Board):  # noqa: ANN202
        return RESIGN if len(board.move_stack) >= plies else then(board)
    return move


@dataclass
class FakeGame:
    id: str
    bot_color: str
    board: chess.Board
    initial_fen: str
    initial_ms: int
    increment_ms: int
    opponent: Opponent
    opponent_name: str
    rated: bool = False
    speed: str = "blitz"
    wtime: int = 0
    btime: int = 0
    status: str = "started"
    winner: str | None = None
    last_move_at: float = field(default_factory=time.monotonic)
    subscribers: list[queue.Queue] = field(default_factory=list)
    chat: list[tuple[str, str]] = field(default_factory=list)
    posts: list[tuple[int, str, bool]] = field(default_factory=list)  # (ply, uci, offering_draw) accepted
    rejected_posts: list[tuple[int, str, int]] = field(default_factory=list)  # (ply, uci, status)
    stream_connections: int = 0
    opp_draw_offer: bool = False
    gone_since: float | None = None

    @property
    def over(self) -> bool:
        return self.status not in ("created", "started")

    def ply(self) -> int:
        return len(self.board.move_stack)

    def bot_turn(self) -> bool:
        return self.board.turn == (self.bot_color == "white")


class FakeLichess:
    """Start with ``with FakeLichess(...) as server:``; ``server.url`` is the base URL."""

    def __init__(self, token: str = "lip_TESTTOKEN0123456789", username: str = "TestBot", title: str | None = "BOT",
                 keepalive: float = 0.2, opponent_delay: float = 0.02):
        self.token = token
        self.username = username
        self.title = title
        self.keepalive = keepalive
        self.opponent_delay = opponent_delay
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.games: dict[str, FakeGame] = {}
        self.challenges: dict[str, dict[str, Any]] = {}
        self.answers: dict[str, tuple[str, str | None]] = {}  # challenge id -> ("accept", None) | ("decline", reason)
        self.event_subscribers: list[queue.Queue] = []
        self.event_connections = 0
        self.requests: list[tuple[str, str, int]] = []  # (method, path, status)
        self.bad_auth = 0
        self.move_failures: list[int] = []
        self.retry_after = 1
        self.chat_status = 200
        self.chat_delay = 0.0
        self.duplicate_states = False
        self.castling_as_rook = False
        self.max_ongoing_on_connect = True
        self._ids = 0
        self._stopping = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._threads = [threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True),
                         threading.Thread(target=self._watch_clocks, daemon=True)]

    # lifecycle ---------------------------------------------------------------------------------
    def __enter__(self) -> FakeLichess:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        with self.lock:
            for q in self.event_subscribers:
                q.put(_END)
            for g in self.games.values():
                for q in g.subscribers:
                    q.put(_END)
        self.httpd.shutdown()
        self.httpd.server_close()

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 0.1))
        return True

    # challenges and games ----------------------------------------------------------------------
    def _new_id(self) -> str:
        self._ids += 1
        return f"g{self._ids:07d}"

    def challenge(self, *, challenger: str = "alice", title: str | None = None, rating: int = 1500,
                  variant: str = "standard", rated: bool = False, limit: float | None = 60, increment: int = 0,
                  speed: str | None = None, bot_color: str = "white", fen: str | None = None,
                  opponent: Opponent | None = None) -> str:
        """Send a challenge event; on accept the game starts with the server playing ``opponent``."""
        with self.lock:
            cid = self._new_id()
            if speed is None:
                est = (limit or 0) + 40 * increment
                speed = ("correspondence" if limit is None else "ultraBullet" if est < 30 else "bullet" if est < 180
                         else "blitz" if est < 480 else "rapid" if est < 1500 else "classical")
            tc = ({"type": "clock", "limit": limit, "increment": increment, "show": f"{limit}+{increment}"}
                  if limit is not None else {"type": "correspondence", "daysPerTurn": 2})
            ch = {"id": cid, "url": f"{self.url}/{cid}", "status": "created",
                  "challenger": {"id": challenger.lower(), "name": challenger, "title": title, "rating": rating},
                  "destUser": {"id": self.username.lower(), "name": self.username, "title": self.title},
                  "variant": {"key": variant, "name": variant, "short": variant[:3]}, "rated": rated, "speed": speed,
                  "timeControl": tc, "color": "black" if bot_color == "white" else "white", "finalColor":
                  "black" if bot_color == "white" else "white", "perf": {"name": speed}, "direction": "in",
                  "initialFen": fen or "startpos",
                  "_opponent": opponent or random_mover(self._ids), "_bot_color": bot_color}
            self.challenges[cid] = ch
            self._event({"type": "challenge", "challenge": _public(ch)})
            return cid

    def _start_game(self, ch: dict[str, Any]) -> FakeGame:
        fen = ch["initialFen"]
        board = chess.Board() if fen == "startpos" else chess.Board(fen)
        tc = ch["timeControl"]
        initial = int((tc.get("limit") or 0) * 1000) if tc["type"] == "clock" else 0
        g = FakeGame(id=ch["id"], bot_color=ch["_bot_color"], board=board, initial_fen=fen, initial_ms=initial,
                     increment_ms=int(tc.get("increment", 0) * 1000), opponent=ch["_opponent"],
                     opponent_name=ch["challenger"]["name"], rated=ch["rated"], speed=ch["speed"],
                     wtime=initial or 2_147_483_647, btime=initial or 2_147_483_647)
        self.games[g.id] = g
        self._event({"type": "gameStart", "game": self._game_info(g)})
        self._maybe_opponent(g)
        return g

    def _game_info(self, g: FakeGame) -> dict[str, Any]:
        return {"gameId": g.id, "fullId": g.id + "abcd", "id": g.id, "color": g.bot_color, "fen": g.board.fen(),
                "isMyTurn": g.bot_turn() and not g.over, "hasMoved": g.ply() > 1, "lastMove": "",
                "opponent": {"id": g.opponent_name.lower(), "username": g.opponent_name, "rating": 1500},
                "rated": g.rated, "speed": g.speed, "perf": g.speed, "source": "friend",
                "status": {"id": 20, "name": g.status}, "variant": {"key": "standard", "name": "Standard"},
                "compat": {"bot": True, "board": False}, "secondsLeft": None, "winner": g.winner}

    def _state(self, g: FakeGame) -> dict[str, Any]:
        moves = []
        b = g.board.root()
        for m in g.board.move_stack:
            u = m.uci()
            if self.castling_as_rook and b.is_castling(m):
                u = chess.square_name(m.from_square) + chess.square_name(
                    chess.H1 if m.to_square == chess.G1 else chess.A1 if m.to_square == chess.C1 else
                    chess.H8 if m.to_square == chess.G8 else chess.A8)
            b.push(m)
            moves.append(u)
        wtime, btime = g.wtime, g.btime
        if not g.over and g.ply() >= 2:  # the running clock, as at the moment of sending
            spent = int((time.monotonic() - g.last_move_at) * 1000)
            if g.board.turn == chess.WHITE:
                wtime = max(0, wtime - spent)
            else:
                btime = max(0, btime - spent)
        st = {"type": "gameState", "moves": " ".join(moves), "wtime": wtime, "btime": btime,
              "winc": g.increment_ms, "binc": g.increment_ms, "status": g.status,
              "wdraw": g.opp_draw_offer and g.bot_color == "black",
              "bdraw": g.opp_draw_offer and g.bot_color == "white"}
        if g.winner:
            st["winner"] = g.winner
        return st

    def _full(self, g: FakeGame) -> dict[str, Any]:
        bot = {"id": self.username.lower(), "name": self.username, "title": self.title, "rating": 2000}
        opp = {"id": g.opponent_name.lower(), "name": g.opponent_name, "title": None, "rating": 1500}
        return {"type": "gameFull", "id": g.id, "rated": g.rated, "variant": {"key": "standard", "name": "Standard"},
                "clock": {"initial": g.initial_ms, "increment": g.increment_ms} if g.initial_ms else None,
                "speed": g.speed, "perf": {"name": g.speed}, "createdAt": int(time.time() * 1000),
                "white": bot if g.bot_color == "white" else opp, "black": opp if g.bot_color == "white" else bot,
                "initialFen": g.initial_fen, "state": self._state(g)}

    # broadcasting ------------------------------------------------------------------------------
    def _event(self, obj: Any) -> None:
        with self.lock:
            for q in self.event_subscribers:
                q.put(obj)
            self.changed.notify_all()

    def _game_push(self, g: FakeGame, obj: Any) -> None:
        with self.lock:
            for q in g.subscribers:
                q.put(obj)
                if self.duplicate_states and isinstance(obj, dict) and obj.get("type") == "gameState":
                    q.put(obj)
            if g.over:
                for q in g.subscribers:
                    q.put(_END)
            self.changed.notify_all()

    def push_event_raw(self, line: bytes) -> None:
        self._event(line)

    def push_game_raw(self, game_id: str, line: bytes) -> None:
        self._game_push(self.games[game_id], line)

    def push_game(self, game_id: str, obj: dict[str, Any]) -> None:
        self._game_push(self.games[game_id], obj)

    def drop_event_streams(self) -> None:
        self._event(_DROP)

    def drop_game_streams(self, game_id: str) -> None:
        self._game_push(self.games[game_id], _DROP)

    def say(self, game_id: str, text: str, room: str = "player", username: str | None = None) -> None:
        g = self.games[game_id]
        self._game_push(g, {"type": "chatLine", "room": room, "username": username or g.opponent_name, "text": text})

    def opponent_gone(self, game_id: str, claim_in: int = 0) -> None:
        g = self.games[game_id]
        with self.lock:
            g.gone_since = time.monotonic() - 1000  # claimable at once after claim_in
        self._game_push(g, {"type": "opponentGone", "gone": True, "claimWinInSeconds": claim_in})

    # the game's progress -----------------------------------------------------------------------
    def _apply(self, g: FakeGame, move: chess.Move) -> None:
        now = time.monotonic()
        if g.ply() >= 2 and g.initial_ms:
            spent = int((now - g.last_move_at) * 1000)
            if g.board.turn == chess.WHITE:
                g.wtime = g.wtime - spent + g.increment_ms
            else:
                g.btime = g.btime - spent + g.increment_ms
        g.last_move_at = now
        g.board.push(move)
        g.opp_draw_offer = False
        outcome = g.board.outcome()
        if outcome is not None:
            g.status = "mate" if outcome.termination == chess.Termination.CHECKMATE else (
                "stalemate" if outcome.termination == chess.Termination.STALEMATE else "draw")
            g.winner = None if outcome.winner is None else ("white" if outcome.winner else "black")
        self._broadcast_state(g)

    def _broadcast_state(self, g: FakeGame) -> None:
        self._game_push(g, self._state(g))
        if g.over:
            self._event({"type": "gameFinish", "game": self._game_info(g)})

    def _finish(self, g: FakeGame, status: str, winner: str | None) -> None:
        g.status, g.winner = status, winner
        self._broadcast_state(g)

    def _maybe_opponent(self, g: FakeGame) -> None:
        if g.over or g.bot_turn():
            return
        ply = g.ply()

        def play() -> None:
            time.sleep(self.opponent_delay)
            with self.lock:
                if g.over or g.ply() != ply:
                    return
                move = g.opponent(g.board.copy())
                if move == RESIGN:
                    self._finish(g, "resign", g.bot_color)
                elif move is not None:
                    self._apply(g, move)
        threading.Thread(target=play, daemon=True).start()

    def _watch_clocks(self) -> None:
        while not self._stopping.wait(0.02):
            with self.lock:
                now = time.monotonic()
                for g in self.games.values():
                    if g.over or not g.initial_ms or g.ply() < 2:
                        continue
                    left = (g.wtime if g.board.turn == chess.WHITE else g.btime) - (now - g.last_move_at) * 1000
                    if left <= 0:
                        if g.board.turn == chess.WHITE:
                            g.wtime = 0
                        else:
                            g.btime = 0
                        self._finish(g, "outoftime", "black" if g.board.turn == chess.WHITE else "white")

    # request handling (called from the handler under no lock) --------------------------------------
    def handle(self, h: _Handler, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        parts = [p for p in path.split("/") if p]
        if h.headers.get("Authorization") != f"Bearer {self.token}":
            self.bad_auth += 1
            return h.reply(401, {"error": "No such token"})
        if method == "GET" and path == "/api/account":
            acc = {"id": self.username.lower(), "username": self.username}
            if self.title:
                acc["title"] = self.title
            return h.reply(200, acc)
        if method == "POST" and path == "/api/bot/account/upgrade":
            self.title = "BOT"
            return h.reply(200, {"ok": True})
        if method == "GET" and path == "/api/account/playing":
            with self.lock:
                now = [self._game_info(g) for g in self.games.values() if not g.over]
            return h.reply(200, {"nowPlaying": now})
        if method == "GET" and path == "/api/stream/event":
            return self._serve_events(h)
        if method == "GET" and parts[:4] == ["api", "bot", "game", "stream"]:
            return self._serve_game(h, parts[4])
        if method == "POST" and parts[:2] == ["api", "challenge"] and len(parts) == 4:
            return self._answer_challenge(h, parts[2], parts[3], body)
        if method == "POST" and parts[:3] == ["api", "bot", "game"] and len(parts) >= 5:
            with self.lock:
                g = self.games.get(parts[3])
            if g is None:
                return h.reply(404, {"error": "No such game"})
            return self._game_action(h, g, parts[4:], query, body)
        h.reply(404, {"error": "Not found"})

    def _answer_challenge(self, h: _Handler, cid: str, action: str, body: dict[str, Any]) -> None:
        with self.lock:
            ch = self.challenges.get(cid)
            if ch is None or cid in self.answers:
                return h.reply(404, {"error": "No such challenge"})
            if action == "accept":
                self.answers[cid] = ("accept", None)
                h.reply(200, {"ok": True})
                self._start_game(ch)
            else:
                self.answers[cid] = ("decline", body.get("reason", "generic"))
                h.reply(200, {"ok": True})
            self.changed.notify_all()

    def _game_action(self, h: _Handler, g: FakeGame, rest: list[str], query: dict[str, list[str]],
                     body: dict[str, Any]) -> None:
        action = rest[0]
        if action == "chat":
            time.sleep(self.chat_delay)
            if self.chat_status != 200:
                return h.reply(self.chat_status, {"error": "chat refused"})
            with self.lock:
                g.chat.append((body.get("room", ""), body.get("text", "")))
                self.changed.notify_all()
            return h.reply(200, {"ok": True})
        with self.lock:
            if action == "move" and len(rest) == 2:
                if self.move_failures:
                    status = self.move_failures.pop(0)
                    g.rejected_posts.append((g.ply(), rest[1], status))
                    headers = {"Retry-After": str(self.retry_after)} if status == 429 else {}
                    return h.reply(status, {"error": "injected failure"}, headers)
                if g.over or not g.bot_turn():
                    g.rejected_posts.append((g.ply(), rest[1], 400))
                    return h.reply(400, {"error": "Not your turn, or game already over"})
                try:
                    move = g.board.parse_uci(rest[1])
                except ValueError:
                    g.rejected_posts.append((g.ply(), rest[1], 400))
                    return h.reply(400, {"error": f"Illegal move {rest[1]}"})
                offering = query.get("offeringDraw", ["false"])[0] == "true"
                g.posts.append((g.ply(), rest[1], offering))
                h.reply(200, {"ok": True})
                self._apply(g, move)
                self._maybe_opponent(g)
                return None
            if action == "abort":
                if g.over or g.ply() >= 2:
                    return h.reply(400, {"error": "cannot abort"})
                h.reply(200, {"ok": True})
                return self._finish(g, "aborted", None)
            if action == "resign":
                if g.over:
                    return h.reply(400, {"error": "game over"})
                h.reply(200, {"ok": True})
                return self._finish(g, "resign", "black" if g.bot_color == "white" else "white")
            if action == "claim-victory":
                if g.over or g.gone_since is None:
                    return h.reply(400, {"error": "cannot claim"})
                h.reply(200, {"ok": True})
                return self._finish(g, "timeout", g.bot_color)
            if action == "draw" and len(rest) == 2:
                if rest[1] == "yes" and g.opp_draw_offer:
                    h.reply(200, {"ok": True})
                    return self._finish(g, "draw", None)
                return h.reply(200, {"ok": True})
        h.reply(404, {"error": "Not found"})

    def _serve_events(self, h: _Handler) -> None:
        q: queue.Queue = queue.Queue()
        with self.lock:
            self.event_connections += 1
            for g in self.games.values():
                if not g.over:
                    q.put({"type": "gameStart", "game": self._game_info(g)})
            self.event_subscribers.append(q)
            self.changed.notify_all()
        try:
            h.stream(q, self.keepalive, self._stopping)
        finally:
            with self.lock:
                self.event_subscribers.remove(q)

    def _serve_game(self, h: _Handler, game_id: str) -> None:
        q: queue.Queue = queue.Queue()
        with self.lock:
            g = self.games.get(game_id)
            if g is None:
                return h.reply(404, {"error": "No such game"})
            g.stream_connections += 1
            q.put(self._full(g))
            if g.over:
                q.put(_END)
            g.subscribers.append(q)
            self.changed.notify_all()
        try:
            h.stream(q, self.keepalive, self._stopping)
        finally:
            with self.lock:
                g.subscribers.remove(q)


def _public(ch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in ch.items() if not k.startswith("_")}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_obj: FakeLichess

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: dict[str, Any] = {}
        if raw:
            if "json" in (self.headers.get("Content-Type") or ""):
                body = json.loads(raw)
            else:
                body = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        self._status = 0
        try:
            self.server_obj.handle(self, method, url.path, parse_qs(url.query), body)
        finally:
            with self.server_obj.lock:
                self.server_obj.requests.append((method, url.path, self._status))
                self.server_obj.changed.notify_all()

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def reply(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._status = status
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def stream(self, q: queue.Queue, keepalive: float, stopping: threading.Event) -> None:
        """Chunked NDJSON from ``q`` until _END (clean end) or _DROP (connection cut mid-stream)."""
        self._status = 200
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while not stopping.is_set():
                try:
                    item = q.get(timeout=keepalive)
                except queue.Empty:
                    item = b"\n"
                if item is _END:
                    self._chunk(b"")
                    return
                if item is _DROP:
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                line = item if isinstance(item, bytes) else json.dumps(item).encode() + b"\n"
                self._chunk(line)
        except OSError:
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _make_handler(server: FakeLichess) -> type[_Handler]:
    return type("Handler", (_Handler,), {"server_obj": server})


# --------------------------------------------------------------------------------------------------
# Running the bot in-process against the server (used by tests/test_bot_*.py).
# --------------------------------------------------------------------------------------------------
class StandInThinker:
    """A thinker that plays a seeded random legal move with a fixed made-up eval (no engine needed)."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.calls = 0

    def think(self, board: chess.Board, clock: Any, *, first_moves_unclocked: bool = False) -> Any:
        from lichessbot.play.thinker import Decision

        self.calls += 1
        move = self.rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
        return Decision(move=move, source="search", cp=12, wdl=(0.3, 0.4, 0.3), nodes=16, nps=1000.0, depth=2.0,
                        pv=(move,), time=0.001, stop_reason="stand-in")

    def stop(self) -> None:
        pass

    def close(self) -> None:
        pass


class StandInEngine:
    name = "stand-in"

    def new_game(self) -> StandInThinker:
        return StandInThinker()


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


class BotRun:
    """The bot service running in a thread against ``server`` (context manager; quits on exit)."""

    def __init__(self, server: FakeLichess, engine: Any, config: dict[str, Any] | None = None, *,
                 token: str | None = None, upgrade: bool = False):
        from lichessbot.config import parse_config
        from lichessbot.lichess.client import ClientSettings, LichessClient
        from lichessbot.play.service import BotService

        base = {"url": server.url, "abort_time": 30, "pgn_directory": None,
                "challenge": {"concurrency": 1, "accept_bot": True, "time_controls":
                              ["ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence"]}}
        self.config = parse_config(_merge(base, config or {}))
        self.server = server
        settings = ClientSettings(timeout=3.0, stream_read_timeout=1.5, retries=3, backoff=0.05,
                                  rate_limit_pause=0.3, max_backoff=0.5)
        self.client = LichessClient(token or server.token, server.url, settings)
        self.service = BotService(self.config, self.client, engine, upgrade=upgrade, reconnect_backoff=0.05)
        self.error: BaseException | None = None
        self.rc: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.rc = self.service.run()
        except BaseException as err:  # noqa: BLE001 - reported to the test
            self.error = err

    def __enter__(self) -> BotRun:
        self.thread.start()
        ok = self.server.wait_for(lambda: self.server.event_subscribers or not self.thread.is_alive(), 10)
        assert ok, "the bot did not connect to the event stream"
        return self

    def __exit__(self, *exc: object) -> None:
        self.service.quit()
        self.thread.join(20)
        self.client.close()

    def join(self, timeout: float = 20) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the bot did not stop"

    def play(self, timeout: float = 30, **challenge: Any) -> FakeGame:
        """Challenge the bot, wait for the game to end, return it."""
        cid = self.server.challenge(**challenge)
        assert self.server.wait_for(lambda: cid in self.server.games and self.server.games[cid].over, timeout), \
            f"game {cid} did not end: {self.server.games.get(cid)}"
        return self.server.games[cid]
