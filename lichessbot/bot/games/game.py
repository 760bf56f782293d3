"""One running game: follow its stream, think when it is our move, post the move, chat, and save the PGN.

A reader thread turns the game stream (reconnected while the game is on) into a queue; the game thread
rebuilds the board from each state's ``moves`` (both castling notations), and thinks only when it is our
move in a position it has not answered. One move is decided per position: a post that fails is retried
with the *same* move after a resync from the server's state (``gameFull`` of a fresh stream), never with
another. A bad line or an exception while thinking is logged and the game plays on.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import chess
import structlog

from lichessbot.bot.chat.game_chat import GameChat
from lichessbot.bot.chat.lines import ChatSender
from lichessbot.bot.games.pgn import GameRecord, game_stem, write_pgn
from lichessbot.bot.games.publish import game_snapshot, write_eval_svg
from lichessbot.bot.games.rules import ScoreRules, Unplayable, clocks_now, parse_moves, post_patience
from lichessbot.bot.games.takeback import Takebacks, reopen
from lichessbot.bot.games.thinker import ClockMs, Decision, Thinker
from lichessbot.config import PLAYABLE_VARIANTS, BotConfig
from lichessbot.lichess.client import LichessClient, LichessError
from lichessbot.lichess.events import ChatLine, Connected, GameEvent, GameFull, GameState, OpponentGone, OtherEvent
from lichessbot.lichess.streams import ReconnectingStream, game_stream
from lichessbot.status import GameSnapshot, StatusHub

__all__ = ["Game", "parse_moves"]

_EOS = object()
_GAME_EVENTS = (GameFull, GameState, ChatLine, OpponentGone, OtherEvent)
MAX_POST_ATTEMPTS = 3  # per position; then wait for the server's next state
#: Seconds between claims while ``opponentGone`` allows one (lila may answer 200 without effect, or 400).
CLAIM_RETRY = 1.0


class Game:
    """Plays game ``game_id`` to the end (``run``); ``quit`` (an Event) leaves it (resigns: ``resign_on_quit``)."""

    def __init__(self, game_id: str, *, client: LichessClient, thinker: Thinker, config: BotConfig, me: str,
                 chat: ChatSender, engine_name: str = "lichessbot", reconnect_backoff: float = 1.0,
                 status: StatusHub | None = None, queued: Callable[[], Sequence[str]] = tuple):
        self.id = game_id
        self.client, self.thinker, self.config, self.chat = client, thinker, config, chat
        self.username, self.me, self.engine_name = me, me.lower(), engine_name
        self.log = structlog.get_logger("lichessbot.game").bind(game_id=game_id)
        self.quit, self.over, self.failures = threading.Event(), False, 0
        self.color: bool | None = None
        self.initial: chess.Board | None = None
        self.board: chess.Board | None = None
        self.record = GameRecord(game_id=game_id, site=f"{client.url}/{game_id}")
        self.opponent = "opponent"
        self.level_text = "full strength"  # {level} of greetings: the game's strength (docs/strength.md)
        self._q: queue.Queue[Connected | GameEvent | object] = queue.Queue()
        self._backoff = reconnect_backoff
        self._stream: ReconnectingStream[GameEvent] | None = None
        self._moves_str: str | None = None
        self._times = (0, 0, 0, 0)  # wtime, btime, winc, binc (ms)
        self._state_at = time.monotonic()
        self._decided: dict[int, Decision] = {}
        self._posted: set[int] = set()
        self._attempts: dict[int, int] = {}
        self._rules = ScoreRules(config.draw_or_resign)
        self._takebacks = Takebacks(client, game_id, config.max_takebacks_accepted, self.log)
        self._our_moves = 0
        self._opp_offers_draw = False
        self._opp_wait_since: float | None = None
        self._abort_grace = 0.0  # !wait's seconds past abort_time
        self._claim_at: float | None = None
        self.talk = GameChat(game_id, chat, config, username=me, engine_name=engine_name, queued=queued)
        self._saw_running = False
        self._seen_at: float | None = None  # monotonic time of the last state seen on a stream
        self._opened_at: float | None = None  # monotonic time the current game stream was requested
        self.correspondence = False          # no clock: days per move or unlimited
        self.tournament: str | None = None   # tournamentId (arena games cannot be aborted)
        self.parked = False                  # correspondence: stream closed until our move (service check-in)
        self.abandoned = False               # left because the game cannot be played
        self.status = status                 # the status page's hub (snapshots published to it), or None
        self.on_full: Callable[[GameFull], None] | None = None  # told each gameFull (the service's admission)
        self.resign_on_quit = False          # quit: resign/abort (else the game is left running on lichess)
        if status is not None and hasattr(thinker, "on_live"):
            thinker.on_live = lambda live: status.publish_live(game_id, live)

    # the loop ----------------------------------------------------------------------------------
    def run(self) -> None:
        """Play until the game is over (or ``quit``). Never raises: failures are logged."""
        self._stream = game_stream(self.client, self.id, keep_going=lambda: not self.over and not self.quit.is_set(),
                                   backoff=self._backoff, log=self.log)
        reader = threading.Thread(target=self._read, name=f"stream-{self.id}", daemon=True)
        reader.start()
        self.log.info("game started")
        try:
            while True:
                try:
                    event = self._q.get(timeout=0.2)
                except queue.Empty:
                    event = None
                if event is _EOS:
                    break
                if isinstance(event, (Connected, *_GAME_EVENTS)):
                    self._step(self._on_event, event)
                    self._publish()
                self._step(self._tick)
                if self.quit.is_set():
                    if self.resign_on_quit:
                        self._step(self._leave)
                    break
                if self.over:
                    break
                if self._should_think():
                    self._step(self._play)
                    self._publish()
                elif self._should_park():
                    self.parked = True
                    self.log.info("correspondence game parked until our move",
                                  disconnect_time_s=self.config.correspondence.disconnect_time)
                    break
        finally:
            self._stream.close()
            self.thinker.close()
            self._finish()
            self._publish()

    def snapshot(self) -> GameSnapshot:
        """The game now, for the status page and the eval graph (:func:`lichessbot.bot.games.publish.game_snapshot`)."""
        return game_snapshot(game_id=self.id, record=self.record, initial=self.initial, times=self._times,
                             state_at=self._state_at, over=self.over, color=self.color,
                             correspondence=self.correspondence)

    def _publish(self) -> None:
        """Hand the status page a snapshot of the game (nothing without a page, or before gameFull)."""
        if self.status is None or self.initial is None:
            return
        try:
            self.status.publish_game(self.snapshot())
        except Exception as err:  # noqa: BLE001 - the page never costs a game anything
            self.log.warning("status snapshot failed", error=str(err))

    def _step(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Unplayable as err:
            self._abandon(str(err))
        except Exception as err:  # noqa: BLE001 - one failure never abandons a game
            self.failures += 1
            self.log.exception("game step failed; resyncing", error=str(err))
            self._resync()

    def _read(self) -> None:
        try:
            for event in self._stream:  # type: ignore[union-attr]
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
        if self._stream is not None and not self.over:
            self._stream.drop()

    # events ------------------------------------------------------------------------------------
    def _on_event(self, event: Connected | GameEvent) -> None:
        if isinstance(event, Connected):
            self._opened_at = event.opened_at
            if event.reconnect:
                self.log.info("game stream reconnected")
        elif isinstance(event, GameFull):
            if self.on_full is not None:
                self.on_full(event)
            self._on_full(event)
            self._on_state(event.state, full=True)
        elif isinstance(event, GameState):
            self._on_state(event)
        elif isinstance(event, ChatLine):
            self._on_chat(event)
        elif isinstance(event, OpponentGone):
            if event.gone:
                wait = float(event.claim_win_in_seconds or 0)
                self._claim_at = time.monotonic() + wait
                self.log.info("opponent gone", claim_in_s=wait)
            else:
                self._claim_at = None
        else:
            self.log.debug("event ignored", type=event.type)

    def _on_full(self, full: GameFull) -> None:
        white, black = full.white, full.black
        ids = ((white.id or white.name or "").lower(), (black.id or black.name or "").lower())
        self.color = chess.WHITE if ids[0] == self.me else chess.BLACK if ids[1] == self.me else None
        if self.color is None:
            self.log.error("we are neither white nor black in this game", white=ids[0], black=ids[1])
        variant = full.variant
        self.tournament = full.tournament_id
        self.correspondence = full.clock is None or full.speed == "correspondence"
        if variant not in PLAYABLE_VARIANTS:
            raise Unplayable(f"the engine does not play {variant}")
        fen = full.initial_fen or "startpos"
        try:
            self.initial = chess.Board(chess.STARTING_FEN if fen == "startpos" else fen,
                                       chess960=variant == "chess960")
        except ValueError as err:
            raise Unplayable(f"initialFen {fen!r} cannot be read ({err})") from None
        opp = black if self.color == chess.WHITE else white
        self.opponent = self.talk.opponent = opp.display
        self.record.take_game_full(full, self.initial, variant)
        if self.color is not None:  # the game's strength level follows the opponent's rating (docs/strength.md)
            self.level_text = self.talk.level = self.thinker.set_opponent(opp.rating, self.record.rated)
        if self.color is not None and len(full.state.moves.split()) < 2:
            self.talk.hello()

    def _on_state(self, state: GameState, full: bool = False) -> None:
        if self.initial is None:
            raise ValueError("gameState before gameFull")
        moves = state.moves
        self._times = (state.wtime, state.btime, state.winc, state.binc)
        now = time.monotonic()
        # lila computes wtime/btime when it sends the line (scalachess Clock.remainingTime takes the
        # running side's pending time off). A gameFull answers our (re)connection, so it was computed
        # after we sent the request: count our clock from then, which never overstates our time however
        # slow the answer was. A gameState is pushed as it happens: from its arrival.
        self._state_at = min(now, self._opened_at) if full and self._opened_at is not None else now
        self._seen_at = now
        if moves != self._moves_str:
            try:
                board = parse_moves(self.initial, moves)
            except ValueError as err:
                if full:  # the server's own truth cannot be read: a reconnect would bring the same
                    raise Unplayable(f"moves {moves[-40:]!r} cannot be read ({err})") from None
                raise
            n = len(board.move_stack)
            reopen(n, self.board, self._posted, self._decided, self._attempts)  # a takeback: think again there
            if self.board is not None and n == len(self.board.move_stack) + 1:  # exactly one new move: its clock
                mover_white = board.turn == chess.BLACK
                self.record.clocks[n - 1] = self._times[0] if mover_white else self._times[1]
            self.board, self._moves_str = board, moves
            self.record.moves = list(board.move_stack)
        status = state.status
        self._opp_offers_draw = state.bdraw if self.color == chess.WHITE else state.wdraw
        if self._takebacks.on_state(state, self.color) and self.board is not None:
            self._posted.add(len(self.board.move_stack))  # no move here: lichess takes this position back
        self._update_abort_timer()
        if state.running:
            self._saw_running = True
        else:
            self.over = True
            self.record.status, self.record.winner = status, state.winner
            self.log.info("game over", status=status, winner=state.winner, plies=len(self.record.moves))

    def _update_abort_timer(self) -> None:
        b, init = self.board, self.initial
        if b is None or init is None or self.color is None or self.correspondence or self.tournament:
            self._opp_wait_since = None  # no abort: lichess refuses it in arenas; days per move otherwise
            return
        opp_moved = any((init.turn if i % 2 == 0 else not init.turn) != self.color for i in range(len(b.move_stack)))
        waiting = not opp_moved and b.turn != self.color
        self._opp_wait_since = (self._opp_wait_since or time.monotonic()) if waiting else None

    def _on_chat(self, line: ChatLine) -> None:
        self._abort_grace += self.talk.answer(line, over=self.over, can_wait=not self.over and not self.correspondence
                                              and self._abortable())

    def _leave(self) -> None:
        """Quit with ``resign_on_quit``: abort (before both sides moved, not in a tournament) or resign."""
        if self.over:
            return
        abort = self._abortable()
        self.log.warning("leaving the game", action="abort" if abort else "resign")
        (self.client.abort_game if abort else self.client.resign_game)(self.id)

    def _abortable(self) -> bool:
        return (len(self.board.move_stack) if self.board else 0) < 2 and not self.tournament

    def _abandon(self, why: str) -> None:
        """End our part in a game the engine cannot play: abort or resign once, one log line, no reconnects."""
        action = "abort" if self._abortable() else "resign"
        try:
            (self.client.abort_game if action == "abort" else self.client.resign_game)(self.id)
            done = "done"
        except LichessError as err:
            done = str(err)
        self.log.error("leaving a game the engine cannot play", reason=why, action=action, result=done)
        self.abandoned = self.over = True

    def _tick(self) -> None:
        now = time.monotonic()
        if self._opp_wait_since is not None and now - self._opp_wait_since > self.config.abort_time + self._abort_grace:
            self._opp_wait_since = None
            self.log.info("opponent did not move: aborting", abort_time_s=self.config.abort_time)
            self.client.abort_game(self.id)
        if self._claim_at is not None and now >= self._claim_at:
            # retried every CLAIM_RETRY s while opponentGone allows it: lila may answer 400 (too early)
            # or 200 without effect; a gameState ending the game or opponentGone gone=false stops it
            self._claim_at = now + CLAIM_RETRY
            draw = self.config.draw_or_resign.claim_draw_when_gone
            self.log.info("claiming a draw" if draw else "claiming victory")
            try:
                (self.client.claim_draw if draw else self.client.claim_victory)(self.id)
            except LichessError as err:
                self.log.info("claim refused; retrying while the opponent is gone", error=str(err))

    # our move ----------------------------------------------------------------------------------
    def _should_park(self) -> bool:
        """A correspondence game off our move for ``disconnect_time`` s gives its thread back."""
        return (self.correspondence and not self.over and self._seen_at is not None and self.board is not None
                and self.board.turn != self.color and self._claim_at is None
                and time.monotonic() - self._seen_at > self.config.correspondence.disconnect_time)

    def _should_think(self) -> bool:
        b = self.board
        if self.over or b is None or self.color is None or b.turn != self.color or self.quit.is_set():
            return False
        ply = len(b.move_stack)
        return ply not in self._posted and self._attempts.get(ply, 0) < MAX_POST_ATTEMPTS and not b.is_game_over()

    def _clock(self, ply: int) -> tuple[ClockMs | None, float | None]:
        """Our clock now (with the game's initial clock), and the correspondence clock's seconds left
        (:func:`~lichessbot.bot.games.rules.clocks_now`)."""
        since = time.monotonic() - self._state_at if ply >= 2 else 0.0  # lichess runs clocks from the 2nd moves
        clock, left = clocks_now(self._times, self.color, since, clocked=self.record.clock_initial_ms is not None,
                                 correspondence=self.correspondence)
        return (None if clock is None else clock._replace(initial=self.record.clock_initial_ms)), left

    def _think(self, board: chess.Board) -> Decision:
        ply = len(board.move_stack)
        try:
            clock, left = self._clock(ply)
            decision = self.thinker.think(board.copy(), clock, first_moves_unclocked=ply < 2, time_left_s=left)
            if decision.move in board.legal_moves:
                return decision
            self.log.error("thinker returned an illegal move", move=decision.move.uci())
        except Exception as err:  # noqa: BLE001 - play on with a legal move rather than lose on time
            self.log.exception("thinking failed; playing a fallback move", error=str(err))
        self.failures += 1
        return Decision(move=random.choice(list(board.legal_moves)), source="search", note="fallback")

    def _play(self) -> None:
        board = self.board
        assert board is not None
        ply = len(board.move_stack)
        decision = self._decided.get(ply)
        if decision is None:
            decision = self._decided[ply] = self._think(board)
            self._rules.add(decision.score_cp, decision.tablebase_wdl)
        if self._rules.should_resign():
            self.log.info("resigning", scores=self._rules.scores[-self.config.draw_or_resign.resign_moves:])
            self._posted.add(ply)
            self.client.resign_game(self.id)
            return
        offer_draw = self._rules.should_offer_draw()
        if offer_draw and self._opp_offers_draw:
            self.log.info("accepting the opponent's draw offer")
        self._attempts[ply] = self._attempts.get(ply, 0) + 1
        try:
            self.client.make_move(self.id, decision.move.uci(), offering_draw=offer_draw, deadline=self._deadline(ply))
        except LichessError as err:
            self.failures += 1
            self.log.warning("move not accepted; resyncing", move=decision.move.uci(), error=str(err),
                             attempt=self._attempts[ply])
            self._resync()
            return
        self._posted.add(ply)
        self.record.decisions[ply] = decision
        if decision.ponder is not None:
            after = board.copy()
            after.push(decision.move)
            self.thinker.ponder(after, decision.ponder)
        self._our_moves += 1
        sc = decision.score
        self.log.info("move", ply=ply, move=decision.move.uci(), source=decision.source,
                      time_s=round(decision.time, 3), nodes=decision.nodes, nps=round(decision.nps),
                      cp=sc.cp if sc else None, mate=sc.mate if sc else None, wdl=sc.wdl if sc else None,
                      depth=round(decision.depth, 1),
                      stop=decision.stop_reason, draw_offer=offer_draw or None)
        self.talk.after_move(decision, board, self._our_moves)

    def _deadline(self, ply: int) -> float | None:
        """Monotonic time (s) the move post may wait until (retries, 429s: rules.post_patience); None: no clock."""
        clock = self._clock(ply)[0]
        if clock is None:
            return None
        return time.monotonic() + post_patience(clock.time, self.config.timeman.move_overhead)

    # the end -----------------------------------------------------------------------------------
    def _finish(self) -> None:
        if self.over and self._saw_running and not self.abandoned:
            self.talk.goodbye()
        if self.over and not self.abandoned and self.config.pgn_directory and self.initial is not None:
            try:
                path = write_pgn(self.record, self.config.pgn_directory, self.config.pgn_file_grouping,
                                 self.username)
                self.log.info("pgn saved", path=str(path))
                write_eval_svg(self.snapshot(), path.with_name(game_stem(self.record) + ".svg"))
            except OSError as err:
                self.log.error("pgn not saved", error=str(err))
        self.log.info("game thread done", over=self.over, failures=self.failures)
