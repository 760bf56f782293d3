"""Syzygy tablebases: the root move by WDL then DTZ, probes inside the search, UCI SyzygyPath, the bot's
thinker, bad paths and corrupt tables, and endgames won (or held) against Stockfish."""

from __future__ import annotations

import io
import time

import chess
import pytest

from lichessbot import _core
from lichessbot.config import ConfigError, parse_config
from lichessbot.search import Searcher
from lichessbot.tablebase import TB_CP, TablebaseError, Tablebases
from lichessbot.timeman import VisitsStopper
from lichessbot.uci import UciEngine
from tests.conftest import SYZYGY
from tests.uci.test_uci import _wait_for

KQK = "4k3/8/8/8/8/8/8/3QK3 w - - 0 1"
#: Five pieces: Qxd8+ reaches KQP v K, and many captures reach four pieces.
FIVE = "3rk3/8/8/8/8/8/4P3/3QK3 w - - 0 1"


@pytest.fixture(scope="module")
def syzygy() -> str:
    """Seven 3-4-piece tables (tests/data/syzygy/SOURCE.md)."""
    return str(SYZYGY)


@pytest.fixture(scope="module")
def tables(syzygy) -> Tablebases:
    return Tablebases([syzygy])


def test_root_move_keeps_the_win_by_the_shortest_dtz(tables):
    found = tables.root_move(chess.Board(KQK))
    assert found.wdl == 2 and found.cp == TB_CP - found.dtz and found.wdl_triple == (1.0, 0.0, 0.0)
    assert "tablebase win" in found.describe()
    # Every other move keeps a win no shorter, or loses it.
    board = chess.Board(KQK)
    board.push(found.move)
    assert tables._tb.probe_dtz(board) == -(found.dtz - 1)
    # Mate in one is found as such.
    mate = tables.root_move(chess.Board("k7/8/1K6/8/8/8/8/7R w - - 0 1"))
    assert (mate.move.uci(), mate.mate, mate.cp) == ("h1h8", 1, TB_CP)


def test_root_move_resists_longest_and_holds_draws(tables):
    lost = tables.root_move(chess.Board("4k3/8/8/8/8/8/8/3QK3 b - - 0 1"))
    assert lost.wdl == -2 and lost.cp == -(TB_CP - lost.dtz) and lost.wdl_triple == (0.0, 0.0, 1.0)
    drawn = tables.root_move(chess.Board("8/8/8/4k3/8/8/4P3/4K3 b - - 0 1"))
    assert drawn.wdl == 0 and drawn.cp == 0


def test_the_fifty_move_counter_turns_a_slow_win_into_a_draw(tables):
    # KBN v K needs tens of plies: with the counter at 98 it is only a cursed win, played as a draw.
    board = chess.Board("8/8/8/8/8/8/8/kBNK4 w - - 98 80")
    assert tables.root_move(board).wdl == 1
    board.halfmove_clock = 0
    assert tables.root_move(board).wdl == 2


def test_positions_outside_the_tables_are_not_probed(tables):
    assert tables.root_move(chess.Board()) is None
    assert tables.root_move(chess.Board(FIVE)) is None
    assert tables.root_move(chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")) is None  # castling rights
    assert Tablebases([tables.paths[0]], max_pieces=3).root_move(chess.Board(KQK)) is not None
    kqpk = chess.Board("4k3/8/8/8/8/8/4P3/3QK3 w - - 0 1")
    assert tables.root_move(kqpk) is not None
    assert Tablebases([tables.paths[0]], max_pieces=3).root_move(kqpk) is None


def test_bad_paths_are_refused_naming_the_key(tmp_path):
    with pytest.raises(TablebaseError, match=r"tablebases.syzygy: .*nowhere does not exist"):
        Tablebases([str(tmp_path / "nowhere")])
    with pytest.raises(TablebaseError, match="holds no Syzygy tables"):
        Tablebases([str(tmp_path)])
    with pytest.raises(ValueError, match="not a directory"):
        _core.Tablebases([str(tmp_path / "nowhere")])
    cfg = parse_config({"tablebases": {"syzygy": [str(tmp_path / "nowhere")]}})
    with pytest.raises(TablebaseError):
        Tablebases.from_config(cfg.tablebases)
    with pytest.raises(ConfigError, match="tablebases.max_pieces"):
        parse_config({"tablebases": {"max_pieces": 9}})
    assert Tablebases.from_config(parse_config({}).tablebases) is None


def test_a_corrupt_table_is_logged_once_and_probing_stops(tmp_path, syzygy, capsys):
    # A KQvK table of a plausible size (16 mod 64) but garbage content.
    (tmp_path / "KQvK.rtbw").write_bytes(b"\x00" * 80)
    (tmp_path / "KQvK.rtbz").write_bytes(b"\x00" * 80)
    core = _core.Tablebases([str(tmp_path)])
    assert core.probe_wdl_after_zeroing(KQK) is None
    assert not core.enabled
    assert "magic" in core.take_failure() and core.take_failure() is None
    tb = Tablebases([str(tmp_path)])
    assert tb.root_move(chess.Board(KQK)) is None
    assert tb.root_move(chess.Board(KQK)) is None  # off for good, no second log line
    assert tb._broken


def test_search_probes_make_captures_into_the_tables_terminal(tables, tiny_net):
    from lichessbot.config import SearchParams
    from lichessbot.neural.evaluator import Evaluator
    from lichessbot.neural.network import load_network

    ev = Evaluator(load_network(str(tiny_net)), backend="cpu", threads=1, cache_size=1000)
    searcher = Searcher(ev, SearchParams(minibatch_size=8), pipeline=False, tablebases=tables.core)
    result = searcher.search(chess.Board(FIVE), VisitsStopper(400))
    assert result.tbhits > 0
    assert searcher.node_info(["d1d8"]).terminal == "tablebase"
    assert result.best_move.uci() == "d1d8" and result.score.mate is None and result.score.cp > 1000
    # Without tables: no hits.
    plain = Searcher(ev, SearchParams(minibatch_size=8), pipeline=False).search(chess.Board(FIVE), VisitsStopper(100))
    assert plain.tbhits == 0
    searcher.close()


def test_uci_go_in_the_tables_answers_at_once_with_tbhits(syzygy, tiny_net):
    out = io.StringIO()
    eng = UciEngine(out=out)
    eng.handle("uci")
    assert any(line.startswith("option name SyzygyPath type string default <empty>") for line in
               out.getvalue().splitlines())
    eng.handle("setoption name SyzygyPath value /no/such/dir")
    assert "info string error" in out.getvalue() and "SyzygyPath: /no/such/dir does not exist" in out.getvalue()
    eng.handle(f"setoption name SyzygyPath value {syzygy}")
    eng.handle(f"position fen {KQK}")
    t0 = time.perf_counter()
    eng.handle("go wtime 1000 btime 1000")
    assert time.perf_counter() - t0 < 1.0 and eng.engine.evaluator is None  # no network needed
    lines = out.getvalue().splitlines()
    info = next(line for line in lines if line.startswith("info depth"))
    assert " tbhits 1 " in info and f"score cp {TB_CP - 15}" in info
    assert any(line.startswith("info string tablebase win, DTZ") for line in lines)
    assert lines[-1].startswith("bestmove ")

    # A five-piece position is searched; captures into four pieces are tablebase hits.
    out.seek(0)
    out.truncate()
    for cmd in (f"setoption name WeightsFile value {tiny_net}", "setoption name Backend value cpu",
                "setoption name Threads value 1", "setoption name MinibatchSize value 8", f"position fen {FIVE}",
                "go nodes 300"):
        eng.handle(cmd)
    lines = _wait_for(out, "bestmove", timeout=30.0)
    hits = [int(line.split(" tbhits ")[1].split()[0]) for line in lines if " tbhits " in line]
    assert hits and hits[-1] > 0
    eng.handle("quit")


def test_uci_ponderhit_in_the_tables_plays_the_tables_move_as_any_go(syzygy, tiny_net):
    out = io.StringIO()
    eng = UciEngine(out=out)
    for cmd in (f"setoption name WeightsFile value {tiny_net}", "setoption name Backend value cpu",
                "setoption name Threads value 1", f"setoption name SyzygyPath value {syzygy}",
                f"position fen {KQK}", "go ponder wtime 5000 btime 5000"):
        eng.handle(cmd)
    time.sleep(0.2)
    assert "bestmove" not in out.getvalue() and "info depth" in out.getvalue()  # go ponder searches
    eng.handle("ponderhit")  # the move pipeline: the tables answer before any search goes on
    lines = out.getvalue().splitlines()
    assert lines[-2].startswith("info string tablebase win, DTZ") and lines[-1] == "bestmove e1f2"
    eng.handle("quit")


def test_the_bot_plays_the_tables_move_and_says_tablebase(syzygy, tiny_net):
    from lichessbot.bot.chat.lines import eval_line
    from lichessbot.thinker.engine import Engine

    cfg = parse_config({"engine": {"network": str(tiny_net), "backend": "cpu", "threads": 1,
                                   "search": {"minibatch_size": 8}},
                        "tablebases": {"syzygy": [syzygy]}})
    engine = Engine(cfg, nodes=16)
    thinker = engine.new_game()
    board = chess.Board(KQK)
    decision = thinker.think(board, None)
    assert decision.source == "tablebase" and decision.score.wdl == (1.0, 0.0, 0.0) and decision.score.cp > 19_000
    assert eval_line(decision, board).startswith("tablebase win, DTZ")
    searched = thinker.think(chess.Board(FIVE), None)
    assert searched.source == "search"
    thinker.close()
    engine.close()


def test_the_bots_search_probes_the_tables_as_it_expands(syzygy, tiny_net):
    from lichessbot.thinker.engine import Engine

    # Five pieces: no root probe; the bot's searcher (as the bot wires it) probes the tables at expansion,
    # so the capture into four pieces is a proven tablebase win (lc0 ExtendNode, docs/tablebases.md).
    cfg = parse_config({"engine": {"network": str(tiny_net), "backend": "cpu", "threads": 1,
                                   "search": {"minibatch_size": 8}},
                        "tablebases": {"syzygy": [syzygy]}, "timeman": {"smart_pruning": False}})
    with Engine(cfg, nodes=400) as engine:
        thinker = engine.new_game()
        decision = thinker.think(chess.Board(FIVE), None)
        thinker.close()
    assert decision.source == "search" and decision.result is not None and decision.result.tbhits > 0
    assert decision.move.uci() == "d1d8" and decision.score.wdl == (1.0, 0.0, 0.0) and decision.score.mate is None


@pytest.mark.parametrize("endgame", ["KQvK", "KRvK", "KBNvK", "KvKP"])
@pytest.mark.slow
def test_endgames_against_stockfish(endgame, stockfish_path, syzygy):
    """Two games per endgame in the default run (``python -m tests.tb_games`` plays ten of each)."""
    from tests.tb_games import ENDGAMES, run

    results = run(2, 2000, seed=7, stockfish=stockfish_path, endgames=[endgame])
    wanted = "1-0" if ENDGAMES[endgame][2] == 2 else "1/2-1/2"
    assert [r.result for r in results] == [wanted] * 2, results
    assert all(r.max_clock < 100 for r in results)


@pytest.mark.slow
def test_ten_endgames_of_each_kind_against_stockfish(stockfish_path, syzygy):
    from tests.tb_games import ENDGAMES, run

    results = run(10, 5000, seed=21, stockfish=stockfish_path)
    for name, (_, _, wdl) in ENDGAMES.items():
        wanted = "1-0" if wdl == 2 else "1/2-1/2"
        assert [r.result for r in results if r.endgame == name] == [wanted] * 10, name


def test_bench_reports_nps_with_and_without_tables_and_tbhits(tables):
    from lichessbot.config import SearchParams
    from lichessbot.diagnostics.bench_search_extra import tablebase_nps
    from lichessbot.diagnostics.fake_net import FakeEvaluator

    rows = tablebase_nps(FakeEvaluator(value=0.05, cache_size=10_000), tables.core, 2000,
                         SearchParams(minibatch_size=64))
    assert [r["position"] for r in rows][:2] == ["KQPvKR", "KRPvKR"]
    assert all(r["nps_without"] > 0 and r["nps_with"] > 0 for r in rows)
    assert sum(r["tbhits"] for r in rows) > 0


def test_check_config_refuses_a_missing_tablebase_directory(tmp_path, capsys):
    from lichessbot.cli import main

    cfg = tmp_path / "c.yml"
    cfg.write_text(f"tablebases:\n  syzygy: [{tmp_path / 'nowhere'}]\n")
    assert main(["check-config", str(cfg)]) == 2
    assert "tablebases.syzygy" in capsys.readouterr().err


def test_a_corrupt_table_in_the_search_is_logged_once_and_the_search_goes_on(tmp_path, tiny_net):
    import structlog

    from lichessbot.config import SearchParams
    from lichessbot.neural.evaluator import Evaluator
    from lichessbot.neural.network import load_network

    (tmp_path / "KQvK.rtbw").write_bytes(b"\x00" * 80)  # three pieces: KQ v KR at the root is not covered
    core = _core.Tablebases([str(tmp_path)])
    ev = Evaluator(load_network(str(tiny_net)), backend="cpu", threads=1, cache_size=1000)
    searcher = Searcher(ev, SearchParams(minibatch_size=8), pipeline=False, tablebases=core)
    with structlog.testing.capture_logs() as logs:
        for _ in range(2):
            result = searcher.search(chess.Board("3rk3/8/8/8/8/8/8/3QK3 w - - 0 1"), VisitsStopper(200))
            assert result.nodes == 200 and result.tbhits == 0
    failures = [e for e in logs if "tablebase probe failed" in e["event"]]
    assert len(failures) == 1 and "magic" in failures[0]["error"]
    assert not core.enabled
    searcher.close()
