"""lila's rate limits on the embedded lichess (lila modules/memo/src/main/RateLimit.scala: a window of ``duration``
that opens at a key's first use and allows ``credits`` uses until it closes; then the next use opens a new one).

The limits a client of the Bot and Board APIs meets (lila modules/web/src/main/Limiters.scala for the first two;
the bot-game one as devtools/lila/botlimit.py answers it):

* the event stream (``GET /api/stream/event``): 30 connections per 10 minutes (Limiters ``eventStream``:
  ``RateLimit[Bearer](30, 10.minutes, "api.stream.event.bearer")``: per token; here per account);
* challenges created (``POST /api/challenge/{user}``): 25 a minute and 200 a day per account (Limiters
  ``challengeUser``: ``RateLimit.composite[UserId]`` key ``challenge.create.user``, ``("fast", 5 * 5, 1.minute)``,
  ``("slow", 40 * 5, 1.day)``; here two limiters);
* games between two bots: 100 a day per bot (lila modules/bot/src/main/BotLimit.scala, key ``bot.vsBot.day``).

Over a limit the answer is a 429 with lila's JSON (app/controllers ResponseBuilder ``rateLimitedJson``:
``{"error": "Too many requests. Try again later."}``; the bot-game limit's own message and ``ratelimit``). No I/O;
the server calls it under its lock. Times are ``time.monotonic()`` seconds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["BOT_GAMES", "CHALLENGES_PER_DAY", "CHALLENGES_PER_MINUTE", "EVENT_STREAMS", "RATE_LIMITED", "Limiter",
           "bot_games_refusal"]

#: lila's answer to a request over a limit (ResponseBuilder ``rateLimitedMsg``).
RATE_LIMITED = {"error": "Too many requests. Try again later."}
DAY = 86_400.0


@dataclass
class Limiter:
    """``credits`` uses per key in a window of ``window_s`` seconds opened by the key's first use."""

    credits: int
    window_s: float
    key: str
    _used: dict[str, tuple[int, float]] = field(default_factory=dict)  # key -> (uses, the window's end)

    def seconds_left(self, key: str, now: float) -> int:
        """Seconds until ``key``'s window closes (0: no window open)."""
        used = self._used.get(key)
        return 0 if used is None or now >= used[1] else max(1, int(used[1] - now))

    def allowed(self, key: str, now: float) -> bool:
        """Whether ``key`` may use one more credit at ``now`` (without spending it)."""
        uses, end = self._used.get(key, (0, 0.0))
        return now >= end or uses < self.credits

    def spend(self, key: str, now: float) -> bool:
        """Spend one credit of ``key``: True, or False when its window has none left."""
        uses, end = self._used.get(key, (0, 0.0))
        if now >= end:
            uses, end = 0, now + self.window_s
        if uses >= self.credits:
            return False
        self._used[key] = (uses + 1, end)
        return True


#: The event stream: 30 per 10 minutes per account (lila Limiters ``eventStream``).
EVENT_STREAMS = (30, 600.0, "api.stream.event")
#: Challenges created per account: 25 a minute, 200 a day (lila Limiters ``challengeUser``).
CHALLENGES_PER_MINUTE, CHALLENGES_PER_DAY = (25, 60.0, "challenge.create.minute"), (200, DAY, "challenge.create.day")
#: Games against bots per bot and day (lila BotLimit: ``RateLimit[UserId](100, 1.day, "bot.vsBot.day")``).
BOT_GAMES = (100, DAY, "bot.vsBot.day")


def bot_games_refusal(limiter: Limiter, key: str, now: float) -> dict[str, Any]:
    """lila BotLimit's 429 body (``JsonLimited``) for a bot over its games against bots."""
    return {"error": f"You played {limiter.credits} games against other bots today, please wait before challenging "
                     "another bot.", "ratelimit": {"key": limiter.key, "seconds": limiter.seconds_left(key, now)}}
