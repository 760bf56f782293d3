"""Bot arenas (config ``tournaments``, docs/bot.md "Arenas"): join the configured arenas (and those the operator
names) and the started bot-allowed arenas of the configured teams, at most ``max_arena_games`` at once;
withdraw from every one at a graceful stop. Pairings arrive as ``gameStart`` on the event stream and are
played like any game (the service starts them; lila refuses berserk for bots, so nothing is berserked).

As lila runs them:

* **bots allowed**: lila's team listing (``ApiJsonView``) never says ``botsAllowed``; each candidate's own
  page (``GET /api/tournament/{id}``, ``JsonView``) does, and is asked once per arena;
* **a failed join**: a 400 (bots not allowed, not a team member, a wrong password, finished) keeps that
  arena out for the run; a 429, a server error or no answer is tried again at the next look;
* **first moves**: lila withdraws a player who does not make the first move of an arena game in time
  (tournament ``TournamentApi.withdrawNonMover``: the game ends ``noStart``; round
  ``RoundGame.timeForFirstMove``): such an arena no longer holds a place and is joined again at the next
  look (no rejoin penalty);
* **pauses**: after a withdrawal of ours from a started arena lila may refuse our joins for a delay (tournament
  ``Pause``, kept per player, not per arena: 10 s the first time, then the arena's estimated game seconds
  / 15 x (pauses - 1), at most 120 s, the count reset after 20 minutes without a pause); no arena is asked
  before that delay is over;
* **places**: arenas named in the config or by the operator come first: when every place is taken and one
  of them waits, a team arena is withdrawn from to make room;
* ``password`` and ``team`` go with the join (``POST /api/tournament/{id}/join``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from lichessbot.config.arenas import TournamentsConfig
from lichessbot.lichess.arenas import FINISHED, STARTED, Arena
from lichessbot.lichess.client import LichessClient, LichessError
from lichessbot.lichess.events import GameInfo

__all__ = ["PAUSE_MAX_S", "PAUSE_MIN_S", "PAUSE_RESET_S", "ArenaPlayer", "pause_delay"]

log = structlog.get_logger("lichessbot.arenas")

#: lila tournament Pause: the first delay, the largest, and the quiet time that resets the count (seconds).
PAUSE_MIN_S, PAUSE_MAX_S, PAUSE_RESET_S = 10.0, 120.0, 1200.0
#: Priority of an arena: named (config ``join`` or the operator) before found in a team's listing.
NAMED, TEAM = 0, 1


def pause_delay(pauses: int, estimate_s: int | None) -> float:
    """Seconds before a rejoin after our ``pauses``-th withdrawal (lila tournament ``Pause.delayOf``)."""
    base = (estimate_s or 0) / 15
    return min(PAUSE_MAX_S, max(PAUSE_MIN_S, base * (pauses - 1)))


@dataclass
class _Place:
    """An arena we are in: when it finishes (Unix ms or None), the team we joined for, and its priority."""

    finishes_at: int | None
    team: str | None
    priority: int
    estimate_s: int | None = None


@dataclass(frozen=True)
class _Want:
    """An arena to be in (named): its password and team."""

    password: str | None = None
    team: str | None = None


class ArenaPlayer:
    """Joins and withdraws (``run`` in a thread until ``stopping`` is set; then it withdraws and returns).

    Args:
        config: the ``tournaments`` section.
        client: the bot's lichess client.
        stopping: set at a graceful stop (the first Ctrl-C) or at quit.
        clock: monotonic seconds (tests).
    """

    def __init__(self, config: TournamentsConfig, client: LichessClient, stopping: threading.Event,
                 clock: Callable[[], float] = time.monotonic):
        self.config, self.client, self.stopping, self._clock = config, client, stopping, clock
        self.joined: dict[str, _Place] = {}         # the arenas we are in now
        self.wanted: dict[str, _Want] = {tid: _Want() for tid in config.join}  # named arenas, in order
        self._refused: set[str] = set()             # a 400: not asked again
        self._left: set[str] = set()                # left by the operator: never rejoined this run
        self._bots: dict[str, bool] = {}            # botsAllowed of each arena page read
        self._join_after = -1.0                      # monotonic time lila's pause of our joins is over
        self._pauses, self._paused_at = 0, -PAUSE_RESET_S
        self._lock = threading.RLock()
        #: One join at a time (the loop's and the operator's): an arena is never joined twice at once. Taken
        #: before ``_lock``, never under it.
        self._join_lock = threading.RLock()
        self._wake = threading.Event()
        self.withdrawn: list[str] = []

    # the loop ----------------------------------------------------------------------------------------
    def run(self) -> None:
        """Join the named arenas, look at the teams' arenas every ``check_period`` s, and withdraw from every
        joined arena once ``stopping`` is set. Never raises."""
        try:
            while not self.stopping.is_set():
                self.step()
                self._wake.wait(self.config.check_period)
                self._wake.clear()
        except Exception:  # noqa: BLE001 - arenas must never take the bot down
            log.exception("arenas failed; no more arenas joined")
        finally:
            self.withdraw_all()

    def step(self) -> None:
        """One look: the named arenas first, then the teams' started arenas."""
        for tid, want in list(self.wanted.items()):
            with self._lock:
                if tid in self.joined:
                    continue
            self._join_named(tid, want)
        self._check_teams()

    def _join_named(self, tid: str, want: _Want) -> str:
        """A named arena: its page first (when it finishes, whether bots may join), then the join."""
        try:
            page = self.client.arena(tid)
        except LichessError as err:
            if err.status == 404:
                with self._lock:
                    self.wanted.pop(tid, None)
                    self._refused.add(tid)
            log.warning("arena page not read", tournament_id=tid, error=str(err))
            return f"arena {tid} not read: {err}"
        if page.status == FINISHED or not page.bots_allowed:
            why = "finished" if page.status == FINISHED else "bots are not allowed"
            with self._lock:
                self.wanted.pop(tid, None)
                self._refused.add(tid)
            log.warning("arena not joined", tournament_id=tid, error=why)
            return f"arena {tid} not joined: {why}"
        return self._join(tid, want.team, want.password, page, NAMED)

    def _check_teams(self) -> None:
        for team in self.config.teams:
            if self.stopping.is_set():
                return
            try:
                arenas = self.client.team_arenas(team, "started")
            except LichessError as err:
                log.warning("team arenas not read", team=team, error=str(err))
                continue
            for arena in arenas:
                if arena.status == STARTED and (not arena.team_battle or team in arena.team_battle) \
                        and self._bots_allowed(arena):
                    self._join(arena.id, team if arena.team_battle else None, None, arena, TEAM)

    def _bots_allowed(self, arena: Arena) -> bool:
        """Whether ``arena`` takes bots: its page says (read once; a failed read is tried at the next look)."""
        if arena.bots_allowed is not None:
            return arena.bots_allowed
        with self._lock:
            known = self._bots.get(arena.id)
        if known is None:
            try:
                page = self.client.arena(arena.id)
            except LichessError as err:
                log.warning("arena page not read", tournament_id=arena.id, error=str(err))
                return False
            known = bool(page.bots_allowed)
            with self._lock:
                self._bots[arena.id] = known
        return known

    # joining -----------------------------------------------------------------------------------------
    def _free_places(self) -> int:
        now_ms = time.time() * 1000
        with self._lock:
            for tid, place in list(self.joined.items()):
                if place.finishes_at is not None and place.finishes_at <= now_ms:
                    del self.joined[tid]  # finished: its place is free
            return self.config.max_arena_games - len(self.joined)

    def _join(self, tid: str, team: str | None, password: str | None, arena: Arena | None, priority: int) -> str:
        with self._join_lock:
            return self._join_one(tid, team, password, arena, priority)

    def _join_one(self, tid: str, team: str | None, password: str | None, arena: Arena | None,
                  priority: int) -> str:
        with self._lock:
            if tid in self.joined:
                return f"already in arena {tid}"
            if tid in self._refused or tid in self._left or self.stopping.is_set():
                return f"arena {tid} is not joined again (refused or left)"
            wait = self._join_after - self._clock()
        if wait > 0:
            log.debug("arena not joined yet: lichess's pause after our withdrawal", tournament_id=tid,
                      wait_s=round(wait, 1))
            return f"arena {tid}: lichess's pause after our withdrawal ({wait:.0f} s left)"
        if self._free_places() <= 0:
            if not self._make_room(priority):
                log.debug("arena not joined: max_arena_games reached", tournament_id=tid,
                          max_arena_games=self.config.max_arena_games)
                return f"arena {tid} not joined: max_arena_games ({self.config.max_arena_games}) reached"
            with self._lock:
                wait = self._join_after - self._clock()
            if wait > 0:  # the withdrawal that made room started lila's pause: joined at a later look
                return f"arena {tid}: room made; lichess's pause after our withdrawal ({wait:.0f} s left)"
        try:
            self.client.join_arena(tid, team, password)
        except LichessError as err:
            if err.status == 400:
                with self._lock:
                    self._refused.add(tid)
                    self.wanted.pop(tid, None)
                log.warning("arena not joined", tournament_id=tid, team=team, error=str(err))
            else:
                log.warning("arena not joined yet: trying again at the next look", tournament_id=tid,
                            error=str(err))
            return f"arena {tid} not joined: {err}"
        with self._lock:
            self.joined[tid] = _Place(arena.finishes_at if arena else None, team, priority,
                                      arena.estimate_s if arena else None)
        log.info("arena joined", tournament_id=tid, team=team)
        return f"joined arena {tid}"

    def _make_room(self, priority: int) -> bool:
        """Withdraw from a lower-priority arena (a team's) for a named one; True when a place was freed."""
        with self._lock:
            lower = [tid for tid, p in self.joined.items() if p.priority > priority]
        if not lower:
            return False
        self._withdraw(lower[-1], "room for a named arena")
        return True

    # the operator and the service ----------------------------------------------------------------------
    def join(self, tid: str, team: str | None = None, password: str | None = None) -> str:
        """The operator's ``join``: a named arena from now on (kept while the run lasts); tried now (the loop
        sees it once this join is over: it never joins it at the same time)."""
        with self._join_lock:
            with self._lock:
                self._left.discard(tid)
                self._refused.discard(tid)
                want = self.wanted[tid] = _Want(password, team)
            return self._join_named(tid, want)

    def leave(self, tid: str) -> str:
        """The operator's ``leave``: withdraw and never rejoin this arena in this run."""
        with self._lock:
            self._left.add(tid)
            self.wanted.pop(tid, None)
            inside = tid in self.joined
        if not inside:
            return f"not in arena {tid}; it will not be joined"
        return self._withdraw(tid, "the operator's leave")

    def game_finished(self, game: GameInfo) -> None:
        """A game ended (``gameFinish``): an arena game that ended ``noStart`` without our win means lila
        withdrew us (TournamentApi.withdrawNonMover): that arena holds no place until we join it again."""
        tid = game.tournament_id
        if tid is None or game.status != "noStart" or game.winner == game.color:
            return
        with self._lock:
            place = self.joined.pop(tid, None)
        if place is not None:
            log.warning("withdrawn from the arena by lichess: no first move in time", tournament_id=tid,
                        game_id=game.game_id)
            self._wake.set()

    # withdrawing -------------------------------------------------------------------------------------
    def _withdraw(self, tid: str, why: str) -> str:
        try:
            self.client.withdraw_arena(tid)
        except LichessError as err:
            log.warning("arena not withdrawn", tournament_id=tid, error=str(err))
            return f"arena {tid} not left: {err}"
        now = self._clock()
        with self._lock:
            place = self.joined.pop(tid, None)
            self._pauses = 1 if now - self._paused_at > PAUSE_RESET_S else self._pauses + 1
            self._paused_at = now
            delay = pause_delay(self._pauses, place.estimate_s if place else None)
            self._join_after = max(self._join_after, now + delay)
            self.withdrawn.append(tid)
        log.info("arena withdrawn", tournament_id=tid, why=why, rejoin_after_s=round(delay))
        return f"left arena {tid}"

    def withdraw_all(self) -> None:
        """Withdraw from every joined arena (no more pairings; a running game is played out). Never raises."""
        with self._lock:
            tids = list(self.joined)
        for tid in tids:
            self._withdraw(tid, "stopping")
            with self._lock:
                self.joined.pop(tid, None)

    def wake(self) -> None:
        self._wake.set()
