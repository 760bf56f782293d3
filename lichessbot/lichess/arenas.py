"""lichess's Arena tournaments as frozen values (parsed once, where the answer is read).

Two shapes: the listings (``GET /api/team/{teamId}/arena``, NDJSON, and ``GET /api/tournament``: lila
modules/tournament/src/main/ApiJsonView.scala, lichess-org/api doc/specs/schemas/ArenaTournament.yaml with a
numeric ``status``, ArenaStatus.yaml: 10 created, 20 started, 30 finished) and one arena's page
(``GET /api/tournament/{id}``: lila modules/tournament/src/main/JsonView.scala, ArenaTournamentFull.yaml:
``isStarted``/``isFinished``, ``secondsToFinish``). Only the page says whether bots may join
(``botsAllowed``): lila's listings never send it, although the spec's ArenaTournament schema lists it, so
a listing's arena has ``bots_allowed`` None (unknown: ask its page).
"""

from __future__ import annotations

from dataclasses import dataclass

from lichessbot.lichess.reading import JSON, MalformedEvent, int_, obj, opt_int, str_

__all__ = ["CREATED", "FINISHED", "STARTED", "Arena", "parse_arena", "parse_arena_page"]

#: ArenaStatus.yaml.
CREATED, STARTED, FINISHED = 10, 20, 30


@dataclass(frozen=True)
class Arena:
    """One arena: ``status`` (10 created, 20 started, 30 finished), whether it takes bots (None: the answer
    does not say, as lila's listings), the teams of a team battle (empty otherwise), when it finishes (Unix
    ms, None when not given), and its clock (seconds, for lila's pause delay; None when not given)."""

    id: str
    name: str
    status: int
    bots_allowed: bool | None
    team_battle: tuple[str, ...] = ()
    finishes_at: int | None = None
    clock_limit: int | None = None
    clock_increment: int | None = None

    @property
    def estimate_s(self) -> int | None:
        """lila's estimated game duration: limit + 40 x increment seconds (``Clock.estimateTotalSeconds``)."""
        if self.clock_limit is None:
            return None
        return self.clock_limit + 40 * (self.clock_increment or 0)


def _teams(d: JSON) -> tuple[str, ...]:
    battle = obj(d, "teamBattle")
    teams = battle.get("teams") if battle else None
    if isinstance(teams, dict):  # the page: {"teamId": "Team name", ...}
        return tuple(t for t in teams if isinstance(t, str))
    return tuple(t for t in teams if isinstance(t, str)) if isinstance(teams, list) else ()


def _bots(d: JSON) -> bool | None:
    value = d.get("botsAllowed")
    return value if isinstance(value, bool) else None


def parse_arena(d: JSON) -> Arena:
    """An arena of a listing (ApiJsonView).

    Raises:
        lichessbot.lichess.reading.MalformedEvent: no ``id``.
    """
    tid = str_(d, "id")
    if not tid:
        raise MalformedEvent("an arena without an id")
    clock = obj(d, "clock")
    return Arena(id=tid, name=str_(d, "fullName", tid), status=int_(d, "status"), bots_allowed=_bots(d),
                 team_battle=_teams(d), finishes_at=opt_int(d, "finishesAt"),
                 clock_limit=opt_int(clock, "limit"), clock_increment=opt_int(clock, "increment"))


def parse_arena_page(d: JSON, now_ms: int) -> Arena:
    """One arena's page (JsonView) read at Unix ms ``now_ms``: ``botsAllowed`` absent means no bots (lila adds
    it only when true).

    Raises:
        lichessbot.lichess.reading.MalformedEvent: no ``id``.
    """
    tid = str_(d, "id")
    if not tid:
        raise MalformedEvent("an arena without an id")
    finished, started = d.get("isFinished") is True, d.get("isStarted") is True
    to_finish = opt_int(d, "secondsToFinish")
    status = FINISHED if finished else STARTED if started or to_finish is not None else CREATED
    clock = obj(d, "clock")
    return Arena(id=tid, name=str_(d, "fullName", tid), status=status, bots_allowed=_bots(d) is True,
                 team_battle=_teams(d), finishes_at=None if to_finish is None else now_ms + 1000 * to_finish,
                 clock_limit=opt_int(clock, "limit"), clock_increment=opt_int(clock, "increment"))
