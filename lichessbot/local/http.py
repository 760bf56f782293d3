"""The embedded lichess's HTTP layer: one thread per connection (the standard library's
``ThreadingHTTPServer``), requests parsed into a path, a query and a body (a form or JSON), answers as JSON, HTML,
text or chunked NDJSON streams (lichess's streams: one JSON object a line, empty lines as keep-alives).

A bad request never takes the server down and gets a clear 4xx with lila's error shape ``{"error": ...}``
(lichess-org/api doc/specs/schemas/Error.yaml):

* a ``Host`` header that names neither a loopback address, nor the address the server listens on, nor a name of
  its allow-list: 421 Misdirected Request (RFC 9110 section 15.5.20); no ``Host``: 400 (RFC 9112 section 3.2).
  A web page the operator opens cannot reach the server under its own name (DNS rebinding);
* a bad ``Content-Length``: 400; a body over :data:`MAX_BODY`: 413, before it is read;
* a JSON body (``Content-Type: application/json``) that is malformed, nested deeper than the parser can follow, or
  not an object: 400 ``{"error": "Invalid JSON body: ..."}`` (lila's Play parses the body before the action runs;
  the action never sees it, so nothing is created with defaults).

An error inside a route is logged and answered 500 (the connection closes), as lila answers a crash. Every answer
says ``X-Content-Type-Options: nosniff`` and ``X-Frame-Options: DENY`` and carries a Content-Security-Policy
(:data:`API_CSP`; the page its own, with a nonce: :mod:`lichessbot.local.page`)."""

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

from lichessbot.hosts import host_admitted, host_names

__all__ = ["API_CSP", "DROP", "END", "LISTEN_BACKLOG", "MAX_BODY", "App", "Handler", "host_allowed", "make_server"]

#: Stream queue items: cut the connection mid-stream / end the stream cleanly.
DROP = object()
END = object()
#: The largest request body read, bytes (a broadcast push of 100 PGN games fits).
MAX_BODY = 4 << 20
#: Seconds a connection may be silent while a request is read, or a stream's reader may stall.
SOCKET_TIMEOUT = 120.0
#: Connections the kernel queues before the server accepts them (the standard library's default is 5: of 60 quick
#: connections some waited for a SYN retry, about 1 s). 128 was Linux's ``SOMAXCONN`` until 5.4 (listen(2)).
LISTEN_BACKLOG = 128
#: The Content-Security-Policy of every answer but the page: nothing may load, nobody may frame it.
API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"

log = structlog.get_logger("lichessbot.local")


class App(Protocol):
    """What the handler serves: ``handle`` answers one request (it calls the handler's ``reply``/``stream``)."""

    def handle(self, h: Handler, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        ...

    def record(self, h: Handler, method: str, path: str) -> None:
        ...


def host_allowed(header: str | None, bound: str, allowed: frozenset[str] = frozenset()) -> bool:
    """Whether a request's ``Host`` header names this server: a loopback address or ``localhost``, the address it
    listens on (``bound``, unless a wildcard such as 0.0.0.0), or a name of ``allowed`` (lower case, no port);
    :func:`lichessbot.hosts.host_admitted`."""
    return host_admitted(header, host_names(bound, allowed))


class Handler(BaseHTTPRequestHandler):
    """One connection's requests. ``body``: the form or JSON object sent (``is_form`` tells which), ``raw``: the
    bytes as sent; ``status``: the status answered (0 before any)."""

    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT
    app: App
    #: the address the server listens on, and the other names it answers to (lower case, no port)
    bound_host: str = "127.0.0.1"
    allowed_hosts: frozenset[str] = frozenset()
    server_version = "lichessbot-local"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet: lila's access log is not ours
        pass

    def _dispatch(self, method: str) -> None:
        self.status = 0
        self.is_form = True
        self.raw = b""
        url = urlsplit(self.path)
        path = url.path
        host = self.headers.get("Host")
        if not host_allowed(host, self.bound_host, self.allowed_hosts):
            self.close_connection = True  # the body, if any, is never read
            if host is None:
                return self.reply(400, {"error": "Missing Host header"})
            return self.reply(421, {"error": "This server answers only to its own address (Host not allowed)"})
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
            if _is_json(self.headers.get("Content-Type") or ""):
                self.is_form = False
                try:
                    parsed = json.loads(self.raw)
                except RecursionError:
                    return self.reply(400, {"error": "Invalid JSON body: nested too deep"})
                except ValueError as err:  # UnicodeDecodeError too
                    return self.reply(400, {"error": f"Invalid JSON body: {err}"})
                if not isinstance(parsed, dict):
                    return self.reply(400, {"error": "Invalid JSON body: an object is expected"})
                body = parsed
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

    def reply_html(self, status: int, data: bytes, csp: str = API_CSP) -> None:
        """An HTML page under its Content-Security-Policy ``csp`` (default: nothing loads, no script runs)."""
        self.send(status, data, "text/html; charset=utf-8", {"Content-Security-Policy": csp})

    def send(self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self._guard_headers(headers or {})
        self.end_headers()
        self.wfile.write(data)

    def _guard_headers(self, headers: dict[str, str]) -> None:
        """``headers`` and the ones every answer carries (a ``Content-Security-Policy`` in ``headers`` replaces
        :data:`API_CSP`)."""
        merged = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Content-Security-Policy": API_CSP,
                  **headers}
        for k, v in merged.items():
            self.send_header(k, v)

    def stream(self, q: queue.Queue[Any], keepalive: float, stopping: threading.Event) -> None:
        """Chunked NDJSON from ``q`` until :data:`END` (a clean end), :data:`DROP` (the connection cut) or the
        server stops; an empty line every ``keepalive`` seconds of silence (lila api/EventStream: about 6 s)."""
        self.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-store")
        self._guard_headers({})
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


def _is_json(content_type: str) -> bool:
    """Whether a ``Content-Type`` names JSON: ``application/json`` or a ``+json`` type, any parameters."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def make_server(app: App, host: str, port: int, allowed_hosts: frozenset[str] = frozenset()) -> ThreadingHTTPServer:
    """A threading HTTP server for ``app`` bound to ``host``:``port`` (0: a free port) that answers requests whose
    ``Host`` is loopback, ``host`` or one of ``allowed_hosts`` (:func:`host_allowed`), with a listen backlog of
    :data:`LISTEN_BACKLOG`. Raises OSError when the address cannot be bound (errno EADDRINUSE: the port is taken)."""
    handler = type("LocalLichessHandler", (Handler,), {"app": app, "bound_host": host,
                                                       "allowed_hosts": frozenset(h.lower() for h in allowed_hosts)})
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server_class = type("LocalLichessServer", (ThreadingHTTPServer,), {"address_family": family,
                                                                        "request_queue_size": LISTEN_BACKLOG})
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
