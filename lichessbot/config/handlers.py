"""The ``extra_game_handlers`` section: the operator's own Python functions, called by the bot (lichess-bot's
``extra_game_handlers.py``: ``is_supported_extra`` and game callbacks; docs/bot.md, "Extra game handlers").

Each key names one function as ``module:function`` (a module importable by Python, e.g. ``my_rules:accept``)
or ``path/to/file.py:function`` (a file, relative to the working directory). The config only checks the
form; the bot imports the functions when it starts (``lichessbot check-config`` does too), so a missing
module or function is reported before any game.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from lichessbot.config.base import Strict

__all__ = ["HANDLER_FORM", "ExtraGameHandlersConfig"]

#: ``module.path:function`` or ``some/file.py:function``.
HANDLER_FORM = re.compile(r"^(?P<module>[^:\s]+):(?P<function>[A-Za-z_][A-Za-z0-9_]*)$")


class ExtraGameHandlersConfig(Strict):
    """Functions of the operator called by the bot; null: none. A function that raises is logged and, for the
    challenge filter, counts as a decline."""

    challenge_filter: str | None = Field(
        None, description="lichess-bot's is_supported_extra: called with each challenge that passes every rule "
        "(lichessbot.lichess.events.Challenge); false declines it (reason generic).")
    game_start: str | None = Field(
        None, description="Called with the game's gameFull (lichessbot.lichess.events.GameFull) when a game "
        "starts (and again after a reconnect).")
    game_end: str | None = Field(
        None, description="Called with the game's record (lichessbot.bot.games.pgn.GameRecord: players, "
        "result, moves) when a game we played is over.")

    @field_validator("challenge_filter", "game_start", "game_end")
    @classmethod
    def _form(cls, spec: str | None) -> str | None:
        if spec is not None and not HANDLER_FORM.match(spec):
            raise ValueError(f"{spec!r} is not module:function (e.g. my_rules:accept, or handlers.py:accept)")
        return spec

    @property
    def enabled(self) -> bool:
        return any((self.challenge_filter, self.game_start, self.game_end))
