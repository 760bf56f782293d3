"""The search side of ``lichessbot uci``: the parameters of ``go`` and the move request they make for the
move pipeline (``go movetime``: :func:`lichessbot.timeman.allocation.movetime_s`), and the ``info`` lines a
search writes (one per principal variation with MultiPV).

Info lines follow lc0 (src/chess/uciloop.cc ``ConvertInfoToString``): ``info depth D seldepth S time MS
nodes N [multipv K] score cp X|mate M [wdl W D L] nps NPS tbhits T pv ...``; ``multipv`` only when
MultiPV is above 1, as lc0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import chess

from lichessbot.score import Score
from lichessbot.search import RootMove, SearchStats
from lichessbot.thinker import Decision, MoveRequest
from lichessbot.timeman import Budget, Clock

__all__ = ["MIN_SEARCH_MS", "MOVETIME_OVERHEAD_MS", "Go", "budget_lines", "decision_lines", "info_lines", "parse_go",
           "parse_position", "request_of", "searchmoves_of"]

#: Milliseconds kept back from ``go movetime`` for the protocol round trip (reading ``go``, writing
#: ``bestmove``, the GUI reading it) and the batch under way when the deadline passes. MoveOverhead
#: (network and server latency of a clocked game) does not apply to movetime (ours).
MOVETIME_OVERHEAD_MS = 30

#: A budget below this many milliseconds cannot search more than a batch or two: an ``info string
#: warning`` says so (ours).
MIN_SEARCH_MS = 20


PvLine = tuple[RootMove, Score, list[chess.Move]]


def info_lines(s: SearchStats, *, show_wdl: bool, multipv: int = 1, pvs: Sequence[PvLine] | None = None) -> list[str]:
    """The ``info`` lines for one report of a search.

    Args:
        s: the live statistics (best move's score and PV in ``s.score``, ``s.pv``).
        show_wdl: add ``wdl W D L`` (permille, root side to move's view; UCI_ShowWDL).
        multipv: MultiPV; above 1, ``pvs`` gives one line per root move (``multipv 1`` first).
        pvs: ``Searcher.root_pvs(multipv)``: (root move, score, pv) per root move, lc0's ranking.
    """
    head = f"info depth {max(1, int(s.depth))} seldepth {s.seldepth} time {int(s.elapsed * 1000)} nodes {s.nodes}"
    tail = f"nps {int(s.nps)} tbhits {s.tbhits}"
    if multipv <= 1 or not pvs:
        pv_text = (" pv " + " ".join(m.uci() for m in s.pv)) if s.pv else ""
        return [f"{head} score {s.score.uci()}{_wdl(s.score, show_wdl)} {tail}{pv_text}"]
    lines = []
    for k, (rm, score, pv) in enumerate(pvs, start=1):
        moves = pv or [rm.move]
        lines.append(f"{head} multipv {k} score {score.uci()}{_wdl(score, show_wdl)} {tail} pv "
                     + " ".join(m.uci() for m in moves))
    return lines


def _wdl(score: Score, show: bool) -> str:
    return " wdl {} {} {}".format(*score.permille) if show else ""


def budget_lines(budget: Budget | None) -> list[str]:
    """``info string timeman target ... s, max ... s`` before a timed search (none without a budget), and a
    warning when the hard maximum is below :data:`MIN_SEARCH_MS`."""
    if budget is None:
        return []
    lines = [f"info string timeman {budget.describe()}"]
    if budget.hard_max * 1000 < MIN_SEARCH_MS:
        lines.append(f"info string warning: {budget.hard_max * 1000:.0f} ms is too little time to search; the move "
                     "comes from the first batch (a longer movetime or clock, or a smaller MoveOverhead, helps)")
    return lines


def decision_lines(d: Decision, *, show_wdl: bool, verbose: Sequence[str] = ()) -> list[str]:
    """The lines that end a ``go``, ``bestmove`` last: a book move's ``info string book <entry>``; an online
    book move's ``info string <note>`` ("explorer: masters, 1,234 games"); a (local or online)
    tablebase move's ``info depth 1 ... tbhits 1 pv <move>`` with the tables' score and ``info string <verdict>``
    (docs/tablebases.md); a search's ``verbose`` lines, the online tables' note when it was kept to their
    moves (VerboseMoveStats) and ``info string stop: <reason>``;
    then ``bestmove <move> [ponder <reply>]``."""
    move = d.move.uci()
    if d.source == "book":
        return [f"info string book {d.book}", f"bestmove {move}"]
    if d.source == "online_book":
        return [f"info string {d.note}", f"bestmove {move}"]
    if d.source in ("tablebase", "online_tablebase") and d.tablebase_score is not None:
        score = d.tablebase_score.uci() + _wdl(d.tablebase_score, show_wdl)
        return [f"info depth 1 seldepth 1 time 0 nodes 1 score {score} nps 0 tbhits 1 pv {move}",
                f"info string {d.note}", f"bestmove {move}"]
    lines = [f"info string {line}" for line in verbose]
    if d.source == "search" and d.note:
        lines.append(f"info string {d.note}")
    if d.stop_reason:
        lines.append(f"info string stop: {d.stop_reason}")
    ponder = f" ponder {d.ponder.uci()}" if d.ponder is not None else ""
    return [*lines, f"bestmove {move}{ponder}"]


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


def request_of(go: Go, board: chess.Board, movetime_overhead_ms: int) -> MoveRequest:
    """What the move of a ``go`` may spend, for the move pipeline: our clock from wtime/btime, winc/binc and
    movestogo (ms), ``movetime`` in seconds with ``movetime_overhead_ms`` (MovetimeOverhead, not MoveOverhead)
    kept back and never less than half of it (:func:`lichessbot.timeman.allocation.movetime_s`), ``nodes``
    and ``infinite`` as hard limits. Without a clock and a movetime, or with ``infinite``, the time manager
    is not asked (docs/timeman.md)."""
    ours = go.wtime if board.turn == chess.WHITE else go.btime
    inc = go.winc if board.turn == chess.WHITE else go.binc
    clock = None
    if ours is not None:
        opp = go.btime if board.turn == chess.WHITE else go.wtime
        clock = Clock(time=max(0, ours), inc=max(0, inc), movestogo=go.movestogo, opp_time=opp)
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

