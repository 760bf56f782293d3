"""The lines a search writes in ``lichessbot uci``: the ``info`` lines of a search (one per principal variation
with MultiPV), the time manager's budget, and the lines that end a ``go`` (``bestmove`` last). What the GUI
sends is read by :mod:`lichessbot.uci.input`.

Info lines follow lc0 (src/chess/uciloop.cc ``ConvertInfoToString``): ``info depth D seldepth S time MS
nodes N [multipv K] score cp X|mate M [wdl W D L] nps NPS tbhits T pv ...``; ``multipv`` only when
MultiPV is above 1, as lc0.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess

from lichessbot.score import Score
from lichessbot.search import RootMove, SearchStats
from lichessbot.thinker import Decision
from lichessbot.timeman import Budget

__all__ = ["MIN_SEARCH_MS", "budget_lines", "decision_lines", "info_lines"]

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
    head = f"info depth {s.depth} seldepth {s.seldepth} time {int(s.elapsed * 1000)} nodes {s.nodes}"
    tail = f"nps {s.nps} tbhits {s.tbhits}"
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
    lines = [f"info string timeman {budget.describe()}" + (f", overhead {budget.overhead_ms:.0f} ms" if budget.clocked
                                                          and budget.overhead_ms else "")]
    if budget.hard_max * 1000 < MIN_SEARCH_MS:
        lines.append(f"info string warning: {budget.hard_max * 1000:.0f} ms is too little time to search; the move "
                     "comes from the first batch (a longer movetime or clock, or a smaller MoveOverhead, helps)")
    return lines


def decision_lines(d: Decision, *, show_wdl: bool, verbose: Sequence[str] = ()) -> list[str]:
    """The lines that end a ``go``, ``bestmove`` last: a book move's ``info string book <entry>``; an online
    book move's ``info string <note>`` ("explorer: masters, 1,234 games"); a (local or online)
    tablebase move's ``info depth 1 ... tbhits 1 pv <move>`` with the tables' score and ``info string <verdict>``
    (docs/tablebases.md); a search's ``verbose`` lines, the online tables' note when it was kept to their
    moves (VerboseMoveStats), its tree reuse (``info string reused R of N nodes``: the visits kept from the
    previous move's tree, counted in lc0's ``nodes``) and ``info string stop: <reason>``;
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
    if d.result is not None:
        lines.append(f"info string reused {d.reused_nodes} of {d.nodes} nodes")
    if d.stop_reason:
        lines.append(f"info string stop: {d.stop_reason}")
    ponder = f" ponder {d.ponder.uci()}" if d.ponder is not None else ""
    return [*lines, f"bestmove {move}{ponder}"]
