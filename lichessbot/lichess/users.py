"""lichess's users, accounts, tokens and rate-limit answers as frozen values (parsed once, where the answer
is read). Shapes: lila challenge ``JsonView`` (users of a challenge), ``/api/account`` and
``/api/bot/online`` (lichess-org/api), ``POST /api/token/test`` (lichess-org/api ``api-token-test.yaml``),
lila ``CtrlErrors`` ``Writes[Limited]`` and ``BotLimit`` ``Writes[OpponentLimit]`` (``ratelimit``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from lichessbot.lichess.reading import JSON, bool_, int_, obj, opt_int, opt_str, str_

__all__ = ["BOT_GAMES_KEY", "Account", "Perf", "RateLimit", "TokenInfo", "User", "parse_account",
           "parse_opponent_limit", "parse_rate_limit", "parse_token",
           "parse_user"]


# users ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class User:
    """A challenger or the challenge's ``destUser`` (lila challenge ``JsonView``: id, name, rating, title...)."""

    id: str
    name: str
    rating: int | None = None
    title: str | None = None
    provisional: bool = False
    online: bool = False

    @property
    def is_bot(self) -> bool:
        return self.title == "BOT"


def parse_user(d: JSON) -> User | None:
    """A user of a challenge (None for an absent one: anonymous or open)."""
    if not d:
        return None
    name = str_(d, "name") or str_(d, "id")
    return User(id=str_(d, "id", name.lower()), name=name, rating=opt_int(d, "rating"), title=opt_str(d, "title"),
                provisional=bool_(d, "provisional"), online=bool_(d, "online"))


@dataclass(frozen=True)
class Perf:
    """One perf of a user: ``rating`` and rated ``games`` (0 when lichess leaves them out)."""

    rating: int = 0
    games: int = 0


@dataclass(frozen=True)
class Account:
    """``/api/account`` or one line of ``/api/bot/online``: the user and its perfs (speed or variant key ->
    :class:`Perf`)."""

    id: str
    username: str
    title: str | None = None
    perfs: Mapping[str, Perf] = field(default_factory=dict)
    tos_violation: bool = False
    disabled: bool = False

    @property
    def is_bot(self) -> bool:
        return self.title == "BOT"

    def perf(self, key: str) -> Perf:
        return self.perfs.get(key, Perf())


def parse_account(d: JSON) -> Account:
    """An ``/api/account`` answer or an ``/api/bot/online`` line. Raises MalformedEvent."""
    perfs = {k: Perf(int_(v, "rating"), int_(v, "games")) for k, v in obj(d, "perfs").items()
             if isinstance(v, Mapping) and "rating" in v}  # an object without a rating is not a perf we know
    name = str_(d, "username") or str_(d, "id")
    return Account(id=str_(d, "id", name.lower()), username=name, title=opt_str(d, "title"), perfs=perfs,
                   tos_violation=bool_(d, "tosViolation"), disabled=bool_(d, "disabled"))


@dataclass(frozen=True)
class TokenInfo:
    """One token of ``POST /api/token/test``: its user, scopes and expiry (epoch ms; None: never)."""

    user_id: str
    scopes: tuple[str, ...]
    expires: int | None = None


def parse_token(d: JSON | None) -> TokenInfo | None:
    """A token's entry of ``/api/token/test`` (None: lichess does not know the token)."""
    if d is None:
        return None
    scopes = tuple(s.strip() for s in str_(d, "scopes").split(",") if s.strip())
    return TokenInfo(user_id=str_(d, "userId"), scopes=scopes, expires=opt_int(d, "expires"))


@dataclass(frozen=True)
class RateLimit:
    """lila's ``JsonLimited`` body (a 429 on our own limit, a 400 on the opponent's bot-game limit):
    ``{"error", "ratelimit": {"key", "seconds"}}``. ``seconds``: until the limit ends."""

    key: str
    seconds: float


def parse_rate_limit(body: Any) -> RateLimit | None:
    """The ``ratelimit`` of an error body, or None (no body, HTML, another error)."""
    if not isinstance(body, Mapping) or not isinstance(body.get("ratelimit"), Mapping):
        return None
    rl = body["ratelimit"]
    seconds = rl.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return None
    return RateLimit(key=str(rl.get("key") or ""), seconds=max(0.0, float(seconds)))


#: lila's key of the bot-vs-bot daily limit (modules/bot/src/main/BotLimit.scala: ``RateLimit[UserId](100,
#: 1.day, "bot.vsBot.day")``), also given to the opponent's limit below.
BOT_GAMES_KEY = "bot.vsBot.day"
_UNTIL = re.compile(r"played \d+ games against other bots today, please wait until (\S+) to challenge them")


def parse_opponent_limit(body: Any, now: float) -> RateLimit | None:
    """The opponent's bot-game limit in lila's 400 answer to an accept or a challenge (lila BotLimit
    ``OpponentLimit``: ``{"error": "<name> played 100 games against other bots today, please wait until
    <ISO date> to challenge them."}``, no ``ratelimit``) as a :class:`RateLimit` of ``seconds`` from epoch
    second ``now`` until that date; a ``ratelimit`` in the body wins. None: another error."""
    limit = parse_rate_limit(body)
    if limit is not None or not isinstance(body, Mapping) or not isinstance(body.get("error"), str):
        return limit
    m = _UNTIL.search(body["error"])
    if m is None:
        return None
    try:
        until = datetime.fromisoformat(m.group(1).rstrip("."))
    except ValueError:
        return None
    if until.tzinfo is None:
        until = until.replace(tzinfo=UTC)
    return RateLimit(key=BOT_GAMES_KEY, seconds=max(0.0, until.timestamp() - now))
