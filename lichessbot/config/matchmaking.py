"""Challenging other bots when idle (lichess-bot's ``matchmaking`` section) and its overrides."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lichessbot.config.base import HomePath, KeyConflict, Strict
from lichessbot.config.challenge import check_urls

__all__ = ["MatchmakingConfig", "MatchmakingOverride", "NOT_OVERRIDABLE"]


def _challenge_variant(v: str) -> str:
    if v not in ("standard", "chess960", "random"):
        raise ValueError(f"{v}: challenges are standard, chess960 or random")
    return v


def _lichess_clocks(times: list[int]) -> list[int]:
    for t in times:
        if t not in (0, 15, 30, 45, 90) and not (t % 60 == 0 and 0 < t <= 10800):
            raise ValueError(f"{t} s is not a lichess clock (0, 15, 30, 45, 60, 90 or a multiple of 60 "
                             "up to 10800)")
    return times


def _lichess_increments(incs: list[int]) -> list[int]:
    for i in incs:
        if not 0 <= i <= 60:
            raise ValueError(f"{i} s is not a lichess increment (0 to 60)")
    return incs


def _no_null_days(days: Any) -> Any:
    """lichess-bot writes ``[null]`` for "no correspondence": the same as ``[]`` here."""
    if days is None:
        return []
    return [d for d in days if d is not None] if isinstance(days, list) else days


def _lichess_days(days: list[int]) -> list[int]:
    for d in days:
        if d not in (1, 2, 3, 5, 7, 10, 14):
            raise ValueError(f"{d} is not a lichess days-per-move value (1, 2, 3, 5, 7, 10, 14)")
    return days


#: matchmaking keys an override may not set: lichess-bot's four, and ours that run the loop, not a challenge.
NOT_OVERRIDABLE = ("allow_matchmaking", "challenge_timeout", "challenge_filter", "block_list", "allow_during_games",
                   "selection",
                   "decline_hours", "decline_file", "challenge_expiry", "min_wait", "daily_limit_pause",
                   "include_challenge_block_list", "online_block_list", "overrides")
_LIST_KEYS = ("challenge_initial_time", "challenge_increment", "challenge_days")


class MatchmakingOverride(BaseModel):
    """One named alternative of the matchmaking settings (``matchmaking.overrides.NAME``, lichess-bot's
    semantics): only the keys given replace the base ones. A list key given empty (or null, as lichess-bot
    writes it) removes that kind of game; ``opponent_rating_difference: null`` unsets it (min/max apply)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    challenge_variant: str | None = None
    challenge_initial_time: list[int] | None = None
    challenge_increment: list[int] | None = None
    challenge_days: list[int] | None = None
    challenge_mode: Literal["casual", "rated", "random"] | None = None
    opponent_min_rating: int | None = None
    opponent_max_rating: int | None = None
    opponent_rating_difference: int | None = Field(None, ge=0)
    rating_preference: Literal["none", "high", "low"] | None = None
    opponent_allow_tos_violation: bool | None = None
    target_rating_diff: int | None = Field(None, ge=0)
    weight: float | None = Field(None, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _overridable(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key in NOT_OVERRIDABLE:
                    raise KeyConflict(f"{key} cannot be overridden (only the keys that shape one challenge can)", key)
        elif data is None:
            return {}
        return data

    @field_validator("challenge_variant", "challenge_mode", "opponent_min_rating", "opponent_max_rating",
                     "rating_preference", "opponent_allow_tos_violation", "weight")
    @classmethod
    def _not_null(cls, v: Any) -> Any:
        if v is None:
            raise ValueError("null is not a value here: leave the key out to keep the base setting")
        return v

    @field_validator("challenge_variant")
    @classmethod
    def _variant(cls, v: str | None) -> str | None:
        return None if v is None else _challenge_variant(v)

    @field_validator("challenge_initial_time")
    @classmethod
    def _initial(cls, times: list[int] | None) -> list[int] | None:
        return None if times is None else _lichess_clocks(times)

    @field_validator("challenge_increment")
    @classmethod
    def _increment(cls, incs: list[int] | None) -> list[int] | None:
        return None if incs is None else _lichess_increments(incs)

    @field_validator("challenge_days", mode="before")
    @classmethod
    def _no_null_days(cls, days: Any) -> Any:
        return None if days is None else _no_null_days(days)

    @field_validator("challenge_days")
    @classmethod
    def _days(cls, days: list[int] | None) -> list[int] | None:
        return None if days is None else _lichess_days(days)

    def updates(self) -> dict[str, Any]:
        """The keys this override sets, as values of :class:`MatchmakingConfig` (a null list: empty)."""
        return {k: ([] if v is None and k in _LIST_KEYS else v)
                for k, v in self.model_dump(exclude_unset=True).items()}


class MatchmakingConfig(Strict):
    """Challenging other bots when idle (lichess-bot's ``matchmaking`` section: same key names and meanings
    where lichess-bot has the key; "ours" marks the others). Read by :mod:`lichessbot.bot.matchmaking.matchmaker`."""

    allow_matchmaking: bool = Field(False, description="Challenge online bots when idle.")
    allow_during_games: bool = Field(
        False, description="Also challenge while games run (never past challenge.concurrency)."
    )
    challenge_timeout: float = Field(
        30, ge=0, description="Minutes without a game (since the bot started or its last game ended) before it "
        "challenges.",
    )
    challenge_variant: str = Field(
        "random", description="Variant of our challenges: standard, chess960, or random (one of challenge.variants "
        "except fromPosition).",
    )
    challenge_initial_time: list[int] = Field(
        default_factory=lambda: [60, 180],
        description="Seconds: initial clocks to choose from (lichess: 0, 15, 30, 45, 60, 90 or a multiple of 60 up "
        "to 10800).",
    )
    challenge_increment: list[int] = Field(
        default_factory=lambda: [1, 2], description="Seconds: increments to choose from (0 to 60)."
    )
    challenge_days: list[int] = Field(
        default_factory=list,
        description="Correspondence days per move to choose from (1, 2, 3, 5, 7, 10, 14); empty: real-time only.",
    )
    challenge_mode: Literal["casual", "rated", "random"] = Field("random", description="Casual, rated or random.")
    opponent_min_rating: int = Field(600, description="Challenge bots rated at least this in the game's speed.")
    opponent_max_rating: int = Field(4000, description="Challenge bots rated at most this in the game's speed.")
    opponent_rating_difference: int | None = Field(
        None, ge=0, description="If set: only bots within this many points of our rating (replaces min/max)."
    )
    rating_preference: Literal["none", "high", "low"] = Field(
        "none", description="Prefer stronger (high) or weaker (low) bots in the range, or none."
    )
    opponent_allow_tos_violation: bool = Field(False, description="Also challenge bots marked for a ToS violation.")
    challenge_filter: Literal["none", "coarse", "fine"] = Field(
        "fine", description="After a decline: none; coarse: not that bot again for decline_hours; fine: not that bot "
        "with the declined aspect (speed, variant or mode; any game for generic/later/noBot) for decline_hours.",
    )
    block_list: list[str] = Field(default_factory=list, description="Bots never challenged.")
    online_block_list: list[str] = Field(
        default_factory=list, description="lichess-bot's key: URLs of plain-text files, one bot name a line; those "
        "bots are never challenged (as challenge.online_block_list).")
    decline_hours: float = Field(
        24, gt=0, description="Hours a decline keeps its filter (ours; lichess-bot: one day).",
    )
    decline_file: HomePath | None = Field(
        "matchmaking_state.json", description="Where declines, the daily-limit pause and the count of today's games "
        "against bots (challenge.max_bot_games_per_day) are kept across restarts (ours); null: memory only.",
    )
    challenge_expiry: float = Field(
        25, gt=0, description="Seconds an unanswered challenge of ours waits before it is canceled (ours; lichess "
        "lets a real-time challenge expire after 20 s).",
    )
    min_wait: float = Field(
        60, ge=0, description="Seconds between two challenges of ours (ours; lichess-bot waits 60 s).",
    )
    daily_limit_pause: float = Field(
        3600, gt=0, description="Seconds matchmaking pauses after lichess refuses a challenge with 429 and gives no "
        "time (ours); a 429 that names its seconds pauses that long.",
    )

    include_challenge_block_list: bool = Field(
        False, description="Also never challenge the users in challenge.block_list and challenge.online_block_list.",
    )
    target_rating_diff: int | None = Field(
        None, ge=0, description="BotLi's key: challenge first the suitable bot whose rating is closest to this many "
        "points from ours in the game's perf (ties drawn); null: rating_preference decides.")
    weight: float = Field(
        1.0, ge=0, description="BotLi's types' weight: the chance of these settings against each override's "
        "weight (selection weighted_random), and their place in the order (sequential, cyclic: the heaviest "
        "first).")
    selection: Literal["weighted_random", "sequential", "cyclic"] = Field(
        "weighted_random", description="BotLi's key: which settings (these or an override) a challenge uses: "
        "weighted_random: drawn by weight for each challenge; sequential: the heaviest until no bot suits them, "
        "then the next; cyclic: the next after each challenge sent, or when no bot suits them.")
    overrides: dict[str, MatchmakingOverride] = Field(
        default_factory=dict,
        description="Named alternative settings: each challenge uses the settings above or one override, chosen "
        "by selection and weight (equal weights: equal chances, lichess-bot's rule); an override's keys replace "
        "those above for that challenge.",
    )

    @field_validator("online_block_list")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        return check_urls(urls)

    @field_validator("challenge_variant")
    @classmethod
    def _variant(cls, v: str) -> str:
        return _challenge_variant(v)

    @field_validator("challenge_initial_time")
    @classmethod
    def _initial(cls, times: list[int]) -> list[int]:
        return _lichess_clocks(times)

    @field_validator("challenge_increment")
    @classmethod
    def _increment(cls, incs: list[int]) -> list[int]:
        return _lichess_increments(incs)

    @field_validator("challenge_days", mode="before")
    @classmethod
    def _no_null_days(cls, days: Any) -> Any:
        return _no_null_days(days)

    @field_validator("challenge_days")
    @classmethod
    def _days(cls, days: list[int]) -> list[int]:
        return _lichess_days(days)

    @model_validator(mode="after")
    def _consistent(self) -> MatchmakingConfig:
        if self.opponent_min_rating > self.opponent_max_rating:
            raise KeyConflict("opponent_min_rating is greater than opponent_max_rating", "opponent_min_rating",
                              "opponent_max_rating")
        if self.allow_matchmaking and not self.challenge_days and not (
                self.challenge_initial_time and self.challenge_increment):
            raise KeyConflict("no time control to challenge with: set challenge_initial_time and challenge_increment, "
                              "or challenge_days", "allow_matchmaking")
        for name, override in self.overrides.items():
            try:
                MatchmakingConfig.model_validate({**self.model_dump(exclude={"overrides"}), **override.updates()})
            except ValidationError as err:
                e = err.errors()[0]
                msg = e["msg"].removeprefix("Value error, ")
                cause = e.get("ctx", {}).get("error")
                keys = cause.keys if isinstance(cause, KeyConflict) else (tuple(str(p) for p in e["loc"]),)
                sets = override.model_fields_set
                # the override's own key where it sets one, else the base key it inherits
                raise KeyConflict(f"overrides.{name}: {msg}", *[("overrides", name, *k) if k[0] in sets else k
                                                                for k in keys]) from None
        return self

    def with_override(self, name: str | None) -> MatchmakingConfig:
        """These settings with override ``name`` applied (None: as they are). Raises KeyError for an
        unknown name."""
        if name is None:
            return self
        return self.model_copy(update={**self.overrides[name].updates(), "overrides": {}})
