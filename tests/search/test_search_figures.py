"""nodes, nps, depth and seldepth as lc0 defines them (lc0 src/search/classic/search.cc ``SendUciInfo``:
``nodes = total_playouts_ + initial_visits_``, ``depth = cum_depth_ / total_playouts_`` with the root at depth 1,
``seldepth = max_depth_``, nps over the playouts since the first one), given once by the search and shown as they
are on every surface: UCI info, the bot's chat, log line and PGN, the status page; tree reuse apart."""

from __future__ import annotations

import chess
import pytest

from lichessbot.bot.chat.lines import eval_line
from lichessbot.bot.games.pgn import GameRecord, to_pgn
from lichessbot.config import SearchParams
from lichessbot.diagnostics.fake_net import FakeEvaluator
from lichessbot.search import Searcher, SearchStats
from lichessbot.thinker import Decision
from lichessbot.thinker.live import LiveSink
from lichessbot.timeman import VisitsStopper
from lichessbot.uci.output import decision_lines, info_lines


def _searcher(minibatch: int = 1) -> Searcher:
    return Searcher(FakeEvaluator(value=0.1), SearchParams(minibatch_size=minibatch), pipeline=False)


def test_the_root_is_depth_one_and_depth_is_lc0s_floored_mean():
    one = _searcher().search(chess.Board(), VisitsStopper(1))
    assert (one.nodes, one.playouts, one.depth, one.seldepth) == (1, 1, 1, 1)  # the root's own visit
    two = _searcher().search(chess.Board(), VisitsStopper(2))
    assert (two.nodes, two.depth, two.seldepth) == (2, 1, 2)  # (1 + 2) // 2: a root child is depth 2
    s = _searcher(8)
    deep = s.search(chess.Board(), VisitsStopper(400))
    c = s._core.counters()
    assert deep.depth == c.depth_sum // c.playouts and deep.seldepth == c.seldepth >= deep.depth >= 2
    assert isinstance(deep.depth, int) and isinstance(deep.nps, int) and deep.nps > 0


def test_nodes_count_the_reused_tree_and_playouts_only_the_new_visits():
    s = _searcher(8)
    board = chess.Board()
    first = s.search(board, VisitsStopper(300))
    board.push(first.pv[0])
    board.push(first.pv[1])  # the line the tree explored: its subtree is kept
    again = s.search(board, VisitsStopper(again_n := 400))
    assert again.reused_nodes > 0 and again.nodes == again.playouts + again.reused_nodes == again_n


@pytest.fixture(scope="module")
def searched() -> tuple[SearchStats, Decision, chess.Board]:
    s = _searcher(8)
    board = chess.Board()
    first = s.search(board, VisitsStopper(200))
    board.push(first.best_move)
    stats: list[SearchStats] = []
    handle = s.start(board, VisitsStopper(500), on_info=stats.append)
    result = handle.wait()
    assert result.reused_nodes > 0 and result.depth >= 2
    return stats[-1], Decision(move=result.best_move, source="search", result=result), board


def test_every_surface_shows_the_searchs_own_figures(searched):
    stats, d, board = searched
    assert (stats.nodes, stats.nps, stats.depth, stats.seldepth) == (d.nodes, d.nps, d.depth, d.seldepth)
    # UCI info (lc0 uciloop.cc ConvertInfoToString) and the reuse line before bestmove
    (info,) = info_lines(stats, show_wdl=False)
    assert f"info depth {d.depth} seldepth {d.seldepth} " in info and f" nodes {d.nodes} " in info
    assert f" nps {d.nps} " in info
    assert f"info string reused {d.reused_nodes} of {d.nodes} nodes" in decision_lines(d, show_wdl=False)
    # the bot's chat
    chat = eval_line(d, board)
    assert f"depth {d.depth}/{d.seldepth}" in chat and "(reused " in chat
    # the status page's live search
    live: list = []
    sink = LiveSink(live.append, 1, False)
    sink(stats)
    assert (live[0].nodes, live[0].reused, live[0].nps, live[0].depth, live[0].seldepth) == \
        (d.nodes, d.reused_nodes, d.nps, d.depth, d.seldepth)
    # the PGN's [%eval score,depth]
    record = GameRecord(game_id="abcdefgh", site="https://lichess.org/abcdefgh", moves=[*board.move_stack, d.move])
    record.decisions[1] = d
    assert f",{d.depth}]" in to_pgn(record)
