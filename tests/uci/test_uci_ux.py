"""`lichessbot uci` as users meet it through python-chess: MultiPV, Hash, short movetimes, and networks
that do not load (issue 18)."""

from __future__ import annotations

import io
import subprocess
import sys
import time

import chess
import chess.engine
import pytest

from lichessbot.match import EngineSpec, MatchConfig, TimeControl, run_match
from lichessbot.timeman.allocation import movetime_s
from lichessbot.uci import UciEngine
from tests.uci.test_uci import _wait_for

UCI = [sys.executable, "-m", "lichessbot", "uci"]


def _options(net) -> dict:
    return {"WeightsFile": str(net), "Backend": "cpu", "Threads": 1, "MinibatchSize": 16}


def test_analyse_with_multipv_3_gives_three_ranked_lines_with_scores_and_pvs(tiny_net):
    with chess.engine.SimpleEngine.popen_uci(UCI, timeout=60) as engine:
        engine.configure({**_options(tiny_net), "Hash": 64, "UCI_ShowWDL": True})
        infos = engine.analyse(chess.Board(), chess.engine.Limit(nodes=300), multipv=3)
    assert len(infos) == 3
    firsts = [info["pv"][0] for info in infos]
    assert len(set(firsts)) == 3 and all(m in chess.Board().legal_moves for m in firsts)
    for k, info in enumerate(infos, start=1):
        assert info["multipv"] == k and "score" in info and "wdl" in info
    nodes = [info["nodes"] for info in infos]
    assert nodes[0] >= 300 and len(set(nodes)) == 1  # one report: the same search for every line


def test_multipv_lines_follow_the_root_ranking(tiny_net):
    out = io.StringIO()
    eng = UciEngine(out=out)
    for name, value in _options(tiny_net).items():
        eng.handle(f"setoption name {name} value {value}")
    eng.handle("setoption name MultiPV value 500")  # more than the legal moves: one line per root move
    eng.handle("position startpos")
    eng.handle("go nodes 100")
    deadline = time.monotonic() + 30
    while "bestmove" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    eng.handle("quit")
    lines = out.getvalue().splitlines()
    last = [line for line in lines if " multipv " in line][-20:]
    assert [int(line.split(" multipv ")[1].split()[0]) for line in last] == list(range(1, 21))
    best = next(line for line in lines if line.startswith("bestmove")).split()[1]
    assert last[0].split(" pv ")[1].split()[0] == best
    assert "info string error" not in out.getvalue()


def _verbose(eng: UciEngine, out: io.StringIO, *commands: str) -> list[str]:
    """The VerboseMoveStats lines (one per root move, then the root's) after ``commands`` and ``go nodes 40``."""
    out.seek(0)
    out.truncate()
    for cmd in (*commands, "setoption name VerboseMoveStats value true", "position startpos", "go nodes 40"):
        eng.handle(cmd)
    return [line for line in _wait_for(out, "bestmove") if line.startswith("info string ") and "(P:" in line]


def _top_prior(lines: list[str]) -> float:
    return max(float(line.split("(P:")[1].split("%")[0]) for line in lines if not line.startswith("info string node"))


def test_policy_temperature_is_a_search_parameter_and_keeps_the_network_session(tiny_net):
    eng = UciEngine(out=io.StringIO())
    out = eng._out
    for name, value in _options(tiny_net).items():
        eng.handle(f"setoption name {name} value {value}")
    eng.handle("isready")
    session = eng.engine.evaluator
    assert "info string loaded network" in out.getvalue()
    cool = _verbose(eng, out)
    hot = _verbose(eng, out, "setoption name PolicyTemperature value 4.0")
    assert eng.engine.evaluator is session and "loaded network" not in out.getvalue()  # no new onnxruntime session
    assert _top_prior(hot) < _top_prior(cool)  # flatter priors: the new temperature is in force ...
    fresh = UciEngine(out=io.StringIO())
    for name, value in {**_options(tiny_net), "PolicyTemperature": 4.0}.items():
        fresh.handle(f"setoption name {name} value {value}")
    assert _verbose(fresh, fresh._out) == hot  # ... in the whole tree: no prior of the old one left in the NN cache
    eng.handle("quit")
    fresh.handle("quit")


def test_hash_sizes_the_nn_cache():
    eng = UciEngine(out=io.StringIO())
    eng.handle("setoption name Hash value 10")
    assert eng.settings.engine.nn_cache_size == 10 * 4096


def test_movetime_keeps_only_a_small_margin_and_at_least_half():
    assert movetime_s(0.2, 30) == pytest.approx(0.17)
    assert movetime_s(0.04, 30) == pytest.approx(0.02)  # half of 40 ms, not 10 ms
    assert movetime_s(5.0, 30) == pytest.approx(4.97)


@pytest.mark.slow
def test_short_movetime_searches_more_than_one_node(tiny_net):
    with chess.engine.SimpleEngine.popen_uci(UCI, timeout=60) as engine:
        engine.configure(_options(tiny_net))
        engine.ping()
        engine.play(chess.Board(), chess.engine.Limit(nodes=1))  # the network is loaded before timing
        result = engine.play(chess.Board(), chess.engine.Limit(time=0.2), info=chess.engine.INFO_ALL)
    assert result.move in chess.Board().legal_moves
    assert result.info["nodes"] > 1


def test_a_tiny_movetime_warns(tiny_net):
    out = io.StringIO()
    eng = UciEngine(out=out)
    for name, value in _options(tiny_net).items():
        eng.handle(f"setoption name {name} value {value}")
    eng.handle("go movetime 10")
    deadline = time.monotonic() + 30
    while "bestmove" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    eng.handle("quit")
    assert "info string warning:" in out.getvalue() and "too little time" in out.getvalue()


@pytest.mark.slow
def test_a_network_that_does_not_load_ends_uci_with_status_2(tmp_path):
    bad = tmp_path / "nope.onnx"
    proc = subprocess.run(UCI + ["--network", str(bad)], input="uci\nisready\ngo nodes 10\nquit\n",
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert str(bad) in proc.stderr
    assert "uciok" not in proc.stdout and "bestmove" not in proc.stdout


def test_a_weightsfile_that_does_not_exist_is_reported_at_setoption(tmp_path):
    out = io.StringIO()
    eng = UciEngine(out=out)
    eng.handle(f"setoption name WeightsFile value {tmp_path / 'nope.onnx'}")
    assert out.getvalue().startswith("info string error WeightsFile") and "nope.onnx" in out.getvalue()
    eng.handle("quit")


@pytest.mark.slow
def test_a_failed_weightsfile_gives_errors_not_moves(tmp_path):
    bad = tmp_path / "nope.onnx"
    with chess.engine.SimpleEngine.popen_uci(UCI, timeout=60) as engine:
        engine.configure({"WeightsFile": str(bad), "Backend": "cpu"})
        for _ in range(2):
            result = engine.play(chess.Board(), chess.engine.Limit(nodes=10), info=chess.engine.INFO_ALL)
            assert result.move not in chess.Board().legal_moves
            assert result.info["string"].startswith("error") and str(bad) in result.info["string"]


@pytest.mark.slow
def test_match_counts_engine_error_lines_as_faults(tiny_net, tmp_path, capsys):
    good = EngineSpec("good", UCI, options=_options(tiny_net))
    broken = EngineSpec("broken", UCI, options={"WeightsFile": str(tmp_path / "nope.onnx"), "Backend": "cpu"})
    config = MatchConfig(good, broken, games=2, tc=TimeControl(nodes=20), pgn_path=None)
    result = run_match(config)
    assert result.faults("error")["broken"] == 2 and result.losses == 0
    assert "engine errors: good 0, broken 2" in result.summary()
    failed = result.engine_failures()["broken"]  # its last words: the line that says why it cannot play
    assert len(failed) == 2 and (failed[0].engine_error or "").startswith("info string error cannot load network")
    assert "info string error" in capsys.readouterr().err


def test_timeman_log_lines_carry_the_game_id():
    import structlog

    from lichessbot.search import RootMove, SearchStats
    from lichessbot.timeman import TimeManager

    now = [0.0]
    tm = TimeManager(context={"game_id": "abcd1234"}, monotonic=lambda: now[0])
    with structlog.testing.capture_logs() as logs:
        stopper = tm.stopper(None, chess.Board(), 0.1)
        rm = RootMove(move=chess.Move.from_uci("e2e4"), n=5, p=0.5, q=0.0, u=0.0, d=0.3, m=40.0)
        stats = SearchStats(elapsed=1.0, playouts=5, nodes=5, reused_nodes=0, nps=5.0, depth=1.0, seldepth=1,
                            root_moves=[rm, rm], legal_moves=20)
        now[0] = 1.0
        assert stopper.should_stop(stats)
    events = [e for e in logs if e["event"].startswith("timeman.")]
    assert {e["event"] for e in events} == {"timeman.budget", "timeman.stop"}
    assert all(e["game_id"] == "abcd1234" for e in events)
