"""A match watchable on lichess as it is played: each game pushed live to a broadcast round.

``POST {server}/api/broadcast/round/{id}/push`` (lichess-org/api doc/specs/tags/broadcasts/
broadcast-round-broadcastRoundId-push.yaml): a token with ``study:write``, a text body of up to 100 PGN
games separated by blank lines (here: the games that changed since the last push, with ``[%clk]`` and
``[%eval]`` comments); lichess matches each game to its board by the Round, White and Black tags and
answers ``{"games": [{"tags": ..., "moves": N} or {"tags": ..., "error": ...}]}``.

The pushes run in a thread of their own, so a slow or failing server never delays a move and never
stops the match:

* at most one push every ``min_interval`` seconds (ours: 1 s; lila coalesces a round's pushes as well),
  each through a :class:`lichessbot.lichess.pacing.Pacer` (``other`` class);
* a connection error, a timeout or a 5xx is retried with a doubling pause (1 s up to 30 s); a 429
  pauses ``rate_limit_pause`` seconds (lichess asks for a minute: https://lichess.org/page/api-tips);
* a 401, 403 or 404 (a bad token, no ``study:write``, an unknown round) stops the pushing, logged once;
* a game the server cannot read is logged with lichess's error.

The token is sent in the Authorization header only; it is never in a log line or an error message.
"""

from __future__ import annotations

import threading
import time

import chess.pgn
import requests
import structlog

from lichessbot import __version__
from lichessbot.lichess.pacing import OTHER, Pacer

__all__ = ["BroadcastPusher", "MAX_GAMES"]

log = structlog.get_logger("lichessbot.match")

#: Games one push may carry (lichess-org/api: "It can contain up to 100 games").
MAX_GAMES = 100


class BroadcastPusher:
    """Pushes games to one broadcast round. Start with ``with BroadcastPusher(...) as pusher:``; feed it
    with :meth:`update` (e.g. as ``run_match``'s ``on_move``); leaving the block pushes the last states
    (waiting at most ``final_wait`` seconds).

    Args:
        server: the lichess server, e.g. ``https://lichess.org``.
        token: a token with the ``study:write`` scope.
        round_id: the broadcast round (8 characters, from its URL).
        min_interval: seconds between two pushes at least.
        timeout: seconds one push may take.
        rate_limit_pause: seconds to wait after a 429.
        final_wait: seconds :meth:`close` waits for the last push.
    """

    def __init__(self, server: str, token: str, round_id: str, *, min_interval: float = 1.0, timeout: float = 10.0,
                 rate_limit_pause: float = 60.0, final_wait: float = 15.0):
        self.url = f"{server.rstrip('/')}/api/broadcast/round/{round_id}/push"
        self.min_interval, self.timeout = min_interval, timeout
        self.rate_limit_pause, self.final_wait = rate_limit_pause, final_wait
        self.pacer = Pacer()
        self._session = requests.Session()
        self._session.headers.update({"Authorization": f"Bearer {token}", "User-Agent": f"lichessbot/{__version__}",
                                      "Content-Type": "text/plain; charset=utf-8"})
        self._pgn: dict[int, str] = {}   # game number -> its latest PGN
        self._dirty: set[int] = set()    # games changed since their last successful push
        self._cond = threading.Condition()
        self._closing = False
        self.stopped: str | None = None  # why pushing stopped for good (a 401/403/404), else None
        self.pushes = self.failures = 0
        self._thread = threading.Thread(target=self._run, name="broadcast-push", daemon=True)

    def __enter__(self) -> BroadcastPusher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, number: int, game: chess.pgn.Game) -> None:
        """The game ``number`` as it stands now (its PGN is copied; never blocks on the network)."""
        text = str(game)
        with self._cond:
            self._pgn[number] = text
            self._dirty.add(number)
            self._cond.notify()

    def close(self) -> None:
        """Push what is left (waiting at most ``final_wait`` seconds) and stop. Never raises."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(self.final_wait)
        self._session.close()

    def _run(self) -> None:
        pause = 0.0
        while True:
            with self._cond:
                while not self._dirty and not self._closing:
                    self._cond.wait()
                if not self._dirty or self.stopped:
                    return
                numbers = sorted(self._dirty)[:MAX_GAMES]
                body = "\n\n".join(self._pgn[n].strip() for n in numbers) + "\n"
                self._dirty.difference_update(numbers)
            wait = self._push(body, len(numbers))
            if wait is None:  # pushed
                pause = 0.0
                time.sleep(self.min_interval)
                continue
            with self._cond:  # failed: push these games again (with their newest moves) after a pause
                self._dirty.update(numbers)
                if self.stopped:
                    return
            pause = wait if wait else min(30.0, max(1.0, 2 * pause))
            with self._cond:
                self._cond.wait_for(lambda: self._closing, timeout=pause)
                if self._closing and pause > self.final_wait:
                    return

    def _push(self, body: str, games: int) -> float | None:
        """One push. Returns None when it went through, 0 to retry with the doubling pause, or the
        seconds to wait (a 429)."""
        try:
            self.pacer.acquire(OTHER, "POST /api/broadcast/round/*/push", time.sleep)
            r = self._session.post(self.url, data=body.encode("utf-8"), timeout=self.timeout)
        except requests.RequestException as err:
            return self._failed(f"no answer ({type(err).__name__})")
        if r.status_code == 429:
            return self._failed("429 Too Many Requests", self.rate_limit_pause)
        if r.status_code in (401, 403, 404):
            self.stopped = f"{r.status_code} {_error(r)}"
            log.error("broadcast push refused, pushing stops (the match goes on)", status=r.status_code,
                      error=_error(r))
            return 0
        if r.status_code != 200:
            return self._failed(f"{r.status_code} {_error(r)}")
        self.pushes += 1
        try:
            results = r.json().get("games", [])
        except ValueError:
            results = []
        for game in results if isinstance(results, list) else []:
            if isinstance(game, dict) and "error" in game:
                tags = game.get("tags") or {}
                log.warning("broadcast game refused", round=tags.get("Round"), error=str(game["error"])[:200])
        log.debug("broadcast pushed", games=games)
        return None

    def _failed(self, reason: str, wait: float = 0.0) -> float:
        self.failures += 1
        log.warning("broadcast push failed; retrying (the match goes on)", reason=reason, failures=self.failures)
        return wait


def _error(r: requests.Response) -> str:
    """lichess's ``error`` text of a refused request (short), or the status's reason."""
    try:
        data = r.json()
    except ValueError:
        return r.reason or ""
    return str(data.get("error", ""))[:200] if isinstance(data, dict) else ""
