"""`lichessbot uci`: protocol, error lines, and whole games under python-chess's chess.engine."""

from __future__ import annotations

import io
import random
import sys
import time

import chess
import chess.engine
import pytest

from lichessbot.uci import UciEngine


def _engine(tiny_net) -> tuple[UciEngine, io.StringIO]:
    out = io.StringIO()
    eng = UciEngine(out=out)
    eng.handle(f"setoption name WeightsFile value {tiny_net}")
    eng.handle("setoption name Backend value cpu")
    eng.handle("setoption name Threads value 1")
    return eng, out


def _wait_for(out: io.StringIO, prefix: str, timeout: float = 20.0) -> list[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lines = out.getvalue().splitlines()
        if any(line.startswith(prefix) for line in lines):
            return lines
        time.sleep(0.01)
    raise AssertionError(f"no {prefix!r} line in {out.getvalue()!r}")


def test_uci_answers_without_loading_the_network():
    out = io.StringIO()
    eng = UciEngine(out=out)
    eng.handle("uci")
    lines = out.getvalue().splitlines()
    assert lines[-1] == "uciok"
    for name in ("WeightsFile", "Backend", "MinibatchSize", "CPuct", "FpuValue", "PolicyTemperature",
                 "NNCacheSize", "MoveOverhead", "Ponder", "UCI_ShowWDL", "VerboseMoveStats"):
        assert any(line.startswith(f"option name {name} type") for line in lines), name
    assert eng.engine.evaluator is None


def test_uci_advertises_lc0s_defaults_where_lc0_has_the_option():
    """lc0 v0.33's defaults (src/search/classic/params.cc for the search; src/neural/shared_params.cc for
    NNCacheSize): a user coming from lc0 gets the same engine without setting anything."""
    out = io.StringIO()
    UciEngine(out=out).handle("uci")
    defaults = {}
    for line in out.getvalue().splitlines():
        words = line.split()
        if words[:2] == ["option", "name"] and "default" in words:
            defaults[words[2]] = words[words.index("default") + 1]
    lc0 = {"CPuct": 1.745, "CPuctBase": 38739.0, "CPuctFactor": 3.894, "FpuValue": 0.33,
           "PolicyTemperature": 1.359, "NNCacheSize": 2_000_000}
    assert {name: float(defaults[name]) for name in lc0} == lc0
    assert defaults["FpuStrategy"] == "reduction" and defaults["TwoFoldDraws"] == "true"


def test_bad_input_gives_error_lines_and_the_engine_keeps_running(tiny_net):
    eng, out = _engine(tiny_net)
    bad = ["setoption name NoSuchOption value 3", "setoption name MinibatchSize value 2000",
           "setoption name UCI_ShowWDL value maybe", "position startpos moves e2e5",
           "position fen not/a/fen w - - 0 1", "position sideways", "go nodes lots", "go wibble 3", "frobnicate"]
    for cmd in bad:
        assert eng.handle(cmd)
    errors = [line for line in out.getvalue().splitlines() if line.startswith("info string error")]
    assert len(errors) == len(bad)
    assert "e2e5" in errors[3] and "NoSuchOption" in errors[0]
    eng.handle("stop")  # the malformed go commands still searched (and answered bestmove)
    out.seek(0)
    out.truncate()
    eng.handle("position startpos moves e2e4")  # a good command after bad ones still works
    eng.handle("isready")
    eng.handle("go nodes 20")
    lines = _wait_for(out, "bestmove")
    assert "readyok" in lines
    best = next(line for line in lines if line.startswith("bestmove")).split()[1]
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(best) in board.legal_moves
    assert eng.handle("quit") is False


def test_info_lines_and_verbose_move_stats(tiny_net):
    eng, out = _engine(tiny_net)
    eng.handle("setoption name UCI_ShowWDL value true")
    eng.handle("setoption name VerboseMoveStats value true")
    eng.handle("position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    eng.handle("go nodes 200")
    lines = _wait_for(out, "bestmove")
    eng.handle("quit")
    infos = [line for line in lines if line.startswith("info depth")]
    assert infos and "score mate 1" in infos[-1] and " wdl " in infos[-1] and " pv d1d8" in infos[-1]
    stats = [line for line in lines if line.startswith("info string ") and " N: " in line]
    assert stats[-1].startswith("info string node ")
    assert stats[-2].startswith("info string d1d8 ") and "(P: " in stats[-2] and "(W)" in stats[-2]
    assert lines[-1].startswith("bestmove d1d8")


def test_go_infinite_runs_until_stop_and_ponderhit(tiny_net):
    eng, out = _engine(tiny_net)
    eng.handle("position startpos")
    eng.handle("go infinite")
    time.sleep(0.3)
    assert "bestmove" not in out.getvalue()
    eng.handle("stop")
    assert out.getvalue().splitlines()[-1].startswith("bestmove")
    eng.handle("position startpos moves e2e4 e7e5")
    eng.handle("go ponder wtime 2000 btime 2000")
    time.sleep(0.2)
    assert out.getvalue().count("bestmove") == 1
    eng.handle("ponderhit")
    _wait_for(out, "bestmove", 10)
    end = time.monotonic() + 10
    while out.getvalue().count("bestmove") < 2 and time.monotonic() < end:
        time.sleep(0.01)
    assert out.getvalue().count("bestmove") == 2
    eng.handle("go ponder wtime 2000 btime 2000")  # the opponent played another move: stop, then a new go
    time.sleep(0.2)
    eng.handle("stop")
    last = out.getvalue().splitlines()[-1]
    assert out.getvalue().count("bestmove") == 3 and chess.Move.from_uci(last.split()[1]) in eng.board.legal_moves
    eng.handle("quit")


@pytest.mark.slow
def test_whole_game_under_python_chess_against_a_random_mover(tiny_net):
    rng = random.Random(3)
    board = chess.Board()
    with chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "lichessbot", "uci"], timeout=60) as engine:
        engine.configure({"WeightsFile": str(tiny_net), "Backend": "cpu", "Threads": 1, "MinibatchSize": 16})
        while not board.is_game_over(claim_draw=True) and board.ply() < 160:
            if board.turn == chess.WHITE:
                if board.ply() < 6:  # a few moves on the clock: the time manager path
                    limit = chess.engine.Limit(white_clock=3, black_clock=3, white_inc=0.05, black_inc=0.05)
                else:
                    limit = chess.engine.Limit(nodes=25)
                result = engine.play(board, limit, info=chess.engine.INFO_ALL)
                assert result.move in board.legal_moves
                board.push(result.move)
            else:
                board.push(rng.choice(list(board.legal_moves)))
        analysis = engine.analyse(board if not board.is_game_over() else chess.Board(), chess.engine.Limit(nodes=30))
        assert "score" in analysis and analysis["nodes"] >= 30
    assert board.ply() >= 20


@pytest.mark.parametrize("cmd", ["go movetime 100", "go wtime 500 btime 500 movestogo 5"])
def test_timed_go_comes_back(tiny_net, cmd):
    eng, out = _engine(tiny_net)
    eng.handle("position startpos")
    eng.handle("isready")
    t = time.monotonic()
    eng.handle(cmd)
    _wait_for(out, "bestmove", 10)
    assert time.monotonic() - t < 2.0
    eng.handle("quit")


def test_a_search_that_cannot_start_still_answers_bestmove(tiny_net, monkeypatch):
    from lichessbot.search import Searcher

    def broken(self, *a, **kw):
        raise RuntimeError("deliberate")

    eng, out = _engine(tiny_net)
    eng.handle("isready")
    monkeypatch.setattr(Searcher, "start", broken)
    eng.handle("position startpos")
    eng.handle("go nodes 10")
    lines = _wait_for(out, "bestmove")
    assert any("the search did not start: deliberate" in line for line in lines), lines
    assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board().legal_moves
