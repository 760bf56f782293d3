"""What the GUI sends to ``lichessbot uci``, read: ``position`` (the board) and ``go`` (its parameters), and
the move request a ``go`` makes for the move pipeline (``go movetime``:
:func:`lichessbot.timeman.allocation.movetime_s`; the clocks with the overhead the GUI's clocks show). The
lines written back are :mod:`lichessbot.uci.output`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import chess

from lichessbot.thinker import MoveRequest
from lichessbot.timeman import Clock, OverheadEstimator

__all__ = ["MOVETIME_OVERHEAD_MS", "UCI_MOVE_OVERHEAD_MS", "Go", "GuiClocks", "parse_go", "parse_position",
           "request_of", "searchmoves_of"]

#: Milliseconds kept back from ``go movetime`` for the protocol round trip (reading ``go``, writing
#: ``bestmove``, the GUI reading it) and the batch under way when the deadline passes. MoveOverhead
#: (network and server latency of a clocked game) does not apply to movetime (ours).
MOVETIME_OVERHEAD_MS = 30

#: MoveOverhead's default, milliseconds charged to each expected move of a clocked ``go``: what a GUI on the same
#: machine costs a move (the protocol round trip, the batch under way at the stop). Stockfish's "Move Overhead"
#: default (10 ms, charged per move as here: src/timeman.cpp); lc0's MoveOverheadMs is 200 ms taken off once
#: (src/search/classic/stoppers/legacy.cc), about 4 ms a move over lc0's 51.5 expected moves. The bot learns its
#: own from lichess's clocks (docs/timeman.md).
UCI_MOVE_OVERHEAD_MS = 10


@dataclass
class Go:
    """The parameters of one ``go`` (times in milliseconds, as UCI sends them)."""

    wtime: int | None = None
    btime: int | None = None
    winc: int = 0
    binc: int = 0
    movestogo: int | None = None
    movetime: int | None = None
    nodes: int | None = None
    infinite: bool = False
    ponder: bool = False
    searchmoves: list[str] = field(default_factory=list)


_GO_INT = {"wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate"}
_GO_WORDS = _GO_INT | {"infinite", "ponder", "searchmoves"}


class GuiClocks:
    """What each move of one game costs the engine's clock beyond its search, as the GUI's clocks show it: the
    bot's rule (:class:`lichessbot.timeman.OverheadEstimator`) on consecutive ``go`` commands of our side, where
    a move cost ``wtime`` before it, plus the increment, minus ``wtime`` at our next ``go``, less the search's own
    time (so our own latency around the search, and the GUI's, are counted). The overheads charged are the larger
    of ``MoveOverhead`` and that estimate's (its high percentile for one move, its median for the moves to come:
    :class:`lichessbot.timeman.Clock`). A new one per ``ucinewgame``."""

    def __init__(self) -> None:
        self.estimator = OverheadEstimator(UCI_MOVE_OVERHEAD_MS, low_ms=0)
        self._current: tuple[int, Clock] | None = None  # the ply and clock of the move being decided

    def clock(self, go: Go, board: chess.Board, move_overhead_ms: int) -> Clock | None:
        """The clock of ``go`` with the overhead to charge (measuring our previous move first), or None."""
        clock = Clock.from_uci(board.turn, wtime=go.wtime, btime=go.btime, winc=go.winc, binc=go.binc,
                               movestogo=go.movestogo)
        ply = board.ply()
        self._current = None if clock is None or go.ponder else (ply, clock)
        if clock is None:
            return None
        self.estimator.seen(ply - 1, clock)  # the state after our previous move is the one before this go
        est = self.estimator
        high, typical = (est.estimate_ms, est.typical_ms) if est.samples else (0, 0)
        return replace(clock, overhead=max(move_overhead_ms, high), overhead_typical=max(move_overhead_ms, typical))

    def played(self, search_s: float) -> None:
        """The move of the last clocked ``go`` was written after a search of ``search_s`` seconds."""
        if self._current is not None:
            ply, clock = self._current
            self.estimator.posted(ply, clock, search_s)
            self._current = None


def request_of(go: Go, board: chess.Board, movetime_overhead_ms: int, clock: Clock | None = None) -> MoveRequest:
    """What the move of a ``go`` may spend, for the move pipeline: our clock from wtime/btime, winc/binc and
    movestogo (ms), ``movetime`` in seconds with ``movetime_overhead_ms`` (MovetimeOverhead, not MoveOverhead)
    kept back and never less than half of it (:func:`lichessbot.timeman.allocation.movetime_s`), ``nodes``
    and ``infinite`` as hard limits. Without a clock and a movetime, or with ``infinite``, the time manager
    is not asked (docs/timeman.md). ``clock``: the clock to use (:meth:`GuiClocks.clock`), else ``go``'s."""
    if clock is None:
        clock = Clock.from_uci(board.turn, wtime=go.wtime, btime=go.btime, winc=go.winc, binc=go.binc,
                               movestogo=go.movestogo)
    return MoveRequest(clock=clock, movetime=go.movetime / 1000.0 if go.movetime is not None else None,
                       nodes=go.nodes, infinite=go.infinite, movetime_overhead_ms=movetime_overhead_ms,
                       searchmoves=searchmoves_of(go, board))


def searchmoves_of(go: Go, board: chess.Board) -> tuple[chess.Move, ...]:
    """The legal moves of ``go searchmoves`` in ``board`` (UCI spelling; python-chess parses Chess960
    castling as king takes rook). Raises ValueError naming the first move that is not legal."""
    moves = []
    for uci in go.searchmoves:
        try:
            moves.append(board.parse_uci(uci))
        except ValueError:
            raise ValueError(f"go searchmoves: {uci!r} is not a legal move in {board.fen()}") from None
    return tuple(moves)


def parse_position(args: list[str], *, chess960: bool) -> chess.Board:
    """The board of ``position startpos|fen <fen> [moves ...]`` (``args`` after the word ``position``).
    Raises ValueError naming a bad FEN, an invalid position or the first illegal move."""
    if not args:
        raise ValueError("expected: position startpos|fen <fen> [moves ...]")
    moves_at = args.index("moves") if "moves" in args else len(args)
    if args[0] == "startpos":
        board = chess.Board(chess960=chess960)
    elif args[0] == "fen":
        fen = " ".join(args[1:moves_at])
        try:
            board = chess.Board(fen, chess960=chess960)
        except ValueError as err:
            raise ValueError(f"bad FEN {fen!r}: {err}") from None
        if not board.is_valid():
            raise ValueError(f"bad FEN {fen!r}: {board.status()!r}")
    else:
        raise ValueError(f"expected startpos or fen, got {args[0]!r}")
    for uci in args[moves_at + 1:]:
        try:
            board.push(board.parse_uci(uci))
        except ValueError:
            raise ValueError(f"illegal move {uci!r} in {board.fen()}") from None
    return board


def parse_go(args: list[str], error: Callable[[str], None]) -> Go:
    """The parameters of ``go``; each malformed or unsupported one is reported through ``error`` (one
    ``info string error`` line) and skipped. Times in milliseconds, as UCI sends them."""
    go = Go()
    i = 0
    while i < len(args):
        tok = args[i]
        if tok in ("infinite", "ponder"):
            setattr(go, tok, True)
        elif tok == "searchmoves":
            while i + 1 < len(args) and args[i + 1] not in _GO_WORDS:
                i += 1
                go.searchmoves.append(args[i])
        elif tok in _GO_INT:
            if i + 1 >= len(args) or not args[i + 1].lstrip("-").isdigit():
                error(f"go {tok} needs an integer")
                if i + 1 < len(args) and args[i + 1] not in _GO_WORDS:
                    i += 1
            else:
                i += 1
                if tok in ("depth", "mate"):
                    error(f"go {tok} is not supported; ignored")
                else:
                    setattr(go, tok, int(args[i]))
        else:
            error(f"unknown go parameter {tok!r}")
            if i + 1 < len(args) and args[i + 1] not in _GO_WORDS:
                i += 1
        i += 1
    if go.nodes is not None and go.nodes < 1:
        error("go nodes must be >= 1; using 1")
        go.nodes = 1
    return go

