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
from typing import Any

import chess
import structlog

from lichessbot.config import BotConfig
from lichessbot.lichess.client import LichessClient, LichessError
from lichessbot.lichess.streams import CONNECTED, ReconnectingStream
from lichessbot.play.chat import ChatSender, answer_command, eval_line
from lichessbot.play.pgn import GameRecord, write_pgn
from lichessbot.play.thinker import ClockMs, Decision, Thinker

__all__ = ["Game"]

_EOS = object()
RUNNING = ("created", "started")
MAX_POST_ATTEMPTS = 3  # per position; then wait for the server's next state


def parse_moves(initial: chess.Board, moves: str) -> chess.Board:
    """The board after ``moves`` (space-separated UCI; castling as e1g1 or e1h1). Raises ValueError."""
    board = initial.copy()
    for uci in moves.split():
        board.push(board.parse_uci(uci))  # python-chess maps king-takes-rook to the board's castling form
    return board


class Game:
    """Plays game ``game_id`` to the end (``run``). ``quit`` (an Event) resigns or aborts it and leaves."""

    def __init__(self, game_id: str, *, client: LichessClient, thinker: Thinker, config: BotConfig, me: str,
                 chat: ChatSender, engine_name: str = "lichessbot", reconnect_backoff: float = 1.0):
        self.id = game_id
        self.client, self.thinker, self.config, self.chat = client, thinker, config, chat
        self.username = me
        self.me = me.lower()
        self.engine_name = engine_name
        self.log = structlog.get_logger("lichessbot.game").bind(game_id=game_id)
        self.quit = threading.Event()
        self.over = False
        self.failures = 0
        self.color: bool | None = None
        self.initial: chess.Board | None = None
        self.board: chess.Board | None = None
        self.record = GameRecord(game_id=game_id, site=f"{client.url}/{game_id}")
        self.opponent = "opponent"
        self._q: queue.Queue[Any] = queue.Queue()
        self._backoff = reconnect_backoff
        self._stream: ReconnectingStream | None = None
        self._moves_str: str | None = None
        self._times = (0, 0, 0, 0)  # wtime, btime, winc, binc (ms)
        self._state_at = time.monotonic()
        self._decided: dict[int, Decision] = {}
        self._posted: set[int] = set()
        self._attempts: dict[int, int] = {}
        self._scores: list[int | None] = []
        self._our_moves = 0
        self._last_eval: str | None = None
        self._opp_offers_draw = False
        self._opp_wait_since: float | None = None
        self._claim_at: float | None = None
        self._greeted = False
        self._said_goodbye = False
        self._saw_running = False

    # the loop ----------------------------------------------------------------------------------
    def run(self) -> None:
        """Play until the game is over (or ``quit``). Never raises: failures are logged."""
        self._stream = ReconnectingStream(lambda: self.client.open_game_stream(self.id), f"game {self.id}",
                                          keep_going=lambda: not self.over and not self.quit.is_set(),
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
                if event is not None:
                    self._step(self._on_event, event)
                self._step(self._tick)
                if self.quit.is_set():
                    self._step(self._leave)
                    break
                if self.over:
                    break
                if self._should_think():
                    self._step(self._play)
        finally:
            self._stream.close()
            self.thinker.close()
            self._finish()

    def _step(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as err:  # noqa: BLE001 - one failure never abandons a game
            self.failures += 1
            self.log.exception("game step failed; resyncing", error=str(err))
            self._resync()

    def _read(self) -> None:
        try:
            for event in self._stream:  # type: ignore[union-attr]
                if event.get("type") == "gameState" and event.get("status") not in RUNNING:
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
    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == CONNECTED:
            if event["reconnect"]:
                self.log.info("game stream reconnected")
        elif kind == "gameFull":
            self._on_full(event)
            self._on_state(event["state"])
        elif kind == "gameState":
            self._on_state(event)
        elif kind == "chatLine":
            self._on_chat(event)
        elif kind == "opponentGone":
            if event.get("gone"):
                wait = float(event.get("claimWinInSeconds") or 0)
                self._claim_at = time.monotonic() + wait
                self.log.info("opponent gone", claim_in_s=wait)
            else:
                self._claim_at = None
        else:
            self.log.debug("event ignored", type=kind)

    def _on_full(self, full: dict[str, Any]) -> None:
        white, black = full.get("white") or {}, full.get("black") or {}
        ids = (str(white.get("id") or white.get("name") or "").lower(),
               str(black.get("id") or black.get("name") or "").lower())
        self.color = chess.WHITE if ids[0] == self.me else chess.BLACK if ids[1] == self.me else None
        if self.color is None:
            self.log.error("we are neither white nor black in this game", white=ids[0], black=ids[1])
        variant = (full.get("variant") or {}).get("key", "standard")
        fen = full.get("initialFen") or "startpos"
        self.initial = chess.Board(chess.STARTING_FEN if fen == "startpos" else fen, chess960=variant == "chess960")
        opp = black if self.color == chess.WHITE else white
        self.opponent = str(opp.get("name") or opp.get("id") or ("AI level %s" % opp.get("aiLevel")))
        clock = full.get("clock") or None
        r = self.record
        r.white, r.black = (str(p.get("name") or p.get("id") or "?") for p in (white, black))
        r.white_elo, r.black_elo = white.get("rating"), black.get("rating")
        r.white_title, r.black_title = white.get("title"), black.get("title")
        r.rated, r.speed, r.variant = bool(full.get("rated")), str(full.get("speed", "")), variant
        r.initial_fen = self.initial.fen()
        if clock:
            r.clock_initial_ms, r.clock_increment_ms = int(clock["initial"]), int(clock["increment"])
        if not self._greeted and self.color is not None and len(full["state"].get("moves", "").split()) < 2:
            self._greeted = True
            self._say(self.config.greeting.hello, "player")
            self._say(self.config.greeting.hello_spectators, "spectator")

    def _on_state(self, state: dict[str, Any]) -> None:
        if self.initial is None:
            raise ValueError("gameState before gameFull")
        moves = str(state.get("moves", ""))
        keys = ("wtime", "btime", "winc", "binc")
        self._times = tuple(int(state.get(k, 0) or 0) for k in keys)  # type: ignore[assignment]
        self._state_at = time.monotonic()
        if moves != self._moves_str:
            board = parse_moves(self.initial, moves)
            n = len(board.move_stack)
            if self.board is not None and n == len(self.board.move_stack) + 1:  # exactly one new move: its clock
                mover_white = board.turn == chess.BLACK
                self.record.clocks[n - 1] = self._times[0] if mover_white else self._times[1]
            self.board, self._moves_str = board, moves
            self.record.moves = list(board.move_stack)
        status = str(state.get("status", "started"))
        opp_draw = state.get("bdraw" if self.color == chess.WHITE else "wdraw")
        self._opp_offers_draw = bool(opp_draw)
        self._update_abort_timer()
        if status in RUNNING:
            self._saw_running = True
        else:
            self.over = True
            self.record.status, self.record.winner = status, state.get("winner")
            self.log.info("game over", status=status, winner=state.get("winner"), plies=len(self.record.moves))

    def _update_abort_timer(self) -> None:
        b, init = self.board, self.initial
        if b is None or init is None or self.color is None:
            return
        movers = ((init.turn if i % 2 == 0 else not init.turn) for i in range(len(b.move_stack)))
        opp_moves = sum(1 for mover in movers if mover != self.color)
        if opp_moves == 0 and b.turn != self.color:
            self._opp_wait_since = self._opp_wait_since or time.monotonic()
        else:
            self._opp_wait_since = None

    def _on_chat(self, line: dict[str, Any]) -> None:
        if str(line.get("username", "")).lower() == self.me:
            return
        room = "spectator" if line.get("room") == "spectator" else "player"
        answer = answer_command(str(line.get("text", "")), last_eval=self._last_eval,
                                name=f"lichessbot with the {self.engine_name} network")
        if answer:
            self.chat.send(self.id, room, answer)

    def _leave(self) -> None:
        """Second Ctrl-C: abort (before both sides moved) or resign."""
        if self.over:
            return
        plies = len(self.board.move_stack) if self.board else 0
        self.log.warning("leaving the game", action="abort" if plies < 2 else "resign")
        (self.client.abort_game if plies < 2 else self.client.resign_game)(self.id)

    def _tick(self) -> None:
        now = time.monotonic()
        if self._opp_wait_since is not None and now - self._opp_wait_since > self.config.abort_time:
            self._opp_wait_since = None
            self.log.info("opponent did not move: aborting", abort_time_s=self.config.abort_time)
            self.client.abort_game(self.id)
        if self._claim_at is not None and now >= self._claim_at:
            self._claim_at = None
            self.log.info("claiming victory")
            self.client.claim_victory(self.id)

    # our move ----------------------------------------------------------------------------------
    def _should_think(self) -> bool:
        b = self.board
        if self.over or b is None or self.color is None or b.turn != self.color or self.quit.is_set():
            return False
        ply = len(b.move_stack)
        return ply not in self._posted and self._attempts.get(ply, 0) < MAX_POST_ATTEMPTS and not b.is_game_over()

    def _clock(self, ply: int) -> ClockMs | None:
        if self.record.clock_initial_ms is None:
            return None
        wtime, btime, winc, binc = self._times
        ours, opp = (wtime, btime) if self.color == chess.WHITE else (btime, wtime)
        if ply >= 2:  # lichess runs the clock from each side's second move on
            ours -= int((time.monotonic() - self._state_at) * 1000)
        inc, opp_inc = (winc, binc) if self.color == chess.WHITE else (binc, winc)
        return ClockMs(time=ours, inc=inc, opp_time=opp, opp_inc=opp_inc)

    def _think(self, board: chess.Board) -> Decision:
        ply = len(board.move_stack)
        try:
            decision = self.thinker.think(board.copy(), self._clock(ply), first_moves_unclocked=ply < 2)
            if decision.move in board.legal_moves:
                return decision
            self.log.error("thinker returned an illegal move", move=decision.move.uci())
        except Exception as err:  # noqa: BLE001 - play on with a legal move rather than lose on time
            self.log.exception("thinking failed; playing a fallback move", error=str(err))
        self.failures += 1
        return Decision(move=random.choice(list(board.legal_moves)), source="search", stop_reason="fallback")

    def _play(self) -> None:
        board = self.board
        assert board is not None
        ply = len(board.move_stack)
        decision = self._decided.get(ply)
        if decision is None:
            decision = self._decided[ply] = self._think(board)
            self._scores.append(decision.score_cp)
        if self._should_resign():
            self.log.info("resigning", scores=self._scores[-self.config.draw_or_resign.resign_moves:])
            self._posted.add(ply)
            self.client.resign_game(self.id)
            return
        offer_draw = self._should_offer_draw()
        self._attempts[ply] = self._attempts.get(ply, 0) + 1
        try:
            self.client.make_move(self.id, decision.move.uci(), offering_draw=offer_draw)
        except LichessError as err:
            self.failures += 1
            self.log.warning("move not accepted; resyncing", move=decision.move.uci(), error=str(err),
                             attempt=self._attempts[ply])
            self._resync()
            return
        self._posted.add(ply)
        self.record.decisions[ply] = decision
        ponder = getattr(self.thinker, "ponder", None)
        if ponder is not None and decision.ponder is not None:
            after = board.copy()
            after.push(decision.move)
            ponder(after, decision.ponder)
        self._our_moves += 1
        self._last_eval = eval_line(decision, board)
        self.log.info("move", ply=ply, move=decision.move.uci(), source=decision.source,
                      time_s=round(decision.time, 3), nodes=decision.nodes, nps=round(decision.nps),
                      cp=decision.cp, mate=decision.mate, wdl=decision.wdl, depth=round(decision.depth, 1),
                      stop=decision.stop_reason, draw_offer=offer_draw or None)
        room = self.config.chat.eval_room
        if room != "none" and self._our_moves % self.config.chat.eval_every == 0:
            for r in (("player", "spectator") if room == "both" else (room,)):
                self.chat.send(self.id, r, self._last_eval)

    def _last_scores(self, n: int) -> list[int] | None:
        tail = self._scores[-n:]
        if len(tail) < n or any(s is None for s in tail):
            return None
        return tail  # type: ignore[return-value]

    def _should_resign(self) -> bool:
        c = self.config.draw_or_resign
        tail = self._last_scores(c.resign_moves) if c.resign_enabled else None
        return tail is not None and all(s <= c.resign_score for s in tail)

    def _should_offer_draw(self) -> bool:
        c = self.config.draw_or_resign
        tail = self._last_scores(c.offer_draw_moves) if c.offer_draw_enabled else None
        ok = tail is not None and all(abs(s) <= c.offer_draw_score for s in tail)
        if ok and self._opp_offers_draw:
            self.log.info("accepting the opponent's draw offer")
        return ok

    # the end -----------------------------------------------------------------------------------
    def _say(self, template: str, room: str) -> None:
        if template:
            self.chat.send(self.id, room, template.format(me=self.username, opponent=self.opponent))

    def _finish(self) -> None:
        if self.over and self._saw_running and not self._said_goodbye:
            self._said_goodbye = True
            self._say(self.config.greeting.goodbye, "player")
            self._say(self.config.greeting.goodbye_spectators, "spectator")
        if self.over and self.config.pgn_directory and self.initial is not None:
            try:
                path = write_pgn(self.record, self.config.pgn_directory)
                self.log.info("pgn saved", path=str(path))
            except OSError as err:
                self.log.error("pgn not saved", error=str(err))
        self.log.info("game thread done", over=self.over, failures=self.failures)
