"""Which challenges the bot accepts (lichess-bot's ``challenge`` section) and the constants it checks against."""

from __future__ import annotations

import string
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from lichessbot.config.base import KeyConflict, Strict

__all__ = [
    "ChallengeConfig",
    "ChallengeSide",
    "check_urls",
    "GREETING_FIELDS",
    "LICHESS_BOT_GAMES_PER_DAY",
    "OTHER_VARIANTS",
    "PLAYABLE_VARIANTS",
    "TimeControl",
    "check_template",
]


# --------------------------------------------------------------------------------------------------
# The bot: challenges, chat, draws and resignation. Names as in lichess-bot.
# --------------------------------------------------------------------------------------------------
#: The variants the engine plays (lichess keys). Others (atomic, crazyhouse, ...) are refused by the config.
PLAYABLE_VARIANTS = ("standard", "chess960", "fromPosition")
#: lichess's other variant keys, named in the error of a config that lists one.
OTHER_VARIANTS = ("antichess", "atomic", "crazyhouse", "horde", "kingOfTheHill", "racingKings", "threeCheck")
TimeControl = Literal["bullet", "blitz", "rapid", "classical", "correspondence"]
#: Placeholders a greeting may use.
GREETING_FIELDS = ("me", "opponent", "level", "engine", "cpu", "ram")  # level: docs/strength.md; the last three: BotLi
#: Games against bots lichess lets a bot start in a day (a window that opens at the first game): lila
#: modules/bot/src/main/BotLimit.scala.
LICHESS_BOT_GAMES_PER_DAY = 100


def check_template(text: str) -> str:
    """``text`` if every ``{...}`` in it is a known placeholder (:data:`GREETING_FIELDS`); ``{{``/``}}`` are
    literal braces. Raises ValueError naming the unknown placeholder or the stray brace."""
    try:
        fields = [f for _, f, spec, conv in string.Formatter().parse(text) if f is not None]
    except ValueError as err:
        raise ValueError(f"{err} in {text!r} (write {{{{ or }}}} for a literal brace)") from None
    for f in fields:
        if f not in GREETING_FIELDS:
            known = ", ".join("{" + k + "}" for k in GREETING_FIELDS)
            raise ValueError(f"unknown placeholder {{{f}}} (known: {known})")
    return text


def check_urls(urls: list[str]) -> list[str]:
    """``urls`` when each is an http(s) URL (online block lists); else ValueError naming the first bad one."""
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"{url!r} is not an http(s) URL")
    return urls


class ChallengeSide(Strict):
    """``challenge.human`` or ``challenge.bot`` (BotLi's separate filters for humans and bots): the keys given
    replace those of ``challenge`` for challenges from that kind of player; the others keep the base value."""

    variants: list[str] | None = None
    time_controls: list[TimeControl] | None = None
    modes: list[Literal["casual", "rated"]] | None = None
    min_base: int | None = Field(None, ge=0)
    max_base: int | None = Field(None, ge=0)
    min_increment: int | None = Field(None, ge=0)
    max_increment: int | None = Field(None, ge=0)
    min_days: int | None = Field(None, ge=1)
    max_days: int | Literal["unlimited"] | None = None
    min_rating: int | None = None
    max_rating: int | None = None
    rating_difference: int | None = Field(None, ge=0)
    bullet_requires_increment: bool | None = None


class ChallengeConfig(Strict):
    """Which challenges to accept (lichess-bot's `challenge` section)."""

    concurrency: int = Field(1, ge=1, description="Games played at once.")
    accept_bot: bool = Field(False, description="Accept challenges from bots.")
    only_bot: bool = Field(False, description="Accept challenges from bots only.")
    variants: list[str] = Field(
        default_factory=lambda: ["standard"],
        description="Variants accepted (lichess keys): standard, chess960, fromPosition (what the engine plays).",
    )
    time_controls: list[TimeControl] = Field(
        default_factory=lambda: list[TimeControl](["bullet", "blitz", "rapid", "classical"]),
        description="Speeds accepted (lichess refuses bots in ultraBullet).",
    )
    modes: list[Literal["casual", "rated"]] = Field(
        default_factory=lambda: list[Literal["casual", "rated"]](["casual", "rated"]),
        description="Casual and/or rated games.",
    )
    min_base: int = Field(0, ge=0, description="Seconds: shortest initial clock accepted.")
    max_base: int = Field(10800, ge=0, description="Seconds: longest initial clock accepted.")
    min_increment: int = Field(0, ge=0, description="Seconds: smallest increment accepted.")
    max_increment: int = Field(180, ge=0, description="Seconds: largest increment accepted.")
    min_days: int = Field(1, ge=1, description="Correspondence: fewest days per move accepted.")
    max_days: int | Literal["unlimited"] = Field(
        14, description="Correspondence: most days per move accepted; 'unlimited' also accepts games without a clock."
    )
    min_rating: int | None = Field(None, description="Decline challengers rated below this (null: no limit).")
    max_rating: int | None = Field(None, description="Decline challengers rated above this (null: no limit).")
    block_list: list[str] = Field(default_factory=list, description="Usernames always declined.")
    online_block_list: list[str] = Field(
        default_factory=list, description="lichess-bot's key: URLs of plain-text files, one username a line; those "
        "users are declined too (read at start and refreshed every 10 minutes; a list that cannot be read keeps "
        "its last version).")
    allow_list: list[str] = Field(default_factory=list, description="If not empty, only these usernames.")
    max_simultaneous_games_per_user: int = Field(
        5, ge=1, description="Games at once with the same user (running games, accepted and queued challenges); "
        "one more is declined with later.",
    )
    games_reserved_for_humans: int = Field(
        0, ge=0, description="Slots out of concurrency kept for human challengers: games against bots (ours "
        "included) are limited to concurrency minus this.",
    )
    recent_bot_challenge_age: int | None = Field(
        None, ge=1, description="Seconds a challenge taken from a bot counts as recent (for "
        "max_recent_bot_challenges; alone it limits nothing).",
    )
    max_recent_bot_challenges: int | None = Field(
        None, ge=1, description="Challenges (rematches included) taken from the same bot within "
        "recent_bot_challenge_age seconds; more are declined with later (null: no limit).",
    )
    bullet_requires_increment: bool = Field(
        False, description="Decline bullet challenges from bots without increment (timeControl)."
    )
    sort_by: Literal["best", "first"] = Field(
        "best", description="Queued challenges: the best-rated challenger first, or the first come."
    )
    preference: Literal["none", "human", "bot"] = Field(
        "none", description="Queued challenges: humans before bots, bots before humans, or none (sort_by only)."
    )
    queue_wait: float = Field(
        120, ge=0, description="Seconds a challenge that passes every rule waits for a free slot (ours; lichess-bot "
        "waits until it is canceled); then it is declined with later. 0: declined at once when no slot is free.",
    )
    max_bot_games_per_day: int = Field(
        90, ge=0, description="Games against bots in lichess's day window (lichess allows "
        f"{LICHESS_BOT_GAMES_PER_DAY} in a window of a day that opens at the first game, lila BotLimit); then bots "
        "are declined with later and matchmaking waits until the window closes. Counted in "
        "matchmaking.decline_file (from each game's gameFull: the BOT title).",
    )

    rating_difference: int | None = Field(
        None, ge=0, description="lichess-bot's key: decline challengers rated more than this many points above or "
        "below the bot's own rating in the game's perf (with min_rating/max_rating, the narrower wins; null: no "
        "limit; a perf the bot has no rating in: no limit).")
    always_accept_list: list[str] = Field(
        default_factory=list, description="BotLi's whitelist: usernames whose challenges pass every rule of this "
        "section but variants (what the engine plays); only a free slot and lichess's own limits still apply.")
    human: ChallengeSide | None = Field(
        None, description="BotLi's challenge.human: these keys replace the ones above for challenges from humans.")
    bot: ChallengeSide | None = Field(
        None, description="BotLi's challenge.bot: these keys replace the ones above for challenges from bots.")

    def for_challenger(self, is_bot: bool) -> ChallengeConfig:
        """These settings with the ``bot`` (``is_bot``) or ``human`` keys in place of the base ones."""
        side = self.bot if is_bot else self.human
        if side is None:
            return self
        return self.model_copy(update=side.model_dump(exclude_unset=True))

    @field_validator("online_block_list")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        return check_urls(urls)

    @model_validator(mode="after")
    def _sides(self) -> ChallengeConfig:
        for name, side in (("human", self.human), ("bot", self.bot)):
            if side is not None:
                data = {**self.model_dump(exclude={"human", "bot"}), **side.model_dump(exclude_unset=True)}
                try:
                    ChallengeConfig.model_validate(data)
                except ValidationError as err:
                    msg = err.errors()[0]["msg"].removeprefix("Value error, ")
                    raise ValueError(f"{name}: {msg}") from None
        return self

    @field_validator("variants")
    @classmethod
    def _playable(cls, variants: list[str]) -> list[str]:
        for v in variants:
            if v not in PLAYABLE_VARIANTS:
                what = "is not played by the engine" if v in OTHER_VARIANTS else "is not a lichess variant key"
                raise ValueError(f"{v} {what} (it plays {', '.join(PLAYABLE_VARIANTS)})")
        return variants

    @field_validator("time_controls", mode="before")
    @classmethod
    def _no_ultrabullet(cls, speeds: Any) -> Any:
        if isinstance(speeds, list) and "ultraBullet" in speeds:
            raise ValueError("ultraBullet: lichess does not let bots play UltraBullet")
        return speeds

    @model_validator(mode="after")
    def _ranges(self) -> ChallengeConfig:
        if self.min_base > self.max_base:
            raise KeyConflict("min_base is greater than max_base", "min_base", "max_base")
        if self.min_increment > self.max_increment:
            raise KeyConflict("min_increment is greater than max_increment", "min_increment", "max_increment")
        if self.max_days != "unlimited" and self.min_days > self.max_days:
            raise KeyConflict("min_days is greater than max_days", "min_days", "max_days")
        if self.min_rating is not None and self.max_rating is not None and self.min_rating > self.max_rating:
            raise KeyConflict("min_rating is greater than max_rating", "min_rating", "max_rating")
        if self.games_reserved_for_humans > self.concurrency:
            raise KeyConflict(f"games_reserved_for_humans ({self.games_reserved_for_humans}) is greater than "
                              f"concurrency ({self.concurrency})", "games_reserved_for_humans", "concurrency")
        if self.max_recent_bot_challenges is not None and self.recent_bot_challenge_age is None:
            raise KeyConflict("max_recent_bot_challenges needs recent_bot_challenge_age (the seconds a challenge "
                              "counts as recent)", "max_recent_bot_challenges")
        return self
