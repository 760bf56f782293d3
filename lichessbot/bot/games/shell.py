"""One running game's shell: read its stream, ask the engine, post what the game's core decides, save the PGN.

The decisions are :class:`~lichessbot.bot.games.core.GameCore`'s (events and the time in, actions out); this
shell owns the I/O and the threads. A reader thread turns the game stream (reconnected while the game is on)
into a queue; the game thread hands each event to the core, carries out its actions (posts to lichess, chat
lines to the sender, the engine's think, ponder and level), and tells the core how a post went. A bad line
or an exception in a step is logged and the game plays on (resynced from the server's state).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, assert_never

from lichessbot.bot.chat.lines import ChatSender
from lichessbot.bot.games.actions import (
    Abandon,
    Abort,
    Action,
    AnswerTakeback,
    Claim,
    CountTakeback,
    ForgetTakebacks,
    Ponder,
    PostMove,
    Resign,
    Resync,
    Say,
    SetOpponent,
    ThinkRequest,
)
from lichessbot.bot.games.core import GameCore
from lichessbot.bot.games.pgn import game_stem, write_pgn
from lichessbot.bot.games.publish import game_snapshot, write_eval_svg
from lichessbot.bot.games.takeback import TakebackLedger
from lichessbot.config import BotConfig
from lichessbot.lichess.client import LichessClient, LichessError
from lichessbot.lichess.events import Connected, GameEvent, GameFull, GameState
from lichessbot.lichess.streams import ReconnectingStream, game_stream
from lichessbot.status import GameSnapshot, LiveSearch, StatusHub
from lichessbot.thinker.protocol import Decision, Thinker

__all__ = ["Game", "PlayingThinker"]


class PlayingThinker(Thinker, Protocol):
    """A game's thinker as the bot plays with it: a :class:`~lichessbot.thinker.protocol.Thinker` whose live
    search goes to ``on_live`` when set (the status page; :class:`~lichessbot.thinker.game_thinker.GameThinker`'s)."""

    on_live: Callable[[LiveSearch], None] | None



@dataclass(frozen=True)
class _EndOfStream:
    """The reader's last item in the queue: the game stream ended (the game is over, or we leave)."""


_EOS = _EndOfStream()


class Game:
    """Plays game ``game_id`` to the end (``run``); ``quit`` (an Event) leaves it (resigns: ``resign_on_quit``).
    ``core`` holds the game's state and decisions (its board, record, color, over...)."""

    def __init__(self, game_id: str, *, client: LichessClient, thinker: PlayingThinker, config: BotConfig, me: str,
                 chat: ChatSender, engine_name: str = "lichessbot", reconnect_backoff: float = 1.0,
                 status: StatusHub | None = None, queued: Callable[[], Sequence[str]] = tuple,
                 takebacks: TakebackLedger | None = None):
        self.id = game_id
        self._me = me  # our account's name (the PGN files of pgn_file_grouping opponent/all)
        self.client, self.thinker, self.config, self.chat = client, thinker, config, chat
        #: Takebacks accepted per game, kept across restarts: the core reads its count and asks for its writes.
        self.ledger = takebacks if takebacks is not None else TakebackLedger()
        self.core = GameCore(game_id, config=config, me=me, url=client.url, engine_name=engine_name, queued=queued,
                             takebacks_before=self.ledger.count(game_id))
        self.log = self.core.log
        self.quit = threading.Event()
        self._q: queue.Queue[Connected | GameEvent | _EndOfStream] = queue.Queue()
        self._backoff = reconnect_backoff
        self._stream: ReconnectingStream[GameEvent] | None = None
        self.status = status                 # the status page's hub (snapshots published to it), or None
        self.on_full: Callable[[GameFull], None] | None = None  # told each gameFull (the service's admission)
        self.resign_on_quit = False          # quit: resign/abort (else the game is left running on lichess)
        if status is not None:
            def publish_live(live: LiveSearch) -> None:
                status.publish_live(game_id, live)
            thinker.on_live = publish_live

    @property
    def over(self) -> bool:
        """The game is over for us (ended on lichess, or abandoned)."""
        return self.core.over

    @property
    def correspondence(self) -> bool:
        return self.core.correspondence

    @property
    def parked(self) -> bool:
        return self.core.parked

    # the loop ----------------------------------------------------------------------------------
    def run(self) -> None:
        """Play until the game is over (or ``quit``). Never raises: failures are logged."""
        core = self.core
        self._stream = game_stream(self.client, self.id, keep_going=lambda: not core.over and not self.quit.is_set(),
                                   backoff=self._backoff, log=self.log)
        reader = threading.Thread(target=self._read, args=(self._stream,), name=f"stream-{self.id}", daemon=True)
        reader.start()
        self.log.info("game started")
        try:
            while True:
                try:
                    event = self._q.get(timeout=0.2)
                except queue.Empty:
                    event = None
                if isinstance(event, _EndOfStream):
                    break
                if event is not None:
                    self._step(self._on_event, event)
                    self._publish()
                self._step(lambda: self._do(core.tick(time.monotonic())))
                if self.quit.is_set():
                    if self.resign_on_quit:
                        self._step(lambda: self._do(core.leave()))
                    break
                if core.over:
                    break
                request = None if self.quit.is_set() else core.to_play(time.monotonic())
                if request is not None:
                    self._step(self._play, request)
                    self._publish()
                elif core.park(time.monotonic()):
                    break
        finally:
            self._stream.close()
            self.thinker.close()
            self._finish()
            self._publish()

    def _on_event(self, event: Connected | GameEvent) -> None:
        if isinstance(event, GameFull) and self.on_full is not None:
            self.on_full(event)
        self._do(self.core.on_event(event, time.monotonic()))

    def snapshot(self) -> GameSnapshot:
        """The game now, for the status page and the eval graph (:func:`lichessbot.bot.games.publish.game_snapshot`)."""
        c = self.core
        return game_snapshot(game_id=self.id, record=c.record, initial=c.initial, times=c.times, state_at=c.state_at,
                             over=c.over, color=c.color, correspondence=c.correspondence)

    def _publish(self) -> None:
        """Hand the status page a snapshot of the game (nothing without a page, or before gameFull)."""
        if self.status is None or self.core.initial is None:
            return
        try:
            self.status.publish_game(self.snapshot())
        except Exception as err:  # noqa: BLE001 - the page never costs a game anything
            self.log.warning("status snapshot failed", error=str(err))

    def _step(self, fn: Callable[..., None], *args: object) -> None:
        try:
            fn(*args)
        except Exception as err:  # noqa: BLE001 - one failure never abandons a game
            self.core.failures += 1
            self.log.exception("game step failed; resyncing", error=str(err))
            self._resync()

    def _read(self, stream: ReconnectingStream[GameEvent]) -> None:
        try:
            for event in stream:
                if isinstance(event, GameState) and not event.running:
                    self.thinker.stop()
                self._q.put(event)
        except LichessError as err:
            self.log.error("game stream refused", error=str(err))
        except Exception as err:  # noqa: BLE001
            self.log.exception("game stream reader failed", error=str(err))
        finally:
            self._q.put(_EOS)

    def _resync(self) -> None:
        """Drop the game stream: the reconnection brings a fresh ``gameFull`` (the server's state)."""
        if self._stream is not None and not self.core.over:
            self._stream.drop()

    # the actions -------------------------------------------------------------------------------
    def _do(self, actions: list[Action]) -> None:
        """Carry out ``actions`` in order; an error of one (a post lichess refused) skips the rest."""
        for action in actions:
            self._act(action)

    def _act(self, action: Action) -> None:
        core, gid, client = self.core, self.id, self.client
        match action:
            case Say(room=room, text=text):
                self.chat.send(gid, room, text)
            case PostMove():
                self._post(action)
            case Resign():
                client.resign_game(gid)
            case Abort():
                client.abort_game(gid)
            case Claim(draw=draw):
                try:
                    (client.claim_draw if draw else client.claim_victory)(gid)
                except LichessError as err:
                    self.log.info("claim refused; retrying while the opponent is gone", error=str(err))
            case AnswerTakeback():
                self._answer_takeback(action)
            case CountTakeback():
                self.ledger.add(gid)
            case ForgetTakebacks():
                self.ledger.forget(gid)
            case Ponder(board=board, reply=reply):
                self.thinker.ponder(board, reply)
            case SetOpponent(rating=rating, rated=rated, config=config, name=name):
                self._do(core.level_chosen(self.thinker.set_opponent(rating, rated, config, name)))
            case Resync():
                self._resync()
            case Abandon():
                self._abandon(action)
            case _:
                assert_never(action)  # mypy: an action of the union with no case here

    def _answer_takeback(self, action: AnswerTakeback) -> None:
        if action.accept and self._newer_state_queued():
            # the offer may be gone in that state: a yes without it would propose a takeback of ours
            self._do(self.core.takeback_posted(action, "a newer game state is waiting"))
            return
        try:
            self.client.answer_takeback(self.id, action.accept)
        except LichessError as err:  # the offer may be gone meanwhile; a new state brings it back if not
            self._do(self.core.takeback_posted(action, str(err)))
        else:
            self._do(self.core.takeback_posted(action, None))

    def _play(self, request: ThinkRequest) -> None:
        """Think (unless the move was decided already) and carry out what the core decides."""
        decision: Decision | None = request.decided
        if decision is None:
            try:
                decision = self.thinker.think(request.board, request.clock,
                                              first_moves_unclocked=request.first_moves_unclocked,
                                              time_left_s=request.time_left_s)
            except Exception as err:  # noqa: BLE001 - play on with a legal move rather than lose on time
                self.log.exception("thinking failed; playing a fallback move", error=str(err))
        self._do(self.core.decided(request, decision, time.monotonic()))

    def _post(self, post: PostMove) -> None:
        if post.not_before is not None:  # fake_think_time: the move waits, as a person would think
            self.quit.wait(max(0.0, post.not_before - time.monotonic()))  # a stop cuts the wait short
        try:
            self.client.make_move(self.id, post.move.uci(), offering_draw=post.offer_draw, deadline=post.deadline)
        except LichessError as err:
            self._do(self.core.move_refused(post, str(err)))
            return
        if self.config.rate_limiting_delay:  # lichess-bot's pause after a move
            self.quit.wait(self.config.rate_limiting_delay / 1000)
        self._do(self.core.move_posted(post))

    def _abandon(self, action: Abandon) -> None:
        kind = "abort" if action.abort else "resign"
        try:
            (self.client.abort_game if action.abort else self.client.resign_game)(self.id)
            done = "done"
        except LichessError as err:
            done = str(err)
        self.log.error("leaving a game the engine cannot play", reason=action.why, action=kind, result=done)

    def _newer_state_queued(self) -> bool:
        """Whether a game state the core has not seen yet waits in the queue."""
        with self._q.mutex:
            return any(isinstance(e, GameState) for e in self._q.queue)

    # the end -----------------------------------------------------------------------------------
    def _finish(self) -> None:
        core = self.core
        self._do(core.finish())
        if core.over and not core.abandoned and self.config.pgn_directory and core.initial is not None:
            try:
                path = write_pgn(core.record, self.config.pgn_directory, self.config.pgn_file_grouping, self._me)
                self.log.info("pgn saved", path=str(path))
                write_eval_svg(self.snapshot(), path.with_name(game_stem(core.record) + ".svg"))
            except OSError as err:
                self.log.error("pgn not saved", error=str(err))
        self.log.info("game thread done", over=core.over, failures=core.failures)
