"""The HTTP layer of the fake lichess server: request parsing, JSON/HTML replies, chunked NDJSON streams."""

from __future__ import annotations

import json
import queue
import random
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["DROP", "END", "Handler", "make_handler", "request_kind"]

#: Stream queue items: cut the connection mid-stream / end the stream cleanly.
DROP = object()
END = object()

#: What lichess's front answers with a 429 (an HTML page, no Retry-After).
TOO_MANY_HTML = (b"<!DOCTYPE html><html><head><title>429 Too Many Requests</title></head><body><h1>Too many "
                 b"requests</h1><p>Please wait a minute before trying again.</p></body></html>")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_obj: Any  # the FakeLichess

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: dict[str, Any] = {}
        is_form = True
        if raw:
            if "json" in (self.headers.get("Content-Type") or ""):
                is_form = False
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
            else:
                body = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        self.is_form = is_form
        self.raw = raw  # the body as sent (a broadcast push is PGN text)
        self._status = 0
        latency = getattr(self.server_obj, "latency", None)  # (min, max) seconds added to every answer
        if latency:
            time.sleep(random.uniform(*latency))
        try:
            self.server_obj.handle(self, method, url.path, parse_qs(url.query), body)
        finally:
            with self.server_obj.lock:
                self.server_obj.requests.append((method, url.path, self._status))
                self.server_obj.user_agents.add(self.headers.get("User-Agent", ""))
                self.server_obj.changed.notify_all()

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def reply(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", headers)

    def reply_html(self, status: int, data: bytes = TOO_MANY_HTML) -> None:
        self._send(status, data, "text/html; charset=utf-8", None)

    def _send(self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None) -> None:
        self._status = status
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def stream(self, q: queue.Queue, keepalive: float, stopping: threading.Event) -> None:
        """Chunked NDJSON from ``q`` until END (clean end) or DROP (connection cut mid-stream)."""
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
                if item is END:
                    self._chunk(b"")
                    return
                if item is DROP:
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                line = item if isinstance(item, bytes) else json.dumps(item).encode() + b"\n"
                late = getattr(self.server_obj, "stream_latency", None)  # the way down (min, max) s
                if late and line.strip():
                    time.sleep(random.uniform(*late))
                self._chunk(line)
        except OSError:
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def make_handler(server: Any) -> type[Handler]:
    return type("FakeLichessHandler", (Handler,), {"server_obj": server})


def request_kind(method: str, parts: list[str]) -> str:
    """The kind of an API request for quotas and injected failures: move, chat, action, challenge, broadcast,
    playing or account (``parts``: the path split on ``/``)."""
    if parts[:3] == ["api", "bot", "game"] and len(parts) >= 5:
        return {"move": "move", "chat": "chat"}.get(parts[4], "action")
    if parts[:2] == ["api", "challenge"]:
        return "challenge"
    if parts[:2] == ["api", "broadcast"]:
        return "broadcast"
    if parts[:2] == ["api", "account"] and parts[2:3] == ["playing"]:
        return "playing"
    return "account"
