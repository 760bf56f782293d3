"""The ``tournaments`` section: the bot arenas the bot joins (docs/bot.md, "Arenas").

Lichess lets a BOT account join an Arena whose organiser allows bots (``botsAllowed`` in lichess-org/api
doc/specs/schemas/ArenaTournament.yaml) with ``POST /api/tournament/{id}/join``; pairings then arrive on
the event stream as ``gameStart``, like any game. lichess-bot has no such section; BotLi joins arenas too.
Times in seconds.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from lichessbot.config.base import Strict

__all__ = ["TournamentsConfig"]

#: lichess ids: tournaments are 8 letters and digits; team ids are slugs (letters, digits, dashes).
_TOURNAMENT_ID = re.compile(r"^[A-Za-z0-9]{8}$")
_TEAM_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,59}$")


class TournamentsConfig(Strict):
    """Arenas to join: by id, or every bot-allowed arena of a team once it starts."""

    join: list[str] = Field(
        default_factory=list, description="Arena ids (8 characters, as in lichess.org/tournament/<id>) joined when "
        "the bot starts (one that refuses bots is logged and left out).")
    teams: list[str] = Field(
        default_factory=list, description="Team ids (as in lichess.org/team/<id>): their started arenas that allow "
        "bots are joined (with the team, for team battles), checked every check_period seconds.")
    max_arena_games: int = Field(
        1, ge=1, description="Arenas joined at once, so arena games in parallel (an arena pairs one game at a time).")
    check_period: float = Field(
        60, ge=1, description="Seconds between looks at the teams' started arenas.")

    @field_validator("join")
    @classmethod
    def _ids(cls, v: list[str]) -> list[str]:
        for tid in v:
            if not _TOURNAMENT_ID.match(tid):
                raise ValueError(f"{tid!r} is not an arena id (8 letters or digits, as in lichess.org/tournament/<id>)")
        return v

    @field_validator("teams")
    @classmethod
    def _teams(cls, v: list[str]) -> list[str]:
        for team in v:
            if not _TEAM_ID.match(team):
                raise ValueError(f"{team!r} is not a team id (lowercase letters, digits and dashes, as in "
                                 "lichess.org/team/<id>)")
        return v

    @property
    def enabled(self) -> bool:
        """Any arena or team to join."""
        return bool(self.join or self.teams)
