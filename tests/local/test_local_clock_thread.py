"""The embedded lichess's clock thread survives an error of one tick, and says so in the log."""

from __future__ import annotations

import json
import time

import pytest

from lichessbot.local import LocalLichess

pytestmark = pytest.mark.usefixtures("logs")


def test_a_failing_clock_tick_is_logged_and_the_clocks_run_on(logs, monkeypatch):
    ticks: list[float] = []

    def tick(now: float) -> None:
        ticks.append(now)
        if len(ticks) == 1:
            raise RuntimeError("a broken game")

    server = LocalLichess("lip_clock", "ClockBot")
    monkeypatch.setattr(server, "_tick", tick)
    with server:
        deadline = time.monotonic() + 5
        while len(ticks) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert len(ticks) >= 3  # the thread ticked on after the error
    lines = [json.loads(line) for line in logs.getvalue().splitlines() if line.startswith("{")]
    failed = [e for e in lines if e["event"] == "clock tick failed; the clocks run on"]
    assert len(failed) == 1 and failed[0]["error"] == "a broken game" and failed[0]["level"] == "error"
    assert "RuntimeError" in failed[0].get("exception", "")
