"""lichess's Arena tournaments as frozen values (parsed once, where the answer is read). Shape: lichess-org/api
doc/specs/schemas/ArenaTournament.yaml (``GET /api/team/{teamId}/arena``, NDJSON), statuses from
ArenaStatus.yaml (10 created, 20 started, 30 finished)."""

from __future__ import annotations

from dataclasses import dataclass

from lichessbot.lichess.reading import JSON, MalformedEvent, bool_, int_, obj, opt_int, str_

__all__ = ["CREATED", "FINISHED", "STARTED", "Arena", "parse_arena"]

#: ArenaStatus.yaml.
CREATED, STARTED, FINISHED = 10, 20, 30


@dataclass(frozen=True)
class Arena:
    """One arena: ``status`` (10 created, 20 started, 30 finished), whether it takes bots, the teams of a
    team battle (empty otherwise) and when it finishes (Unix ms, None when not given)."""

    id: str
    name: str
    status: int
    bots_allowed: bool
    team_battle: tuple[str, ...] = ()
    finishes_at: int | None = None


def parse_arena(d: JSON) -> Arena:
    """An ArenaTournament object.

    Raises:
        lichessbot.lichess.reading.MalformedEvent: no ``id``.
    """
    tid = str_(d, "id")
    if not tid:
        raise MalformedEvent("an arena without an id")
    battle = obj(d, "teamBattle")
    teams = battle.get("teams") if battle else None
    return Arena(id=tid, name=str_(d, "fullName", tid), status=int_(d, "status"), bots_allowed=bool_(d, "botsAllowed"),
                 team_battle=tuple(t for t in teams if isinstance(t, str)) if isinstance(teams, list) else (),
                 finishes_at=opt_int(d, "finishesAt"))
