"""lila's bot-vs-bot daily limit in the test server (modules/bot/src/main/BotLimit.scala), as lila answers it.

* lila counts, for each bot, the games started where every player is a bot, in a window of one day that
  opens at the first counted game (``RateLimit[UserId](100, 1.day, "bot.vsBot.day")``);
* over our limit (``bot_games_per_day``), accepting a bot's challenge or challenging a bot is answered
  **429** ``JsonLimited``: ``{"error": "You played 100 games against other bots today, please wait before
  challenging another bot.", "ratelimit": {"key": "bot.vsBot.day", "seconds": N}}`` (N: until the window
  ends; no Retry-After);
* over the opponent's (``limited_bots``: lowercase name -> epoch second its window ends), the answer is a
  **400** ``{"error": "<name> played 100 games against other bots today, please wait until <ISO date> to
  challenge them."}`` (lila ``OpponentLimit``, no ``ratelimit``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from devtools.lila.base import ServerBase

__all__ = ["BotLimitRoutes", "DAY"]

#: lila's window, seconds (BotLimit: ``1.day``).
DAY = 86400.0


class BotLimitRoutes(ServerBase):
    """Mixin of :class:`devtools.lila.server.FakeLichess`; every method runs under its lock."""

    def _init_bot_limit(self) -> None:
        self.bot_games_per_day: int | None = None     # our limit (lila: 100); None: no limit
        self.bot_game_starts: list[float] = []        # epoch seconds of the bot-vs-bot games started
        self.limited_bots: dict[str, float] = {}      # opponent (lowercase) -> epoch second its limit ends
        self.bot_limit_refusals = 0                   # 429s and 400s answered for these limits

    def _accept_limit(self, ch: Any) -> tuple[int, dict[str, Any]] | None:
        """The refusal of accepting challenge ``ch`` (a bot's) for a bot-game limit, or None."""
        return self._bot_limit_answer(ch.challenger.username) if ch.challenger.bot else None

    def _count_bot_game(self) -> None:
        self.bot_game_starts.append(time.time())

    def _window_start(self, now: float) -> float | None:
        """The epoch second lila's current window opened (its first game; the next game after a window closes opens
        the next one: memo RateLimit's ``clearAt``), or None when no window is open at ``now``."""
        start: float | None = None
        for t in sorted(self.bot_game_starts):
            if start is None or t >= start + DAY:
                start = t
        return None if start is None or now >= start + DAY else start

    def _bot_limit_answer(self, opponent: str) -> tuple[int, dict[str, Any]] | None:
        """The refusal of a game against bot ``opponent`` now, or None (allowed)."""
        now = time.time()
        start = self._window_start(now)
        window = [] if start is None else [t for t in self.bot_game_starts if start <= t <= now]
        if self.bot_games_per_day is not None and len(window) >= self.bot_games_per_day:
            self.bot_limit_refusals += 1
            ends = (start if start is not None else now) + DAY  # no window open: one would open now
            return 429, {"error": f"You played {self.bot_games_per_day} games against other bots today, please "
                                  "wait before challenging another bot.",
                         "ratelimit": {"key": "bot.vsBot.day", "seconds": max(1, int(ends - now))}}
        until = self.limited_bots.get(opponent.lower(), 0.0)
        if until > now:
            self.bot_limit_refusals += 1
            iso = datetime.fromtimestamp(until, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            return 400, {"error": f"{opponent} played 100 games against other bots today, please wait until "
                                  f"{iso} to challenge them."}
        return None
