"""What ``lichessbot uci`` writes during a search: ``info`` lines (one per principal variation with
MultiPV) and the constants of ``go movetime`` (the rule itself: :func:`lichessbot.timeman.allocation.movetime_s`).

Info lines follow lc0 (src/chess/uciloop.cc ``ConvertInfoToString``): ``info depth D seldepth S time MS
nodes N [multipv K] score cp X|mate M [wdl W D L] nps NPS tbhits 0 pv ...``; ``multipv`` only when
MultiPV is above 1, as lc0.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess

from lichessbot.search import RootMove, SearchStats
from lichessbot.search import stats as st

__all__ = ["MIN_SEARCH_MS", "MOVETIME_OVERHEAD_MS", "info_lines"]

#: Milliseconds kept back from ``go movetime`` for the protocol round trip (reading ``go``, writing
#: ``bestmove``, the GUI reading it) and the batch under way when the deadline passes. MoveOverhead
#: (network and server latency of a clocked game) does not apply to movetime (ours).
MOVETIME_OVERHEAD_MS = 30

#: A budget below this many milliseconds cannot search more than a batch or two: an ``info string
#: warning`` says so (ours).
MIN_SEARCH_MS = 20


PvLine = tuple[RootMove, float, float, "int | None", list[chess.Move]]


def info_lines(s: SearchStats, *, show_wdl: bool, multipv: int = 1, pvs: Sequence[PvLine] | None = None,
               has_wdl: bool = True) -> list[str]:
    """The ``info`` lines for one report of a search.

    Args:
        s: the live statistics (best move's score and PV in ``s.cp``, ``s.mate``, ``s.wdl``, ``s.pv``).
        show_wdl: add ``wdl W D L`` (permille, root side to move's view; UCI_ShowWDL).
        multipv: MultiPV; above 1, ``pvs`` gives one line per root move (``multipv 1`` first).
        pvs: ``Searcher.root_pvs(multipv)``: (root move, wl, d, mate, pv) per root move, lc0's ranking.
        has_wdl: the network has a WDL head (``Searcher.has_wdl``; centipawns by lc0's WDL_mu then).
    """
    head = f"info depth {max(1, int(s.depth))} seldepth {s.seldepth} time {int(s.elapsed * 1000)} nodes {s.nodes}"
    tail = f"nps {int(s.nps)} tbhits 0"
    if multipv <= 1 or not pvs:
        score = f"score mate {s.mate}" if s.mate is not None else f"score cp {s.cp}"
        w, d, lo = (round(1000 * x) for x in s.wdl)
        wdl = f" wdl {w} {1000 - w - lo} {lo}" if show_wdl else ""
        pv = (" pv " + " ".join(m.uci() for m in s.pv)) if s.pv else ""
        return [f"{head} {score}{wdl} {tail}{pv}"]
    lines = []
    for k, (rm, wl, d, mate, pv) in enumerate(pvs, start=1):
        score = f"score mate {mate}" if mate is not None else f"score cp {st.score_cp(wl, d, has_wdl)}"
        wdl = " wdl {} {} {}".format(*st.wdl_permille(wl, d)) if show_wdl else ""
        moves = pv or [rm.move]
        lines.append(f"{head} multipv {k} {score}{wdl} {tail} pv " + " ".join(m.uci() for m in moves))
    return lines
