"""The bot's account: it must be a BOT account (``lichessbot play --upgrade`` makes it one)."""

from __future__ import annotations

from dataclasses import replace

import structlog

from lichessbot.errors import LichessbotError
from lichessbot.lichess.client import LichessClient
from lichessbot.lichess.events import Account

__all__ = ["REQUIRED_SCOPE", "MissingScopeError", "NotBotError", "check_account"]

#: The token scope the Bot API needs (lichess API spec: every /api/bot/* endpoint is ``bot:play``).
REQUIRED_SCOPE = "bot:play"

log = structlog.get_logger("lichessbot.bot")


class NotBotError(LichessbotError, ValueError):
    """The token's account is not a BOT account (and --upgrade was not given)."""


class MissingScopeError(LichessbotError, ValueError):
    """The token lacks the ``bot:play`` scope, or lichess does not know it (``/api/token/test``)."""


def check_account(client: LichessClient, upgrade: bool) -> Account:
    """Check the token's scopes (``/api/token/test``), read the account, upgrade it to BOT when ``upgrade``.

    Raises:
        MissingScopeError: the token lacks ``bot:play`` (the message lists the scopes it has; never the token).
        NotBotError: not a BOT account and no ``upgrade``.
        LichessError: lichess could not be asked.
    """
    scopes = client.token_scopes()
    if scopes is None:
        raise MissingScopeError("lichess does not know this token (revoked or mistyped): create one with the scope "
                                f"{REQUIRED_SCOPE} at https://lichess.org/account/oauth/token")
    if REQUIRED_SCOPE not in scopes:
        raise MissingScopeError(f"the token lacks the scope {REQUIRED_SCOPE} (it has: {', '.join(scopes) or 'none'}); "
                                "create one with it at https://lichess.org/account/oauth/token")
    account = client.account()
    if not account.is_bot:
        name = account.username or "?"
        if not upgrade:
            raise NotBotError(f"the account {name} is not a BOT account; run `lichessbot play --upgrade` to "
                              "upgrade it (irreversible, and only for an account that has never played a game)")
        client.upgrade_to_bot()
        log.warning("account upgraded to BOT", username=name)
        account = replace(account, title="BOT")
    return account
