"""The search side of ``lichessbot uci``: the parameters of ``go`` and the stopper and limits they make
(``go movetime``: :func:`lichessbot.timeman.allocation.movetime_s`), and the ``info`` lines a search
writes (one per principal variation with MultiPV).

Info lines follow lc0 (src/chess/uciloop.cc ``ConvertInfoToString``): ``info depth D seldepth S time MS
nodes N [multipv K] score cp X|mate M [wdl W D L] nps NPS tbhits T pv ...``; ``multipv`` only when
MultiPV is above 1, as lc0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import chess

from lichessbot.score import Score
from lichessbot.search import Limits, RootMove, SearchStats, Stopper
from lichessbot.timeman import Clock

__all__ = ["MIN_SEARCH_MS", "MOVETIME_OVERHEAD_MS", "Go", "info_lines", "make_stopper", "parse_go"]

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


_GO_INT = {"wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate"}
_GO_WORDS = _GO_INT | {"infinite", "ponder", "searchmoves"}


def make_stopper(timeman: Any, go: Go, board: chess.Board,
                 movetime_overhead_ms: int) -> tuple[Stopper | None, Limits]:
    """The stopper and limits of a ``go``: clocks and movetime go to the time manager (lichessbot.timeman,
    docs/timeman.md); ``nodes`` and ``infinite`` are hard limits. ``go movetime X`` (ms) searches X minus
    ``movetime_overhead_ms`` (ms; MovetimeOverhead, not MoveOverhead), never less than X / 2."""
    limits = Limits(nodes=go.nodes, infinite=go.infinite)
    ours = go.wtime if board.turn == chess.WHITE else go.btime
    inc = go.winc if board.turn == chess.WHITE else go.binc
    movetime = go.movetime / 1000.0 if go.movetime is not None else None
    if go.infinite or (ours is None and movetime is None):
        return None, limits
    clock = None
    if ours is not None:
        opp = go.btime if board.turn == chess.WHITE else go.wtime
        clock = Clock(time=max(0, ours), inc=max(0, inc), movestogo=go.movestogo, opp_time=opp)
    return timeman.stopper(clock, board, movetime, movetime_overhead_ms=movetime_overhead_ms), limits


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
            error("go searchmoves is not supported; searching all moves")
            while i + 1 < len(args) and args[i + 1] not in _GO_WORDS:
                i += 1
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

