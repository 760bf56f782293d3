"""The online move services on 127.0.0.1, answering as the real ones do: lichess's opening explorer
(``/masters``, ``/lichess``, ``/player``), cloud eval (``/api/cloud-eval``), tablebase (``/standard``)
and chessdb.cn (``/cdb.php``, plain text). Shapes: lichess-org/api doc/specs (schemas
OpeningExplorer*.yaml, CloudEval.yaml, TablebaseJson.yaml, TablebaseMove.yaml) and chessdb's cdb.php.

Answers are scripted per position (the test builds them with :func:`explorer_json`, :func:`cloud_json`,
:func:`tablebase_json`, :func:`chessdb_all`); faults per service: ``delay[service]`` seconds before
every answer, ``fail_next(service, what)`` with a status (503, 500, 429), ``"garbage"`` (not JSON),
``"hang"`` (no answer for 30 s), ``"drip"`` (the headers at once, then the body one byte every 0.1 s: no
socket timeout ever fires) or ``"drop"`` (the connection closed without an answer).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import chess

__all__ = ["FakeServices", "chessdb_all", "cloud_json", "explorer_json", "tablebase_json"]

SERVICES = ("explorer", "cloud", "tablebase", "chessdb")


def _epd(fen: str) -> str:
    return chess.Board(fen).epd()


def explorer_json(board: chess.Board, rows: dict[str, tuple[int, int, int]]) -> dict[str, Any]:
    """An explorer answer: ``rows`` uci -> (white wins, draws, black wins), in the order given."""
    moves = []
    for uci, (w, d, b) in rows.items():
        try:
            san = board.san(chess.Move.from_uci(uci))
        except ValueError:
            san = "??"
        moves.append({"uci": uci, "san": san, "averageRating": 2400, "white": w, "draws": d, "black": b,
                      "game": None, "opening": None})
    return {"opening": None, "white": sum(r[0] for r in rows.values()), "draws": sum(r[1] for r in rows.values()),
            "black": sum(r[2] for r in rows.values()), "moves": moves, "topGames": [], "recentGames": []}


def cloud_json(board: chess.Board, lines: list[tuple[str, int]], depth: int = 30, knodes: int = 106325,
               mate: bool = False) -> dict[str, Any]:
    """A cloud-eval answer: ``lines`` (moves, cp or mate from **white's** view)."""
    key = "mate" if mate else "cp"
    return {"fen": " ".join(board.fen().split()[:4]), "knodes": knodes, "depth": depth,
            "pvs": [{"moves": moves, key: v} for moves, v in lines]}


def tablebase_json(board: chess.Board, category: str, dtz: int | None,
                   moves: list[tuple[str, str, int | None]]) -> dict[str, Any]:
    """A tablebase answer: the position's category and dtz, ``moves`` (uci, category, dtz from the
    opponent's view after the move), best first."""
    out = []
    for uci, cat, mdtz in moves:
        move = chess.Move.from_uci(uci)
        out.append({"uci": uci, "san": board.san(move) if board.is_legal(move) else "??", "zeroing": False,
                    "conversion": False, "checkmate": False, "stalemate": False, "variant_win": False,
                    "variant_loss": False, "insufficient_material": False, "dtz": mdtz, "precise_dtz": mdtz,
                    "dtm": None, "dtw": None, "dtc": None, "category": cat})
    return {"checkmate": False, "stalemate": False, "variant_win": False, "variant_loss": False,
            "insufficient_material": False, "dtz": dtz, "precise_dtz": dtz, "dtm": None, "dtw": None, "dtc": None,
            "category": category, "moves": out}


def chessdb_all(moves: list[tuple[str, int | str]]) -> str:
    """chessdb's ``queryall`` text: ``move:m,score:s,rank:r,note:...`` records joined by ``|``."""
    return "|".join(f"move:{m},score:{s},rank:2,note:! (W-0012)" for m, s in moves)


class FakeServices:
    """Start with ``with FakeServices() as s:``; ``s.url`` is the base URL of every service."""

    def __init__(self) -> None:
        self.explorer: dict[tuple[str, str], dict[str, Any]] = {}  # (db, epd) -> answer
        self.cloud: dict[str, dict[str, Any]] = {}                 # epd -> answer
        self.tablebase: dict[str, dict[str, Any]] = {}             # epd -> answer
        self.chessdb: dict[tuple[str, str], str] = {}              # (action, epd) -> text
        self.delay = dict.fromkeys(SERVICES, 0.0)
        self.failures: dict[str, list[int | str]] = {s: [] for s in SERVICES}
        self.requests: list[tuple[str, str, dict[str, str], str | None]] = []  # (service, path, params, auth)
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> FakeServices:
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail_next(self, service: str, what: int | str, n: int = 1) -> None:
        with self.lock:
            self.failures[service].extend([what] * n)

    def count(self, service: str) -> int:
        with self.lock:
            return sum(r[0] == service for r in self.requests)

    # -- answers ---------------------------------------------------------------------------------
    def _answer(self, service: str, path: str, q: dict[str, str]) -> tuple[int, str, str]:
        """(status, content type, body) of a request that is not a fault."""
        if service == "explorer":
            db = path.strip("/")
            found = self.explorer.get((db, _epd(q["fen"])))
            return 200, "application/json", json.dumps(found or explorer_json(chess.Board(q["fen"]), {}))
        if service == "cloud":
            found = self.cloud.get(_epd(q["fen"]))
            if found is None:
                return 404, "application/json", json.dumps({"error": "No cloud evaluation available for that position"})
            return 200, "application/json", json.dumps(found)
        if service == "tablebase":
            board = chess.Board(q["fen"].replace("_", " "))
            found = self.tablebase.get(board.epd())
            if found is None:
                return 200, "application/json", json.dumps(tablebase_json(board, "unknown", None, []))
            return 200, "application/json", json.dumps(found)
        text = self.chessdb.get((q.get("action", ""), _epd(q["board"])), "unknown")
        return 200, "text/plain", text

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        services = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                url = urlsplit(self.path)
                q = {k: v[0] for k, v in parse_qs(url.query).items()}
                path = url.path
                service = ("cloud" if path == "/api/cloud-eval" else "tablebase" if path == "/standard"
                           else "chessdb" if path == "/cdb.php" else "explorer")
                with services.lock:
                    services.requests.append((service, path, q, self.headers.get("Authorization")))
                    fault = services.failures[service].pop(0) if services.failures[service] else None
                    delay = services.delay[service]
                if delay:
                    time.sleep(delay)
                if fault == "hang":
                    services._stop.wait(30)
                    self.close_connection = True
                    return
                if fault == "drip":
                    status, ctype, body = services._answer(service, path, q)
                    data = body.encode()
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    for i in range(len(data)):
                        if services._stop.wait(0.1):
                            break
                        try:
                            self.wfile.write(data[i:i + 1])
                            self.wfile.flush()
                        except OSError:
                            break
                    self.close_connection = True
                    return
                if fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if isinstance(fault, int):
                    body = "<html><body>Too many requests</body></html>" if fault == 429 else "Server error"
                    return self._send(fault, "text/html", body)
                if fault == "garbage":
                    return self._send(200, "application/json", '{"moves": [')
                status, ctype, body = services._answer(service, path, q)
                if path == "/player":  # NDJSON snapshots while indexing: an empty one first, then the answer
                    return self._send(status, "application/x-ndjson",
                                      json.dumps(explorer_json(chess.Board(q["fen"]), {})) + "\n" + body + "\n")
                self._send(status, ctype, body)

            def _send(self, status: int, ctype: str, body: str) -> None:
                data = body.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up waiting (its budget ran out)
                    self.close_connection = True

        return Handler
