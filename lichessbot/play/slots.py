"""The bot's game slots: which games run, which accepted challenges wait for their game, and whether
one more game (or one more against a bot) fits ``challenge.concurrency`` and the challenge rules.

Every field here is guarded by ``_lock``, which the service also holds for its game tables, so that a
decision and the reservation it makes are one step: a burst of challenges never exceeds concurrency.
"""

from __future__ import annotations

import threading
import time

from lichessbot.config import BotConfig
from lichessbot.play.challenge_rules import ChallengeRules

__all__ = ["PENDING_TTL", "GameSlots"]

#: Seconds an accepted challenge counts as a running game while its gameStart is awaited.
PENDING_TTL = 30.0


class GameSlots:
    """Slots of real-time games (correspondence games hold none); the base of the bot service."""

    config: BotConfig
    rules: ChallengeRules

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running: set[str] = set()           # from gameStart / gameFinish (or the server's list)
        self._pending: dict[str, float] = {}     # accepted challenge id -> monotonic time
        self.correspondence: set[str] = set()    # correspondence games (no slot)
        self._started_at: dict[str, float] = {}  # game id -> monotonic time of its gameStart
        self._finished: set[str] = set()         # games seen over: never restarted

    def busy(self) -> int:
        """Games running plus accepted challenges not started yet."""
        now = time.monotonic()
        with self._lock:
            self._pending = {k: t for k, t in self._pending.items() if now - t < PENDING_TTL}
            return len(self.running | set(self._pending))

    def reserve(self, key: str, bot: str = "") -> None:
        """Hold a slot for ``key`` (a challenge of ours to the bot named ``bot``) for at most PENDING_TTL
        seconds."""
        with self._lock:
            self._pending[key] = time.monotonic()
            self.rules.note(key, bot, True)

    def release(self, key: str) -> None:
        with self._lock:
            self._pending.pop(key, None)

    def _live(self) -> tuple[set[str], set[str]]:
        """(real-time games running or accepted, every game running or accepted); call under the lock."""
        now = time.monotonic()
        self._pending = {k: t for k, t in self._pending.items() if now - t < PENDING_TTL}
        realtime = self.running | set(self._pending)
        return realtime, realtime | self.correspondence

    def _reserve_bot_slot(self, key: str) -> str | None:
        """Hold a slot for ``key`` (a challenge of ours, to a bot) if concurrency and the challenge rules
        allow a game against a bot now, in one step under the lock (an incoming challenge accepted
        meanwhile cannot take it too); else why not."""
        with self._lock:
            realtime, live = self._live()
            if len(realtime) >= self.config.challenge.concurrency:
                return f"{len(realtime)} games running (concurrency {self.config.challenge.concurrency})"
            held = self.rules.bot_challenge_blocked(realtime, live)
            if held is None:
                self._pending[key] = time.monotonic()
                self.rules.note(key, "", True)
            return held

    def _busy_with(self) -> set[str]:
        """Lowercase names of the users we play max_simultaneous_games_per_user games with."""
        with self._lock:
            return self.rules.names_at_limit(self._live()[1])
