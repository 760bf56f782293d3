"""The challenge rules that remember (section ``challenge``): games per opponent, each bot's recent
challenges, today's games against bots, and the queue of challenges waiting for a slot.

:func:`lichessbot.bot.challenges.filter.decide` judges a challenge alone; :class:`ChallengeRules` adds what
depends on the games and challenges around it. Every rule declines with lichess's ``later``:

* ``max_simultaneous_games_per_user``: games with the challenger (running, accepted, and its challenges
  queued) may not exceed it;
* ``max_recent_bot_challenges`` within ``recent_bot_challenge_age`` seconds: challenges taken (accepted or
  queued) from the same bot, rematches included;
* ``max_bot_games_per_day``: games against bots in lila's current window (a fixed day from the window's
  first game, BotLimit over memo RateLimit), plus those accepted and not started
  yet (the count lives in :class:`~lichessbot.bot.challenges.records.DeclineRecords`, persisted in
  ``matchmaking.decline_file``); the matchmaker asks :meth:`ChallengeRules.bot_challenge_blocked` too;
* a real-time challenge needs a slot: fewer than ``concurrency`` real-time games (running or accepted),
  and for a bot fewer than ``concurrency - games_reserved_for_humans`` of them against bots. Without one it
  waits in the queue, ordered by ``sort_by`` and ``preference`` (:func:`~lichessbot.bot.challenges.filter.
  queue_order`), at most ``queue_wait`` seconds. Correspondence holds no slot and never waits.

Whether an opponent is a bot is known from the challenge (the challenger's ``title``), from our own
challenges (always bots), and for every game from its ``gameFull`` (each player's ``title``, lila
BotJsonView): a game found without its challenge (a restart, a tournament pairing, a bulk pairing) is
counted once its game stream opens (:meth:`ChallengeRules.game_full`).

Not thread-safe: the service calls it under its own lock. Times are monotonic seconds (``monotonic``)
except the records' (epoch seconds, ``clock``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

import structlog

from lichessbot.bot.challenges.filter import Verdict, queue_order
from lichessbot.bot.challenges.records import DeclineRecords
from lichessbot.config import ChallengeConfig
from lichessbot.lichess.events import Challenge, DeclineReason, GameInfo

__all__ = ["ChallengeRules", "Opponent"]

log = structlog.get_logger("lichessbot.bot")

def _later(why: str) -> Verdict:
    """A decline with lichess's ``later``: the reason of every rule here."""
    return Verdict.no(DeclineReason.LATER, why)


#: Seconds an opponent note outlives its game or challenge before it is pruned (ours).
NOTE_TTL = 3600.0


@dataclass
class Opponent:
    """The other side of a game or challenge: ``bot`` None when not known."""

    name: str
    bot: bool | None
    at: float  # monotonic time of the note


@dataclass
class _Queued:
    challenge: Challenge
    since: float
    order: tuple[int, int, int]


class ChallengeRules:
    """The rules above for one service. ``clock``: epoch seconds (the records' days); ``monotonic``: the
    seconds of waits and ages; ``save``: writes the records (called after a bot game is counted)."""

    def __init__(self, config: ChallengeConfig, records: DeclineRecords, save: Callable[[], None] = lambda: None,
                 *, clock: Callable[[], float] = time.time, monotonic: Callable[[], float] = time.monotonic):
        self.config, self.records = config, records
        self._save, self._clock, self._monotonic = save, clock, monotonic
        self.opponents: dict[str, Opponent] = {}     # game or challenge id -> the other side
        self.recent: dict[str, list[float]] = {}     # lowercase bot name -> times its challenges were taken
        self.queue: dict[str, _Queued] = {}          # challenge id -> waiting challenge
        self._started: set[str] = set()              # game ids seen started
        self._arrivals = 0
        self._pruned_at = self._monotonic()

    # bookkeeping -------------------------------------------------------------------------------
    def note(self, key: str, name: str, bot: bool | None) -> None:
        """``key`` (a game or challenge id, or a reserved slot) is a game with ``name``. A bot game that
        already started (its ``gameStart`` came before we knew) is counted now."""
        old = self.opponents.get(key)
        self.opponents[key] = Opponent(name or (old.name if old else ""), bot if bot is not None else
                                       (old.bot if old else None), self._monotonic())
        if bot and key in self._started:
            self._count(key)

    def game_started(self, game: GameInfo) -> None:
        """A ``gameStart`` (or an ongoing game, as ``/api/account/playing`` lists it): its opponent is
        noted, and a game against a bot is counted for today (once per game id)."""
        gid = game.game_id
        self._started.add(gid)
        known = self.opponents.get(gid)
        bot = known.bot if known else None
        if bot is None and gid in self.records.bot_games:
            bot = True  # counted before a restart
        self.note(gid, game.opponent.username, bot)

    def game_full(self, gid: str, opponent: str, bot: bool) -> None:
        """The ``gameFull`` of game ``gid``: the opponent's name and whether it has the BOT title (the
        truth, whatever the challenge said); a game against a bot is counted (once per game id)."""
        self._started.add(gid)
        self.note(gid, opponent, bot)

    def _count(self, gid: str) -> None:
        if self.records.count_bot_game(gid, self._clock()):
            log.info("game against a bot counted", game_id=gid, today=self.records.bot_games_in_day(self._clock()),
                     max_bot_games_per_day=self.config.max_bot_games_per_day)
            self._save()

    def is_bot(self, key: str) -> bool:
        opp = self.opponents.get(key)
        return bool(opp and opp.bot)

    def _with(self, name: str, live: Collection[str], skip: str = "") -> int:
        n = name.lower()
        games = sum(1 for k in live if (o := self.opponents.get(k)) is not None and o.name.lower() == n)
        return games + sum(1 for cid, q in self.queue.items()
                           if cid != skip and q.challenge.challenger_name.lower() == n)

    def names_at_limit(self, live: Collection[str]) -> set[str]:
        """Lowercase names we play (or have queued) ``max_simultaneous_games_per_user`` games with."""
        names = {o.name.lower() for k in live if (o := self.opponents.get(k)) is not None and o.name}
        names |= {q.challenge.challenger_name.lower() for q in self.queue.values()}
        return {n for n in names if self._with(n, live) >= self.config.max_simultaneous_games_per_user}

    def bot_games_today(self, live: Collection[str]) -> int:
        """Games against bots in lila's current window, plus those of ``live`` accepted and not started yet."""
        waiting = sum(1 for k in live if self.is_bot(k) and k not in self._started)
        return self.records.bot_games_in_day(self._clock()) + waiting

    # the rules ---------------------------------------------------------------------------------
    def admit(self, ch: Challenge, live: Collection[str], *, queued: bool = False) -> Verdict:
        """The rules of games per user, recent bot challenges and the daily bot games, for challenge
        ``ch`` given the ``live`` games and accepted challenges (ids). ``queued``: ``ch`` is in the queue
        already (it does not count against itself; its recent-challenge record is already made)."""
        c, name, bot = self.config, ch.challenger_name, ch.challenger_is_bot
        games = self._with(name, live, skip=ch.id if queued else "")
        if games >= c.max_simultaneous_games_per_user:
            return _later(f"{games} games with {name} (max_simultaneous_games_per_user "
                          f"{c.max_simultaneous_games_per_user})")
        if bot and not queued and c.max_recent_bot_challenges is not None and c.recent_bot_challenge_age:
            now = self._monotonic()
            times = [t for t in self.recent.get(name.lower(), []) if now - t < c.recent_bot_challenge_age]
            self.recent[name.lower()] = times
            if len(times) >= c.max_recent_bot_challenges:
                return _later(f"{len(times)} challenges from {name} in the last "
                              f"{c.recent_bot_challenge_age} s (max_recent_bot_challenges "
                              f"{c.max_recent_bot_challenges})")
        if bot and (paused := self.records.bot_games_paused_until) > (now_epoch := self._clock()):
            return _later(f"lichess's daily limit of games against bots (bot.vsBot.day) for "
                          f"{paused - now_epoch:.0f} s more")
        if bot and (until := self.records.opponent_limited_until(name, self._clock())) is not None:
            return _later(f"{name} reached lichess's daily limit of games against bots for "
                          f"{until - self._clock():.0f} s more")
        if bot and (today := self.bot_games_today(live)) >= c.max_bot_games_per_day:
            return _later(f"{today} games against bots in lichess's day window (max_bot_games_per_day "
                          f"{c.max_bot_games_per_day})")
        return Verdict.yes()

    def take(self, ch: Challenge) -> None:
        """Challenge ``ch`` passed every rule (accepted or queued): a bot's counts as recent."""
        if ch.challenger_is_bot:
            self.recent.setdefault(ch.challenger_name.lower(), []).append(self._monotonic())

    def slot(self, ch: Challenge, realtime: Collection[str]) -> Verdict:
        """A slot for real-time challenge ``ch``, given the ``realtime`` games running or accepted (ids)."""
        c = self.config
        if len(realtime) >= c.concurrency:
            return _later(f"{len(realtime)} games running (concurrency {c.concurrency})")
        if ch.challenger_is_bot:
            bots = sum(1 for k in realtime if self.is_bot(k))
            if bots >= c.concurrency - c.games_reserved_for_humans:
                return _later(f"{bots} games against bots running (concurrency {c.concurrency}, "
                              f"{c.games_reserved_for_humans} reserved for humans)")
        return Verdict.yes()

    def bot_challenge_blocked(self, realtime: Collection[str], live: Collection[str]) -> str | None:
        """Why a challenge of ours (to a bot) must wait now, or None: challenges are queued, the slots
        for bot games are taken, or today's bot games reached ``max_bot_games_per_day``."""
        c = self.config
        if self.queue:
            return f"{len(self.queue)} challenges wait for a slot"
        if (bots := sum(1 for k in realtime if self.is_bot(k))) >= c.concurrency - c.games_reserved_for_humans:
            return f"{bots} games against bots running ({c.games_reserved_for_humans} slots reserved for humans)"
        if (paused := self.records.bot_games_paused_until) > self._clock():
            return f"lichess's daily limit of games against bots (bot.vsBot.day) for {paused - self._clock():.0f} s"
        if (today := self.bot_games_today(live)) >= c.max_bot_games_per_day:
            return (f"{today} games against bots in lichess's day window "
                    f"(max_bot_games_per_day {c.max_bot_games_per_day})")
        return None

    # the queue ---------------------------------------------------------------------------------
    def enqueue(self, ch: Challenge) -> None:
        if ch.id not in self.queue:
            self._arrivals += 1
            self.queue[ch.id] = _Queued(ch, self._monotonic(), queue_order(ch, self._arrivals, self.config.sort_by,
                                                                        self.config.preference))

    def dequeue(self, cid: str) -> bool:
        """Remove a queued challenge (canceled by its challenger); whether it was queued."""
        return self.queue.pop(cid, None) is not None

    def queued_names(self) -> list[str]:
        """The challengers of the queued challenges, in queue order (next first)."""
        return [q.challenge.challenger_name or "?" for q in sorted(self.queue.values(), key=lambda q: q.order)]

    def drain(self) -> list[Challenge]:
        """Empty the queue (the bot stops); the challenges, in queue order."""
        out = [q.challenge for q in sorted(self.queue.values(), key=lambda q: q.order)]
        self.queue.clear()
        return out

    def serve(self, realtime: Collection[str], live: Collection[str]) -> list[tuple[Challenge, Verdict]]:
        """Decide the queued challenges that can be decided now, best first: accepted while a slot is free
        (each one accepted takes its slot and is noted), declined when a rule now refuses it or it waited
        ``queue_wait`` seconds. Returns ``(challenge, verdict)`` pairs, removed from the queue; the caller
        holds the slots of the accepted ones and posts the answers."""
        now = self._monotonic()
        realtime, live = set(realtime), set(live)
        self._prune(live, now)
        decided: list[tuple[Challenge, Verdict]] = []
        for q in sorted(self.queue.values(), key=lambda q: q.order):
            ch = q.challenge
            cid = ch.id
            verdict = self.admit(ch, live, queued=True)
            if verdict.accept:
                verdict = self.slot(ch, realtime)
                if verdict.accept:
                    realtime.add(cid)
                    live.add(cid)
                    self.note(cid, ch.challenger_name, ch.challenger_is_bot)
                elif now - q.since < self.config.queue_wait:
                    continue  # waits for a slot
            del self.queue[cid]
            decided.append((ch, verdict))
        return decided

    def _prune(self, live: Collection[str], now: float) -> None:
        if now - self._pruned_at < 60:
            return
        self._pruned_at = now
        self.opponents = {k: o for k, o in self.opponents.items() if k in live or now - o.at < NOTE_TTL}
        self._started &= set(self.opponents)
        age = self.config.recent_bot_challenge_age or 0
        self.recent = {n: ts for n, ts in self.recent.items() if any(now - t < age for t in ts)}
