"""The configuration of lichessbot: pydantic models of ``config.yml``, declared once.

Every key is documented here and in ``config.yml.example``. Where lichess-bot has a key with the same
meaning, the name is the same. Unknown keys, wrong types and impossible values are refused with the
key's dotted path and the reason (:class:`ConfigError`).

The models are frozen: a loaded config never changes while the bot runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator

from lichessbot.config.arenas import TournamentsConfig
from lichessbot.config.base import (
    TOKEN_ENV,
    HomePath,
    KeyConflict,
    Strict,
    default_pgn_directory,
    default_state_directory,
)
from lichessbot.config.book import BookConfig
from lichessbot.config.challenge import (
    GREETING_FIELDS,
    LICHESS_BOT_GAMES_PER_DAY,
    OTHER_VARIANTS,
    PLAYABLE_VARIANTS,
    ChallengeConfig,
    TimeControl,
    check_template,
)
from lichessbot.config.engine import (
    AdaptiveStrengthConfig,
    EngineConfig,
    SearchParams,
    StrengthConfig,
    TablebaseConfig,
    TimemanConfig,
    Uci,
)
from lichessbot.config.game_sections import (
    ChatConfig,
    CorrespondenceConfig,
    DrawOrResignConfig,
    GreetingConfig,
    StatusConfig,
)
from lichessbot.config.handlers import ExtraGameHandlersConfig
from lichessbot.config.matchmaking import MatchmakingConfig, MatchmakingOverride
from lichessbot.config.online import OnlineMovesConfig
from lichessbot.config.overrides import GameFacts, GameOverride, conditions_of, merge
from lichessbot.errors import ConfigError
from lichessbot.hosts import is_loopback

__all__ = [
    "BookConfig",
    "BotConfig",
    "ChallengeConfig",
    "ChatConfig",
    "ConfigError",
    "CorrespondenceConfig",
    "DrawOrResignConfig",
    "EngineConfig",
    "ExtraGameHandlersConfig",
    "GREETING_FIELDS",
    "GameFacts",
    "GameOverride",
    "GreetingConfig",
    "KeyConflict",
    "LICHESS_BOT_GAMES_PER_DAY",
    "MatchmakingConfig",
    "MatchmakingOverride",
    "OTHER_VARIANTS",
    "OnlineMovesConfig",
    "PLAYABLE_VARIANTS",
    "SearchParams",
    "StrengthConfig",
    "AdaptiveStrengthConfig",
    "StatusConfig",
    "TOKEN_ENV",
    "TablebaseConfig",
    "TimeControl",
    "TimemanConfig",
    "Uci",
    "TournamentsConfig",
    "check_template",
    "is_loopback_host",
    "load_config",
    "parse_config",
]


class BotConfig(Strict):
    """The whole config.yml."""

    token: SecretStr | None = Field(None, description=f"Bot API token; the environment's {TOKEN_ENV} wins.")
    url: str = Field("https://lichess.org", description="Server that speaks the lichess Bot API: https, or http "
                     "only to a loopback host (127.0.0.1, ::1, localhost: play --local, a test server).")
    engine: EngineConfig = Field(default_factory=EngineConfig)
    timeman: TimemanConfig = Field(default_factory=TimemanConfig)
    book: BookConfig = Field(default_factory=BookConfig)
    tablebases: TablebaseConfig = Field(default_factory=TablebaseConfig)
    online_moves: OnlineMovesConfig = Field(default_factory=OnlineMovesConfig)
    challenge: ChallengeConfig = Field(default_factory=ChallengeConfig)
    greeting: GreetingConfig = Field(default_factory=GreetingConfig)
    chat: ChatConfig = Field(default_factory=ChatConfig)
    draw_or_resign: DrawOrResignConfig = Field(default_factory=DrawOrResignConfig)
    correspondence: CorrespondenceConfig = Field(default_factory=CorrespondenceConfig)
    matchmaking: MatchmakingConfig = Field(default_factory=MatchmakingConfig)
    tournaments: TournamentsConfig = Field(default_factory=TournamentsConfig)
    abort_time: int = Field(
        30, ge=1, description="Seconds to wait for the opponent's first move before aborting (real-time games only; "
        "never in tournament games)."
    )
    playing_check_period: int = Field(
        60, ge=1, description="Seconds between checks of /api/account/playing that free the slots of games that "
        "ended unseen (a missed gameFinish)."
    )
    rate_limiting_delay: int = Field(
        0, ge=0, le=10_000, description="lichess-bot's key: milliseconds a game waits after each move it posts "
        "(the lichess client paces requests and obeys 429 itself: 0 needs nothing more).")
    fake_think_time: bool = Field(
        False, description="lichess-bot's key: from the 11th ply on, a move in a game with a clock is posted no "
        "sooner than 2.5 % of our clock (less the move overhead) after the position came, 1 % less each ply "
        "after (lichess-bot's formula): against people a bot that answers at once feels wrong.")
    pgn_directory: HomePath | None = Field(
        default_factory=default_pgn_directory, description="Where finished games are saved; null: nowhere. Unset: "
        "games in the user's data directory (Linux ~/.local/share/lichessbot/games; platformdirs).")
    pgn_file_grouping: Literal["game", "opponent", "all"] = Field(
        "game", description="lichess-bot's key: game: one file per game (<white>-vs-<black>-<id>.pgn); opponent: one "
        "file per opponent (<bot> games vs. <opponent>.pgn); all: every game in one file (<bot> games.pgn). Games "
        "are appended to a shared file.")
    max_takebacks_accepted: int = Field(
        0, ge=0, description="lichess-bot's key: how many takebacks the opponent may have in one game (their "
        "offers are answered yes until then, then no); 0: none."
    )
    state_directory: HomePath = Field(
        default_factory=default_state_directory, description="Ours: the directory the bot writes what must survive "
        "a restart (the records of matchmaking.decline_file when that path is relative: declines, lichess's limits, "
        "the bot games of lichess's day window; the takebacks accepted in running games, takebacks.json). Unset: "
        "the user's state directory (Linux ~/.local/state/lichessbot; platformdirs). Created when first written; "
        "it must be writable (Docker: the volume /data/state, owned by the bot user)."
    )
    quit_after_all_games_finish: bool = Field(
        True, description="lichess-bot's key: on SIGTERM or Ctrl-C take no new games and let the running ones "
        "finish, then exit (a second signal exits at once). false: the first signal exits at once. Either way "
        "the games are left running on lichess (a restart finds and finishes them) unless resign_on_quit."
    )
    resign_on_quit: bool = Field(
        False, description="Ours: when the bot exits before its games are over, resign them (abort before both "
        "sides moved). false: leave them running on lichess; a restart within their clocks plays them on."
    )
    status: StatusConfig = Field(default_factory=StatusConfig)
    extra_game_handlers: ExtraGameHandlersConfig = Field(default_factory=ExtraGameHandlersConfig)
    game_overrides: dict[str, GameOverride] = Field(
        default_factory=dict, description="BotLi's per-time-control and per-colour settings as one mechanism: "
        "entries named by their conditions (e.g. bullet, blitz_white, chess960_black, bot_rated) that change keys "
        "of engine (search, strength, ponder), timeman, book and draw_or_resign for the games they match "
        "(lichessbot/config/overrides.py).")

    def for_game(self, facts: GameFacts) -> BotConfig:
        """This config with every ``game_overrides`` entry that matches ``facts`` applied, the fewest
        conditions first (so the most specific wins)."""
        words = facts.words()
        entries = sorted(((len(conditions_of(name)), name, o) for name, o in self.game_overrides.items()
                          if set(conditions_of(name).values()) <= words), key=lambda e: e[0])
        if not entries:
            return self
        data = self.model_dump(exclude={"game_overrides"})
        for _, _, override in entries:
            data = merge(data, override.changes())
        return self.model_copy(update={k: getattr(BotConfig.model_validate(data), k) for k in
                                       ("engine", "timeman", "book", "draw_or_resign")})

    @field_validator("game_overrides")
    @classmethod
    def _override_names(cls, entries: dict[str, GameOverride]) -> dict[str, GameOverride]:
        for name in entries:
            conditions_of(name)
        return entries

    @model_validator(mode="after")
    def _overrides_valid(self) -> BotConfig:
        base = self.model_dump(exclude={"game_overrides"})
        for name, override in self.game_overrides.items():
            try:
                BotConfig.model_validate(merge(base, override.changes()))
            except ValidationError as err:
                e = err.errors()[0]
                where = ".".join(str(p) for p in e["loc"])
                raise ValueError(f"game_overrides.{name}: {where + ': ' if where else ''}"
                                 f"{e['msg'].removeprefix('Value error, ')}") from None
        return self

    @field_validator("url")
    @classmethod
    def _https_unless_loopback(cls, url: str) -> str:
        """The token goes to ``url`` in every request's ``Authorization`` header: over plain http anyone on the
        path reads it, so http is refused unless the host is this machine (:func:`is_loopback_host`)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http(s) URL (e.g. https://lichess.org)")
        if parts.scheme == "http" and not is_loopback_host(parts.hostname):
            raise ValueError(f"{url}: http would send the token in clear text to {parts.hostname}; use https "
                             "(http is for a server on this machine only: 127.0.0.1, ::1, localhost)")
        return url

    def records_file(self) -> str | None:
        """``matchmaking.decline_file`` resolved against ``state_directory`` (None: memory only)."""
        path = self.matchmaking.decline_file
        return None if path is None else os.path.join(self.state_directory, path)

    @model_validator(mode="after")
    def _matchmaking_within_challenge(self) -> BotConfig:
        """Our own challenges must pass our own challenge filter (else we would decline our own game). Each
        broken rule is a :class:`KeyConflict` that names the matchmaking key first and
        ``matchmaking.allow_matchmaking`` last (dropping it, matchmaking is off: the bot challenges nobody rather
        than accepting what the file refused)."""
        base, ch = self.matchmaking, self.challenge
        if not base.allow_matchmaking:
            return self
        on = "matchmaking.allow_matchmaking"
        if not ch.accept_bot:
            raise KeyConflict(f"{on}: challenges go to bots, so challenge.accept_bot must be true", on,
                              "challenge.accept_bot")
        if ch.games_reserved_for_humans >= ch.concurrency:
            raise KeyConflict(f"{on}: every slot is reserved for humans (challenge.games_reserved_for_humans is "
                              "challenge.concurrency)", on, "challenge.games_reserved_for_humans")
        if ch.max_bot_games_per_day == 0:
            raise KeyConflict(f"{on}: challenge.max_bot_games_per_day is 0 (no games against bots)", on,
                              "challenge.max_bot_games_per_day")
        for where, mm in [(("matchmaking",), base)] + [(("matchmaking", "overrides", name), base.with_override(name))
                                                       for name in base.overrides]:
            for t in mm.challenge_initial_time:
                if not ch.min_base <= t <= ch.max_base:
                    raise _outside_challenge(
                        where, "challenge_initial_time", f"{t} s is outside challenge.min_base..challenge.max_base "
                        f"({ch.min_base}..{ch.max_base})", "challenge.min_base challenge.max_base")
            for i in mm.challenge_increment:
                if not ch.min_increment <= i <= ch.max_increment:
                    raise _outside_challenge(
                        where, "challenge_increment", f"{i} s is outside challenge.min_increment.."
                        f"challenge.max_increment ({ch.min_increment}..{ch.max_increment})",
                        "challenge.min_increment challenge.max_increment")
            for d in mm.challenge_days:
                if d < ch.min_days or (ch.max_days != "unlimited" and d > ch.max_days):
                    raise _outside_challenge(
                        where, "challenge_days", f"{d} is outside challenge.min_days..challenge.max_days "
                        f"({ch.min_days}..{ch.max_days})", "challenge.min_days challenge.max_days")
            if mm.challenge_variant != "random" and mm.challenge_variant not in ch.variants:
                raise _outside_challenge(where, "challenge_variant",
                                         f"{mm.challenge_variant} is not in challenge.variants", "challenge.variants")
            if mm.challenge_mode != "random" and mm.challenge_mode not in ch.modes:
                raise _outside_challenge(where, "challenge_mode", f"{mm.challenge_mode} is not in challenge.modes",
                                         "challenge.modes")
        return self

    def resolved_token(self) -> str | None:
        """The token to use: the environment variable wins over the file. Never log the result."""
        env = os.environ.get(TOKEN_ENV)
        if env:
            return env
        return self.token.get_secret_value() if self.token is not None else None


def _outside_challenge(where: tuple[str, ...], key: str, message: str, challenge_keys: str) -> KeyConflict:
    """A matchmaking ``key`` (of ``where``: matchmaking, or one of its overrides) our challenge filter refuses:
    that key, the base key an override inherits, ``matchmaking.allow_matchmaking``, then the challenge keys of
    the rule (space-separated), in that order."""
    return KeyConflict(f"{'.'.join(where)}.{key}: {message}", (*where, key), ("matchmaking", key),
                       "matchmaking.allow_matchmaking", *challenge_keys.split())


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a URL's hostname: no port, no brackets) names this machine
    (:func:`lichessbot.hosts.is_loopback`)."""
    return is_loopback(host)


def _format_errors(err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        msg = msg.removeprefix("Value error, ")
        if not e["loc"] and msg.split(":", 1)[0].count(".") >= 1:  # a check across sections names its key
            lines.append(msg)
            continue
        lines.append(f"{path}: {msg}")
    return "; ".join(lines)


def parse_config(data: dict[str, Any] | None) -> BotConfig:
    """Validate a mapping (as read from YAML) into a :class:`BotConfig`.

    Raises:
        ConfigError: with each bad key's dotted path and the reason.
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("the config must be a mapping of keys to values")
    try:
        return BotConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_errors(err)) from None


def load_config(path: str | os.PathLike[str]) -> BotConfig:
    """Read and validate a YAML config file.

    Raises:
        ConfigError: the file is missing, is not YAML, or has a bad key (path and reason in the message).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{p}: cannot read the config file ({err.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"{p}: not valid YAML ({err})") from None
    try:
        return parse_config(data)
    except ConfigError as err:
        raise ConfigError(f"{p}: {err}") from None
