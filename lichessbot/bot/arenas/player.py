"""Bot arenas (config ``tournaments``, docs/bot.md "Arenas"): join the configured arenas and the started
bot-allowed arenas of the configured teams, at most ``max_arena_games`` at once; withdraw from every one at
a graceful stop. Pairings arrive as ``gameStart`` on the event stream and are played like any game (the
service starts them; lila refuses berserk for bots, so nothing is berserked).

A join that fails (lila's 400: bots not allowed, not a team member, finished) is logged once and that arena
is not asked again; a failed look at a team's arenas is logged and tried at the next period.
"""

from __future__ import annotations

import threading
import time

import structlog

from lichessbot.config.arenas import TournamentsConfig
from lichessbot.lichess.arenas import STARTED, Arena
from lichessbot.lichess.client import LichessClient, LichessError

__all__ = ["ArenaPlayer"]

log = structlog.get_logger("lichessbot.arenas")


class ArenaPlayer:
    """Joins and withdraws (``run`` in a thread until ``stopping`` is set; then it withdraws and returns).

    Args:
        config: the ``tournaments`` section.
        client: the bot's lichess client.
        stopping: set at a graceful stop (the first Ctrl-C) or at quit.
    """

    def __init__(self, config: TournamentsConfig, client: LichessClient, stopping: threading.Event):
        self.config, self.client, self.stopping = config, client, stopping
        #: arena id -> the Unix ms it finishes (None: not known); the arenas we are in now
        self.joined: dict[str, int | None] = {}
        self._refused: set[str] = set()  # arenas whose join failed: not asked again
        self.withdrawn: list[str] = []

    def run(self) -> None:
        """Join the configured arenas, look at the teams' arenas every ``check_period`` s, and withdraw from
        every joined arena once ``stopping`` is set. Never raises."""
        try:
            for tid in self.config.join:
                self._join(tid, None, None)
            while not self.stopping.is_set():
                self._check_teams()
                self.stopping.wait(self.config.check_period)
        except Exception:  # noqa: BLE001 - arenas must never take the bot down
            log.exception("arenas failed; no more arenas joined")
        finally:
            self.withdraw_all()

    def _room(self) -> bool:
        now_ms = time.time() * 1000
        for tid, finishes in list(self.joined.items()):
            if finishes is not None and finishes <= now_ms:
                del self.joined[tid]  # finished: its place is free
        return len(self.joined) < self.config.max_arena_games

    def _join(self, tid: str, team: str | None, finishes_at: int | None) -> None:
        if tid in self.joined or tid in self._refused or self.stopping.is_set():
            return
        if not self._room():
            log.info("arena not joined: max_arena_games reached", tournament_id=tid,
                     max_arena_games=self.config.max_arena_games)
            return
        try:
            self.client.join_arena(tid, team)
        except LichessError as err:
            self._refused.add(tid)
            log.warning("arena not joined", tournament_id=tid, team=team, error=str(err))
            return
        self.joined[tid] = finishes_at
        log.info("arena joined", tournament_id=tid, team=team)

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
                if self._playable(arena, team):
                    self._join(arena.id, team if arena.team_battle else None, arena.finishes_at)

    @staticmethod
    def _playable(arena: Arena, team: str) -> bool:
        """Started, open to bots, and (a team battle) one our team plays in."""
        return arena.status == STARTED and arena.bots_allowed and (not arena.team_battle or team in arena.team_battle)

    def withdraw_all(self) -> None:
        """Withdraw from every joined arena (no more pairings; a running game is played out). Never raises."""
        for tid in list(self.joined):
            try:
                self.client.withdraw_arena(tid)
                log.info("arena withdrawn", tournament_id=tid)
            except LichessError as err:
                log.warning("arena not withdrawn", tournament_id=tid, error=str(err))
            self.withdrawn.append(tid)
            del self.joined[tid]
