"""Matchmaking choices: whom to challenge, with which game, and the records of declines. Pure except for
:meth:`DeclineRecords.load` / :meth:`DeclineRecords.save` (one small JSON file).

The keys follow lichess-bot's ``matchmaking`` section (:class:`lichessbot.config.MatchmakingConfig`).
Sources: the lichess API spec (``POST /api/challenge/{username}``: form fields ``rated``, ``clock.limit``,
``clock.increment``, ``days``, ``variant``, ``color``; ``GET /api/bot/online``: NDJSON of users with
``perfs`` and ``tosViolation``); lichess speeds from the estimated duration ``limit + 40 * increment``
seconds (lila ``chess.Speed``: < 30 ultraBullet, < 180 bullet, < 480 blitz, < 1500 rapid, else classical).

A decline's *aspect* (``challenge_filter: fine``): ``tooFast`` -> that speed and every faster one
(``speed_up_to``), ``tooSlow`` -> that speed and every slower one (``speed_from``), ``timeControl`` -> that
speed (a correspondence decline always filters correspondence only), ``rated``/``casual`` -> the mode,
``standard``/``variant`` -> the variant, any other reason -> the whole bot (the empty aspect). With
``coarse`` every decline filters the whole bot; with ``none`` nothing is kept. Times kept in the records
are wall-clock epoch seconds (they survive a restart).

The same file keeps the games against bots started lately (``challenge.max_bot_games_per_day`` counts
those of the current UTC day).
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lichessbot.config import ChallengeConfig, MatchmakingConfig
from lichessbot.lichess.challenge import SPEEDS, Verdict, decide

__all__ = ["Choice", "DeclineRecords", "choose", "decline_aspect", "game_speed", "utc_day"]

#: Decline reason -> the aspect it objects to ("" = the whole bot).
_ASPECT_OF = {"tooFast": "speed_up_to", "tooSlow": "speed_from", "timeControl": "speed", "rated": "mode",
              "casual": "mode", "standard": "variant", "variant": "variant"}
#: Seconds a started bot game stays in the records (two days: today's count survives any time zone).
BOT_GAMES_KEPT = 2 * 86400.0


def utc_day(epoch: float) -> str:
    """The UTC date of epoch second ``epoch``, as YYYY-MM-DD."""
    return time.strftime("%Y-%m-%d", time.gmtime(epoch))


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
    if aspect.startswith("speed"):
        speed = str(challenge.get("speed", ""))
        return ("speed" if speed not in SPEEDS or speed == "correspondence" else aspect), speed
    if aspect == "mode":
        return aspect, "rated" if challenge.get("rated") else "casual"
    if aspect == "variant":
        return aspect, str((challenge.get("variant") or {}).get("key", "standard"))
    return "", ""


class DeclineRecords:
    """Declines by opponent (lowercase name) and aspect, each until an epoch second; the time until
    which lichess's daily limit pauses matchmaking (``paused_until``, epoch seconds); and the games
    against bots started in the last two days (``bot_games``: game id -> epoch second). Shared by the
    matchmaker and the service's challenge rules: every method takes ``lock``."""

    def __init__(self) -> None:
        self.until: dict[tuple[str, str, str], float] = {}
        self.paused_until = 0.0
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
            if self.until.get((n, "", ""), 0.0) > now:
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
            self.bot_games = {g: t for g, t in self.bot_games.items() if now - t < BOT_GAMES_KEPT}

    def count_bot_game(self, game_id: str, now: float) -> bool:
        """Record a game against a bot started at epoch second ``now``; False if it was already counted."""
        with self.lock:
            if game_id in self.bot_games:
                return False
            self.bot_games[game_id] = now
            return True

    def bot_games_on(self, now: float) -> int:
        """Games against bots started on the UTC day of epoch second ``now``."""
        day = utc_day(now)
        with self.lock:
            return sum(1 for t in self.bot_games.values() if utc_day(t) == day)

    def to_json(self) -> dict[str, Any]:
        with self.lock:
            return {"paused_until": self.paused_until,
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
            for d in data.get("declines", []):
                rec.until[(str(d["opponent"]).lower(), str(d["aspect"]), str(d["value"]))] = float(d["until"])
            rec.bot_games = {str(g): float(t) for g, t in (data.get("bot_games") or {}).items()}
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
            fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".matchmaking-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.to_json(), f, indent=1)
            os.replace(tmp, p)


def _rating(bot: dict[str, Any], speed: str, variant: str) -> tuple[int, int]:
    """(rating, games) of ``bot`` in the perf of the game (variants other than standard: the variant)."""
    perf = (bot.get("perfs") or {}).get(speed if variant == "standard" else variant) or {}
    return int(perf.get("rating", 0) or 0), int(perf.get("games", 0) or 0)


def choose(mm: MatchmakingConfig, ch: ChallengeConfig, me: dict[str, Any], online: list[dict[str, Any]],
           records: DeclineRecords, now: float, rng: random.Random,
           busy_with: Collection[str] = ()) -> tuple[Choice | None, str]:
    """Pick a game and an opponent among ``online`` bots; returns ``(choice, why)`` (choice None: why not).

    Rules, in order: the variant and mode are drawn from the config; the time control is drawn among those
    of the config that pass our own challenge filter (real-time or correspondence with equal chances when
    both have one); a candidate is another bot (not us), not ``disabled``, not in ``block_list`` (nor in
    ``challenge.block_list`` with ``include_challenge_block_list``), not in ``busy_with`` (lowercase names
    we play ``max_simultaneous_games_per_user`` games with), without ``tosViolation`` unless allowed, with
    games in the perf, rated in range (``opponent_rating_difference`` around our rating in that perf when
    set, else ``opponent_min_rating``..``opponent_max_rating``), and not filtered by a standing decline.
    Among candidates: uniform, or weighted by rating for ``rating_preference`` high/low.
    """
    variants = [v for v in ch.variants if v in ("standard", "chess960")]
    variant = mm.challenge_variant if mm.challenge_variant != "random" else (rng.choice(variants) if variants
                                                                              else "standard")
    mode = mm.challenge_mode if mm.challenge_mode != "random" else rng.choice([m for m in ch.modes] or ["casual"])
    own = ch.model_copy(update={"allow_list": [], "block_list": []})
    first_no: Verdict | None = None

    def ours(base: int, inc: int, days: int | None) -> bool:
        nonlocal first_no
        tc = ({"type": "correspondence", "daysPerTurn": days} if days else
              {"type": "clock", "limit": base, "increment": inc})
        probe = {"challenger": {"name": "", "title": "BOT"}, "variant": {"key": variant},
                 "speed": game_speed(base, inc, days), "rated": mode == "rated", "timeControl": tc}
        verdict = decide(own, probe, 0)
        first_no = first_no or (None if verdict.accept else verdict)
        return verdict.accept

    realtime = [(b, i) for b in mm.challenge_initial_time for i in mm.challenge_increment if ours(b, i, None)]
    corr = [d for d in mm.challenge_days if ours(0, 0, d)]
    if not realtime and not corr:
        why = first_no.why if first_no is not None else "no time control"
        return None, f"our own filter declines every {variant} {mode} game of these settings: {why}"
    if realtime and (not corr or rng.random() < 0.5):
        (base, inc), days = rng.choice(realtime), None
    else:
        base, inc, days = 0, 0, rng.choice(corr)
    speed = game_speed(base, inc, days)
    if mm.opponent_rating_difference is not None:
        mine, _ = _rating(me, speed, variant)
        lo, hi = mine - mm.opponent_rating_difference, mine + mm.opponent_rating_difference
    else:
        lo, hi = mm.opponent_min_rating, mm.opponent_max_rating
    choice_aspects = {"speed": speed, "mode": mode, "variant": variant}
    blocked = {u.lower() for u in mm.block_list} | {u.lower() for u in busy_with}
    if mm.include_challenge_block_list:
        blocked |= {u.lower() for u in ch.block_list}
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
