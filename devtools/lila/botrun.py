"""Running the bot in-process against the test server (tests and the soak, ``python -m devtools.soak``), with
stand-in engines that need no network (test doubles). The server (:mod:`devtools.lila.server`) knows nothing of the
bot; this module joins the two."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import chess

from devtools.lila.server import FakeGame, FakeLichess
from lichessbot.bot.matchmaking.matchmaker import MatchmakerOptions
from lichessbot.bot.service.service import BotService, EngineLike
from lichessbot.config import BotConfig, parse_config
from lichessbot.config.base import ConfigData
from lichessbot.lichess.client import ClientSettings, LichessClient
from lichessbot.online import OnlineMoves
from lichessbot.score import Score
from lichessbot.search import SearchResult
from lichessbot.status import LiveSearch
from lichessbot.thinker.protocol import Clock, Decision

__all__ = ["BotRun", "FakeEngine", "FakeEngineThinker", "StandInEngine", "StandInThinker", "stand_in_decision"]


def stand_in_decision(move: chess.Move, *, cp: int, nodes: int, nps: int, depth: int, seconds: float,
                      reason: str) -> Decision:
    """A "search" decision for ``move`` with made-up statistics (WDL 0.3/0.4/0.3, PV of one move) for
    thinkers that play without an engine. ``seconds``: the time it claims to have spent."""
    result = SearchResult(best_move=move, ponder_move=None, pv=[move], q=0.0,
                          score=Score(cp=cp, wdl=(0.3, 0.4, 0.3)), nodes=nodes, playouts=nodes, reused_nodes=0,
                          nps=nps, depth=depth, seldepth=depth, time=seconds, stop_reason=reason)
    return Decision(move=move, source="search", result=result)


class StandInThinker:
    """A thinker that plays a seeded random legal move with a fixed made-up eval (no engine needed)."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.calls = 0
        self.on_live: Callable[[LiveSearch], None] | None = None  # no live search to show

    def think(self, board: chess.Board, clock: Clock | None, *, first_moves_unclocked: bool = False,
              time_left_s: float | None = None) -> Decision:
        self.calls += 1
        move = self.rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
        return stand_in_decision(move, cp=12, nodes=16, nps=1000, depth=2, seconds=0.001, reason="stand-in")

    def set_opponent(self, rating: int | None, rated: bool, config: BotConfig | None = None,
                     name: str = "") -> str:
        return "full strength"

    def ponder(self, board: chess.Board, reply: chess.Move | None) -> None:
        pass

    def stop(self) -> None:
        pass

    def close(self) -> None:
        pass


class StandInEngine:
    name = "stand-in"

    def new_game(self, game_id: str | None = None) -> StandInThinker:
        return StandInThinker()

    def use_online(self, online: OnlineMoves | None) -> None:
        """A stand-in asks no online source."""


class FakeEngineThinker(StandInThinker):
    """Random legal move after ``clock.time / 50`` ms (at most 0.5 s; 0.1 s without a clock), roughly what a
    bullet engine spends (:class:`StandInThinker` otherwise)."""

    def think(self, board: chess.Board, clock: Any, *, first_moves_unclocked: bool = False,
              time_left_s: float | None = None) -> Decision:
        spend = 0.1 if clock is None else min(0.5, max(0.01, clock.time / 50_000))
        time.sleep(spend)
        move = self.rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
        return stand_in_decision(move, cp=0, nodes=1, nps=1, depth=1, seconds=spend, reason="fake engine")


class FakeEngine(StandInEngine):
    name = "fake-random"

    def __init__(self) -> None:
        self._n = 0

    def new_game(self, game_id: str | None = None) -> FakeEngineThinker:
        self._n += 1
        return FakeEngineThinker(self._n)


def _merge(base: ConfigData, extra: ConfigData) -> ConfigData:
    out = dict(base)
    for k, v in extra.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


class BotRun:
    """The bot service running in a thread against ``server`` (context manager; quits on exit)."""

    def __init__(self, server: FakeLichess, engine: EngineLike, config: ConfigData | None = None, *,
                 token: str | None = None, upgrade: bool = False, settings: ClientSettings | None = None,
                 matchmaker: MatchmakerOptions | None = None):
        base = {"url": server.url, "abort_time": 30, "pgn_directory": None,
                "challenge": {"concurrency": 1, "accept_bot": True, "variants": ["standard", "fromPosition"],
                              "time_controls":
                              ["bullet", "blitz", "rapid", "classical", "correspondence"]}}
        self.config = parse_config(_merge(base, config or {}))
        self.server = server
        settings = settings or ClientSettings(timeout=3.0, move_timeout=1.0, stream_read_timeout=1.5, retries=3,
                                              backoff=0.05, rate_limit_pause=0.3, max_backoff=0.5, pace_rate=50.0,
                                              pace_burst=20.0)
        self.client = LichessClient(token or server.token, server.url, settings)
        self.service = BotService(self.config, self.client, engine, upgrade=upgrade, reconnect_backoff=0.05,
                                  matchmaker_options=matchmaker, token=token or server.token)
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
        game: FakeGame = self.server.games[cid]
        return game
