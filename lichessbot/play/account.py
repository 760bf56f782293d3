"""The bot's account: it must be a BOT account (``lichessbot play --upgrade`` makes it one)."""

from __future__ import annotations

from dataclasses import replace

import structlog

from lichessbot.errors import LichessbotError
from lichessbot.lichess.client import LichessClient
from lichessbot.lichess.events import Account

__all__ = ["NotBotError", "check_account"]

log = structlog.get_logger("lichessbot.bot")


class NotBotError(LichessbotError, ValueError):
    """The token's account is not a BOT account (and --upgrade was not given)."""


def check_account(client: LichessClient, upgrade: bool) -> Account:
    """Read the account; upgrade it to BOT when ``upgrade``. Raises NotBotError, LichessError."""
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
