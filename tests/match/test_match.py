"""Local engine matches: scripted UCI engines (tests/scripted_engine.py), our engine with a tiny net."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from lichessbot.cli import main
from lichessbot.match import (
    Adjudication,
    EngineSpec,
    MatchConfig,
    MatchError,
    TimeControl,
    elo_estimate,
    load_openings,
    run_match,
)
from lichessbot.match.cli import parse_engine

SCRIPTED = [sys.executable, str(Path(__file__).resolve().parents[1] / "scripted_engine.py")]
EPD = [
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - id \"open game\";",
    "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -",
]


def scripted(name: str, *settings: str, tc: TimeControl | None = None) -> EngineSpec:
    return EngineSpec(name, SCRIPTED + list(settings), tc=tc)


def read_pgn(path: Path) -> list[chess.pgn.Game]:
    games = []
    with open(path, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            assert not game.errors
            games.append(game)
    return games


@pytest.fixture
def epd(tmp_path) -> Path:
    p = tmp_path / "openings.epd"
    p.write_text("# two openings\n" + "\n".join(EPD) + "\n")
    return p


@pytest.mark.slow
def test_match_writes_every_game_with_colours_swapped_per_opening(tmp_path, epd):
    pgn = tmp_path / "m.pgn"
    config = MatchConfig(
        scripted("alpha", "seed=1"), scripted("beta", "seed=2"), games=4, tc=TimeControl.parse("30+0.1"),
        openings=load_openings(str(epd)), concurrency=2, pgn_path=str(pgn),
    )
    seen = []
    result = run_match(config, on_game=lambda rec, res: seen.append(len(res.games)))
    assert seen == [1, 2, 3, 4]
    assert [g.number for g in result.games] == [1, 2, 3, 4]
    assert result.wins + result.draws + result.losses == 4
    games = sorted(read_pgn(pgn), key=lambda g: int(g.headers["Round"]))
    assert len(games) == 4
    for k, game in enumerate(games):
        h = game.headers
        assert h["FEN"] == chess.Board(EPD[k // 2].split(" id ")[0]).fen()
        assert (h["White"], h["Black"]) == (("alpha", "beta") if k % 2 == 0 else ("beta", "alpha"))
        assert h["Result"] == result.games[k].result and h["TimeControl"] == "30+0.1"
        board = game.end().board()
        if h["Termination"] == "normal":
            assert board.outcome(claim_draw=True).result() == h["Result"]
        for node in game.mainline():
            assert node.clock() is not None and 0 < node.clock() <= 30 + 0.1 * board.fullmove_number
            assert node.eval() is not None
    assert games[0].headers["Opening"] == "open game"


def test_pgn_openings_are_played_as_book_moves(tmp_path):
    src = tmp_path / "o.pgn"
    src.write_text('[Event "x"]\n[Opening "Ruy"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 *\n')
    openings = load_openings(str(src), plies=4)
    assert [m.uci() for m in openings[0].moves] == ["e2e4", "e7e5", "g1f3", "b8c6"]
    config = MatchConfig(
        scripted("a", "seed=3"), scripted("b"), games=1, tc=TimeControl(nodes=1), openings=openings,
        adjudication=Adjudication(max_plies=10), pgn_path=str(tmp_path / "m.pgn"),
    )
    result = run_match(config)
    game = read_pgn(tmp_path / "m.pgn")[0]
    nodes = list(game.mainline())
    assert [n.comment for n in nodes[:4]] == ["book"] * 4
    assert nodes[4].emt() is not None  # no clock: the time spent is recorded instead
    assert game.headers["TimeControl"] == "-"
    assert (result.games[0].termination, result.games[0].result) == ("adjudication", "1/2-1/2")
    assert len(nodes) == 10


def test_a_crashed_engine_loses_is_restarted_and_the_match_goes_on(tmp_path):
    marker = tmp_path / "crashed"
    config = MatchConfig(
        scripted("steady"), scripted("fragile", f"crash_once={marker}"), games=3, tc=TimeControl.parse("30"),
        pgn_path=str(tmp_path / "m.pgn"),
    )
    result = run_match(config)
    assert marker.exists()
    first = result.games[0]
    assert (first.fault, first.loser_fault, first.result, first.termination) == ("crash", "fragile", "1-0", "abandoned")
    assert result.faults("crash") == {"fragile": 1}
    assert result.restarts == {"steady": 0, "fragile": 1}
    assert len(result.games) == 3 and all(g.fault is None for g in result.games[1:])
    assert len(read_pgn(tmp_path / "m.pgn")) == 3
    assert "crashes: steady 0, fragile 1" in result.summary()


@pytest.mark.slow
def test_time_losses_and_illegal_moves_are_counted_separately(tmp_path):
    fast = scripted("fast", tc=TimeControl.parse("30"))
    slow = run_match(MatchConfig(fast, scripted("slow", "sleep=0.25"), games=2, tc=TimeControl.parse("0.6")))
    assert slow.faults("time") == {"slow": 2} and slow.wins == 2
    assert all(g.termination == "time forfeit" for g in slow.games)
    bad = run_match(MatchConfig(scripted("good"), scripted("bad", "illegal_at=1"), games=1, tc=TimeControl(nodes=1)))
    assert bad.faults("illegal") == {"bad": 1} and bad.faults("time") == {}
    assert bad.games[0].termination == "rules infraction"
    # an illegal move is an engine failure, with the move it sent; a loss on time is a result
    assert list(bad.engine_failures()) == ["bad"] and "a1a1" in (bad.games[0].engine_error or "")
    assert slow.engine_failures() == {}


@pytest.mark.slow
def test_a_hung_engine_loses_on_time_and_is_restarted():
    config = MatchConfig(scripted("live"), scripted("hung", "sleep=30"), games=2, tc=TimeControl(nodes=1),
                         move_timeout_margin=1.0)
    result = run_match(config)
    # killed twice; restarted once, for the second game (no game needs it after the second)
    assert result.faults("time") == {"hung": 2} and result.restarts == {"live": 0, "hung": 1}
    assert "did not answer" in result.games[0].reason


def test_latency_is_charged_to_the_movers_clock(tmp_path):
    config = MatchConfig(scripted("a"), scripted("b"), games=1, tc=TimeControl.parse("2+0"), latency=0.5,
                         pgn_path=str(tmp_path / "m.pgn"))
    result = run_match(config)
    clocks = [n.clock() for n in read_pgn(tmp_path / "m.pgn")[0].mainline()]
    assert clocks[0] <= 1.5 and clocks[2] <= 1.0  # white after its 1st and 2nd move
    assert result.games[0].fault == "time"  # 2 s last at most four moves of 0.5 s latency


def test_elo_and_error_bar_for_known_counts():
    # W=60 D=20 L=20: s = 0.7, elo = -400 log10(1/0.7 - 1) = 147.19; per-game variance
    # 0.6*0.3^2 + 0.2*0.2^2 + 0.2*0.7^2 = 0.16, se = 0.04, 95 % interval of s = 0.7 +- 1.95996*0.04
    # -> elo 86.23 .. 218.25, error bar (218.25 - 86.23) / 2 = 66.01.
    e = elo_estimate(60, 20, 20)
    assert e.diff == pytest.approx(147.19, abs=0.01) and e.margin == pytest.approx(66.01, abs=0.02)
    # W=10 D=80 L=10: s = 0.5, var = 0.05, se = 0.02236, s_hi = 0.54383 -> error bar 30.54.
    e = elo_estimate(10, 80, 10)
    assert e.diff == 0.0 and e.margin == pytest.approx(30.54, abs=0.02) and e.los == pytest.approx(0.5)
    assert str(e) == "+0.0 +/- 30.5"
    assert math.isinf(elo_estimate(3, 0, 0).diff) and str(elo_estimate(0, 0, 2)) == "-inf"
    assert math.isnan(elo_estimate(0, 0, 0).diff)
    assert elo_estimate(30, 0, 10).los == pytest.approx(0.5 * (1 + math.erf(20 / math.sqrt(80))))


def test_time_controls_and_engine_settings_parse():
    assert TimeControl.parse("10+0.1") == TimeControl(base=10.0, inc=0.1)
    assert TimeControl.parse("1:30+1").base == 90.0 and TimeControl.parse("60").pgn() == "60"
    with pytest.raises(MatchError, match="base\\+inc"):
        TimeControl.parse("ten")
    spec = parse_engine(["cmd=/usr/games/stockfish -x", "option.Skill Level=0", "movetime=0.05"])
    assert spec.command == ["/usr/games/stockfish", "-x"] and spec.options == {"Skill Level": "0"}
    assert spec.name == "stockfish" and spec.tc == TimeControl(movetime=0.05)
    ours = parse_engine(["option.WeightsFile=n.onnx", "nodes=400"])
    assert ours.command[1:] == ["-m", "lichessbot", "uci"] and ours.tc == TimeControl(nodes=400)
    with pytest.raises(MatchError, match="unknown engine setting"):
        parse_engine(["depth=3"])
    with pytest.raises(MatchError, match="did not start"):
        run_match(MatchConfig(EngineSpec("x", ["/nonexistent/engine"]), scripted("y"), tc=TimeControl(nodes=1)))


def test_cli_prints_the_result_and_writes_the_pgn(tmp_path, capsys):
    cmd = " ".join(SCRIPTED)
    pgn = tmp_path / "cli.pgn"
    status = main(["match", "--engine", f"cmd={cmd} seed=4", "name=one", "--engine", f"cmd={cmd}", "name=two",
                   "--games", "2", "--nodes", "1", "--max-plies", "30", "--pgn", str(pgn)])
    out = capsys.readouterr()
    assert status == 0
    assert "one vs two: 2 games" in out.out and "Elo difference" in out.out
    assert "[2/2]" in out.err
    assert len(read_pgn(pgn)) == 2


def test_a_match_with_a_failed_engine_exits_1_naming_it_and_its_last_words(tmp_path, capsys):
    cmd = " ".join(SCRIPTED)
    status = main(["match", "--engine", f"cmd={cmd} crash_after=2", "name=fragile", "--engine", f"cmd={cmd}",
                   "name=steady", "--games", "2", "--nodes", "1", "--pgn", str(tmp_path / "m.pgn")])
    out = capsys.readouterr()
    assert status == 1 and "crashes: fragile 2, steady 0" in out.out
    named = [line for line in out.err.splitlines() if line.startswith("lichessbot match: ")]
    assert len(named) == 1, out.err
    assert named[0].startswith("lichessbot match: fragile failed in 2 games (1, 2); the last, game 2: ")
    # the failure as python-chess saw it, then what the engine wrote on stderr before it died
    assert "exit code: 3" in named[0] and "its last words: " in named[0]
    assert named[0].endswith("scripted engine: crashing on purpose at go 2"), named[0]


@pytest.mark.skipif(importlib.util.find_spec("lichessbot.uci") is None, reason="lichessbot uci not built yet")
@pytest.mark.slow
def test_our_engine_with_a_tiny_net_plays_a_match(tmp_path, tiny_net):
    ours = EngineSpec("lichessbot", options={"WeightsFile": str(tiny_net)}, tc=TimeControl(nodes=8))
    config = MatchConfig(ours, scripted("scripted", tc=TimeControl(nodes=1)), games=2,
                         adjudication=Adjudication(max_plies=40), pgn_path=str(tmp_path / "m.pgn"))
    result = run_match(config)
    assert result.faults("crash") == {} and result.faults("illegal") == {}
    games = read_pgn(tmp_path / "m.pgn")
    assert [g.headers["White"] for g in games] == ["lichessbot", "scripted"]
