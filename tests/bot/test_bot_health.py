"""The bot's health signal: the heartbeat file `lichessbot health` reads (Docker's HEALTHCHECK) and the status
page's /api/health stay healthy while the event stream lives (keep-alives only included), turn unhealthy
when it is dead longer than its budget, and healthy again once it reconnects."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from lichessbot.bot.service.health import STALE_AFTER, Heartbeat, stream_budget, verdict
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine
from tests.tcp_proxy import TcpProxy

BUDGET = 2.0  # seconds of silence allowed (the default: stream_budget of ClientSettings(), 100 s)


def _health_cmd(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lichessbot", "health", "--file", str(path)],
                          capture_output=True, text=True, timeout=60)


def _api_health(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url + "/api/health", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _wait(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
def test_health_flips_when_the_event_stream_dies_and_back_when_it_returns(tmp_path):
    path = tmp_path / "health.json"
    with FakeLichess() as server, TcpProxy(("127.0.0.1", int(server.url.rsplit(":", 1)[1]))) as proxy:
        server.url = proxy.url  # the bot reaches lichess through a line the test can cut
        run = BotRun(server, StandInEngine(), {"status": {"enabled": True, "port": 0}})
        run.service.health_budget_s = BUDGET
        with run:
            beat = Heartbeat(str(path), BUDGET, run.service.event_stream_silence, period=0.2).start()
            try:
                assert _wait(lambda: run.service.status_server is not None, 10)
                page = run.service.status_server.url

                def healthy() -> bool:
                    return verdict(json.loads(path.read_text()), time.time())[0]

                time.sleep(BUDGET + 1)  # connected, with keep-alives only: still healthy past the budget
                assert healthy()
                ok = _health_cmd(path)
                assert ok.returncode == 0 and ok.stdout.startswith("healthy: event stream alive"), ok.stdout
                assert _api_health(page)[0] == 200

                cut = time.monotonic()
                proxy.cut()  # the network goes: the stream breaks and cannot be reopened
                assert _wait(lambda: not healthy(), BUDGET + 5)
                assert time.monotonic() - cut >= BUDGET - 0.5  # not before the budget is spent
                dead = _health_cmd(path)
                assert dead.returncode == 1 and "unhealthy: event stream dead for" in dead.stdout, dead.stdout
                status, body = _api_health(page)
                assert status == 503 and not body["healthy"] and "event stream dead" in body["why"]

                proxy.restore()  # back: the stream reopens at its next attempt
                assert _wait(healthy, 30)
                assert _health_cmd(path).returncode == 0 and _api_health(page)[0] == 200
            finally:
                beat.stop()
    assert not path.exists()  # a stopped bot leaves no heartbeat


def test_a_stale_missing_or_unreadable_heartbeat_is_unhealthy(tmp_path):
    now = time.time()
    fresh = {"at": now, "event_stream_silent_s": 1.0, "budget_s": 100.0}
    assert verdict(fresh, now + 1)[0]
    assert verdict({**fresh, "event_stream_silent_s": 99.5}, now + 1) == (False, "event stream dead for 100 s "
                                                                                 "(budget 100 s)")
    stale = verdict(fresh, now + STALE_AFTER + 1)
    assert not stale[0] and "not running or is hung" in stale[1]
    assert verdict({"at": "x"}, now) == (False, "unreadable health file")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{")
    assert _health_cmd(garbage).returncode == 1
    assert _health_cmd(tmp_path / "none.json").returncode == 1
    assert stream_budget(20.0, 10.0, 30.0) == 100.0  # the default ClientSettings: 20 + 2 * (30 + 10)
