"""The test server's Arena tournaments (a mixin of :class:`devtools.lila.server.FakeLichess`).

As lila answers (lichess-org/api doc/specs/tags/arenatournaments/api-tournament-id-join.yaml and
api-tournament-id-withdraw.yaml, tags/teams/api-team-teamId-arena.yaml, schemas/ArenaTournament.yaml):

* ``POST /api/tournament/{id}/join`` (form ``team``, ``password``, ``pairMeAsap``): 200 ``{"ok": true}``;
  an unknown arena 404 ``{"error": "Not found."}``; a finished one, one that does not allow bots (for a BOT
  account), or a team battle joined without one of its teams: 400 ``{"error": ...}`` (the wording here is
  ours; lila's differs by case).
* ``POST /api/tournament/{id}/withdraw``: 200 ``{"ok": true}`` (a pause in a started arena: no more pairings).
* ``GET /api/team/{teamId}/arena?status=&max=``: NDJSON of ArenaTournament objects, last starting first, as
  lila's ``ApiJsonView`` writes them: **without** ``botsAllowed`` (the spec's schema lists it; lila never
  sends it in a listing).
* ``GET /api/tournament/{id}``: the arena's page as lila's ``JsonView`` writes it (``isStarted``,
  ``isFinished``, ``secondsToFinish``, ``botsAllowed`` only when true); 404 ``{"error": "Not found."}``.

lila's rules here: a join with a wrong ``password`` is a 400; a self-withdrawal of a top-7 player from a started
arena is a pause (tournament ``Pause``, per player: its joins are refused with a 400 until the delay is over); a
bot that misses its first move in an arena game is withdrawn (``withdraw_non_mover``, from the server's clock).

A joined, not withdrawn bot in a started arena is paired: a game with ``tournamentId`` starts (``gameStart``,
no challenge), and after it ends the next one, ``games`` in all. Joins and withdrawals are recorded in
:attr:`ArenaRoutes.arena_calls`.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from devtools.lila.base import ServerBase
from devtools.lila.players import Opponent, random_mover
from lichessbot.local.http import Handler

__all__ = ["ArenaRoutes", "FakeArena"]

#: ArenaStatus.yaml: 10 created, 20 started, 30 finished.
_STATUS = {"created": 10, "started": 20, "finished": 30}
#: lila tournament Pause: the first delay, the largest, and the quiet time that resets the count (seconds).
PAUSE_MIN_S, PAUSE_MAX_S, PAUSE_RESET_S = 10.0, 120.0, 1200.0


@dataclass
class FakeArena:
    id: str
    name: str
    bots_allowed: bool
    team: str | None          # the team that holds it (GET /api/team/{team}/arena lists it)
    team_battle: tuple[str, ...]
    status: str               # created, started, finished
    limit: int                # seconds
    increment: int
    games: int                # pairings the bot gets in all
    opponent: Opponent | None
    joined: bool = False
    paired: list[str] = field(default_factory=list)  # game ids, in order
    password: str | None = None  # a private arena: lila refuses a join without it (JoinResult.WrongPassword)
    #: whether the bot is among the top 7 (lila pauses only a top-7 player's self-withdrawal: tournament Pause)
    top7: bool = True
    starts_at: int = field(default_factory=lambda: int(time.time() * 1000))

    def page(self) -> dict[str, Any]:
        """``GET /api/tournament/{id}`` (lila tournament JsonView): no numeric status; ``botsAllowed`` when true."""
        d: dict[str, Any] = {
            "id": self.id, "createdBy": "organiser", "system": "arena", "minutes": 60, "fullName": self.name,
            "clock": {"limit": self.limit, "increment": self.increment}, "rated": True, "nbPlayers": 2,
            "variant": "standard", "berserkable": True, "perf": {"key": "bullet", "name": "Bullet", "icon": "T"},
            "standing": {"page": 1, "players": []}, "duels": []}
        if self.status == "created":
            d["secondsToStart"] = 60
        elif self.status == "started":
            d["isStarted"], d["secondsToFinish"] = True, 3600
        else:
            d["isFinished"] = True
        if self.bots_allowed:
            d["botsAllowed"] = True
        if self.team_battle:
            d["teamBattle"] = {"teams": {t: t.title() for t in self.team_battle}, "nbLeaders": 5}
        return d

    def json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id, "createdBy": "organiser", "system": "arena", "minutes": 60,
            "clock": {"limit": self.limit, "increment": self.increment}, "rated": True, "fullName": self.name,
            "nbPlayers": 2, "variant": {"key": "standard", "short": "Std", "name": "Standard"},
            "startsAt": self.starts_at, "finishesAt": self.starts_at + 3_600_000, "status": _STATUS[self.status],
            "perf": {"key": "bullet", "name": "Bullet", "position": 0, "icon": "T"}, "secondsToStart": 0}
        if self.team_battle:
            d["teamBattle"] = {"teams": list(self.team_battle), "nbLeaders": 5}
        return d


class ArenaRoutes(ServerBase):
    # The server's state this mixin uses (devtools.lila.server.FakeLichess defines it).
    lock: threading.RLock
    games: dict[str, Any]
    title: str | None
    _ids: int
    _stopping: threading.Event

    answers: dict[str, tuple[str, str | None]]

    if TYPE_CHECKING:
        def challenge(self, *, challenger: str = ..., rated: bool = ..., limit: float | None = ...,
                      increment: int = ..., bot_color: str = ..., tournament: str | None = ...,
                      opponent: Opponent | None = ..., announce: bool = ...) -> str: ...

    def _init_arenas(self) -> None:
        self.arenas: dict[str, FakeArena] = {}
        #: every join and withdrawal: (tournament id, "join" or "withdraw", form)
        self.arena_calls: list[tuple[str, str, dict[str, Any]]] = []
        #: lila tournament Pause, kept per player: the bot's pauses and the last one's monotonic time
        self.pauses, self.paused_at = 0, -PAUSE_RESET_S
        self.pause_refusals = 0                 # joins refused while the pause ran (JoinResult.Paused)
        #: arena id -> statuses of its next joins (429: lila's tourJoinOrResume limit)
        self.join_failures: dict[str, list[int]] = {}
        self.non_mover_withdrawals = 0          # withdrawNonMover of the bot
        #: seconds of the pause delays (lila's: 10 s at least); a test may shorten them
        self.pause_min_s, self.pause_max_s = PAUSE_MIN_S, PAUSE_MAX_S

    def add_arena(self, *, bots_allowed: bool = True, team: str | None = None, team_battle: tuple[str, ...] = (),
                  status: str = "started", limit: int = 60, increment: int = 0, games: int = 2,
                  opponent: Opponent | None = None, name: str = "Bot Arena", password: str | None = None) -> str:
        """A new arena; its 8-character id. ``opponent``: how the paired opponents play (random moves)."""
        with self.lock:
            self._ids += 1
            tid = f"ar{self._ids:06d}"
            self.arenas[tid] = FakeArena(tid, name, bots_allowed, team, team_battle, status, limit, increment, games,
                                         opponent, password=password)
            return tid

    def pause_left(self, arena: FakeArena) -> float:
        """Seconds the bot's pause still refuses its joins (lila tournament ``Pause.remainingDelay``: after the
        n-th pause, the arena's estimated game seconds / 15 x (n - 1), at least 10 s, at most 120 s)."""
        if self.pauses == 0 or time.monotonic() - self.paused_at > PAUSE_RESET_S:
            return 0.0
        delay = min(self.pause_max_s, max(self.pause_min_s, (arena.limit + 40 * arena.increment) / 15
                                          * (self.pauses - 1)))
        return self.paused_at + delay - time.monotonic()

    def withdraw_non_mover(self, tid: str) -> None:
        """lila TournamentApi.withdrawNonMover: the bot missed its first move in an arena game (no pause)."""
        with self.lock:
            arena = self.arenas.get(tid)
            if arena is not None and arena.joined:
                arena.joined = False
                self.non_mover_withdrawals += 1

    def set_arena_status(self, tid: str, status: str) -> None:
        """``created`` -> ``started`` -> ``finished``."""
        with self.lock:
            self.arenas[tid].status = status

    def _serve_arena(self, h: Handler, method: str, parts: list[str], query: dict[str, list[str]],
                     body: dict[str, Any]) -> None:
        """``GET /api/team/{id}/arena`` and ``POST /api/tournament/{id}/join|withdraw``."""
        if method == "GET" and parts[1] == "tournament":
            with self.lock:
                arena = self.arenas.get(parts[2])
                page = None if arena is None else arena.page()
            return h.reply(404, {"error": "Not found."}) if page is None else h.reply(200, page)
        if method == "GET":
            return self._team_arenas(h, parts[2], query.get("status", [""])[0] or None,
                                     int((query.get("max") or ["100"])[0]))
        tid, action = parts[2], parts[3]
        with self.lock:
            arena = self.arenas.get(tid)
            if arena is None:
                return h.reply(404, {"error": "Not found."})
            self.arena_calls.append((tid, action, dict(body)))
            if action == "join" and self.join_failures.get(tid):
                status = self.join_failures[tid].pop(0)
                return h.reply(status, {"error": "Too many requests. Try again later.",
                                        "ratelimit": {"key": "tournament.user.joinOrResume", "seconds": 1}}
                               if status == 429 else {"error": "injected failure"})
            if action == "withdraw":
                if arena.joined and arena.status == "started" and arena.top7:  # a self-withdrawal: a pause
                    now = time.monotonic()
                    self.pauses = 1 if now - self.paused_at > PAUSE_RESET_S else self.pauses + 1
                    self.paused_at = now
                arena.joined = False
                return h.reply(200, {"ok": True})
            if arena.status == "finished":
                return h.reply(400, {"error": "This tournament is finished."})
            if self.title == "BOT" and not arena.bots_allowed:
                return h.reply(400, {"error": "Bots are not allowed in this tournament."})
            if arena.team_battle and body.get("team") not in arena.team_battle:
                return h.reply(400, {"error": "You need to join with one of the teams of this battle."})
            if arena.password is not None and body.get("password") != arena.password:
                return h.reply(400, {"error": "Wrong entry code."})
            if self.pause_left(arena) > 1:  # lila: a pause of more than a second refuses the join
                self.pause_refusals += 1
                return h.reply(400, {"error": "Your pause is not over yet."})
            arena.joined = True
        h.reply(200, {"ok": True})

    def _team_arenas(self, h: Handler, team: str, status: str | None, nb: int) -> None:
        with self.lock:
            found = [a.json() for a in reversed(list(self.arenas.values()))
                     if (a.team == team or team in a.team_battle) and (status is None or a.status == status)]
        h.send(200, b"".join(json.dumps(a).encode() + b"\n" for a in found[:nb]), "application/x-ndjson")

    def _pair_arenas(self) -> None:
        """Pair the bot in every started arena it is in, one game at a time (a thread of the server)."""
        while not self._stopping.wait(0.05):
            with self.lock:
                for arena in self.arenas.values():
                    if not arena.joined or arena.status != "started" or len(arena.paired) >= arena.games:
                        continue
                    if arena.paired and not self.games[arena.paired[-1]].over:
                        continue
                    cid = self.challenge(challenger=f"rival{len(arena.paired) + 1}", limit=arena.limit,
                                         increment=arena.increment, tournament=arena.id, rated=True,
                                         bot_color="white" if len(arena.paired) % 2 == 0 else "black",
                                         opponent=arena.opponent or random_mover(len(arena.paired)), announce=False)
                    self.answers[cid] = ("accept", None)
                    self._start_game(self.challenges[cid])
                    arena.paired.append(cid)
