"""Which challenges to accept: a pure function of the config, the challenge and the number of games.

The rules follow lichess-bot's ``challenge`` section (same key names and meanings). A decline carries
one of lichess's reason keys (lichess ``modules/challenge/src/main/DeclineReason.scala``): generic, later,
tooFast, tooSlow, timeControl, rated, casual, standard, variant, noBot, onlyBot.

A challenge is a dict as the event stream sends it (``{"type": "challenge", "challenge": {...}}``; pass
the inner dict): ``challenger`` {id, name, title, rating}, ``variant`` {key}, ``rated``, ``speed``,
``timeControl`` {type: clock|correspondence|unlimited, limit (s), increment (s), daysPerTurn}, and
``compat`` {bot, board} (the event stream sends it beside the challenge; the service copies it in).
lichess refuses bots in UltraBullet (``compat.bot`` false): such a challenge is declined, never accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lichessbot.config import ChallengeConfig

__all__ = ["DECLINE_REASONS", "SPEEDS", "Verdict", "challenger_is_bot", "decide", "queue_order"]

#: lichess's decline reason keys (the API's ``reason`` values).
DECLINE_REASONS = (
    "generic", "later", "tooFast", "tooSlow", "timeControl", "rated", "casual", "standard", "variant",
    "noBot", "onlyBot",
)
#: lichess speeds from fastest to slowest.
SPEEDS = ("ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence")


@dataclass(frozen=True)
class Verdict:
    """``accept`` True, or False with ``reason`` (a lichess decline key) and a readable ``why``."""

    accept: bool
    reason: str | None = None
    why: str = ""

    @staticmethod
    def yes() -> Verdict:
        return Verdict(True)

    @staticmethod
    def no(reason: str, why: str) -> Verdict:
        assert reason in DECLINE_REASONS, reason
        return Verdict(False, reason, why)


def _speed_reason(speed: str, allowed: list[str]) -> str:
    """tooFast if every allowed speed is slower, tooSlow if every allowed speed is faster, else timeControl."""
    if speed not in SPEEDS or not allowed:
        return "timeControl"
    i = SPEEDS.index(speed)
    ranks = [SPEEDS.index(s) for s in allowed]
    if all(r > i for r in ranks):
        return "tooFast"
    if all(r < i for r in ranks):
        return "tooSlow"
    return "timeControl"


def decide(config: ChallengeConfig, challenge: dict[str, Any], running_games: int = 0) -> Verdict:
    """Accept or decline ``challenge`` given ``running_games`` (games started or accepted, not finished).

    Checks, in order: block/allow lists (generic), bot rules (noBot, onlyBot), variant (standard when
    only standard is played, else variant), bot compatibility (UltraBullet: tooFast; ``compat.bot``
    false: generic), speed (tooFast/tooSlow/timeControl), base and increment in seconds (tooFast below
    the minimum, tooSlow above the maximum; bullet without increment from a bot with
    ``bullet_requires_increment``: timeControl), days per move of correspondence (min_days/max_days;
    unlimited games only with ``max_days: unlimited``, else tooSlow), mode (rated challenge refused ->
    casual, casual refused -> rated), rating (generic), and last concurrency (later). Never raises on
    missing fields: a field that is absent is treated as the most common value.
    """
    challenger = challenge.get("challenger") or {}
    name = str(challenger.get("name") or challenger.get("id") or "").lower()
    if name in {u.lower() for u in config.block_list}:
        return Verdict.no("generic", f"{name} is in block_list")
    if config.allow_list and name not in {u.lower() for u in config.allow_list}:
        return Verdict.no("generic", f"{name} is not in allow_list")

    is_bot = challenger.get("title") == "BOT"
    if is_bot and not config.accept_bot:
        return Verdict.no("noBot", "bots are not accepted (accept_bot: false)")
    if not is_bot and config.only_bot:
        return Verdict.no("onlyBot", "only bots are accepted (only_bot: true)")

    variant = (challenge.get("variant") or {}).get("key", "standard")
    if variant not in config.variants:
        reason = "standard" if config.variants == ["standard"] else "variant"
        return Verdict.no(reason, f"variant {variant} is not in {config.variants}")

    speed = challenge.get("speed", "")
    compat = challenge.get("compat") or {}
    if speed == "ultraBullet" or compat.get("bot") is False:
        return Verdict.no("tooFast" if speed == "ultraBullet" else "generic",
                          f"lichess does not let bots play this game (speed {speed}, compat {compat or None})")
    if speed not in config.time_controls:
        return Verdict.no(_speed_reason(speed, list(config.time_controls)),
                          f"speed {speed} is not in {config.time_controls}")
    tc = challenge.get("timeControl") or {}
    if tc.get("type") == "clock":
        base, inc = int(tc.get("limit", 0)), int(tc.get("increment", 0))
        if config.bullet_requires_increment and is_bot and speed == "bullet" and inc == 0:
            return Verdict.no("timeControl", f"{base}+0: bullet from a bot needs an increment "
                                             "(bullet_requires_increment)")
        if base < config.min_base or inc < config.min_increment:
            return Verdict.no("tooFast", f"{base}+{inc} is below min_base/min_increment")
        if base > config.max_base or inc > config.max_increment:
            return Verdict.no("tooSlow", f"{base}+{inc} is above max_base/max_increment")
    elif tc.get("type") == "correspondence":
        days = int(tc.get("daysPerTurn", 0) or 0)
        if days < config.min_days:
            return Verdict.no("tooFast", f"{days} days per move is below min_days {config.min_days}")
        if config.max_days != "unlimited" and days > config.max_days:
            return Verdict.no("tooSlow", f"{days} days per move is above max_days {config.max_days}")
    elif tc.get("type") == "unlimited":
        if config.max_days != "unlimited":
            return Verdict.no("tooSlow", "unlimited games are declined (max_days is not 'unlimited')")
    else:
        return Verdict.no("timeControl", f"time control {tc.get('type')} is not played")

    rated = bool(challenge.get("rated", False))
    mode = "rated" if rated else "casual"
    if mode not in config.modes:
        return Verdict.no("casual" if rated else "rated", f"{mode} games are not in {config.modes}")

    rating = challenger.get("rating")
    if rating is not None:
        if config.min_rating is not None and rating < config.min_rating:
            return Verdict.no("generic", f"rating {rating} is below min_rating {config.min_rating}")
        if config.max_rating is not None and rating > config.max_rating:
            return Verdict.no("generic", f"rating {rating} is above max_rating {config.max_rating}")

    if running_games >= config.concurrency:
        return Verdict.no("later", f"{running_games} games running (concurrency {config.concurrency})")
    return Verdict.yes()


def challenger_is_bot(challenge: dict[str, Any]) -> bool:
    """Whether the challenger is a BOT account (its ``title``)."""
    return (challenge.get("challenger") or {}).get("title") == "BOT"


def queue_order(challenge: dict[str, Any], arrival: int, sort_by: str, preference: str) -> tuple[int, int, int]:
    """Sort key of a challenge waiting for a slot (smallest first; lichess-bot's ``sort_by`` and
    ``preference``): with preference human (bot), humans (bots) come first; then, with sort_by best, the
    higher challenger rating (an unrated challenger counts as 0); then the earlier ``arrival``."""
    bot = challenger_is_bot(challenge)
    group = (1 if bot else 0) if preference == "human" else (0 if bot else 1) if preference == "bot" else 0
    rating = int((challenge.get("challenger") or {}).get("rating") or 0) if sort_by == "best" else 0
    return group, -rating, arrival
