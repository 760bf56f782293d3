"""Which challenges to accept: a pure function of the config, the challenge and the number of games.

The rules follow lichess-bot's ``challenge`` section (same key names and meanings). A decline carries
one of lichess's reasons (:class:`~lichessbot.lichess.decline.DeclineReason`, lila
``Challenge.DeclineReason``): generic, later, tooFast, tooSlow, timeControl, rated, casual, standard,
variant, noBot, onlyBot.

lichess refuses bots in UltraBullet (``compat.bot`` false): such a challenge is declined, never accepted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from lichessbot.config import ChallengeConfig
from lichessbot.lichess.events import Challenge, Compat, DeclineReason

__all__ = ["SPEEDS", "Verdict", "decide", "perf_key", "queue_order"]

#: lichess speeds from fastest to slowest.
SPEEDS = ("ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence")


@dataclass(frozen=True)
class Verdict:
    """``accept`` True, or False with ``reason`` (lichess's decline reason) and a readable ``why``."""

    accept: bool
    reason: DeclineReason | None = None
    why: str = ""

    @staticmethod
    def yes() -> Verdict:
        return Verdict(True)

    @staticmethod
    def no(reason: DeclineReason, why: str) -> Verdict:
        return Verdict(False, reason, why)


def _speed_reason(speed: str, allowed: list[str]) -> DeclineReason:
    """tooFast if every allowed speed is slower, tooSlow if every allowed speed is faster, else timeControl."""
    if speed not in SPEEDS or not allowed:
        return DeclineReason.TIME_CONTROL
    i = SPEEDS.index(speed)
    ranks = [SPEEDS.index(s) for s in allowed]
    if all(r > i for r in ranks):
        return DeclineReason.TOO_FAST
    if all(r < i for r in ranks):
        return DeclineReason.TOO_SLOW
    return DeclineReason.TIME_CONTROL


def _compat_text(compat: Compat | None) -> str:
    return "None" if compat is None else repr({"bot": compat.bot, "board": compat.board})


def perf_key(variant: str, speed: str) -> str:
    """The lichess perf a game is rated in: the variant's for chess960, else the speed's (lila ``PerfType``:
    standard and fromPosition games are rated by speed)."""
    return "chess960" if variant == "chess960" else speed


def decide(config: ChallengeConfig, ch: Challenge, running_games: int = 0,
           ratings: Mapping[str, int] | None = None, always: Collection[str] = ()) -> Verdict:
    """Accept or decline challenge ``ch`` given ``running_games`` (games started or accepted, not finished).

    Checks, in order: block/allow lists (generic), bot rules (noBot, onlyBot), variant (standard when
    only standard is played, else variant), bot compatibility (UltraBullet: tooFast; ``compat.bot``
    false: generic), speed (tooFast/tooSlow/timeControl), base and increment in seconds (tooFast below
    the minimum, tooSlow above the maximum; bullet without increment from a bot with
    ``bullet_requires_increment``: timeControl), days per move of correspondence (min_days/max_days;
    unlimited games only with ``max_days: unlimited``, else tooSlow), mode (rated challenge refused ->
    casual, casual refused -> rated), rating (generic; ``rating_difference`` against our rating in the game's
    perf, from ``ratings``: perf key -> our rating), and last concurrency (later). The rules are those of
    ``config.human`` or ``config.bot`` for the challenger (BotLi); a challenger in ``always_accept_list`` (or
    ``always``: lowercase names the operator allowed for a while) is judged only by variant, lichess's bot rules
    and concurrency.
    """
    name = ch.challenger_name.lower()
    is_bot = ch.challenger_is_bot
    config = config.for_challenger(is_bot)
    if name and name in {u.lower() for u in (*config.always_accept_list, *always)}:
        return _always(config, ch, running_games)
    if name in {u.lower() for u in config.block_list}:
        return Verdict.no(DeclineReason.GENERIC, f"{name} is in block_list")
    if config.allow_list and name not in {u.lower() for u in config.allow_list}:
        return Verdict.no(DeclineReason.GENERIC, f"{name} is not in allow_list")

    if is_bot and not config.accept_bot:
        return Verdict.no(DeclineReason.NO_BOT, "bots are not accepted (accept_bot: false)")
    if not is_bot and config.only_bot:
        return Verdict.no(DeclineReason.ONLY_BOT, "only bots are accepted (only_bot: true)")

    if ch.variant not in config.variants:
        reason = DeclineReason.STANDARD if config.variants == ["standard"] else DeclineReason.VARIANT
        return Verdict.no(reason, f"variant {ch.variant} is not in {config.variants}")

    speed, compat = ch.speed, ch.compat
    if speed == "ultraBullet" or (compat is not None and not compat.bot):
        return Verdict.no(DeclineReason.TOO_FAST if speed == "ultraBullet" else DeclineReason.GENERIC,
                          f"lichess does not let bots play this game (speed {speed}, compat {_compat_text(compat)})")
    if speed not in config.time_controls:
        return Verdict.no(_speed_reason(speed, list(config.time_controls)),
                          f"speed {speed} is not in {config.time_controls}")
    tc = ch.time_control
    if tc.type == "clock":
        base, inc = tc.limit, tc.increment
        if config.bullet_requires_increment and is_bot and speed == "bullet" and inc == 0:
            return Verdict.no(DeclineReason.TIME_CONTROL, f"{base}+0: bullet from a bot needs an increment "
                                                          "(bullet_requires_increment)")
        if base < config.min_base or inc < config.min_increment:
            return Verdict.no(DeclineReason.TOO_FAST, f"{base}+{inc} is below min_base/min_increment")
        if base > config.max_base or inc > config.max_increment:
            return Verdict.no(DeclineReason.TOO_SLOW, f"{base}+{inc} is above max_base/max_increment")
    elif tc.type == "correspondence":
        days = tc.days_per_turn or 0
        if days < config.min_days:
            return Verdict.no(DeclineReason.TOO_FAST, f"{days} days per move is below min_days {config.min_days}")
        if config.max_days != "unlimited" and days > config.max_days:
            return Verdict.no(DeclineReason.TOO_SLOW, f"{days} days per move is above max_days {config.max_days}")
    elif tc.type == "unlimited":
        if config.max_days != "unlimited":
            return Verdict.no(DeclineReason.TOO_SLOW, "unlimited games are declined (max_days is not 'unlimited')")
    else:
        return Verdict.no(DeclineReason.TIME_CONTROL, f"time control {tc.type or None} is not played")

    mode = "rated" if ch.rated else "casual"
    if mode not in config.modes:
        return Verdict.no(DeclineReason.CASUAL if ch.rated else DeclineReason.RATED,
                          f"{mode} games are not in {config.modes}")

    rating = ch.challenger.rating if ch.challenger is not None else None
    if rating is not None:
        if config.min_rating is not None and rating < config.min_rating:
            return Verdict.no(DeclineReason.GENERIC, f"rating {rating} is below min_rating {config.min_rating}")
        if config.max_rating is not None and rating > config.max_rating:
            return Verdict.no(DeclineReason.GENERIC, f"rating {rating} is above max_rating {config.max_rating}")
        ours = (ratings or {}).get(perf_key(ch.variant, speed))
        if config.rating_difference is not None and ours and abs(rating - ours) > config.rating_difference:
            return Verdict.no(DeclineReason.GENERIC, f"rating {rating} is more than rating_difference "
                                                     f"{config.rating_difference} from ours ({ours})")

    if running_games >= config.concurrency:
        return Verdict.no(DeclineReason.LATER, f"{running_games} games running (concurrency {config.concurrency})")
    return Verdict.yes()


def _always(config: ChallengeConfig, ch: Challenge, running_games: int) -> Verdict:
    """A challenger of ``always_accept_list``: a variant the engine plays, a game lichess lets a bot play, a slot."""
    if ch.variant not in config.variants:
        return Verdict.no(DeclineReason.VARIANT, f"variant {ch.variant} is not in {config.variants}")
    if ch.speed == "ultraBullet" or (ch.compat is not None and not ch.compat.bot):
        return Verdict.no(DeclineReason.TOO_FAST if ch.speed == "ultraBullet" else DeclineReason.GENERIC,
                          f"lichess does not let bots play this game (speed {ch.speed})")
    if running_games >= config.concurrency:
        return Verdict.no(DeclineReason.LATER, f"{running_games} games running (concurrency {config.concurrency})")
    return Verdict.yes()


def queue_order(ch: Challenge, arrival: int, sort_by: str, preference: str) -> tuple[int, int, int]:
    """Sort key of a challenge waiting for a slot (smallest first; lichess-bot's ``sort_by`` and
    ``preference``): with preference human (bot), humans (bots) come first; then, with sort_by best, the
    higher challenger rating (an unrated challenger counts as 0); then the earlier ``arrival``."""
    bot = ch.challenger_is_bot
    group = (1 if bot else 0) if preference == "human" else (0 if bot else 1) if preference == "bot" else 0
    rating = (ch.challenger.rating or 0) if sort_by == "best" and ch.challenger is not None else 0
    return group, -rating, arrival
