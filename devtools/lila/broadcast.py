"""The test server's broadcast rounds (a mixin of :class:`devtools.lila.server.FakeLichess`).

``POST /api/broadcast/round/{id}/push`` as lila answers it (lichess-org/api doc/specs/tags/broadcasts/
broadcast-round-broadcastRoundId-push.yaml, lila app/controllers/RelayRound.scala ``push`` and
modules/relay RelayPush.scala): a token with ``study:write`` (the server's token; without the scope: 403),
a text body of up to 100 PGN games separated by blank lines; an unknown round is a 404; otherwise 200
with ``{"games": [{"tags": {...}, "moves": N}]}``, a game that cannot be read getting ``"error"``
instead of ``"moves"``. A pushed game replaces the round's game with the same Round, White and Black
tags (lila matches chapters by tags). Every push is kept in :attr:`BroadcastRoutes.broadcast_pushes`.
"""

from __future__ import annotations

import io
import threading
from typing import Any

import chess.pgn

from devtools.lila.base import ServerBase
from lichessbot.local.http import Handler

__all__ = ["BroadcastRoutes"]

#: Games one push may carry (lichess-org/api: "up to 100 games").
MAX_GAMES = 100


class BroadcastRoutes(ServerBase):
    # The server's state this mixin uses (devtools.lila.server.FakeLichess defines it).
    lock: threading.RLock
    changed: threading.Condition
    _ids: int

    def _init_broadcast(self) -> None:
        #: round id -> (Round, White, Black) -> the game's last pushed PGN
        self.broadcast_rounds: dict[str, dict[tuple[str, str, str], str]] = {}
        #: every accepted push: (round id, [(Round, White, Black, moves) per game])
        self.broadcast_pushes: list[tuple[str, list[tuple[str, str, str, int]]]] = []
        #: the scopes of the server's token (take ``study:write`` away to see the 403)
        self.broadcast_scopes = {"study:write"}

    def add_broadcast_round(self) -> str:
        """A new broadcast round without a source URL (so it can be pushed to); its 8-character id."""
        with self.lock:
            self._ids += 1
            rid = f"br{self._ids:06d}"
            self.broadcast_rounds[rid] = {}
            return rid

    def broadcast_games(self, round_id: str) -> list[chess.pgn.Game]:
        """The round's games as last pushed, by Round tag."""
        with self.lock:
            texts = list(self.broadcast_rounds[round_id].items())
        games = [chess.pgn.read_game(io.StringIO(pgn)) for _, pgn in sorted(texts)]
        return [g for g in games if g is not None]

    def _push_broadcast(self, h: Handler, round_id: str, body: bytes) -> None:
        if "study:write" not in self.broadcast_scopes:
            return h.reply(403, {"error": "Missing scope: study:write"})
        with self.lock:
            if round_id not in self.broadcast_rounds:
                return h.reply(404, {"error": "Not found."})
        stream = io.StringIO(body.decode("utf-8", errors="replace"))
        results: list[dict[str, Any]] = []
        pushed: list[tuple[str, str, str, int]] = []
        while len(results) < MAX_GAMES:
            start = stream.tell()
            game = chess.pgn.read_game(stream)
            if game is None:
                break
            text = stream.getvalue()[start:stream.tell()].strip()
            tags = dict(game.headers)
            if game.errors:
                results.append({"tags": tags, "error": str(game.errors[0])})
                continue
            moves = len(list(game.mainline_moves()))
            key = (tags.get("Round", "?"), tags.get("White", "?"), tags.get("Black", "?"))
            with self.lock:
                self.broadcast_rounds[round_id][key] = text
            pushed.append((*key, moves))
            results.append({"tags": tags, "moves": moves})
        if not results:
            return h.reply(400, {"error": "Cannot parse moves"})
        with self.lock:
            self.broadcast_pushes.append((round_id, pushed))
            self.changed.notify_all()
        h.reply(200, {"games": results})
