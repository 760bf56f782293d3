"""What the test server's route mixins share (:class:`devtools.lila.server.FakeLichess` is all of them over the
embedded lichess): the server's state the mixins read and the methods one mixin calls on another, declared once
here so that each mixin is type-checked against the server it is part of."""

from __future__ import annotations

from collections import Counter
from typing import Any

from lichessbot.local import LocalLichess
from lichessbot.local.http import Handler
from lichessbot.local.model import Challenge

__all__ = ["ServerBase"]


class ServerBase(LocalLichess):
    """The embedded lichess plus the test server's switches (set in ``FakeLichess.__init__``) and the methods
    the mixins call on each other (each defined by one mixin, which comes before this class in the order)."""

    games: dict[str, Any]  # its games are FakeGame
    challenges: dict[str, Any]  # its challenges are FakeChallenge
    token: str
    latency: tuple[float, float] | None
    bad_auth: int
    _ids: int
    answers: dict[str, tuple[str, str | None]]
    answer_attempts: Counter[str]
    answer_delay: float
    answering: int
    canceled: set[str]
    cancel_on_accept: set[str]
    chat_status: int
    chat_delay: float
    ignore_claims: int
    lose_takeback_answers: int

    def _faults(self, h: Handler, method: str, parts: list[str]) -> bool:
        raise NotImplementedError  # devtools.lila.faults.FaultRoutes

    def _accept_limit(self, ch: Challenge) -> tuple[int, dict[str, Any]] | None:
        raise NotImplementedError  # devtools.lila.botlimit.BotLimitRoutes

    def _bot_limit_answer(self, opponent: str) -> tuple[int, dict[str, Any]] | None:
        raise NotImplementedError  # devtools.lila.botlimit.BotLimitRoutes

    def _push_broadcast(self, h: Handler, round_id: str, body: bytes) -> None:
        raise NotImplementedError  # devtools.lila.broadcast.BroadcastRoutes

    def _create_challenge(self, h: Handler, username: str, form: dict[str, Any]) -> None:
        raise NotImplementedError  # devtools.lila.matchmaking.MatchmakingRoutes

    def _cancel_outgoing(self, h: Handler, cid: str) -> None:
        raise NotImplementedError  # devtools.lila.matchmaking.MatchmakingRoutes

    def cancel_challenge(self, cid: str) -> None:
        raise NotImplementedError  # devtools.lila.server.FakeLichess

    def _serve_arena(self, h: Handler, method: str, parts: list[str], query: dict[str, list[str]],
                     body: dict[str, Any]) -> None:
        raise NotImplementedError  # devtools.lila.arenas.ArenaRoutes
