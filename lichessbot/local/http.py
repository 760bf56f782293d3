"""The embedded lichess's HTTP layer: one thread per connection (the standard library's
``ThreadingHTTPServer``), requests parsed into a path, a query and a body (a form or JSON), answers as JSON, HTML,
text or chunked NDJSON streams (lichess's streams: one JSON object a line, empty lines as keep-alives).

A bad request never takes the server down: an unreadable body is a 400, one over :data:`MAX_BODY` a 413, and an
error inside a route is logged and answered 500 (the connection closes), as lila answers a crash."""

from __future__ import annotations

import json
import queue
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import structlog

__all__ = ["DROP", "END", "MAX_BODY", "App", "Handler", "make_server"]

#: Stream queue items: cut the connection mid-stream / end the stream cleanly.
DROP = object()
END = object()
#: The largest request body read, bytes (a broadcast push of 100 PGN games fits).
MAX_BODY = 4 << 20
#: Seconds a connection may be silent while a request is read, or a stream's reader may stall.
SOCKET_TIMEOUT = 120.0

log = structlog.get_logger("lichessbot.local")


class App(Protocol):
    """What the handler serves: ``handle`` answers one request (it calls the handler's ``reply``/``stream``)."""

    def handle(self, h: Handler, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        ...

    def record(self, h: Handler, method: str, path: str) -> None:
        ...


class Handler(BaseHTTPRequestHandler):
    """One connection's requests. ``body``: the form or JSON object sent (``is_form`` tells which), ``raw``: the
    bytes as sent; ``status``: the status answered (0 before any)."""

    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT
    app: App
    server_version = "lichessbot-local"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet: lila's access log is not ours
        pass

    def _dispatch(self, method: str) -> None:
        self.status = 0
        self.is_form = True
        self.raw = b""
        url = urlsplit(self.path)
        path = url.path
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length < 0:
                raise ValueError
        except ValueError:
            self.close_connection = True
            return self.reply(400, {"error": "Bad Content-Length"})
        if length > MAX_BODY:
            self.close_connection = True
            return self.reply(413, {"error": "Request entity too large"})
        self.raw = self.rfile.read(length) if length else b""
        body: dict[str, Any] = {}
        if self.raw:
            if "json" in (self.headers.get("Content-Type") or ""):
                self.is_form = False
                try:
                    parsed = json.loads(self.raw)
                    body = parsed if isinstance(parsed, dict) else {}
                except ValueError:
                    body = {}
            else:
                body = {k: v[0] for k, v in parse_qs(self.raw.decode("utf-8", "replace")).items()}
        try:
            self.app.handle(self, method, path, parse_qs(url.query), body)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
        except Exception as err:  # noqa: BLE001 - one request's fault never takes the server down
            log.error("request failed", method=method, path=path, error=repr(err))
            self.close_connection = True
            if not self.status:
                try:
                    self.reply(500, {"error": "Internal server error"})
                except OSError:
                    pass
        finally:
            self.app.record(self, method, path)

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")

    # answers --------------------------------------------------------------------------------------------
    def reply(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self.send(status, json.dumps(obj).encode(), "application/json", headers)

    def reply_html(self, status: int, data: bytes) -> None:
        self.send(status, data, "text/html; charset=utf-8")

    def send(self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def stream(self, q: queue.Queue[Any], keepalive: float, stopping: threading.Event) -> None:
        """Chunked NDJSON from ``q`` until :data:`END` (a clean end), :data:`DROP` (the connection cut) or the
        server stops; an empty line every ``keepalive`` seconds of silence (lila api/EventStream: about 6 s)."""
        self.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        try:
            while not stopping.is_set():
                try:
                    item = q.get(timeout=keepalive)
                except queue.Empty:
                    item = b"\n"
                if item is END:
                    self._chunk(b"")
                    return
                if item is DROP:
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                self._chunk(item if isinstance(item, bytes) else json.dumps(item).encode() + b"\n")
        except OSError:
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def make_server(app: App, host: str, port: int) -> ThreadingHTTPServer:
    """A threading HTTP server for ``app`` bound to ``host``:``port`` (0: a free port). Raises OSError when the
    address cannot be bound (errno EADDRINUSE: the port is taken)."""
    handler = type("LocalLichessHandler", (Handler,), {"app": app})
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server_class = type("LocalLichessServer", (ThreadingHTTPServer,), {"address_family": family})
    httpd: ThreadingHTTPServer = server_class((host, port), handler, bind_and_activate=False)
    # A quick restart may bind again while old connections linger; a port another server listens on is still
    # refused (Linux, macOS). Windows would share the port, so never there.
    httpd.allow_reuse_address = sys.platform != "win32"
    httpd.daemon_threads = True
    try:
        httpd.server_bind()
        httpd.server_activate()
    except OSError:
        httpd.server_close()
        raise
    return httpd
