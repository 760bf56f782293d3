"""The online sources in the move pipeline (docs/online.md, "Order of the sources"): their place among the
local ones, ``suggest`` keeping the search to the tables' moves, and ``lichessbot uci`` asking them."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from dataclasses import replace

import chess
import pytest

from lichessbot.config import EngineConfig, TimemanConfig
from lichessbot.score import Score
from lichessbot.search import SearchResult
from lichessbot.search.types import RootLine, RootMove
from lichessbot.tablebase import Tablebases
from lichessbot.thinker import MovePipeline, MoveRequest, SearchOnly, move_sources, wiring
from lichessbot.thinker.pipeline import keep_to
from lichessbot.uci import UciEngine
from tests.conftest import SYZYGY
from tests.online.services import explorer_json, tablebase_json

ENDGAME = "8/6p1/8/4k3/8/8/2QR4/4K3 w - - 0 1"


def _result(moves: list[str]) -> SearchResult:
    """A search result whose root moves are ``moves``, best first (visits 100, 90, ...)."""
    rms = [RootMove(move=chess.Move.from_uci(m), n=100 - 10 * i, p=0.1, q=0.5 - 0.1 * i, u=0.0, d=0.2, m=30.0)
           for i, m in enumerate(moves)]
    lines = tuple(RootLine(move=rm.move, score=Score(cp=50 - 10 * i, wdl=(0.4, 0.4, 0.2)),
                           pv=(rm.move, chess.Move.from_uci("g7g6")))
                  for i, rm in enumerate(rms))
    best = rms[0].move
    return SearchResult(best_move=best, ponder_move=None, pv=[best], q=0.5, score=lines[0].score, nodes=100,
                        playouts=100, reused_nodes=0, nps=1000.0, depth=3.0, seldepth=4, time=0.1,
                        stop_reason="nodes", root_moves=rms, lines=lines)


def test_keep_to_takes_the_searchs_best_ranked_move_among_the_tables_moves():
    result = _result(["c2c5", "d2d7", "e1f1", "e1e2"])
    only = SearchOnly(moves=(chess.Move.from_uci("e1e2"), chess.Move.from_uci("e1f1")), note="tablebase win: 2")
    kept = keep_to(result, only)
    assert kept.best_move == chess.Move.from_uci("e1f1") and kept.pv[0] == kept.best_move
    assert kept.score.cp == 30 and "kept to the tables' moves" in kept.stop_reason
    assert keep_to(replace(result, best_move=chess.Move.from_uci("e1e2")), only).best_move.uci() == "e1e2"


def test_online_sources_sit_after_their_local_ones(make_online):
    online = make_online({"lichess_opening_explorer": {"enabled": True}, "online_egtb": {"enabled": True}})
    sources = move_sources(tablebases=Tablebases([str(SYZYGY)]), online=online.game("g"))
    assert [s.name for s in sources] == ["online_book", "tablebase", "online_tablebase"]


def test_suggest_keeps_the_search_to_the_moves_that_keep_the_tables_result(make_online, services, tiny_net):
    board = chess.Board(ENDGAME)
    services.tablebase[board.epd()] = tablebase_json(board, "win", 15, [("e1f2", "loss", -14), ("e1e2", "loss", -12),
                                                                         ("d2d5", "draw", 0)])
    online = make_online({"online_egtb": {"enabled": True, "move_quality": "suggest"}})
    ec = EngineConfig.model_validate({"network": str(tiny_net), "backend": "cpu", "threads": 1})
    with wiring.searcher_of(wiring.evaluator_of(ec, wiring.network_of(ec)), ec.search) as searcher:
        pipeline = MovePipeline(lambda: searcher, wiring.timeman_of(TimemanConfig()),
                                sources=move_sources(online=online.game("g")))
        decision = pipeline.think(board, MoveRequest(nodes=40))
    assert decision.source == "search" and decision.move.uci() in ("e1f2", "e1e2")
    assert decision.note == "tablebase win: 2 moves keep it"
    # the search itself visited those two moves only (lc0's searchmoves), not every root move
    assert decision.result is not None
    assert {rm.move.uci() for rm in decision.result.root_moves} == {"e1f2", "e1e2"}
    assert sum(rm.n for rm in decision.result.root_moves) >= 39


def test_uci_asks_the_online_book_before_searching(make_online, services):
    start = chess.Board()
    services.explorer[("masters", start.epd())] = explorer_json(start, {"b2b3": (60, 30, 10)})
    out = io.StringIO()
    engine = UciEngine(out=out)  # the explorer's move needs no network (a search would load one)
    engine.use_online(make_online({"lichess_opening_explorer": {"enabled": True}}))
    for line in ("ucinewgame", "position startpos", "go wtime 60000 btime 60000"):
        engine.handle(line)
    deadline = time.monotonic() + 5
    while "bestmove" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    engine.handle("quit")
    assert "info string explorer: masters, 100 games" in out.getvalue()
    assert out.getvalue().splitlines()[-1] == "bestmove b2b3"
    assert "loaded network" not in out.getvalue()


@pytest.mark.slow
def test_lichessbot_uci_with_config_asks_the_online_sources_of_the_file(services, tmp_path):
    start = chess.Board()
    services.explorer[("lichess", start.epd())] = explorer_json(start, {"g1f3": (60, 30, 10)})
    config = tmp_path / "config.yml"
    config.write_text(f"token: lip_FileToken0\nurl: {services.url}\nonline_moves:\n  lichess_opening_explorer:\n"
                      f"    enabled: true\n    source: lichess\n    url: {services.url}\n")
    done = subprocess.run([sys.executable, "-m", "lichessbot", "uci", "--config", str(config)], capture_output=True,
                          text=True, timeout=60, input="position startpos\ngo wtime 60000 btime 60000\nquit\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "bestmove g1f3"
    # the token of the file goes to the explorer because it is on the file's lichess server (``url``)
    assert services.requests[0][1:] == ("/lichess", services.requests[0][2], "Bearer lip_FileToken0")
