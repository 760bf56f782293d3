"""The status web server: a Starlette app served by uvicorn in its own thread, reading a :class:`StatusHub`.

Endpoints (GET but one; JSON unless said):

* ``/`` and ``/games/{id}``: the page (HTML).
* ``/api/status``: ``{"service": {...}, "challenges": {...}, "games": [summary, ...]}`` (oldest first).
* ``/api/games``: ``[summary, ...]`` (oldest first), the games of ``/api/status`` alone.
* ``/api/health``: ``{"healthy", "why", "event_stream_silent_s", "budget_s"}``, status 200 when healthy, 503
  when not (the event stream silent longer than its budget, or the service no longer publishing): a probe
  for Docker or Kubernetes (:func:`health_json`).
* ``/api/games/{id}``: one game (see :func:`lichessbot.status.render.game_json`); 404 when unknown.
* ``/api/games/{id}/board.svg``, ``/api/games/{id}/eval.svg``, ``/api/games/{id}/summary.svg``: SVG.
* ``/api/events[?game=id]``: server-sent events: ``status`` (as ``/api/status``) and, with ``game``,
  ``game`` (as ``/api/games/{id}``), sent at once and then whenever the hub changes (checked every
  ``EVENT_PERIOD`` s).
* ``POST /api/command`` (JSON ``{"command": "..."}``, at most :data:`MAX_COMMAND_BODY` bytes): an operator
  command (the bot's set, lichessbot/bot/service/commands.py), answered ``{"answer": "..."}``. Only from the
  machine itself (127.0.0.1, ::1) unless ``remote_commands``; only from the server's own page (its token, its
  origin, exactly ``application/json``: :mod:`lichessbot.status.guard`); a larger body is refused (413) before it
  is read, a body that is not a JSON object is refused (400).

Every request passes :class:`lichessbot.status.guard.Guard` first (``Host`` checked, security headers added).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from lichessbot.hosts import host_names
from lichessbot.status.guard import Guard
from lichessbot.status.hub import GameSnapshot, StatusHub
from lichessbot.status.page import page_csp, page_html
from lichessbot.status.render import board_svg, eval_svg, game_json, game_summary, summary_svg

__all__ = ["StatusServer", "health_json", "make_app", "status_json"]

#: Seconds between checks of the hub by an event stream.
EVENT_PERIOD = 0.25
#: Seconds between keep-alive comments on a quiet event stream.
KEEPALIVE = 15.0
#: Seconds without a publish of the service's figures (every 0.2 s while it runs) after which it is unhealthy.
SERVICE_STALE = 15.0
_SVG = "image/svg+xml"
#: Bytes a command's body may have (``{"command": ...}`` with a line of at most :data:`MAX_COMMAND` characters,
#: escaped: ample); more is refused with 413 before it is read.
MAX_COMMAND_BODY = 4096
#: Characters of a command line.
MAX_COMMAND = 500


def status_json(hub: StatusHub) -> dict[str, Any]:
    """The overview: the service's figures, uptime (s), challenge verdicts and every game kept."""
    service = hub.service()
    service["uptime_s"] = round(time.time() - hub.started_at, 1)
    service["results_today"] = hub.results_today()
    return {"service": service, "challenges": hub.challenges(), "games": [game_summary(g) for g in hub.games()]}


def health_json(hub: StatusHub, now: float | None = None) -> tuple[bool, dict[str, Any]]:
    """``(healthy, body)`` from the service's figures ``event_stream_silent_s`` and ``health_budget_s`` (s) and
    the age of their publication; ``now``: Unix seconds (default: the clock)."""
    now = time.time() if now is None else now
    service = hub.service()
    age = now - hub.service_at
    silent, budget = service.get("event_stream_silent_s"), service.get("health_budget_s")
    if not hub.service_at or not isinstance(silent, (int, float)) or not isinstance(budget, (int, float)):
        return False, {"healthy": False, "why": "the service has published no health figures"}
    silent = float(silent) + max(0.0, age)
    body: dict[str, Any] = {"event_stream_silent_s": round(silent, 1), "budget_s": budget}
    if age > SERVICE_STALE:
        healthy, why = False, f"the service has not published for {age:.0f} s"
    elif silent > budget:
        healthy, why = False, f"event stream dead for {silent:.0f} s (budget {budget:.0f} s)"
    else:
        healthy, why = True, "event stream alive"
    return healthy, {"healthy": healthy, "why": why, **body}


#: The addresses commands come from when ``remote_commands`` is off.
LOCAL = ("127.0.0.1", "::1", "::ffff:127.0.0.1")


async def read_capped(request: Request, cap: int) -> bytes | None:
    """The request's body, or None when it is longer than ``cap`` bytes: a ``Content-Length`` over the cap is
    refused before anything is read, a chunked body as soon as the bytes read pass it."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > cap:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            return None
    return bytes(body)


def make_app(hub: StatusHub, stopping: threading.Event | None = None,
             commands: Callable[[str, str], str] | None = None, remote_commands: bool = False, *,
             hosts: Iterable[str] = (), token: str | None = None) -> Starlette:
    """The Starlette app over ``hub`` behind :class:`~lichessbot.status.guard.Guard`; event streams end once
    ``stopping`` is set; ``commands(line, origin)`` runs an operator command (None: ``/api/command`` answers
    404); ``hosts``: the ``Host`` names admitted besides the loopback ones (:func:`host_names`); ``token``: the
    command token the page embeds (default: a fresh one, ``app.state.token``)."""
    stopping = stopping or threading.Event()
    token = token or secrets.token_urlsafe(32)

    async def command(request: Request) -> Response:
        if commands is None:
            return JSONResponse({"error": "no commands here"}, 404)
        client = request.client.host if request.client is not None else ""
        if not remote_commands and client not in LOCAL:
            return JSONResponse({"error": "commands are taken from this machine only (status.remote_commands)"},
                                403)
        raw = await read_capped(request, MAX_COMMAND_BODY)
        if raw is None:
            return JSONResponse({"error": f"a command's body is at most {MAX_COMMAND_BODY} bytes"}, 413,
                                headers={"Connection": "close"})
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the interpreter's limit
            return JSONResponse({"error": "the body is not JSON"}, 400)
        line = body.get("command") if isinstance(body, dict) else None
        if not isinstance(line, str) or not line.strip() or len(line) > MAX_COMMAND:
            return JSONResponse({"error": f'send {{"command": "..."}} (at most {MAX_COMMAND} characters)'}, 400)
        answer = await run_in_threadpool(commands, line, "status page")
        return JSONResponse({"answer": answer})

    async def page(_request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        return HTMLResponse(page_html(token, nonce), headers={"Content-Security-Policy": page_csp(nonce),
                                                              "Cache-Control": "no-store"})

    async def status(_request: Request) -> Response:
        return JSONResponse(status_json(hub))

    def _game(request: Request) -> GameSnapshot | None:
        return hub.game(request.path_params["game_id"])

    async def health(_request: Request) -> Response:
        healthy, body = health_json(hub)
        return JSONResponse(body, 200 if healthy else 503)

    async def games(_request: Request) -> Response:
        return JSONResponse([game_summary(g) for g in hub.games()])

    async def game(request: Request) -> Response:
        snap = _game(request)
        return JSONResponse({"error": "unknown game"}, 404) if snap is None else JSONResponse(game_json(snap))

    def svg(render: Callable[[GameSnapshot], str]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            snap = _game(request)
            if snap is None:
                return JSONResponse({"error": "unknown game"}, 404)
            return Response(render(snap), media_type=_SVG)
        return endpoint

    async def events(request: Request) -> Response:
        gid = request.query_params.get("game")

        async def stream() -> AsyncIterator[str]:
            seen, quiet = -1, time.monotonic()
            while not stopping.is_set():
                if hub.version != seen:
                    seen = hub.version
                    yield f"event: status\ndata: {json.dumps(status_json(hub))}\n\n"
                    snap = hub.game(gid) if gid else None
                    if snap is not None:
                        yield f"event: game\ndata: {json.dumps(game_json(snap))}\n\n"
                    quiet = time.monotonic()
                elif time.monotonic() - quiet > KEEPALIVE:
                    quiet = time.monotonic()
                    yield ": keep-alive\n\n"
                if await request.is_disconnected():
                    return
                await asyncio.sleep(EVENT_PERIOD)

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    app = Starlette(middleware=[Middleware(Guard, hosts=frozenset(hosts), token=token)], routes=[
        Route("/", page), Route("/games/{game_id}", page),
        Route("/api/status", status), Route("/api/events", events), Route("/api/health", health),
        Route("/api/games", games), Route("/api/games/{game_id}", game),
        Route("/api/games/{game_id}/board.svg", svg(board_svg)),
        Route("/api/games/{game_id}/eval.svg", svg(eval_svg)),
        Route("/api/games/{game_id}/summary.svg", svg(summary_svg)),
        Route("/api/command", command, methods=["POST"]),
    ])
    app.state.token = token
    return app


class StatusServer:
    """uvicorn serving :func:`make_app` on ``host``:``port`` (0: a free port) in a daemon thread.

    ``start()`` returns once it listens (``url`` then holds the address); ``stop()`` ends it within a
    second or two. Raises OSError from ``start()`` when the address cannot be bound. ``allowed_hosts``: more
    names a request's ``Host`` may carry (:func:`host_names`); ``token``: this run's command token (fresh per
    server, ``secrets.token_urlsafe``).
    """

    def __init__(self, hub: StatusHub, host: str = "127.0.0.1", port: int = 8080, *,
                 commands: Callable[[str, str], str] | None = None, remote_commands: bool = False,
                 allowed_hosts: Iterable[str] = ()) -> None:
        self.hub, self.host, self.port = hub, host, port
        self.commands, self.remote_commands = commands, remote_commands
        self.hosts = host_names(host, allowed_hosts)
        self.token = secrets.token_urlsafe(32)
        self._stopping = threading.Event()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> StatusServer:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        app = make_app(self.hub, self._stopping, self.commands, self.remote_commands, hosts=self.hosts,
                       token=self.token)
        config = uvicorn.Config(app,
                                log_level="warning", access_log=False,
                                lifespan="off", timeout_graceful_shutdown=2)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name="status-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self._server.started:
            raise OSError(f"the status page did not start on {self.url}")
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> StatusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
