"""python -m devtools.latency_soak: the fake lichess late both ways, the bot's real time manager learning its move
overhead, the figures of a game (a short clock on the tiny network; the soak's real runs are in docs/timeman.md)."""

from __future__ import annotations

import io
import time

import pytest
import requests

from devtools.latency_soak import soak_game
from lichessbot.logs import configure_logging
from tests.fake_lichess import BotRun, FakeLichess, random_mover, resign_after


def test_streamed_lines_arrive_late_by_the_stream_latency():
    with FakeLichess() as server:
        server.stream_latency = (0.3, 0.3)
        gid = server.start_game(challenger="alice")
        t = time.monotonic()
        auth = {"Authorization": f"Bearer {server.token}"}
        with requests.get(f"{server.url}/api/bot/game/stream/{gid}", headers=auth, stream=True, timeout=5) as r:
            first = next(line for line in r.iter_lines() if line)
        assert b"gameFull" in first and time.monotonic() - t >= 0.3


@pytest.mark.slow
def test_a_soak_game_learns_the_round_trip_and_keeps_its_clock(engine):
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    with FakeLichess(opponent_delay=0.05) as server:
        server.latency = server.stream_latency = (0.05, 0.05)  # 100 ms a round trip
        with BotRun(server, engine) as bot:
            g = soak_game(server, bot, buf, 20, 0, 50, True, resign_after(24, random_mover(3)), timeout=120)
    assert not g.lost_on_time and g.status == "resign" and g.plies >= 24
    assert g.overhead["samples"] >= 5 and 90 <= g.overhead["median_ms"] <= 300  # the round trip, learned
    charged = g.overhead["charged_ms"]
    assert charged[0] == 100 and 90 <= charged[-1] <= g.overhead["max_ms"]  # the start, then what was learned
    assert 0.0 < g.clock_share < 1.0 and g.min_clock_ms is not None


@pytest.mark.slow
def test_a_game_id_that_comes_again_on_a_new_server_reads_only_its_own_log(engine):
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    learned = []
    for latency in (0.02, 0.12):  # two servers: both number their first game alike
        with FakeLichess(opponent_delay=0.05) as server:
            server.latency = server.stream_latency = (latency, latency)
            with BotRun(server, engine) as bot:
                g = soak_game(server, bot, buf, 20, 0, latency * 1000, True, resign_after(12, random_mover(3)),
                              timeout=120)
        learned.append(g.overhead["median_ms"])
    assert learned[1] >= learned[0] + 150  # the second game's own round trip, not the first's
