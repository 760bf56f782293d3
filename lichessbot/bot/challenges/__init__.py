"""Admission: every rule, slot, queue and record that decides which games the bot plays, in one room.

A challenge's way is ``stream -> event -> admission -> answer``: the service hands each
:class:`~lichessbot.lichess.events.Challenge` to :meth:`Admission.challenge` and posts the answers it
returns; nothing climbs back. :class:`Admission` is a value the service (and its matchmaker) *holds*:

* the pure filter (:mod:`.filter`: ``decide``, reasons, queue order);
* the rules that remember and the queue (:mod:`.stateful_rules`: games per user, recent bot challenges, the
  daily bot games, slots for humans);
* the records that outlive a run (:mod:`.records`: declines, pauses, bot games; ``matchmaking.decline_file``);
* the matchmaking choice (:mod:`.choice`);
* the slots (here): games running (from ``gameStart``/``gameFinish``, or the server's list of ongoing
  games), accepted challenges whose game has not started (``PENDING_TTL`` seconds at most), and the
  correspondence games (they hold no slot). Every field is guarded by one lock, so a decision and the
  slot it takes are one step: a burst of challenges never exceeds ``challenge.concurrency``.

A challenge lichess sends again (after a reconnect) is recognised by its id and answered once
(``ANSWERED_TTL``). A rematch offer (``rematchOf``) frees its old game's slot first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

import structlog

from lichessbot.bot.challenges.filter import Verdict, decide
from lichessbot.bot.challenges.handlers import Handlers
from lichessbot.bot.challenges.records import DeclineRecords
from lichessbot.bot.challenges.stateful_rules import ChallengeRules
from lichessbot.config import BotConfig
from lichessbot.lichess.events import Challenge, DeclineReason, GameFull, GameInfo, RateLimit
from lichessbot.lichess.users import BOT_GAMES_KEY, Account

__all__ = ["ANSWERED_TTL", "PENDING_TTL", "Admission", "Verdict"]

log = structlog.get_logger("lichessbot.bot")

#: Seconds an accepted challenge counts as a running game while its gameStart is awaited.
PENDING_TTL = 30.0
#: Seconds a challenge id is remembered as answered (lichess re-sends pending ones on reconnect).
ANSWERED_TTL = 600.0


class Admission:
    """The admission of one bot service: typed challenges and game events in, verdicts (with lichess's
    :class:`~lichessbot.lichess.decline.DeclineReason`) out, posted by the service; plain calls, the time
    given (``monotonic`` for waits and ages, ``clock`` epoch seconds for the records' days). Thread-safe (one
    lock). ``me``: our username, set once the account is read (our own outgoing challenges come back on the
    event stream and are not judged). ``records``: the records that outlive a run (default: read from
    ``matchmaking.decline_file``; they are written back when a limit or a bot game is counted)."""

    def __init__(self, config: BotConfig, *, records: DeclineRecords | None = None,
                 clock: Callable[[], float] = time.time, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._clock, self._monotonic = clock, monotonic
        self.me = ""
        #: Our ratings by perf key (``/api/account``), for ``challenge.rating_difference``: set by the service.
        self.ratings: dict[str, int] = {}
        #: The operator's functions (extra_game_handlers), imported now: a bad one stops the start (ConfigError).
        self.handlers = Handlers(config.extra_game_handlers)
        self._lock = threading.Lock()
        self.stopping = False
        self.running: set[str] = set()           # from gameStart / gameFinish (or the server's list)
        self.pending: dict[str, float] = {}      # accepted challenge id -> monotonic time
        self.correspondence: set[str] = set()    # correspondence games (no slot)
        self.started_at: dict[str, float] = {}   # game id -> monotonic time of its gameStart
        self.finished: set[str] = set()          # games seen over: never restarted
        self._answered: dict[str, float] = {}    # challenge id -> monotonic time its answer was decided
        #: Declines, the daily-limit pause and today's bot games (matchmaking.decline_file), shared with the
        #: matchmaker.
        self.records = records if records is not None else DeclineRecords.load(config.records_file(), clock())
        self.rules = ChallengeRules(config.challenge, self.records, self.save_records, clock=clock,
                                    monotonic=monotonic)
        #: Lowercase names of ``challenge.online_block_list`` (declined), and those the matchmaker never
        #: challenges (``matchmaking.online_block_list``, with the challenge lists when
        #: ``include_challenge_block_list``): set by the service as it refreshes the lists.
        self.online_blocked: frozenset[str] = frozenset()
        self.matchmaking_blocked: frozenset[str] = frozenset()
        #: The operator's blocks and allows for a while (commands ``block``/``allow``, BotLi's blacklist and
        #: whitelist commands): lowercase name -> monotonic time they end.
        self.blocked_until: dict[str, float] = {}
        self.allowed_until: dict[str, float] = {}

    def save_records(self) -> None:
        """Write the records (a failure is logged: the bot plays on with them in memory)."""
        path = self.config.records_file()
        try:
            self.records.save(path)
        except OSError as err:
            log.warning("matchmaking records not saved", path=path, error=str(err))

    def stop(self) -> None:
        """No new games: every challenge from now on (and every queued one) is declined with later."""
        with self._lock:
            self.stopping = True

    # challenges --------------------------------------------------------------------------------
    def challenge(self, ch: Challenge) -> list[tuple[Challenge, Verdict]]:
        """Judge challenge ``ch``; returns the answers to post now: its own (unless it waits in the queue,
        is ours or was answered already) and those of queued challenges a rule now decides."""
        if ch.challenger is not None and ch.challenger.id.lower() == self.me.lower():
            return []  # our own outgoing challenge
        now = self._monotonic()
        with self._lock:
            self._answered = {k: t for k, t in self._answered.items() if now - t < ANSWERED_TTL}
            if ch.id in self._answered:
                log.info("challenge sent again: already answered", challenge_id=ch.id)
                return []
            self._answered[ch.id] = now
            verdict = self._judge(ch)
        if verdict is not None:
            return [(ch, verdict)]
        decided = self.serve()
        with self._lock:
            queued = ch.id in self.rules.queue
            waiting = len(self.rules.queue)
        if queued:
            log.info("challenge queued", challenge_id=ch.id, challenger=ch.challenger_name or "?", speed=ch.speed,
                     rematch_of=ch.rematch_of, waiting=waiting)
        return decided

    def _judge(self, ch: Challenge) -> Verdict | None:
        """The verdict on ``ch`` now, or None when it joins the queue (a real-time challenge that passes
        every rule: ``serve`` gives it a slot). Decides and reserves in one step; call under the lock."""
        if self.stopping:
            return Verdict.no(DeclineReason.LATER, "shutting down")
        old = ch.rematch_of or ""
        if old and old in self.running:  # lichess offers a rematch once the game is over
            self.running.discard(old)
            self.finished.add(old)
            log.info("rematch offered: its game is over", game_id=old)
        live = self._live()[1]
        if ch.challenger_name.lower() in self.online_blocked:
            return Verdict.no(DeclineReason.GENERIC, f"{ch.challenger_name} is in an online block list")
        now = self._monotonic()
        name = ch.challenger_name.lower()
        if self.blocked_until.get(name, 0.0) > now:
            return Verdict.no(DeclineReason.GENERIC, f"{ch.challenger_name} is blocked by the operator for "
                                                     f"{(self.blocked_until[name] - now) / 60:.0f} more minutes")
        always = [n for n, t in self.allowed_until.items() if t > now]
        verdict = decide(self.config.challenge, ch, 0, self.ratings, always)
        if verdict.accept and self.handlers.filters:
            ok, why = self.handlers.accepts(ch)
            verdict = verdict if ok else Verdict.no(DeclineReason.GENERIC, why)
        if verdict.accept:
            verdict = self.rules.admit(ch, live)
        if not verdict.accept:
            return verdict
        self.rules.take(ch)
        if ch.realtime:
            self.rules.enqueue(ch)  # answered by serve: now if a slot is free
            return None
        self.rules.note(ch.id, ch.challenger_name, ch.challenger_is_bot)  # correspondence holds no slot
        return verdict

    def serve(self) -> list[tuple[Challenge, Verdict]]:
        """The queued challenges a free slot, a rule or their wait decides (the service asks every loop
        turn); when stopping, all of them, declined with later. Accepted ones hold their slot."""
        with self._lock:
            if self.stopping:
                return [(ch, Verdict.no(DeclineReason.LATER, "shutting down")) for ch in self.rules.drain()]
            if not self.rules.queue:
                return []
            decided = self.rules.serve(*self._live())
            now = self._monotonic()
            for ch, v in decided:
                if v.accept:
                    self.pending[ch.id] = now
            return decided

    def canceled(self, cid: str) -> None:
        """The challenger canceled (or lichess declined) challenge ``cid``: its slot and queue place go."""
        with self._lock:
            self.pending.pop(cid, None)
            if self.rules.dequeue(cid):
                log.info("queued challenge canceled by the challenger", challenge_id=cid)

    def answer_failed(self, cid: str, status: int | None, limit: RateLimit | None = None) -> None:
        """An answer that could not be posted: its slot is freed; unless lichess refused it for good (400,
        404) it may still be pending, so it is answered again if lichess sends it again.

        ``limit`` (lila's ``ratelimit`` of the refusal): a 429 with key ``bot.vsBot.day`` (our daily games
        against bots, lila BotLimit) stops every game against a bot for its ``seconds``; a 400 with one (the
        challenger's daily limit) stops games with that bot for its ``seconds``. Both are saved.
        """
        with self._lock:
            self.pending.pop(cid, None)
            if status not in (400, 404):
                self._answered.pop(cid, None)
            opp = self.rules.opponents.get(cid)
        if limit is None:
            return
        until = self._clock() + limit.seconds
        if status == 429 and limit.key == BOT_GAMES_KEY:
            self.records.pause_bot_games(until)
            log.warning("lichess's daily limit of games against bots: no bot games", seconds=round(limit.seconds))
        elif status == 400 and opp is not None and opp.name:
            self.records.limit_opponent(opp.name, until)
            log.warning("opponent at lichess's daily limit of games against bots", opponent=opp.name,
                        seconds=round(limit.seconds))
        else:
            return
        self.save_records()

    # games ---------------------------------------------------------------------------------------
    def game_started(self, game: GameInfo) -> None:
        """``gameStart``: the game holds its slot (correspondence: none); its opponent is noted."""
        with self._lock:
            self.pending.pop(game.game_id, None)
            self.started_at[game.game_id] = self._monotonic()
            (self.correspondence if game.correspondence else self.running).add(game.game_id)
            self.rules.game_started(game)

    def game_full(self, gid: str, full: GameFull) -> None:
        """A game's ``gameFull``: the opponent (the player other than us) and its BOT title are noted, and
        a game against a bot is counted for lichess's daily limit (``max_bot_games_per_day``)."""
        me = self.me.lower()
        opp = full.black if (full.white.id or "").lower() == me else full.white
        if opp.ai_level is not None:
            return
        with self._lock:
            self.rules.game_full(gid, opp.name or opp.id or "", opp.is_bot)
        self.handlers.game_started(full)  # extra_game_handlers.game_start

    def game_finished(self, gid: str, record: object = None) -> None:
        """``gameFinish`` (or a game thread that saw its game end): the slot is free, the game never restarts.
        ``record``: the game's record, from the thread of a game we played (extra_game_handlers.game_end)."""
        with self._lock:
            self.running.discard(gid)
            self.correspondence.discard(gid)
            self.finished.add(gid)
        if record is not None:
            self.handlers.game_ended(record)

    def signed_in(self, account: Account) -> str:
        """Our account, once read: our name (returned), and our ratings for ``challenge.rating_difference``."""
        self.me = account.username or account.id
        self.ratings = {k: p.rating for k, p in account.perfs.items() if p.rating}
        return self.me

    def may_start(self, gid: str) -> bool:
        """Whether a thread may (re)start for game ``gid`` (not seen over)."""
        with self._lock:
            return gid not in self.finished

    def resync(self, ongoing: Iterable[GameInfo], asked: float, complete: bool = True) -> set[str]:
        """The server's list of ongoing games (asked at monotonic ``asked``) is the truth: slots of games no
        longer listed are freed (not those started while asking). Returns the freed game ids.

        ``complete`` False: the list was cut at lichess's maximum (``/api/account/playing`` lists 50 games
        at most), so a game missing from it may still run: listed games are added, nothing is freed (the
        caller asks lichess about each of :meth:`unlisted` instead)."""
        ongoing = list(ongoing)
        realtime = {g.game_id for g in ongoing if not g.correspondence}
        corr = {g.game_id for g in ongoing if g.correspondence}
        with self._lock:
            for g in ongoing:
                self.rules.game_started(g)
            if not complete:
                self.running |= realtime - self.finished
                self.correspondence |= corr - self.finished
                return set()
            recent = {gid for gid, t in self.started_at.items() if t >= asked - 1.0}  # gameStart while asking
            freed = self.running - realtime - recent
            self.running = realtime | (self.running & recent)
            self.correspondence = corr | (self.correspondence & recent)
        return freed

    def unlisted(self, ongoing: Iterable[GameInfo]) -> set[str]:
        """The real-time games holding a slot that ``ongoing`` does not list."""
        listed = {g.game_id for g in ongoing}
        with self._lock:
            return self.running - listed

    # slots -----------------------------------------------------------------------------------------
    def _live(self) -> tuple[set[str], set[str]]:
        """(real-time games running or accepted, every game running or accepted); call under the lock."""
        now = self._monotonic()
        self.pending = {k: t for k, t in self.pending.items() if now - t < PENDING_TTL}
        realtime = self.running | set(self.pending)
        return realtime, realtime | self.correspondence

    def busy(self) -> int:
        """Games running plus accepted challenges not started yet."""
        with self._lock:
            return len(self._live()[0])

    def running_games(self) -> int:
        with self._lock:
            return len(self.running)

    def reserve(self, key: str, bot: str = "") -> None:
        """Hold a slot for ``key`` (a challenge of ours to the bot named ``bot``) for at most PENDING_TTL
        seconds."""
        with self._lock:
            self.pending[key] = self._monotonic()
            self.rules.note(key, bot, True)

    def hold(self, cid: str) -> None:
        """Hold a slot for challenge ``cid`` of ours (the operator's) until its game starts or it is declined or
        canceled (PENDING_TTL seconds at most), so that a stop waits for its game."""
        with self._lock:
            self.pending[cid] = self._monotonic()

    def release(self, key: str) -> None:
        with self._lock:
            self.pending.pop(key, None)

    def reserve_bot_slot(self, key: str) -> str | None:
        """Hold a slot for ``key`` (a challenge of ours, to a bot) if concurrency and the challenge rules
        allow a game against a bot now, in one step (an incoming challenge accepted meanwhile cannot take
        it too); else why not."""
        with self._lock:
            realtime, live = self._live()
            concurrency = self.config.challenge.concurrency
            if len(realtime) >= concurrency:
                return f"{len(realtime)} games running (concurrency {concurrency})"
            held = self.rules.bot_challenge_blocked(realtime, live)
            if held is None:
                self.pending[key] = self._monotonic()
                self.rules.note(key, "", True)
            return held

    def busy_with(self) -> set[str]:
        """Lowercase names of the users we play max_simultaneous_games_per_user games with."""
        with self._lock:
            return self.rules.names_at_limit(self._live()[1])

    def queued_names(self) -> list[str]:
        """The challengers waiting for a slot, next first (chat's ``!queue``)."""
        with self._lock:
            return self.rules.queued_names()

    def figures(self) -> dict[str, int]:
        """Counts for the status page: games running, correspondence games, challenges queued, bot games today."""
        with self._lock:
            return {"games_running": len(self.running), "correspondence_games": len(self.correspondence),
                    "challenges_queued": len(self.rules.queue),
                    "bot_games_today": self.records.bot_games_in_day(self._clock())}
