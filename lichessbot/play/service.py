"""The bot service (``lichessbot play``: :mod:`lichessbot.play.cli`). Events in, challenges answered, one
thread per game.

Running games are counted from the event stream's ``gameStart`` and ``gameFinish`` (one source of
truth; after an event-stream reconnect, and every ``playing_check_period`` seconds, the set is rebuilt
from ``/api/account/playing``, so a missed ``gameFinish`` frees its slot; a game thread that saw its
game end frees it too), plus the challenges accepted whose game has not started yet, so a burst of
challenges never exceeds ``challenge.concurrency``: the extra ones wait in a queue for a slot
(``challenge.queue_wait`` seconds, best first by ``sort_by`` and ``preference``), then are declined with
``later``. The rules that remember (games per user, recent bot challenges, the daily bot games, slots
reserved for humans) are in :mod:`lichessbot.play.challenge_rules`. A rematch offer (a challenge with
``rematchOf``) is a challenge like any other; its old game is over, so its slot is freed first.
Correspondence games hold no slot: their thread closes after ``correspondence.disconnect_time`` s off
our move and the check-in (every ``correspondence.checkin_period`` s) restarts the ones on our move.

Challenges are answered by a worker thread (a slow or rate-limited answer never stalls the event
stream); a challenge lichess sends again (after a reconnect) is recognised by its id and answered once.

Ctrl-C once: stop taking challenges (they are declined with ``later``) and finish the running games.
Twice: resign (or abort, before both sides moved) every game and exit.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

import structlog

from lichessbot.config import BotConfig
from lichessbot.lichess.challenge import Verdict, challenger_is_bot, decide
from lichessbot.lichess.client import LichessClient, LichessError
from lichessbot.lichess.matchmaking import DeclineRecords
from lichessbot.lichess.streams import CONNECTED, ReconnectingStream
from lichessbot.play.account import check_account
from lichessbot.play.answers import ChallengeAnswers
from lichessbot.play.challenge_rules import ChallengeRules
from lichessbot.play.chat import ChatSender
from lichessbot.play.game import Game
from lichessbot.play.matchmaker import Matchmaker
from lichessbot.play.publish import service_figures
from lichessbot.play.slots import GameSlots
from lichessbot.play.thinker import Thinker
from lichessbot.status import StatusHub

__all__ = ["BotService", "EngineLike"]

log = structlog.get_logger("lichessbot.bot")

#: Seconds a challenge id is remembered as answered (lichess re-sends pending ones on reconnect).
ANSWERED_TTL = 600.0


class EngineLike(Protocol):
    name: str

    def new_game(self, game_id: str | None = None) -> Thinker:
        """A thinker for one game; ``game_id`` goes on its log lines and the evaluation service's stats."""
        ...


class BotService(GameSlots):
    """The bot. ``run()`` blocks until stopped; ``stop()`` and ``quit()`` may be called from any thread.
    Its slots and what holds them (running games, accepted challenges) are those of :class:`GameSlots`."""

    def __init__(self, config: BotConfig, client: LichessClient, engine: EngineLike, *,
                 account: dict[str, Any] | None = None, upgrade: bool = False, reconnect_backoff: float = 1.0,
                 matchmaker_options: dict[str, Any] | None = None):
        self.config, self.client, self.engine = config, client, engine
        self._account, self._upgrade = account, upgrade
        self._backoff = reconnect_backoff
        super().__init__()
        self.games: dict[str, Game] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._stopping = threading.Event()
        self._quit = threading.Event()
        self._done = threading.Event()
        self._wake = threading.Event()
        self._fatal: BaseException | None = None
        self._events: ReconnectingStream | None = None
        self.chat: ChatSender | None = None
        self.me = ""
        self.games_played = 0
        self._answered: dict[str, float] = {}      # challenge id -> monotonic time its answer was queued
        self._answers: ChallengeAnswers | None = None  # set by run()
        self._next_check = self._next_checkin = 0.0
        self.playing_checks = 0
        self._checker: threading.Thread | None = None
        #: The status page's snapshots (``status.enabled``), else None; its server runs inside ``run``.
        self.status: StatusHub | None = StatusHub(config.status.finished_games) if config.status.enabled else None
        self.status_server: Any = None
        #: Declines, the daily-limit pause and today's bot games (matchmaking.decline_file), shared with the
        #: matchmaker; the rules that remember (lichessbot/play/challenge_rules.py), used under self._lock.
        self.records = DeclineRecords.load(config.matchmaking.decline_file, time.time())
        self.rules = ChallengeRules(config.challenge, self.records, self._save_records)
        self.matchmaker: Matchmaker | None = None   # section matchmaking (lichessbot/play/matchmaker.py)
        if config.matchmaking.allow_matchmaking:
            self.matchmaker = Matchmaker(config, client, busy=self.busy, running=lambda: len(self.running),
                                         reserve=self.reserve, release=self.release, stopping=self._stopping,
                                         records=self.records, reserve_bot_slot=self._reserve_bot_slot,
                                         busy_with=self._busy_with, **(matchmaker_options or {}))

    # control -----------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop taking challenges; ``run`` returns once the running games are over."""
        self._stopping.set()
        self._wake.set()

    def quit(self) -> None:
        """Resign or abort every game and return from ``run`` now."""
        self._stopping.set()
        self._quit.set()
        self._wake.set()

    def _save_records(self) -> None:
        try:
            self.records.save(self.config.matchmaking.decline_file)
        except OSError as err:
            log.warning("matchmaking records not saved", path=self.config.matchmaking.decline_file, error=str(err))

    # the main loop -----------------------------------------------------------------------------
    def run(self) -> int:
        """Serve until stopped. Returns 0. Raises NotBotError or LichessError (bad token...)."""
        account = self._account or check_account(self.client, self._upgrade)
        self.me = str(account.get("username") or account.get("id"))
        log.info("bot online", username=self.me, url=self.client.url, engine=self.engine.name,
                 concurrency=self.config.challenge.concurrency)
        self.chat = ChatSender(self.client.post_chat)
        self._start_status_page()
        self._answers = ChallengeAnswers(self.client, self.status, self._answer_failed)
        answers = threading.Thread(target=self._answers.run, name="events-answers", daemon=True)
        answers.start()
        events = threading.Thread(target=self._read_events, name="events", daemon=True)
        events.start()
        matchmaker = None
        if self.matchmaker is not None:
            matchmaker = threading.Thread(target=self.matchmaker.run, name="matchmaker", daemon=True)
            matchmaker.start()
        now = time.monotonic()
        self._next_check = now + self.config.playing_check_period
        self._next_checkin = now + self.config.correspondence.checkin_period
        try:
            while True:
                self._wake.wait(0.2)
                self._wake.clear()
                self._reap()
                self._serve_queue()
                self._periodic_checks()
                self._publish_status()
                if self._fatal is not None or self._quit.is_set():
                    break
                if self._stopping.is_set() and not self._threads and self.busy() == 0:
                    break  # every game started (or accepted) is over
        finally:
            with self._lock:  # after this no game thread is started (_start_game checks _done under the lock)
                self._done.set()
                games, threads = list(self.games.values()), list(self._threads.values())
            if self._events is not None:
                self._events.close()
            for g in games:
                if self._quit.is_set():
                    g.quit.set()
            for t in threads:
                t.join(timeout=15)
            self._answers.close()
            answers.join(timeout=15)
            if matchmaker is not None and self.matchmaker is not None:
                self._stopping.set()
                self.matchmaker.wake()
                matchmaker.join(timeout=15)
            if self._checker is not None:
                self._checker.join(timeout=1)  # a call it waits on ends when the client closes
            self.chat.close()
            if self.status_server is not None:
                self.status_server.stop()
            log.info("bot offline", games_played=self.games_played)
        if self._fatal is not None:
            raise self._fatal
        return 0

    def _start_status_page(self) -> None:
        """Serve the status page (``status.enabled``); a port that cannot be bound is logged, not fatal."""
        if self.status is None:
            return
        from lichessbot.status.server import StatusServer  # noqa: PLC0415 - the web stack loads only for the page

        sc = self.config.status
        try:
            self.status_server = StatusServer(self.status, sc.host, sc.port).start()
            log.info("status page", url=self.status_server.url)
        except OSError as err:
            log.error("status page not started", host=sc.host, port=sc.port, error=str(err))
        self._publish_status()

    def _publish_status(self) -> None:
        """The service's figures for the status page (every loop turn, 0.2 s; never the token)."""
        if self.status is None:
            return
        with self._lock:
            running, corr, queued = len(self.running), len(self.correspondence), len(self.rules.queue)
        self.status.publish_service(service_figures(self.engine, self.client, {
            "username": self.me, "games_running": running, "correspondence_games": corr,
            "games_started": self.games_played, "concurrency": self.config.challenge.concurrency,
            "stopping": self._stopping.is_set(), "playing_checks": self.playing_checks,
            "challenges_queued": queued, "bot_games_today": self.records.bot_games_on(time.time())}))

    def _reap(self) -> None:
        """Forget the games whose threads ended (the shared dicts change under the lock)."""
        with self._lock:
            for gid, t in list(self._threads.items()):
                if not t.is_alive():
                    del self._threads[gid]
                    game = self.games.pop(gid, None)
                    if game is not None and game.over:  # its slot is free even if gameFinish never comes
                        self.running.discard(gid)
                        self.correspondence.discard(gid)
                        self._finished.add(gid)

    def _periodic_checks(self) -> None:
        """Start the playing check in its own thread when due (a paced or 429-paused call never blocks
        this loop); one check at a time."""
        now = time.monotonic()
        if self._done.is_set() or now < min(self._next_check, self._next_checkin):
            return
        if self._checker is not None and self._checker.is_alive():
            return
        checkin = now >= self._next_checkin
        self._next_check = now + self.config.playing_check_period
        if checkin:
            self._next_checkin = now + self.config.correspondence.checkin_period
        self._checker = threading.Thread(target=self._resync_games, kwargs={"checkin": checkin},
                                         name="events-playing-check", daemon=True)
        self._checker.start()

    def _read_events(self) -> None:
        self._events = ReconnectingStream(self.client.open_event_stream, "events",
                                          keep_going=lambda: not self._done.is_set(), backoff=self._backoff)
        try:
            for event in self._events:
                try:
                    self._on_event(event)
                except Exception as err:  # noqa: BLE001 - one bad event never stops the bot
                    log.exception("event not handled", type=event.get("type"), error=str(err))
        except LichessError as err:
            log.error("event stream refused", error=str(err))
            self._fatal = err
        finally:
            self._wake.set()

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if self.matchmaker is not None:
            self.matchmaker.on_event(event)
        if kind == CONNECTED:
            log.info("event stream connected", reconnect=event["reconnect"])
            if event["reconnect"]:
                # In the playing-check thread, not here: a paced or 429-paused call must never stop
                # this thread from reading the stream (the next loop of run() starts the check).
                self._next_check = 0.0
                self._wake.set()
        elif kind == "challenge":
            ch = dict(event.get("challenge") or {})
            if "compat" in event:  # lichess sends compat beside the challenge
                ch["compat"] = event["compat"]
            self._on_challenge(ch)
        elif kind == "gameStart":
            game = event.get("game") or {}
            gid = str(game.get("gameId") or game.get("id"))
            with self._lock:
                self._pending.pop(gid, None)
                self._started_at[gid] = time.monotonic()
                (self.correspondence if _is_correspondence(game) else self.running).add(gid)
                self.rules.game_started(game)
            self._start_game(gid)
        elif kind == "gameFinish":
            game = event.get("game") or {}
            gid = str(game.get("gameId") or game.get("id"))
            with self._lock:
                self.running.discard(gid)
                self.correspondence.discard(gid)
                self._finished.add(gid)
            log.info("game finished", game_id=gid, status=(game.get("status") or {}).get("name"),
                     winner=game.get("winner"))
        elif kind in ("challengeCanceled", "challengeDeclined"):
            cid = str((event.get("challenge") or {}).get("id"))
            with self._lock:
                self._pending.pop(cid, None)
                if self._answers is not None:
                    self._answers.canceled(cid)
                if self.rules.dequeue(cid):
                    log.info("queued challenge canceled by the challenger", challenge_id=cid)
        else:
            log.debug("event ignored", type=kind)

    def _on_challenge(self, ch: dict[str, Any]) -> None:
        cid = str(ch.get("id"))
        challenger = (ch.get("challenger") or {}).get("name", "?")
        if str((ch.get("challenger") or {}).get("id", "")).lower() == self.me.lower():
            return  # our own outgoing challenge
        now = time.monotonic()
        with self._lock:
            self._answered = {k: t for k, t in self._answered.items() if now - t < ANSWERED_TTL}
            if cid in self._answered:
                log.info("challenge sent again: already answered", challenge_id=cid)
                return
            self._answered[cid] = now
        if self._stopping.is_set():
            v: Verdict | None = Verdict.no("later", "shutting down")
        else:
            with self._lock:  # decide and reserve atomically: a burst never exceeds concurrency
                old = str(ch.get("rematchOf") or "")
                if old and old in self.running:  # lichess offers a rematch once the game is over
                    self.running.discard(old)
                    self._finished.add(old)
                    log.info("rematch offered: its game is over", game_id=old)
                live = self._live()[1]
                v = decide(self.config.challenge, ch, 0)
                if v.accept:
                    v = self.rules.admit(ch, live)
                if v.accept:
                    self.rules.take(ch)
                    if (ch.get("timeControl") or {}).get("type") == "clock":
                        self.rules.enqueue(ch)  # answered by _serve_queue: now if a slot is free
                        v = None
                    else:  # correspondence holds no slot
                        self.rules.note(cid, challenger, challenger_is_bot(ch))
        if v is None:
            self._serve_queue()
            with self._lock:
                queued = cid in self.rules.queue
            if queued:
                log.info("challenge queued", challenge_id=cid, challenger=challenger, speed=ch.get("speed"),
                         rematch_of=ch.get("rematchOf"), waiting=len(self.rules.queue))
            return
        self._answer(ch, v)

    def _answer(self, ch: dict[str, Any], v: Verdict) -> None:
        assert self._answers is not None  # run() sets it before it reads the event stream
        self._answers.answer(ch, v)

    def _serve_queue(self) -> None:
        """Answer the queued challenges a free slot, a rule or their wait decides (each loop turn); when
        stopping, decline them all with later."""
        with self._lock:
            if self._stopping.is_set():
                decided = [(ch, Verdict.no("later", "shutting down")) for ch in self.rules.drain()]
            elif not self.rules.queue:
                return
            else:
                decided = self.rules.serve(*self._live())
                now = time.monotonic()
                for ch, v in decided:
                    if v.accept:
                        self._pending[str(ch.get("id"))] = now
        for ch, v in decided:
            self._answer(ch, v)

    def _answer_failed(self, cid: str, err: LichessError) -> None:
        """An answer that could not be posted: its slot is freed; unless lichess refused it for good (400,
        404) it may still be pending, so it is answered again if lichess sends it again."""
        with self._lock:
            self._pending.pop(cid, None)
            if err.status not in (400, 404):
                self._answered.pop(cid, None)

    def _resync_games(self, checkin: bool = True) -> None:
        """The server's list of ongoing games is the truth (after an event-stream reconnect, and
        periodically): slots of games no longer listed are freed, missing real-time game threads are
        started, and with ``checkin`` the correspondence games on our move are resumed."""
        asked = time.monotonic()
        try:
            ongoing = self.client.ongoing_games()
        except LichessError as err:
            log.warning("ongoing games not listed", error=str(err))
            return
        self.playing_checks += 1
        if self._done.is_set():
            return
        realtime = {str(g.get("gameId") or g.get("id")) for g in ongoing if not _is_correspondence(g)}
        corr = {str(g.get("gameId") or g.get("id")): bool(g.get("isMyTurn")) for g in ongoing
                if _is_correspondence(g)}
        with self._lock:
            for g in ongoing:
                self.rules.game_started(g)
            recent = {gid for gid, t in self._started_at.items() if t >= asked - 1.0}  # gameStart while asking
            freed = self.running - realtime - recent
            self.running = (realtime | (self.running & recent))
            self.correspondence = set(corr) | (self.correspondence & recent)
        if freed:
            log.warning("slots freed: games no longer ongoing", games=sorted(freed))
        for gid in realtime:
            self._start_game(gid)
        for gid, my_turn in corr.items():
            if checkin and my_turn:
                self._start_game(gid)

    def _start_game(self, gid: str) -> None:
        with self._lock:
            t = self._threads.get(gid)
            if (t is not None and t.is_alive()) or self._done.is_set() or gid in self._finished:
                return
            assert self.chat is not None
            game = Game(gid, client=self.client, thinker=self.engine.new_game(gid), config=self.config, me=self.me,
                        chat=self.chat, engine_name=self.engine.name, reconnect_backoff=self._backoff,
                        status=self.status)
            if self._quit.is_set():
                game.quit.set()
            self.games[gid] = game
            self.games_played += 1
            t = threading.Thread(target=game.run, name=f"game-{gid}", daemon=True)
            self._threads[gid] = t
            t.start()


def _is_correspondence(game: dict[str, Any]) -> bool:
    """A gameStart / ongoing-game entry of a game without a real-time clock."""
    return game.get("speed") == "correspondence"
