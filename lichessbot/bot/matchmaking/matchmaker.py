"""The matchmaking loop: when the bot is idle, challenge an online bot (section ``matchmaking``).

One thread (``matchmaker``) wakes every ``tick`` seconds and creates a challenge when all hold:

* ``allow_matchmaking``; the service is not stopping; lichess's daily limit is not pausing us;
* no challenge of ours is waiting for an answer (one at a time);
* a free slot: games running + accepted challenges < ``challenge.concurrency``, and with
  ``allow_during_games: false`` no game running at all;
* the admission allows a game against a bot (:meth:`~lichessbot.bot.challenges.Admission.reserve_bot_slot`): no incoming
  challenge waits for a slot, a slot for bot games is free (``games_reserved_for_humans``), and today's
  games against bots are fewer than ``challenge.max_bot_games_per_day`` (else matchmaking waits for the
  next UTC day);
* ``challenge_timeout`` minutes since the bot started or its last game ended, and ``min_wait`` seconds
  since our last challenge.

Each challenge uses the base settings or one of ``overrides``, chosen by ``selection`` and ``weight``
(:mod:`.order`; equal weights drawn at random: lichess-bot's
rule); bots we already play ``max_simultaneous_games_per_user`` games with (``busy_with``) are skipped.

The slot is reserved (the admission's pending set) before the request, in the same step as the last
checks, so an incoming challenge accepted meanwhile never takes the bot past ``concurrency`` nor past
the slots for bot games. An unanswered challenge is canceled after
``challenge_expiry`` seconds. A decline (event ``challengeDeclined`` with ``declineReasonKey``) is
recorded per ``challenge_filter`` for ``decline_hours`` hours and written to ``decline_file``; a 429 on
creation (lichess's daily limit) pauses matchmaking for the seconds lichess gives, else
``daily_limit_pause`` seconds, and that pause is written there too (a restart keeps it). Errors of the
other calls are logged; the client has already retried them with backoff.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from lichessbot.bot.challenges import Admission
from lichessbot.bot.matchmaking.choice import Choice, choose, decline_aspect
from lichessbot.bot.matchmaking.order import SettingsOrder
from lichessbot.config import BotConfig
from lichessbot.lichess.client import ChallengeLimited, LichessClient, LichessError
from lichessbot.lichess.events import (
    Account,
    Challenge,
    ChallengeCanceled,
    ChallengeDeclined,
    Connected,
    DeclineReason,
    GameFinish,
    GameStart,
    StreamEvent,
)
from lichessbot.lichess.keepalive import KeptChallenge
from lichessbot.lichess.users import BOT_GAMES_KEY

__all__ = ["Matchmaker", "MatchmakerOptions"]

log = structlog.get_logger("lichessbot.matchmaking")

#: Seconds a challenge lichess would not cancel (answered meanwhile) holds its slot and blocks new
#: challenges while its event has not arrived (ours: a stalled event stream must not let us over-challenge).
UNSEEN_TTL = 300.0
#: Key under which the slot of a challenge being created is reserved (before lichess gives its id).
_RESERVING = "matchmaking-reserving"


@dataclass(frozen=True)
class MatchmakerOptions:
    """How the loop runs (tests): ``tick`` seconds between rounds, the ``rng`` of the draws, ``clock``
    (epoch seconds: declines and pauses), ``ratings_refresh``: seconds after which our account (its
    ratings, for ``opponent_rating_difference``) is read again before a challenge (ours: an hour)."""

    tick: float = 1.0
    rng: random.Random = field(default_factory=random.Random)
    clock: Callable[[], float] = time.time
    ratings_refresh: float = 3600.0


@dataclass
class _Outstanding:
    """Our challenge waiting for an answer: its id, when it was made (monotonic s), to whom, and its keep-alive
    stream (lila's verdict comes there first: lichessbot/lichess/keepalive.py)."""

    id: str
    at: float
    username: str
    kept: KeptChallenge | None = None


class Matchmaker:
    """Challenges bots for the service; its slots, rules and records are the service's ``admission``."""

    def __init__(self, config: BotConfig, client: LichessClient, admission: Admission, stopping: threading.Event,
                 options: MatchmakerOptions | None = None):
        options = options or MatchmakerOptions()
        self.mm, self.config, self.client, self.admission = config.matchmaking, config, client, admission
        self.records = admission.records
        self._stopping = stopping
        self._tick = options.tick
        self._rng = options.rng
        self._order = SettingsOrder(self.mm, self._rng)  # matchmaking.selection over the base and the overrides
        self._clock = options.clock
        self._ratings_refresh = options.ratings_refresh
        self._me_at = -float("inf")                      # monotonic time our account was last read
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self.drawn: Counter[str] = Counter()              # settings used per challenge: default or override name
        self.waiting_for: str | None = None               # why the rules hold our challenges back (logged once)
        self.me: Account | None = None
        self.outstanding: _Outstanding | None = None      # our challenge waiting for an answer
        self.idle_since = time.monotonic()               # start, or the end of the last game
        self.last_challenge = -float("inf")              # monotonic time of our last challenge
        self.created = self.declined = self.accepted = self.canceled = 0
        self._creating = False                            # a creation request is in flight
        self._early: list[StreamEvent] = []               # answers that came before lichess's reply to it
        self._unseen: dict[str, float] = {}               # answered, per lichess, but no event yet: id -> time
        #: Paused by the operator (``matchmaking off``): no new challenge until ``matchmaking on``.
        self.paused = False

    # events (called by the service's event thread) ---------------------------------------------
    def on_event(self, event: Connected | StreamEvent) -> None:
        if isinstance(event, (ChallengeDeclined, ChallengeCanceled, GameStart)):
            with self._lock:
                if self._creating:  # the answer may concern the challenge whose id we do not know yet
                    self._early.append(event)
                    return
            eid = event.game.game_id if isinstance(event, GameStart) else event.challenge.id
            with self._lock:
                seen = self._unseen.pop(eid, None) is not None
            if seen and not isinstance(event, GameStart):
                self.admission.release(eid)
            with self._lock:
                ours = self.outstanding is not None and self.outstanding.id == eid
                if ours:
                    assert self.outstanding is not None
                    if self.outstanding.kept is not None:
                        self.outstanding.kept.close()
                    self.outstanding = None
                    if isinstance(event, GameStart):
                        self.accepted += 1
                        log.info("challenge accepted", challenge_id=eid)
            if ours:
                self.admission.release(eid)  # a started game holds its own slot; the service frees it too
                if isinstance(event, ChallengeDeclined):
                    self._declined(event.challenge)
        elif isinstance(event, GameFinish):
            with self._lock:
                self.idle_since = time.monotonic()
        self._wake.set()

    def _declined(self, ch: Challenge) -> None:
        reason = ch.decline_reason_key or DeclineReason.GENERIC
        opponent = (ch.dest_user.name or ch.dest_user.id) if ch.dest_user is not None else "?"
        self.declined += 1
        aspect = decline_aspect(self.mm.challenge_filter, reason, ch)
        log.info("challenge declined", challenge_id=ch.id, opponent=opponent, reason=reason,
                 filtered=None if aspect is None else (f"{aspect[0]}={aspect[1]}" if aspect[0] else "any game"))
        if aspect is not None:
            with self._lock:
                self.records.add(opponent, aspect, self._clock() + self.mm.decline_hours * 3600)
                self.admission.save_records()

    # the loop -----------------------------------------------------------------------------------
    def run(self) -> None:
        """Until the service stops. Never raises: one failed round is logged and the next one tried."""
        self._read_account()
        while not self._stopping.is_set():
            try:
                self.step()
            except Exception as err:  # noqa: BLE001 - matchmaking never stops the bot
                log.exception("matchmaking round failed", error=str(err))
            self._wake.wait(self._tick)
            self._wake.clear()
        self._cancel_outstanding("shutting down")

    def _read_account(self) -> None:
        """Our account (ratings) now; on failure the last one read stays."""
        self._me_at = time.monotonic()
        try:
            self.me = self.client.account()
        except LichessError as err:
            log.warning("account not read: ratings unknown" if self.me is None else "ratings not refreshed",
                        error=str(err))

    def wake(self) -> None:
        self._wake.set()

    def step(self) -> None:
        """One round: cancel an expired challenge, or create one when every condition holds."""
        now = time.monotonic()
        with self._lock:
            out = self.outstanding
        if out is not None:
            if now - out.at >= self.mm.challenge_expiry:
                self._cancel_outstanding(f"unanswered for {self.mm.challenge_expiry:g} s")
            return
        with self._lock:
            for cid in [c for c, t in self._unseen.items() if now - t >= UNSEEN_TTL]:
                del self._unseen[cid]
                self.admission.release(cid)
            if self._unseen:
                return  # an answer lichess gave is still on its way: the slot stays held
        if self.paused or self._stopping.is_set() or self._clock() < max(self.records.paused_until,
                                                          self.records.bot_games_paused_until):
            return
        if now - self.idle_since < self.mm.challenge_timeout * 60 or now - self.last_challenge < self.mm.min_wait:
            return
        if self.admission.busy() >= self.config.challenge.concurrency:
            return
        if not self.mm.allow_during_games and self.admission.running_games() > 0:
            return
        held = self.admission.reserve_bot_slot(_RESERVING)
        if held != self.waiting_for:
            if held is not None:
                log.info("matchmaking waits", why=held)
            self.waiting_for = held
        if held is not None:
            return
        try:
            self._challenge(now)
        finally:
            self.admission.release(_RESERVING)

    def _challenge(self, now: float) -> None:
        self.last_challenge = now
        if now - self._me_at >= self._ratings_refresh:
            self._read_account()
        try:
            online = self.client.online_bots()
        except LichessError as err:
            log.warning("online bots not listed", error=str(err))
            return
        name = self._order.pick()
        self.drawn[name or "default"] += 1
        busy_with = self.admission.busy_with() | self.admission.matchmaking_blocked  # + the online block lists
        with self._lock:
            self.records.prune(self._clock())
            choice, why = choose(self.mm.with_override(name), self.config.challenge, self.me, online, self.records,
                                 self._clock(), self._rng, busy_with)
        if choice is None:
            log.info("no challenge", why=why, settings=name or "default")
            self._order.no_opponent()
            return
        why = f"{why}; settings {name or 'default'}"
        with self._lock:
            self._creating = True
        try:
            if self._create(choice, why) is not None:
                self._order.sent()
        finally:
            with self._lock:
                self._creating, early, self._early = False, self._early, []
            for event in early:  # now matched against the outstanding challenge
                self.on_event(event)

    def _create(self, choice: Choice, why: str) -> Challenge | None:
        """Create the challenge; on success it is the outstanding one (returned), else None."""
        now = self.last_challenge
        try:
            kept = self.client.create_kept_challenge(choice.username, choice.form(),
                                                     hold_s=self.mm.challenge_expiry + 30)
            created = kept.challenge
        except ChallengeLimited as err:
            pause = err.seconds if err.seconds is not None else self.mm.daily_limit_pause
            with self._lock:
                self.records.paused_until = self._clock() + pause
                if err.rate_limit is not None and err.rate_limit.key == BOT_GAMES_KEY:
                    self.records.pause_bot_games(self._clock() + pause)  # no bot's challenge accepted either
                self.admission.save_records()
            log.warning("challenges limited by lichess: matchmaking paused", pause_s=round(pause), error=str(err))
            return None
        except LichessError as err:
            log.warning("challenge not created", opponent=choice.username, error=str(err))
            if err.status == 400:  # lichess refuses this bot (e.g. it does not accept challenges)
                with self._lock:
                    if err.rate_limit is not None:  # its daily limit of bot games (lila BotLimit OpponentLimit)
                        self.records.limit_opponent(choice.username, self._clock() + err.rate_limit.seconds)
                    else:
                        self.records.add(choice.username, ("", ""), self._clock() + self.mm.decline_hours * 3600)
                    self.admission.save_records()
            return None
        cid = created.id
        self.created += 1
        self.admission.reserve(cid, choice.username)
        with self._lock:
            self.outstanding = _Outstanding(cid, now, choice.username, kept)
        log.info("challenge created", challenge_id=cid, opponent=choice.username, variant=choice.variant,
                 speed=choice.speed, rated=choice.rated, tc=f"{choice.base}+{choice.increment}" if not choice.days
                 else f"{choice.days}d", why=why)
        return created

    def _cancel_outstanding(self, why: str) -> None:
        with self._lock:
            out, self.outstanding = self.outstanding, None
        if out is None:
            return
        verdict = out.kept.done if out.kept is not None else None
        if verdict is not None:
            # lila answered it on the keep-alive stream (its event may still be on the way): never cancel an
            # accepted challenge, lila would abort the new game (Challenge.apiCancel)
            log.info("challenge not canceled: lichess answered it", challenge_id=out.id, done=verdict)
            with self._lock:
                self._unseen[out.id] = time.monotonic()
            self.admission.reserve(out.id, out.username)
            if out.kept is not None:
                out.kept.close()
            return
        try:
            self.client.cancel_challenge(out.id)
        except LichessError as err:  # accepted or declined meanwhile: its event tells; the slot stays held
            log.info("challenge not canceled: answered meanwhile", challenge_id=out.id, error=str(err))
            with self._lock:
                self._unseen[out.id] = time.monotonic()
            self.admission.reserve(out.id, out.username)
            return
        self.admission.release(out.id)
        self.canceled += 1
        log.info("challenge canceled", challenge_id=out.id, opponent=out.username, why=why)
        if out.kept is not None:
            if out.kept.wait(1.0) == "accepted":  # the acceptance crossed our cancel: lila aborted the game
                log.warning("our cancel crossed the acceptance: lichess aborts that game", challenge_id=out.id)
            out.kept.close()
