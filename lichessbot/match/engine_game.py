"""One game between two UCI engines, with clocks kept by the match (python-chess ``chess.engine``)."""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import chess
import chess.engine
import chess.pgn

from lichessbot.match.openings import Opening
from lichessbot.match.types import Adjudication, EngineSpec, GameRecord, MatchError, TimeControl

__all__ = ["EnginePlayer", "play_game"]

MATE_CP = 100_000  # centipawn value of a mate score in adjudication
#: stderr lines of an engine kept for its last words (:meth:`EnginePlayer.last_words`).
LAST_LINES = 5


class _Uci(chess.engine.UciProtocol):
    """python-chess's UCI protocol, keeping the engine's last stderr lines (its last words when it fails)."""

    def __init__(self) -> None:
        super().__init__()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=LAST_LINES)

    def error_line_received(self, line: str) -> None:
        if line.strip():
            self.stderr_tail.append(line.strip())
        super().error_line_received(line)


class _Hung(Exception):
    """The engine did not answer within its budget plus the margin."""


class EnginePlayer:
    """One engine process (``chess.engine.SimpleEngine``); after :meth:`close` (a crash, a hang) the next
    :meth:`play` starts a fresh process and counts a restart.

    Raises (from :meth:`start`):
        MatchError: the engine cannot be started or refuses an option (the engine's name in the message).
    """

    def __init__(self, spec: EngineSpec, startup_timeout: float = 60.0) -> None:
        self.spec = spec
        self.startup_timeout = startup_timeout
        self.engine: chess.engine.SimpleEngine | None = None
        self.restarts = 0
        self.started = False

    def start(self) -> None:
        """Start the process and send the options."""
        self.started = True
        try:
            self.engine = chess.engine.SimpleEngine.popen(_Uci, self.spec.command, timeout=self.startup_timeout)
        except (TimeoutError, OSError, chess.engine.EngineError, concurrent.futures.TimeoutError) as err:
            raise MatchError(f"engine {self.spec.name} ({' '.join(self.spec.command)}) did not start: {err}") from None
        try:
            if self.spec.options:
                self.engine.configure(dict(self.spec.options))
        except (TimeoutError, chess.engine.EngineError, concurrent.futures.TimeoutError) as err:
            self.close()
            raise MatchError(f"engine {self.spec.name}: bad option ({err})") from None

    def play(self, board: chess.Board, limit: chess.engine.Limit, game: object,
             timeout: float) -> chess.engine.PlayResult:
        """``go`` on ``board``; waits at most ``timeout`` seconds.

        Raises:
            chess.engine.EngineTerminatedError: the process died.
            chess.engine.EngineError: an illegal or unparsable ``bestmove``.
            _Hung: no answer within ``timeout``.
        """
        if self.engine is None:  # first use, or closed after a crash or hang
            if self.started:
                self.restarts += 1
            self.start()
        engine = self.engine
        assert engine is not None
        coro = asyncio.wait_for(
            engine.protocol.play(board, limit, game=game, info=chess.engine.INFO_SCORE), timeout  # and "string"
        )
        try:
            future = asyncio.run_coroutine_threadsafe(coro, engine.protocol.loop)
        except RuntimeError:  # the event loop of a dead engine is closed
            coro.close()
            raise chess.engine.EngineTerminatedError("engine event loop dead") from None
        try:
            return future.result()
        except (TimeoutError, concurrent.futures.TimeoutError):
            raise _Hung from None

    def last_words(self) -> str:
        """The engine's last lines on stderr (at most :data:`LAST_LINES`, joined by " | "; "" when it wrote
        none), e.g. the end of a traceback."""
        protocol = self.engine.protocol if self.engine is not None else None
        return " | ".join(protocol.stderr_tail) if isinstance(protocol, _Uci) else ""

    def close(self, kill: bool = False) -> None:
        """Ask the engine to quit (unless ``kill``: a hung engine), then close the process, killing it if
        it still runs. Never raises."""
        engine, self.engine = self.engine, None
        if engine is None:
            return
        if not kill:
            try:
                engine.quit()
            except Exception:  # noqa: BLE001 - a dead or hung engine: closing below is enough
                pass
        engine.close()  # closing the asyncio subprocess transport kills a process still running


@dataclass
class _Side:
    player: EnginePlayer
    tc: TimeControl
    clock: float | None  # seconds left, None without a clock


def _limit(board: chess.Board, sides: dict[bool, _Side]) -> tuple[chess.engine.Limit, float]:
    """The ``go`` limit of the side to move and the seconds it may take before it counts as hung."""
    me, w, b = sides[board.turn], sides[chess.WHITE], sides[chess.BLACK]
    limit = chess.engine.Limit(nodes=me.tc.nodes, time=me.tc.movetime)
    budget = 0.0
    if me.clock is not None:
        limit.white_clock, limit.black_clock = w.clock, b.clock
        limit.white_inc = w.tc.inc if w.clock is not None else None
        limit.black_inc = b.tc.inc if b.clock is not None else None
        budget = me.clock
    elif me.tc.movetime is not None:
        budget = me.tc.movetime
    return limit, budget


def _adjudicate(scores: list[int | None], board: chess.Board, rules: Adjudication) -> tuple[str, str] | None:
    """(result, reason) when an adjudication rule ends the game; ``scores`` are white's view per ply."""
    if rules.max_plies is not None and board.ply() >= rules.max_plies:
        return "1/2-1/2", f"draw by adjudication: {rules.max_plies} plies"
    if rules.resign_score is not None:
        last = scores[-2 * rules.resign_moves :]
        if len(last) == 2 * rules.resign_moves and None not in last:
            if all(s >= rules.resign_score for s in last):  # type: ignore[operator]
                return "1-0", "white wins by adjudication"
            if all(s <= -rules.resign_score for s in last):  # type: ignore[operator]
                return "0-1", "black wins by adjudication"
    if rules.draw_score is not None and board.fullmove_number >= rules.draw_after_move:
        last = scores[-2 * rules.draw_moves :]
        if len(last) == 2 * rules.draw_moves and None not in last:
            if all(abs(s) <= rules.draw_score for s in last):  # type: ignore[arg-type]
                return "1/2-1/2", "draw by adjudication"
    return None


_ENDINGS = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
    chess.Termination.SEVENTYFIVE_MOVES: "75-move rule",
    chess.Termination.FIVEFOLD_REPETITION: "fivefold repetition",
    chess.Termination.FIFTY_MOVES: "50-move rule",
    chess.Termination.THREEFOLD_REPETITION: "threefold repetition",
}


def play_game(
    number: int,
    opening: Opening,
    white: EnginePlayer,
    black: EnginePlayer,
    tcs: tuple[TimeControl, TimeControl],
    *,
    first_white: bool,
    latency: float = 0.0,
    adjudication: Adjudication | None = None,
    move_timeout_margin: float = 10.0,
    event: str = "lichessbot match",
    on_move: Callable[[chess.pgn.Game], None] | None = None,
) -> GameRecord:
    """Play one game; ``tcs`` = (white's, black's) time control. Times in seconds.

    ``on_move(game)`` (optional) sees the PGN after each move (headers set, ``Result`` ``*``) and once
    more at the end with the result (a broadcast pushes it; it must not keep ``game``: it changes).

    The clock of a clocked side is charged the measured time of each move plus ``latency``, then
    credited the increment. A side that overruns its clock loses on time (a draw if the opponent cannot
    mate, FIDE 6.9); an illegal move, a crash or an ``info string error`` line (shown on stderr) loses
    the game; a crashed or hung engine is restarted (by the caller's next game: :meth:`EnginePlayer.play`
    starts it again). Threefold repetition and the
    50-move rule end the game as draws.
    """
    rules = adjudication or Adjudication()
    board = opening.board()
    game = chess.pgn.Game.from_board(board)
    node: chess.pgn.GameNode = game
    for book_move in opening.moves:
        if not board.is_legal(book_move):
            raise MatchError(f"opening {opening.name}: illegal move {book_move.uci()}")
        board.push(book_move)
        node = node.add_variation(book_move, comment="book")
    sides = {
        chess.WHITE: _Side(white, tcs[0], tcs[0].base),
        chess.BLACK: _Side(black, tcs[1], tcs[1].base),
    }
    _headers(game, event, number, white, black, tcs, "*")
    token = object()  # a new object per game: python-chess sends ucinewgame to each engine once
    scores: list[int | None] = []
    plies = 0
    result = reason = ""
    termination, fault, faulty = "normal", None, None
    engine_error = failed_engine = None
    while True:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result, reason = outcome.result(), _ENDINGS.get(outcome.termination, outcome.termination.name.lower())
            break
        adj = _adjudicate(scores, board, rules)
        if adj is not None:
            (result, reason), termination = adj, "adjudication"
            break
        mover = sides[board.turn]
        colour = "white" if board.turn else "black"
        limit, budget = _limit(board, sides)
        t0 = time.monotonic()
        restart = False
        move: chess.Move | None = None
        error: str | None = None
        said_last = ""  # what the engine said when it failed (the exception, or its info string error)
        try:
            played = mover.player.play(board, limit, token, budget + move_timeout_margin)
            move = played.move
            said = str(played.info.get("string", ""))
            if said.startswith("error"):  # e.g. a network that did not load: the engine cannot play
                fault, error, said_last = "error", f"{colour}'s engine reported an {said}", f"info string {said}"
                print(f"{mover.player.spec.name}: info string {said}", file=sys.stderr, flush=True)
            else:
                error = None if move is not None and board.is_legal(move) else f"{colour} played no legal move"
                said_last = "" if error is None else f"bestmove {move.uci() if move else '(none)'}"
        except chess.engine.EngineTerminatedError as err:
            fault, error, restart, said_last = "crash", f"{colour}'s engine crashed", True, str(err)
        except _Hung:
            fault, error, restart = "time", f"{colour}'s engine did not answer in time", True
            said_last = f"no bestmove within {budget + move_timeout_margin:g} s"
        except chess.engine.EngineError as err:
            fault, error, said_last = "illegal", f"{colour} played an illegal move ({err})", str(err)
        spent = time.monotonic() - t0 + latency
        if error is None and mover.clock is not None and spent > mover.clock:
            fault, error = "time", f"{colour} lost on time"
        elif error is not None and fault is None:
            fault = "illegal"
        if error is not None:
            faulty = mover.player.spec.name
            if said_last:  # an engine failure (not a flag): what it said, then its last stderr lines
                engine_error = "; ".join(w for w in (said_last, mover.player.last_words()) if w)
                failed_engine = mover.player.spec.name
            if restart:
                mover.player.close(kill=True)  # a fresh process is started for its next move
            if fault == "time" and board.has_insufficient_material(not board.turn):
                result, reason, faulty = "1/2-1/2", error + ", but the opponent cannot mate", None
            else:
                result, reason = ("0-1" if board.turn else "1-0"), error
            termination = {"time": "time forfeit", "illegal": "rules infraction", "crash": "abandoned",
                           "error": "abandoned"}[fault or "illegal"]
            break
        assert move is not None
        if mover.clock is not None:
            mover.clock = mover.clock - spent + mover.tc.inc
        score = played.info.get("score")
        scores.append(score.white().score(mate_score=MATE_CP) if score is not None else None)
        board.push(move)
        plies += 1
        node = node.add_variation(move)
        if score is not None:
            node.set_eval(score, played.info.get("depth"))
        if mover.clock is not None:
            node.set_clock(mover.clock)
        else:
            node.set_emt(spent)
        if on_move is not None:
            on_move(game)
    _headers(game, event, number, white, black, tcs, result, termination, len(opening.moves) + plies, opening.name)
    node.comment = (node.comment + " " if node.comment else "") + reason
    if on_move is not None:
        on_move(game)
    return GameRecord(number, first_white, result, termination, reason, faulty, fault, plies, game, engine_error,
                      failed_engine)


def _headers(game: chess.pgn.Game, event: str, number: int, white: EnginePlayer, black: EnginePlayer,
             tcs: tuple[TimeControl, TimeControl], result: str, termination: str | None = None,
             plies: int | None = None, opening: str = "") -> None:
    """The PGN tags of a game in play (``result`` ``*``, no Termination or PlyCount) or finished."""
    for tag in ("Termination", "TimeControl", "WhiteTimeControl", "BlackTimeControl", "PlyCount", "Opening"):
        game.headers.pop(tag, None)  # set again below, in this order (after FEN and SetUp)
    game.headers["Event"] = event
    game.headers["Site"] = "local"
    game.headers["Date"] = time.strftime("%Y.%m.%d")
    game.headers["Round"] = str(number)
    game.headers["White"] = white.spec.name
    game.headers["Black"] = black.spec.name
    game.headers["Result"] = result
    if termination is not None:
        game.headers["Termination"] = termination
    if tcs[0].pgn() == tcs[1].pgn():
        game.headers["TimeControl"] = tcs[0].pgn()
    else:
        game.headers["WhiteTimeControl"], game.headers["BlackTimeControl"] = tcs[0].pgn(), tcs[1].pgn()
    if plies is not None:
        game.headers["PlyCount"] = str(plies)
    if opening:
        game.headers["Opening"] = opening
