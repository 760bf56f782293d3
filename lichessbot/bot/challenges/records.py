"""The admission records that outlive a run, in one small JSON file (``matchmaking.decline_file``):
declines by opponent and aspect, the pauses lichess's limits set (challenges of ours; our bot-vs-bot
games, ``bot.vsBot.day``; each opponent's bot-vs-bot games), and the games against bots.

Times kept here are wall-clock epoch seconds (they survive a restart). A decline's *aspect* is
``(aspect, value)`` (:func:`lichessbot.bot.matchmaking.choice.decline_aspect`); ``("", "")`` is the whole
bot. The games against bots are counted as lila counts them (modules/bot/src/main/BotLimit.scala over
modules/memo/src/main/RateLimit.scala): a fixed window of one day that opens at the first game and closes a
day later (``clearAt = now + 1 day`` at the first game); the next game after it opens the next window. Not a
rolling window, not a UTC day: ``challenge.max_bot_games_per_day`` counts the games of the current window.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from lichessbot.bot.challenges.filter import SPEEDS
from lichessbot.files import write_atomic

__all__ = ["BOT_GAMES_KEPT", "DeclineRecords"]

#: Seconds of lila's window of its bot-vs-bot limit, from the window's first game
#: (modules/bot/src/main/BotLimit.scala ``RateLimit[UserId](100, 1.day, ...)``).
BOT_GAMES_KEPT = 86400.0


class DeclineRecords:
    """Declines by opponent (lowercase name) and aspect, each until an epoch second; the time until
    which lichess's daily limit pauses matchmaking (``paused_until``, epoch seconds); and the games
    against bots of lila's current window (``bot_games``: game id -> epoch second). Shared by the
    matchmaker and the admission rules: every method takes ``lock``."""

    def __init__(self) -> None:
        self.until: dict[tuple[str, str, str], float] = {}
        self.paused_until = 0.0
        #: lichess's bot-vs-bot limit of ours (``bot.vsBot.day`` on an accept or a challenge): no game
        #: against a bot until this epoch second.
        self.bot_games_paused_until = 0.0
        #: the opponents' bot-vs-bot limits (lila's 400 ``OpponentLimit``): lowercase name -> epoch second.
        self.opponent_limited: dict[str, float] = {}
        self.bot_games: dict[str, float] = {}
        self.lock = threading.RLock()

    def add(self, name: str, aspect: tuple[str, str], until: float) -> None:
        key = (name.lower(), *aspect)
        with self.lock:
            self.until[key] = max(until, self.until.get(key, 0.0))

    def blocks(self, name: str, choice_aspects: dict[str, str], now: float) -> bool:
        """Whether a decline still standing filters a challenge to ``name`` with these aspects."""
        n = name.lower()
        with self.lock:
            if self.until.get((n, "", ""), 0.0) > now or self.opponent_limited.get(n, 0.0) > now:
                return True
            if any(self.until.get((n, a, v), 0.0) > now for a, v in choice_aspects.items()):
                return True
            speed = choice_aspects.get("speed", "")
            if speed not in SPEEDS:
                return False
            rank = SPEEDS.index(speed)
            return any(self.until.get((n, "speed_up_to", v), 0.0) > now for v in SPEEDS[rank:]) or any(
                self.until.get((n, "speed_from", v), 0.0) > now for v in SPEEDS[:rank + 1])

    def prune(self, now: float) -> None:
        with self.lock:
            self.until = {k: t for k, t in self.until.items() if t > now}
            self.opponent_limited = {k: t for k, t in self.opponent_limited.items() if t > now}
            start = self._window_start(now)
            self.bot_games = {g: t for g, t in self.bot_games.items() if start is not None and t >= start}

    def _window_start(self, now: float) -> float | None:
        """The epoch second lila's current window of bot games opened (its first game), or None when no window
        is open at ``now`` (none yet, or the last one closed). Call under the lock."""
        start: float | None = None
        for t in sorted(self.bot_games.values()):
            if start is None or t >= start + BOT_GAMES_KEPT:
                start = t  # this game opens a new window
        if start is None or now >= start + BOT_GAMES_KEPT:
            return None
        return start

    def bot_window_ends(self, now: float) -> float | None:
        """The epoch second the current window of bot games closes (None: no window open at ``now``)."""
        with self.lock:
            start = self._window_start(now)
            return None if start is None else start + BOT_GAMES_KEPT

    def count_bot_game(self, game_id: str, now: float) -> bool:
        """Record a game against a bot started at epoch second ``now``; False if it was already counted."""
        with self.lock:
            if game_id in self.bot_games:
                return False
            self.bot_games[game_id] = now
            return True

    def bot_games_in_day(self, now: float) -> int:
        """Games against bots in lila's window open at epoch second ``now`` (0 when none is open)."""
        with self.lock:
            start = self._window_start(now)
            return 0 if start is None else sum(1 for t in self.bot_games.values() if start <= t <= now)

    def pause_bot_games(self, until: float) -> None:
        """lichess refused a game against a bot for our daily limit: none until epoch second ``until``."""
        with self.lock:
            self.bot_games_paused_until = max(self.bot_games_paused_until, until)

    def limit_opponent(self, name: str, until: float) -> None:
        """lichess refused a game with bot ``name`` for its daily limit: none until epoch second ``until``."""
        with self.lock:
            n = name.lower()
            self.opponent_limited[n] = max(until, self.opponent_limited.get(n, 0.0))

    def opponent_limited_until(self, name: str, now: float) -> float | None:
        """The epoch second ``name``'s daily limit ends, when it stands at ``now``; else None."""
        with self.lock:
            until = self.opponent_limited.get(name.lower(), 0.0)
            return until if until > now else None

    def to_json(self) -> dict[str, object]:
        with self.lock:
            return {"paused_until": self.paused_until, "bot_games_paused_until": self.bot_games_paused_until,
                    "opponent_limited": dict(sorted(self.opponent_limited.items())),
                    "declines": [{"opponent": n, "aspect": a, "value": v, "until": t}
                                 for (n, a, v), t in sorted(self.until.items())],
                    "bot_games": dict(sorted(self.bot_games.items()))}

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None, now: float) -> DeclineRecords:
        """Records from ``path`` (missing or unreadable file: empty records; expired entries dropped)."""
        rec = cls()
        if path is None:
            return rec
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            rec.paused_until = float(data.get("paused_until", 0.0))
            rec.bot_games_paused_until = float(data.get("bot_games_paused_until", 0.0))
            rec.opponent_limited = {str(n).lower(): float(t) for n, t in data.get("opponent_limited", {}).items()}
            for d in data.get("declines", []):
                rec.until[(str(d["opponent"]).lower(), str(d["aspect"]), str(d["value"]))] = float(d["until"])
            rec.bot_games = {str(g): float(t) for g, t in data.get("bot_games", {}).items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return cls()
        rec.prune(now)
        return rec

    def save(self, path: str | os.PathLike[str] | None) -> None:
        """Write atomically (a temporary file renamed over ``path``); no-op for None."""
        if path is None:
            return
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with self.lock:  # one writer at a time: the last state written is the latest
            write_atomic(p, json.dumps(self.to_json(), indent=1))
