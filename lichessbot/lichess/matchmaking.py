"""Matchmaking choices: whom to challenge, with which game, and the records of declines. Pure except for
:meth:`DeclineRecords.load` / :meth:`DeclineRecords.save` (one small JSON file).

The keys follow lichess-bot's ``matchmaking`` section (:class:`lichessbot.config.MatchmakingConfig`).
Sources: the lichess API spec (``POST /api/challenge/{username}``: form fields ``rated``, ``clock.limit``,
``clock.increment``, ``days``, ``variant``, ``color``; ``GET /api/bot/online``: NDJSON of users with
``perfs`` and ``tosViolation``); lichess speeds from the estimated duration ``limit + 40 * increment``
seconds (lila ``chess.Speed``: < 30 ultraBullet, < 180 bullet, < 480 blitz, < 1500 rapid, else classical).

A decline's *aspect* (``challenge_filter: fine``): ``tooFast``/``tooSlow``/``timeControl`` -> the speed,
``rated``/``casual`` -> the mode, ``standard``/``variant`` -> the variant, any other reason -> the whole
bot (the empty aspect). With ``coarse`` every decline filters the whole bot; with ``none`` nothing is kept.
Times kept in the records are wall-clock epoch seconds (they survive a restart).
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lichessbot.config import ChallengeConfig, MatchmakingConfig
from lichessbot.lichess.challenge import decide

__all__ = ["Choice", "DeclineRecords", "choose", "decline_aspect", "game_speed"]

#: Decline reason -> the aspect it objects to ("" = the whole bot).
_ASPECT_OF = {"tooFast": "speed", "tooSlow": "speed", "timeControl": "speed", "rated": "mode", "casual": "mode",
              "standard": "variant", "variant": "variant"}


def game_speed(base: int, increment: int, days: int | None = None) -> str:
    """lichess's speed of a clock of ``base`` s + ``increment`` s (lila ``chess.Speed``), or correspondence."""
    if days:
        return "correspondence"
    est = base + 40 * increment
    return ("ultraBullet" if est < 30 else "bullet" if est < 180 else "blitz" if est < 480 else "rapid"
            if est < 1500 else "classical")


@dataclass(frozen=True)
class Choice:
    """One challenge to make: ``base``/``increment`` in seconds (real-time) or ``days`` per move."""

    username: str
    variant: str
    rated: bool
    speed: str
    base: int = 0
    increment: int = 0
    days: int | None = None

    def aspects(self) -> dict[str, str]:
        return {"speed": self.speed, "mode": "rated" if self.rated else "casual", "variant": self.variant}

    def form(self) -> dict[str, Any]:
        """The form of ``POST /api/challenge/{username}`` (lichess API spec)."""
        form: dict[str, Any] = {"rated": "true" if self.rated else "false", "variant": self.variant,
                                "color": "random"}
        if self.days:
            form["days"] = self.days
        else:
            form["clock.limit"], form["clock.increment"] = self.base, self.increment
        return form


def decline_aspect(filter_type: str, reason: str, challenge: dict[str, Any]) -> tuple[str, str] | None:
    """The record a decline leaves: ``(aspect, value)`` (``("", "")`` = the whole bot) or None (filter none).

    ``challenge`` is the declined challenge as lichess sends it (``speed``, ``rated``, ``variant.key``).
    """
    if filter_type == "none":
        return None
    aspect = _ASPECT_OF.get(reason, "") if filter_type == "fine" else ""
    if aspect == "speed":
        return aspect, str(challenge.get("speed", ""))
    if aspect == "mode":
        return aspect, "rated" if challenge.get("rated") else "casual"
    if aspect == "variant":
        return aspect, str((challenge.get("variant") or {}).get("key", "standard"))
    return "", ""


class DeclineRecords:
    """Declines by opponent (lowercase name) and aspect, each until an epoch second, and the time until
    which lichess's daily limit pauses matchmaking (``paused_until``, epoch seconds)."""

    def __init__(self) -> None:
        self.until: dict[tuple[str, str, str], float] = {}
        self.paused_until = 0.0

    def add(self, name: str, aspect: tuple[str, str], until: float) -> None:
        key = (name.lower(), *aspect)
        self.until[key] = max(until, self.until.get(key, 0.0))

    def blocks(self, name: str, choice_aspects: dict[str, str], now: float) -> bool:
        """Whether a decline still standing filters a challenge to ``name`` with these aspects."""
        n = name.lower()
        if self.until.get((n, "", ""), 0.0) > now:
            return True
        return any(self.until.get((n, a, v), 0.0) > now for a, v in choice_aspects.items())

    def prune(self, now: float) -> None:
        self.until = {k: t for k, t in self.until.items() if t > now}

    def to_json(self) -> dict[str, Any]:
        return {"paused_until": self.paused_until,
                "declines": [{"opponent": n, "aspect": a, "value": v, "until": t}
                             for (n, a, v), t in sorted(self.until.items())]}

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None, now: float) -> DeclineRecords:
        """Records from ``path`` (missing or unreadable file: empty records; expired entries dropped)."""
        rec = cls()
        if path is None:
            return rec
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            rec.paused_until = float(data.get("paused_until", 0.0))
            for d in data.get("declines", []):
                rec.until[(str(d["opponent"]).lower(), str(d["aspect"]), str(d["value"]))] = float(d["until"])
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
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".matchmaking-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, indent=1)
        os.replace(tmp, p)


def _rating(bot: dict[str, Any], speed: str, variant: str) -> tuple[int, int]:
    """(rating, games) of ``bot`` in the perf of the game (variants other than standard: the variant)."""
    perf = (bot.get("perfs") or {}).get(speed if variant == "standard" else variant) or {}
    return int(perf.get("rating", 0) or 0), int(perf.get("games", 0) or 0)


def choose(mm: MatchmakingConfig, ch: ChallengeConfig, me: dict[str, Any], online: list[dict[str, Any]],
           records: DeclineRecords, now: float, rng: random.Random) -> tuple[Choice | None, str]:
    """Pick a game and an opponent among ``online`` bots; returns ``(choice, why)`` (choice None: why not).

    Rules, in order: the game (variant, mode, clock or days drawn from the config) must pass our own
    challenge filter; a candidate is another bot (not us), not ``disabled``, not in ``block_list``,
    without ``tosViolation`` unless allowed, with games in the perf, rated in range (``opponent_rating_
    difference`` around our rating in that perf when set, else ``opponent_min_rating``..``opponent_max_rating``),
    and not filtered by a standing decline. Among candidates: uniform, or weighted by rating for
    ``rating_preference`` high/low.
    """
    variants = [v for v in ch.variants if v in ("standard", "chess960")]
    variant = mm.challenge_variant if mm.challenge_variant != "random" else (rng.choice(variants) if variants
                                                                              else "standard")
    mode = mm.challenge_mode if mm.challenge_mode != "random" else rng.choice([m for m in ch.modes] or ["casual"])
    realtime = bool(mm.challenge_initial_time and mm.challenge_increment)
    corr = bool(mm.challenge_days)
    if realtime and (not corr or rng.random() < 0.5):
        base, inc, days = rng.choice(mm.challenge_initial_time), rng.choice(mm.challenge_increment), None
    else:
        base, inc, days = 0, 0, rng.choice(mm.challenge_days)
    speed = game_speed(base, inc, days)
    tc = ({"type": "correspondence", "daysPerTurn": days} if days else
          {"type": "clock", "limit": base, "increment": inc})
    probe = {"challenger": {"name": "", "title": "BOT"}, "variant": {"key": variant}, "speed": speed,
             "rated": mode == "rated", "timeControl": tc}
    verdict = decide(ch.model_copy(update={"allow_list": [], "block_list": []}), probe, 0)
    if not verdict.accept:
        return None, f"our own filter declines {variant} {speed} {mode}: {verdict.why}"
    if mm.opponent_rating_difference is not None:
        mine, _ = _rating(me, speed, variant)
        lo, hi = mine - mm.opponent_rating_difference, mine + mm.opponent_rating_difference
    else:
        lo, hi = mm.opponent_min_rating, mm.opponent_max_rating
    choice_aspects = {"speed": speed, "mode": mode, "variant": variant}
    blocked = {u.lower() for u in mm.block_list}
    myname = str(me.get("username") or me.get("id") or "").lower()
    cands: list[tuple[dict[str, Any], int]] = []
    for bot in online:
        name = str(bot.get("username") or bot.get("id") or "")
        rating, games = _rating(bot, speed, variant)
        if (not name or name.lower() == myname or name.lower() in blocked or bot.get("disabled")
                or (bot.get("tosViolation") and not mm.opponent_allow_tos_violation) or games <= 0
                or not lo <= rating <= hi or records.blocks(name, choice_aspects, now)):
            continue
        cands.append((bot, rating))
    if not cands:
        return None, f"no suitable bot online for {variant} {speed} {mode} (rating {lo}..{hi}, {len(online)} online)"
    if mm.rating_preference == "high":
        weights = [r - lo + (hi - lo) + 1 for _, r in cands]  # hi twice as likely as lo
    elif mm.rating_preference == "low":
        weights = [hi - r + (hi - lo) + 1 for _, r in cands]
    else:
        weights = [1] * len(cands)
    bot = rng.choices([b for b, _ in cands], weights=weights)[0]
    name = str(bot.get("username") or bot.get("id"))
    return Choice(name, variant, mode == "rated", speed, base, inc, days), f"{len(cands)} suitable"
