"""The matchmaking side of the soak (``python -m devtools.soak --matchmaking``): the test server's online bots
and their habits, the challenges that come in while the bot plays, the config, and the figures.

The bot (our fake account is rated 2000 in every perf) plays ``--games`` games at once, one slot kept for
humans, at most one game per opponent, at most two challenges a minute taken from one bot; it challenges
bots within 600 points of its rating (1400..2600), with the base settings (casual) or an override (rated),
and keeps a decline for 36 s. Every 30 s a challenge comes in (queued up to 60 s, humans first): a human,
an online bot, or a rematch offer of a finished game. No concurrency breach means the server never saw
more games at once than ``concurrency``, more games against bots than ``concurrency -
games_reserved_for_humans``, or more than one game with one opponent.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Any

from devtools.lila import FakeLichess, random_mover
from devtools.lila.matchmaking import ACCEPT, IGNORE
from lichessbot.bot.service.service import BotService
from lichessbot.config.base import ConfigData

__all__ = ["Figures", "ROSTER", "config", "figures", "incoming", "start"]

#: A soak's figures: JSON-able values by name (printed by ``devtools.soak``).
Figures = dict[str, Any]


def _habit(habit: str, rng: random.Random) -> Any:
    """The policy of a habit: "sometimes" accepts 60 % of challenges (else later), "rated only" declines
    casual ones with ``rated``; any other habit is the fake server's policy as it is."""
    if habit == "sometimes":
        return lambda _ch: ACCEPT if rng.random() < 0.6 else "later"
    if habit == "rated only":
        return lambda ch: ACCEPT if ch.get("rated") else "rated"
    return habit


#: The online bots: (name, rating, habit). Habits: ACCEPT, IGNORE (never answers: our challenge is
#: canceled), a decline reason key (always), "rated only" or "sometimes" (see :func:`_habit`). Weak and
#: Titan are outside the rating range: never challenged by us (they challenge us).
ROSTER: list[tuple[str, int, str]] = [
    ("Accepts", 1500, ACCEPT), ("Thinks", 1800, ACCEPT), ("Picky", 1700, "tooFast"), ("Silent", 1900, IGNORE),
    ("Strong", 2400, ACCEPT), ("RatedOnly", 2100, "rated only"), ("NoBots", 1600, "noBot"),
    ("Moody", 2200, "sometimes"), ("Weak", 1100, ACCEPT), ("Titan", 2900, ACCEPT),
]


def start(server: FakeLichess, bots: int, rng: random.Random, daily_limit: int | None) -> None:
    """Put the first ``bots`` of :data:`ROSTER` online; lichess's daily limit after ``daily_limit``
    challenges (a JSON 429 naming 30 s; None: no limit)."""
    for name, rating, habit in ROSTER[:bots]:
        server.add_bot(name, rating, policy=_habit(habit, rng))
    server.answer_after = 0.3
    server.daily_challenge_limit, server.daily_limit_seconds = daily_limit, 30


def config(games: int, base: int, inc: int, state_dir: str) -> ConfigData:
    """The soak's ``challenge`` and ``matchmaking`` sections (see the module docstring)."""
    return {
        "challenge": {"concurrency": games, "accept_bot": True, "games_reserved_for_humans": 1 if games > 1 else 0,
                      "max_simultaneous_games_per_user": 1, "recent_bot_challenge_age": 60,
                      "max_recent_bot_challenges": 2, "queue_wait": 60, "preference": "human"},
        "matchmaking": {
            "allow_matchmaking": True, "allow_during_games": True, "challenge_timeout": 0, "min_wait": 2,
            "challenge_expiry": 3, "challenge_initial_time": [base], "challenge_increment": [inc],
            "challenge_mode": "casual", "challenge_variant": "standard", "opponent_rating_difference": 600,
            "challenge_filter": "fine", "decline_file": f"{state_dir}/matchmaking.json", "decline_hours": 0.01,
            "overrides": {"rated": {"challenge_mode": "rated"}}}}


def incoming(server: FakeLichess, n: int, base: int, inc: int, rng: random.Random) -> str:
    """The ``n``-th challenge that comes in during the soak: a human, an online bot, or a rematch offer of
    a finished game (else a human). Returns its id."""
    kind = ("human", "bot", "rematch")[n % 3]
    finished = [g for g in server.games.values() if g.over and g.initial_ms]
    if kind == "rematch" and finished:
        return server.rematch(rng.choice(finished).id, opponent=random_mover(1000 + n))
    if kind == "bot":
        name, rating, _ = rng.choice(ROSTER)
        return server.challenge(challenger=name, title="BOT", rating=rating, limit=base, increment=inc,
                                opponent=random_mover(1000 + n), bot_color=rng.choice(("white", "black")))
    return server.challenge(challenger=f"human{n}", rating=rng.randint(1200, 2400), limit=base, increment=inc,
                            opponent=random_mover(1000 + n), bot_color=rng.choice(("white", "black")))


def figures(server: FakeLichess, service: BotService, incoming_ids: list[str]) -> Figures:
    """Challenges sent and answered, challenges received and our answers, games played, the peaks of
    games at once against the limits (``breaches`` empty when none was passed)."""
    mm, c = service.matchmaker, service.config.challenge
    assert mm is not None
    out_ids = set(server.outgoing_status)
    declined = Counter(server.answers[cid][1] for cid in out_ids
                       if server.outgoing_status[cid] == "declined" and cid in server.answers)
    answers = Counter("accepted" if server.answers[cid][0] == "accept" else f"declined {server.answers[cid][1]}"
                      for cid in incoming_ids if cid in server.answers)
    answers["unanswered (canceled or queued at the end)"] = sum(cid not in server.answers for cid in incoming_ids)
    played = [g for g in server.games.values() if g.over]
    limits = {"games": c.concurrency, "bot_games": c.concurrency - c.games_reserved_for_humans,
              "games_per_user": c.max_simultaneous_games_per_user}
    peaks = {"games": server.peak_games, "bot_games": server.peak_bot_games,
             "games_per_user": server.peak_games_per_user}
    return {
        "sent": {"created": mm.created, "accepted": mm.accepted, "declined": mm.declined, "canceled": mm.canceled,
                 "refused_429": server.challenge_refusals},
        "declined_by_reason": dict(sorted(declined.items())),
        "settings_drawn": dict(mm.drawn),
        "received": dict(sorted(answers.items())),
        "played": {"games": len(played), "against_bots": sum(g.opponent_bot for g in played),
                   "from_our_challenges": sum(g.id in out_ids for g in played),
                   "rematches": sum("rematchOf" in server.challenges.get(g.id, {}) for g in played)},
        "bot_games_counted_today": service.admission.records.bot_games_in_day(time.time()),
        "peaks": peaks, "limits": limits,
        "breaches": [k for k in limits if peaks[k] > limits[k]],
    }
