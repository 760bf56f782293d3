"""The embedded lichess with the real bot on it: :func:`local_bot` runs the bot service (the real engine on the tiny
test net, a few nodes a move) against :class:`lichessbot.local.LocalLichess` in this process, as ``lichessbot play
--local`` does, and people play it through the Board API with berserk (:func:`person`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import berserk
import pytest

from lichessbot.bot.service.local import LOCAL_CONFIG
from lichessbot.bot.service.service import BotService
from lichessbot.config import parse_config
from lichessbot.lichess.client import ClientSettings, LichessClient
from lichessbot.local import LocalLichess
from lichessbot.thinker.engine import Engine

BOT_TOKEN = "lip_localbottoken0123"
FAST = ClientSettings(timeout=3.0, move_timeout=2.0, stream_read_timeout=2.0, retries=3, backoff=0.05,
                      rate_limit_pause=0.3, max_backoff=0.5, pace_rate=50.0, pace_burst=20.0)


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


@dataclass
class LocalRun:
    server: LocalLichess
    service: BotService
    pgn_dir: Path

    def person(self, token: str = "lip_person") -> berserk.Client:
        return person(self.server, token)

    def wait_over(self, gid: str, timeout: float = 20) -> None:
        assert self.server.wait_for(lambda: gid in self.server.games and self.server.games[gid].over, timeout), \
            f"game {gid} did not end"

    def turn(self, gid: str, white: bool, timeout: float = 20) -> None:
        """Wait until ``white`` (True) or black is to move in game ``gid`` (or it ended)."""
        assert self.server.wait_for(lambda: gid in self.server.games and (
            self.server.games[gid].over or self.server.games[gid].board.turn == white), timeout), "no move came"


def person(server: LocalLichess, token: str = "lip_person") -> berserk.Client:
    """A Board API user with ``token`` (any token is an account on the embedded lichess)."""
    return berserk.Client(berserk.TokenSession(token), base_url=server.url)


@contextmanager
def local_bot(tmp_path: Path, tiny_net: Path, config: dict[str, Any] | None = None, nodes: int = 8,
              keepalive: float = 0.5) -> Iterator[LocalRun]:
    """The bot service in a thread on a fresh embedded lichess, with ``play --local``'s defaults
    (:data:`LOCAL_CONFIG`) and ``config`` merged over them; its games are saved in ``tmp_path/games``."""
    data = merge(LOCAL_CONFIG, {"engine": {"network": str(tiny_net)}, "pgn_directory": str(tmp_path / "games"),
                                "state_directory": str(tmp_path), "abort_time": 30})
    cfg = parse_config(merge(data, config or {}))
    with LocalLichess(BOT_TOKEN, keepalive=keepalive, rate_limits=False) as server:
        engine = Engine(cfg, nodes=nodes)
        client = LichessClient(BOT_TOKEN, server.url, FAST)
        service = BotService(cfg, client, engine, reconnect_backoff=0.05, token=BOT_TOKEN)
        errors: list[BaseException] = []

        def run() -> None:
            try:
                service.run()
            except BaseException as err:  # noqa: BLE001 - reported to the test
                errors.append(err)
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        try:
            assert server.wait_for(lambda: server.event_streams.get(server.bot.id) or not thread.is_alive(), 15)
            assert not errors, errors
            yield LocalRun(server, service, tmp_path / "games")
        finally:
            service.quit()
            thread.join(20)
            client.close()
            engine.close()
        assert not errors, errors


def wait_file(directory: Path, pattern: str, timeout: float = 10) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = sorted(directory.glob(pattern)) if directory.exists() else []
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no {pattern} in {directory}")


@pytest.fixture
def local(tmp_path: Path, tiny_net: Path) -> Iterator[LocalRun]:
    with local_bot(tmp_path, tiny_net) as run:
        yield run
