"""The bot service (``lichessbot play``: :mod:`lichessbot.bot.service.cli`). Events in, challenges answered, one
thread per game.

The service holds an :class:`~lichessbot.bot.challenges.Admission` (every challenge rule, slot, queue and
record): each event of the stream is parsed at the door (:mod:`lichessbot.lichess.events`), a challenge
goes to the admission and its answers to the answer worker (a slow or rate-limited answer never stalls
the event stream). Running games are counted from ``gameStart`` and ``gameFinish``; after an
event-stream reconnect, and every ``playing_check_period`` seconds, ``/api/account/playing`` is the
truth (a missed ``gameFinish`` frees its slot; a game thread that saw its game end frees it too).
Correspondence games hold no slot: a stream opens only for a game on our move (``isMyTurn`` of its
``gameStart`` or of the check-in), one every ``CORRESPONDENCE_START_GAP`` s; its thread closes after
``correspondence.disconnect_time`` s off our move and the check-in (every ``correspondence.checkin_period``
s) restarts the ones on our move.

:meth:`BotService.stop` (SIGTERM or Ctrl-C once): no new games (challenges declined with ``later``, no
matchmaking), the running games are finished. :meth:`BotService.quit` (twice, or when the grace period ends:
:mod:`lichessbot.bot.service.stopping`): exit now, a search under way cut short and its move posted, the games
left running on lichess, or resigned (aborted before both sides moved) with ``resign_on_quit``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, assert_never

import structlog

from lichessbot.bot.arenas.player import ArenaPlayer
from lichessbot.bot.challenges import Admission, Verdict
from lichessbot.bot.challenges.answers import ChallengeAnswers
from lichessbot.bot.chat.lines import ChatSender, greetings_with_links
from lichessbot.bot.games.shell import Game, PlayingThinker
from lichessbot.bot.games.takeback import LEDGER_FILE, TakebackLedger
from lichessbot.bot.matchmaking.matchmaker import Matchmaker, MatchmakerOptions
from lichessbot.bot.service.account import check_account
from lichessbot.bot.service.attached import (
    check_unlisted,
    publish_status,
    set_matchmaking,
    start_online,
    start_status_page,
)
from lichessbot.bot.service.blocklists import BlockListKeeper
from lichessbot.bot.service.commands import OperatorCommands
from lichessbot.bot.service.health import stream_budget
from lichessbot.config import BotConfig
from lichessbot.lichess.client import PLAYING_MAX, LichessClient, LichessError
from lichessbot.lichess.events import (
    Account,
    ChallengeCanceled,
    ChallengeDeclined,
    ChallengeEvent,
    Connected,
    GameFinish,
    GameFull,
    GameInfo,
    GameStart,
    OtherEvent,
    StreamEvent,
)
from lichessbot.lichess.streams import ReconnectingStream, event_stream
from lichessbot.online import OnlineMoves
from lichessbot.status import StatusHub

if TYPE_CHECKING:
    from lichessbot.status.server import StatusServer

__all__ = ["CORRESPONDENCE_START_GAP", "BotService", "EngineLike"]

log = structlog.get_logger("lichessbot.bot")

#: Seconds between two correspondence game streams opened (ours): a bot with dozens of correspondence
#: games opens them one at a time at connect, never all at once (lichess answers bursts of game streams
#: with 429s; https://lichess.org/page/api-tips: one request at a time).
CORRESPONDENCE_START_GAP = 2.0


class EngineLike(Protocol):
    @property
    def name(self) -> str:
        """The network's name (log lines, ``!name``)."""
        ...

    def new_game(self, game_id: str | None = None) -> PlayingThinker:
        """A thinker for one game; ``game_id`` goes on its log lines and the evaluation service's stats."""
        ...

    def use_online(self, online: OnlineMoves | None) -> None:
        """Ask ``online`` (the service's online sources; None: none) in the games started from now on."""
        ...


class BotService:
    """The bot. ``run()`` blocks until stopped; ``stop()`` and ``quit()`` may be called from any thread.
    Its slots and what holds them (running games, accepted challenges) are the :attr:`admission`'s."""

    def __init__(self, config: BotConfig, client: LichessClient, engine: EngineLike, *,
                 account: Account | None = None, upgrade: bool = False, reconnect_backoff: float = 1.0,
                 matchmaker_options: MatchmakerOptions | None = None, token: str | None = None,
                 engine_figures: Callable[[], Mapping[str, object]] | None = None):
        self.config, self.client, self.engine, self.engine_name = config, client, engine, engine.name
        #: The engine's figures for the status page (attached.engine_figures of the real engine; none by default).
        self.engine_figures: Callable[[], Mapping[str, object]] = engine_figures or (lambda: {})
        self._token = token  # for the online sources that need it (lichess's explorer); never logged
        #: The online move sources (``online_moves``, docs/online.md), built in ``run`` once the account is
        #: known, closed when it returns; None when no source is enabled.
        self.online: OnlineMoves | None = None
        self._account, self._upgrade = account, upgrade
        self._backoff = reconnect_backoff
        s, self._created_at = client.settings, time.monotonic()
        #: Seconds the event stream may be silent before the bot counts as unhealthy (health.stream_budget).
        self.health_budget_s = stream_budget(s.stream_read_timeout, s.timeout, s.max_backoff)
        self._lock = threading.Lock()  # guards games and _threads
        self.games: dict[str, Game] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._stopping = threading.Event()
        self._quit = threading.Event()
        self._resign = False  # quit(): resign the running games
        self._done = threading.Event()
        self._wake = threading.Event()
        self._fatal: BaseException | None = None
        self._events: ReconnectingStream[StreamEvent] | None = None
        self.chat: ChatSender | None = None
        self.me = ""
        self.games_played = 0
        self._answers: ChallengeAnswers | None = None  # set by run()
        self._next_check = self._next_checkin = 0.0
        self._corr_waiting: list[str] = []  # correspondence games on our move, started one per gap
        self._next_corr = 0.0
        self.playing_checks = 0
        self._checker: threading.Thread | None = None
        #: The status page's snapshots (``status.enabled``), else None; its server runs inside ``run``.
        self.status: StatusHub | None = StatusHub(config.status.finished_games) if config.status.enabled else None
        self.status_server: StatusServer | None = None
        #: Every challenge rule, slot, queue and record (lichessbot/bot/challenges/), shared with the matchmaker.
        self.admission = Admission(config)
        self.matchmaker: Matchmaker | None = None   # section matchmaking (lichessbot/bot/matchmaking/matchmaker.py)
        if config.matchmaking.allow_matchmaking:
            self.matchmaker = Matchmaker(config, client, self.admission, self._stopping, matchmaker_options)
        #: The online block lists (challenge/matchmaking online_block_list), read before the first challenge.
        self.block_lists = BlockListKeeper(config, self.admission, self._stopping)
        #: Section tournaments (lichessbot/bot/arenas/player.py): joins arenas, withdraws at a graceful stop; the
        #: operator's ``join`` and ``leave`` too.
        self.arenas = ArenaPlayer(config.tournaments, client, self._stopping)
        self._mm_options = matchmaker_options
        self._mm_thread: threading.Thread | None = None
        #: Takebacks accepted per running game, kept across restarts in state_directory/takebacks.json (whatever
        #: matchmaking.decline_file says: the ledger is not a matchmaking record).
        self.takebacks = TakebackLedger(os.path.join(config.state_directory, LEDGER_FILE))
        #: The ``gameFull`` of the last game started (the operator's ``rematch``).
        self.last_full: GameFull | None = None
        #: The operator's commands (terminal and status page; lichessbot/bot/service/commands.py).
        self.commands = OperatorCommands(self)

    # control -----------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop taking challenges; ``run`` returns once the running games are over."""
        self._stopping.set()
        self.admission.stop()
        self._wake.set()

    def quit(self, resign: bool | None = None) -> None:
        """Return from ``run`` now. ``resign`` (None: the config's ``resign_on_quit``): resign or abort
        every running game; else leave them running on lichess (a restart finds them: lichess re-sends
        their ``gameStart`` when the event stream opens)."""
        self._resign = self.config.resign_on_quit if resign is None else resign
        self._quit.set()
        self.stop()

    def busy(self) -> int:
        """Games running plus accepted challenges not started yet."""
        return self.admission.busy()

    def stopping(self) -> bool:
        """Whether the service stops taking games (a graceful stop or quit)."""
        return self._stopping.is_set()

    def set_matchmaking(self, on: bool) -> str:
        """The operator's ``matchmaking on|off`` (:func:`lichessbot.bot.service.attached.set_matchmaking`)."""
        if self.matchmaker is None and on and not self._stopping.is_set():
            self.matchmaker = Matchmaker(self.config, self.client, self.admission, self._stopping, self._mm_options)
            self._start_matchmaker()
        return set_matchmaking(self.matchmaker, on, self._stopping.is_set())

    def _start_matchmaker(self) -> None:
        if self.matchmaker is not None and self._mm_thread is None and not self._done.is_set():
            self._mm_thread = threading.Thread(target=self.matchmaker.run, name="matchmaker", daemon=True)
            self._mm_thread.start()

    def event_stream_silence(self) -> float:
        """Seconds since the event stream's last line or opening (before that: since made). Any thread."""
        alive_at = self._events.alive_at if self._events is not None else None
        return time.monotonic() - (self._created_at if alive_at is None else alive_at)

    # the main loop -----------------------------------------------------------------------------
    def run(self) -> int:
        """Serve until stopped. Returns 0. Raises NotBotError or LichessError (bad token...)."""
        account = self._account or check_account(self.client, self._upgrade)
        self.me = self.admission.signed_in(account)
        self.client.identify(self.me)
        log.info("bot online", username=self.me, url=self.client.url, engine=self.engine.name,
                 concurrency=self.config.challenge.concurrency)
        self.chat = ChatSender(self.client.post_chat)
        for key in greetings_with_links(self.config.greeting):
            log.warning("greeting never sent", key=f"greeting.{key}", reason="it has a link: lichess drops a bot's "
                        "chat lines with links")
        self.online = start_online(self.config, token=self._token, client=self.client, me=self.me, engine=self.engine)
        self.block_lists.start()
        self.status_server = start_status_page(self)
        self._answers = ChallengeAnswers(self.client, self.status,
                                         lambda cid, err: self.admission.answer_failed(cid, err.status,
                                                                                       err.rate_limit))
        answers = threading.Thread(target=self._answers.run, name="events-answers", daemon=True)
        answers.start()
        events = threading.Thread(target=self._read_events, name="events", daemon=True)
        events.start()
        arenas = threading.Thread(target=self.arenas.run, name="arenas", daemon=True)
        arenas.start()
        self._start_matchmaker()
        now = time.monotonic()
        self._next_check = now + self.config.playing_check_period
        self._next_checkin = now + self.config.correspondence.checkin_period
        try:
            while True:
                self._wake.wait(0.2)
                self._wake.clear()
                self._reap()
                self._start_correspondence()
                self._answer(self.admission.serve())
                self._periodic_checks()
                publish_status(self)
                if self._fatal is not None or self._quit.is_set():
                    break
                if self._stopping.is_set() and not self._threads and self.admission.busy() == 0:
                    break  # every game started (or accepted) is over
        finally:
            with self._lock:  # after this no game thread is started (_start_game checks _done under the lock)
                self._done.set()
                games, threads = list(self.games.values()), list(self._threads.values())
            if self._events is not None:
                self._events.close()
            for g in games:
                if self._quit.is_set():
                    g.resign_on_quit = self._resign
                    g.quit.set()
                    g.thinker.stop()  # a search under way returns its move now (posted before the game leaves)
            for t in threads:
                t.join(timeout=15)
            self._answers.close()
            answers.join(timeout=15)
            self._stopping.set()  # quit or a fatal error: matchmaking ends, arenas are withdrawn from too
            if self._mm_thread is not None and self.matchmaker is not None:
                self.matchmaker.wake()
                self._mm_thread.join(timeout=15)
            self.arenas.wake()
            arenas.join(timeout=15)
            if self._checker is not None:
                self._checker.join(timeout=1)  # a call it waits on ends when the client closes
            self.chat.close()
            if self.online is not None:
                self.engine.use_online(None)
                self.online.close()
            if self.status_server is not None:
                self.status_server.stop()
            log.info("bot offline", games_played=self.games_played)
        if self._fatal is not None:
            raise self._fatal
        return 0

    def _reap(self) -> None:
        """Forget the games whose threads ended; a game seen over frees its slot even if gameFinish never comes."""
        over: list[tuple[str, object]] = []
        with self._lock:
            for gid, t in list(self._threads.items()):
                if not t.is_alive():
                    del self._threads[gid]
                    game = self.games.pop(gid, None)
                    if game is not None and game.over:  # the record of a game played: extra_game_handlers.game_end
                        over.append((gid, None if game.core.abandoned else game.core.record))
        for gid, record in over:
            self.admission.game_finished(gid, record)

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
        self._events = event_stream(self.client, keep_going=lambda: not self._done.is_set(), backoff=self._backoff)
        try:
            for event in self._events:
                try:
                    self._on_event(event)
                except Exception as err:  # noqa: BLE001 - one bad event never stops the bot
                    log.exception("event not handled", type=type(event).__name__, error=str(err))
        except LichessError as err:
            log.error("event stream refused", error=str(err))
            self._fatal = err
        finally:
            self._wake.set()

    def _on_event(self, event: Connected | StreamEvent) -> None:
        if self.matchmaker is not None:
            self.matchmaker.on_event(event)
        match event:
            case Connected():
                log.info("event stream connected", reconnect=event.reconnect)
                if event.reconnect:
                    # In the playing-check thread, not here: a paced or 429-paused call must never stop
                    # this thread from reading the stream (the next loop of run() starts the check).
                    self._next_check = 0.0
                    self._wake.set()
            case ChallengeEvent():
                self._answer(self.admission.challenge(event.challenge))
            case GameStart():
                self.admission.game_started(event.game)
                self._start_or_wait(event.game)
            case GameFinish(game=game):
                self.admission.game_finished(game.game_id)
                self.arenas.game_finished(game)
                log.info("game finished", game_id=game.game_id, status=game.status, winner=game.winner)
            case ChallengeCanceled() | ChallengeDeclined():
                cid = event.challenge.id
                if self._answers is not None:
                    self._answers.canceled(cid)
                self.admission.canceled(cid)
            case OtherEvent():
                log.debug("event ignored", type=event.type)
            case _:
                assert_never(event)  # mypy: an event of the union with no case here

    def _game_full(self, gid: str, full: GameFull) -> None:
        self.last_full = full
        self.admission.game_full(gid, full)

    def _answer(self, decided: list[tuple[Any, Verdict]]) -> None:
        assert self._answers is not None  # run() sets it before it reads the event stream
        for ch, verdict in decided:
            self._answers.answer(ch, verdict)

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
        complete = len(ongoing) < PLAYING_MAX
        freed = self.admission.resync(ongoing, asked, complete)
        if not complete:  # lichess lists 50 games at most: a game left out is asked about on its own
            freed |= check_unlisted(self.client, self.admission, ongoing)
        if freed:
            log.warning("slots freed: games no longer ongoing", games=sorted(freed))
        for g in ongoing:
            if not g.correspondence or checkin:
                self._start_or_wait(g)

    def _start_or_wait(self, game: GameInfo) -> None:
        """A real-time game starts now; a correspondence game only on our move (``isMyTurn``; else the
        check-in finds it once it is), in line: one stream every ``CORRESPONDENCE_START_GAP`` s."""
        if not game.correspondence:
            self._start_game(game.game_id)
        elif game.is_my_turn:
            with self._lock:
                if game.game_id not in self._corr_waiting:
                    self._corr_waiting.append(game.game_id)
            self._wake.set()
        else:
            log.info("correspondence game not on our move: no stream until the check-in", game_id=game.game_id)

    def _start_correspondence(self) -> None:
        """Start the next correspondence game in line when its gap has passed (the main loop's turn)."""
        now = time.monotonic()
        with self._lock:
            if not self._corr_waiting or now < self._next_corr:
                return
            gid = self._corr_waiting.pop(0)
            self._next_corr = now + CORRESPONDENCE_START_GAP
        self._start_game(gid)

    def _start_game(self, gid: str) -> None:
        if not self.admission.may_start(gid):
            return
        with self._lock:
            t = self._threads.get(gid)
            if (t is not None and t.is_alive()) or self._done.is_set():
                return
            assert self.chat is not None
            game = Game(gid, client=self.client, thinker=self.engine.new_game(gid), config=self.config, me=self.me,
                        chat=self.chat, engine_name=self.engine.name, reconnect_backoff=self._backoff,
                        status=self.status, queued=self.admission.queued_names, takebacks=self.takebacks)
            game.on_full = lambda full, gid=gid: self._game_full(gid, full)
            if self._quit.is_set():
                game.resign_on_quit = self._resign
                game.quit.set()
            self.games[gid] = game
            self.games_played += 1
            t = threading.Thread(target=game.run, name=f"game-{gid}", daemon=True)
            self._threads[gid] = t
            t.start()
