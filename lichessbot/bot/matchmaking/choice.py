"""Matchmaking choices: whom to challenge, with which game, and what a decline of ours filters. Pure.

The keys follow lichess-bot's ``matchmaking`` section (:class:`lichessbot.config.MatchmakingConfig`).
Sources: the lichess API spec (``POST /api/challenge/{username}``: form fields ``rated``, ``clock.limit``,
``clock.increment``, ``days``, ``variant``, ``color``; ``GET /api/bot/online``: NDJSON of users with
``perfs`` and ``tosViolation``); lichess speeds from the estimated duration ``limit + 40 * increment``
seconds (lila ``chess.Speed``: < 30 ultraBullet, < 180 bullet, < 480 blitz, < 1500 rapid, else classical).

A decline's *aspect* (``challenge_filter: fine``): ``tooFast`` -> that speed and every faster one
(``speed_up_to``), ``tooSlow`` -> that speed and every slower one (``speed_from``), ``timeControl`` -> that
speed (a correspondence decline always filters correspondence only), ``rated``/``casual`` -> the mode,
``standard``/``variant`` -> the variant, any other reason -> the whole bot (the empty aspect). With
``coarse`` every decline filters the whole bot; with ``none`` nothing is kept.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass

from lichessbot.bot.challenges.filter import SPEEDS, Verdict, decide
from lichessbot.bot.challenges.records import DeclineRecords
from lichessbot.config import ChallengeConfig, MatchmakingConfig
from lichessbot.lichess.events import Account, Challenge, DeclineReason, TimeControl, User

__all__ = ["Choice", "choose", "decline_aspect", "game_speed"]

#: Decline reason -> the aspect it objects to (any other reason: "", the whole bot).
_ASPECT_OF = {DeclineReason.TOO_FAST: "speed_up_to", DeclineReason.TOO_SLOW: "speed_from",
              DeclineReason.TIME_CONTROL: "speed", DeclineReason.RATED: "mode", DeclineReason.CASUAL: "mode",
              DeclineReason.STANDARD: "variant", DeclineReason.VARIANT: "variant"}


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

    def form(self) -> dict[str, str]:
        """The form of ``POST /api/challenge/{username}`` (lichess API spec)."""
        form = {"rated": "true" if self.rated else "false", "variant": self.variant, "color": "random"}
        if self.days:
            form["days"] = str(self.days)
        else:
            form["clock.limit"], form["clock.increment"] = str(self.base), str(self.increment)
        return form


def decline_aspect(filter_type: str, reason: DeclineReason, challenge: Challenge) -> tuple[str, str] | None:
    """The record a decline leaves: ``(aspect, value)`` (``("", "")`` = the whole bot) or None (filter none).

    ``challenge`` is the declined challenge as lichess sends it back (its speed, mode and variant).
    """
    if filter_type == "none":
        return None
    aspect = _ASPECT_OF.get(reason, "") if filter_type == "fine" else ""
    if aspect.startswith("speed"):
        speed = challenge.speed
        return ("speed" if speed not in SPEEDS or speed == "correspondence" else aspect), speed
    if aspect == "mode":
        return aspect, "rated" if challenge.rated else "casual"
    if aspect == "variant":
        return aspect, challenge.variant
    return "", ""


def _rating(bot: Account, speed: str, variant: str) -> tuple[int, int]:
    """(rating, games) of ``bot`` in the perf of the game (variants other than standard: the variant)."""
    perf = bot.perf(speed if variant == "standard" else variant)
    return perf.rating, perf.games


def choose(mm: MatchmakingConfig, ch: ChallengeConfig, me: Account | None, online: list[Account],
           records: DeclineRecords, now: float, rng: random.Random,
           busy_with: Collection[str] = ()) -> tuple[Choice | None, str]:
    """Pick a game and an opponent among ``online`` bots; returns ``(choice, why)`` (choice None: why not).

    Rules, in order: the variant and mode are drawn from the config; the time control is drawn among those
    of the config that pass our own challenge filter (real-time or correspondence with equal chances when
    both have one); a candidate is another bot (not us: ``me``, None when our account could not be read),
    not ``disabled``, not in ``block_list`` (nor in ``challenge.block_list`` with
    ``include_challenge_block_list``), not in ``busy_with`` (lowercase names we play
    ``max_simultaneous_games_per_user`` games with), without ``tosViolation`` unless allowed, with games in
    the perf, rated in range (``opponent_rating_difference`` around our rating in that perf when set, else
    ``opponent_min_rating``..``opponent_max_rating``), and not filtered by a standing decline. Among
    candidates: those whose distance from our rating is nearest ``target_rating_diff`` when set (BotLi), then
    uniform, or weighted by rating for ``rating_preference`` high/low.
    """
    variants = [v for v in ch.variants if v in ("standard", "chess960")]
    variant = mm.challenge_variant if mm.challenge_variant != "random" else (rng.choice(variants) if variants
                                                                              else "standard")
    mode = mm.challenge_mode if mm.challenge_mode != "random" else rng.choice([m for m in ch.modes] or ["casual"])
    own = ch.model_copy(update={"allow_list": [], "block_list": []})
    first_no: Verdict | None = None

    def ours(base: int, inc: int, days: int | None) -> bool:
        nonlocal first_no
        tc = TimeControl("correspondence", days_per_turn=days) if days else TimeControl("clock", base, inc)
        probe = Challenge(id="", challenger=User("", "", title="BOT"), variant=variant,
                          speed=game_speed(base, inc, days), rated=mode == "rated", time_control=tc)
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
        mine = _rating(me, speed, variant)[0] if me is not None else 0
        lo, hi = mine - mm.opponent_rating_difference, mine + mm.opponent_rating_difference
    else:
        lo, hi = mm.opponent_min_rating, mm.opponent_max_rating
    choice_aspects = {"speed": speed, "mode": mode, "variant": variant}
    blocked = {u.lower() for u in mm.block_list} | {u.lower() for u in busy_with}
    if mm.include_challenge_block_list:
        blocked |= {u.lower() for u in ch.block_list}
    myname = me.username.lower() if me is not None else ""
    cands: list[tuple[Account, int]] = []
    for bot in online:
        name = bot.username
        rating, games = _rating(bot, speed, variant)
        if (not name or name.lower() == myname or name.lower() in blocked or bot.disabled
                or (bot.tos_violation and not mm.opponent_allow_tos_violation) or games <= 0
                or not lo <= rating <= hi or records.blocks(name, choice_aspects, now)):
            continue
        cands.append((bot, rating))
    if not cands:
        return None, f"no suitable bot online for {variant} {speed} {mode} (rating {lo}..{hi}, {len(online)} online)"
    if mm.target_rating_diff is not None and me is not None:  # BotLi: the bot nearest the target distance first
        mine = _rating(me, speed, variant)[0]
        best = min(abs(abs(r - mine) - mm.target_rating_diff) for _, r in cands)
        cands = [(b, r) for b, r in cands if abs(abs(r - mine) - mm.target_rating_diff) == best]
    if mm.rating_preference == "high":
        weights = [r - lo + (hi - lo) + 1 for _, r in cands]  # hi twice as likely as lo
    elif mm.rating_preference == "low":
        weights = [hi - r + (hi - lo) + 1 for _, r in cands]
    else:
        weights = [1] * len(cands)
    bot = rng.choices([b for b, _ in cands], weights=weights)[0]
    return Choice(bot.username, variant, mode == "rated", speed, base, inc, days), f"{len(cands)} suitable"
