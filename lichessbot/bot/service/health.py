"""The bot's health as a cheap local signal, for Docker's ``HEALTHCHECK`` and other supervisors.

The bot is healthy while its event stream (``/api/stream/event``: challenges and game starts) is alive:
lichess sends a keep-alive line about every 6 s, so a stream with no line for longer than its reconnect budget
(:func:`stream_budget`) is dead and the bot can take no game. ``lichessbot play --health-file F`` (or
``LICHESSBOT_HEALTH_FILE``) has a :class:`Heartbeat` thread rewrite ``F`` every ``HEARTBEAT_PERIOD`` s;
``lichessbot health`` reads it and exits 0 (healthy) or 1 (unhealthy: the stream is dead, or the heartbeat
is stale because the bot is gone or hung), with one line saying why. It starts no network call and loads
neither the config nor the engine. Imports nothing of the bot.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from lichessbot.files import write_atomic

__all__ = ["HEALTH_FILE_ENV", "HEARTBEAT_PERIOD", "STALE_AFTER", "Heartbeat", "add_arguments", "run",
           "stream_budget", "verdict"]

#: The environment variable that names the health file (``play --health-file`` and ``health --file``).
HEALTH_FILE_ENV = "LICHESSBOT_HEALTH_FILE"
#: Seconds between two writes of the health file.
HEARTBEAT_PERIOD = 2.0
#: Seconds after which a health file not rewritten means the bot is gone or hung.
STALE_AFTER = 15.0


def stream_budget(read_timeout: float, connect_timeout: float, max_backoff: float) -> float:
    """Seconds the event stream may go without a line before it counts as dead (seconds in, seconds out).

    A silent stream is dropped after ``read_timeout`` (``ClientSettings.stream_read_timeout``, 20 s) and
    reopened after a backoff of at most ``max_backoff`` (30 s), each opening waiting at most
    ``connect_timeout`` (10 s): the budget is that silence plus two reopenings at the longest backoff,
    100 s with the defaults. lichess's keep-alive about every 6 s: lila ``modules/api/src/main/EventStream.scala``.
    """
    return read_timeout + 2 * (max_backoff + connect_timeout)


def verdict(data: dict[str, Any], now: float) -> tuple[bool, str]:
    """``(healthy, why)`` of a health file's content ``data`` read at Unix time ``now`` (seconds)."""
    try:
        at, silent, budget = float(data["at"]), float(data["event_stream_silent_s"]), float(data["budget_s"])
    except (KeyError, TypeError, ValueError):
        return False, "unreadable health file"
    age = now - at
    if age > STALE_AFTER:
        return False, f"no heartbeat for {age:.0f} s: the bot is not running or is hung"
    silent += max(0.0, age)
    if silent > budget:
        return False, f"event stream dead for {silent:.0f} s (budget {budget:.0f} s)"
    return True, f"event stream alive ({silent:.1f} s since its last line, budget {budget:.0f} s)"


class Heartbeat:
    """Rewrites ``path`` every ``period`` s (a daemon thread; atomically: a reader never sees half a file)
    with ``{"at": Unix s, "event_stream_silent_s": s, "budget_s": s, "healthy": bool, "pid": int}``.

    ``silence()`` gives the seconds since the event stream's last line (any thread). ``stop()`` ends the
    thread and removes the file (a stopped bot is not healthy). A write that fails is retried next period.
    """

    def __init__(self, path: str, budget_s: float, silence: Callable[[], float], period: float = HEARTBEAT_PERIOD):
        self.path, self.budget_s, self._silence, self.period = path, budget_s, silence, period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        self.beat()
        self._thread.start()
        return self

    def beat(self) -> None:
        """Write the file once now."""
        silent = self._silence()
        data = {"at": time.time(), "event_stream_silent_s": round(silent, 2), "budget_s": self.budget_s,
                "healthy": silent <= self.budget_s, "pid": os.getpid()}
        try:
            write_atomic(self.path, json.dumps(data))
        except OSError:
            pass  # a full or vanished /tmp: the file goes stale, which reads as unhealthy

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.beat()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.period + 1)
        try:
            os.unlink(self.path)
        except OSError:
            pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--file", default=os.environ.get(HEALTH_FILE_ENV),
                        help=f"the health file `lichessbot play --health-file` writes (default: ${HEALTH_FILE_ENV})")


def run(args: argparse.Namespace) -> int:
    """Entry point of ``lichessbot health``: 0 healthy, 1 unhealthy (one line on stdout), 2 no file named."""
    if not args.file:
        print(f"lichessbot health: no health file: pass --file or set {HEALTH_FILE_ENV}", file=sys.stderr)
        return 2
    try:
        with open(args.file, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as err:
        cause = err.strerror if isinstance(err, OSError) and err.strerror else err
        print(f"unhealthy: no health file {args.file} ({cause}): the bot is starting, stopped or not running")
        return 1
    healthy, why = verdict(data if isinstance(data, dict) else {}, time.time())
    print(("healthy: " if healthy else "unhealthy: ") + why)
    return 0 if healthy else 1
