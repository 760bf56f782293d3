"""Strength levels (docs/strength.md): the table, the move choice, the level of a game, UCI_LimitStrength/UCI_Elo,
the Maia preset, extrapolated levels (``lichessbot calibrate``'s own tests:
tests/strength/test_strength_calibrate.py)."""

from __future__ import annotations

import hashlib
import io
import json
import time

import chess
import numpy as np
import pytest

from lichessbot.config import ConfigError, StrengthConfig, parse_config
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.position_eval import evaluate_boards
from lichessbot.search import RootMove
from lichessbot.strength import (
    Level,
    StrengthError,
    StrengthTable,
    choose,
    level_for_game,
    load_table,
    maia_level,
)
from lichessbot.strength.fit import expected
from lichessbot.uci import UciEngine
from tests.uci.test_uci import _wait_for


def _table(tmp_path, levels=((1000, 4), (1300, 16), (1600, 256))) -> StrengthTable:
    t = StrengthTable("test", tuple(Level(elo=e, nodes=n, temperature=0.5) for e, n in levels))
    t.save(tmp_path / "t.json")
    return load_table(tmp_path / "t.json")


def _rm(uci: str, n: int, q: float, p: float = 0.1, proven: int | None = None) -> RootMove:
    return RootMove(move=chess.Move.from_uci(uci), n=n, p=p, q=q, u=0.0, d=0.3, m=0.0, proven=proven)


# -- the table ------------------------------------------------------------------------------------------
def test_levels_between_table_rows_are_interpolated_and_above_the_table_is_full_strength(tmp_path):
    t = _table(tmp_path)
    assert t.level_for(1300).nodes == 16
    assert t.level_for(1450).nodes == 64  # geometric: sqrt(16 * 256)
    assert t.level_for(1450).elo == 1450
    low = t.level_for(800)
    assert (low.elo, low.nodes) == (1000, 4)  # below the table: its lowest level
    assert t.level_for(1601) is None


def test_a_bad_table_is_refused_naming_the_file_and_the_level(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"format": 1, "levels": [{"elo": 1500, "nodes": 0}]}))
    with pytest.raises(StrengthError, match=r"bad.json, level 1: .*nodes must be at least 1"):
        load_table(p)
    p.write_text("{")
    with pytest.raises(StrengthError, match="not JSON"):
        load_table(p)
    with pytest.raises(StrengthError, match="cannot read"):
        load_table(tmp_path / "missing.json")


def test_the_shipped_table_has_five_verified_levels_for_the_default_network():
    from lichessbot.neural.network import _default_path

    t = load_table("default")
    assert t.network_sha256 == hashlib.sha256(_default_path().read_bytes()).hexdigest()
    measured = [lv for lv in t.levels if lv.measured is not None]
    assert len(measured) >= 5
    for lv in measured:
        m = lv.measured
        assert m.games >= 30 and m.wins + m.draws + m.losses == m.games
        assert m.elo_low < m.elo < m.elo_high and m.elo_margin < 150, lv  # its Elo with the 95 % interval
        assert abs(expected(m.elo, lv.elo) - 0.5) <= 0.15, lv  # scores 50 % +- 15 % against its own UCI_Elo
        assert 1350 <= lv.elo <= 2850  # within Stockfish's UCI_Elo
    assert all(lv.elo < measured[0].elo for lv in t.levels if lv.measured is None)  # extrapolated below it
    assert [lv.nodes for lv in t.levels] == sorted(lv.nodes for lv in t.levels)


# -- the move choice ------------------------------------------------------------------------------------
def test_a_move_losing_more_than_max_q_loss_is_never_chosen():
    rms = [_rm("e2e4", 40, 0.10), _rm("d2d4", 30, 0.05), _rm("g2g4", 30, -0.30)]
    level = Level(elo=1350, nodes=100, temperature=5.0, max_q_loss=0.2, near_equal_prob=0.5)
    rng = np.random.default_rng(1)
    picked = {rms[choose(rms, level, rng).index].move.uci() for _ in range(400)}
    assert picked == {"e2e4", "d2d4"}


def test_near_equal_moves_are_chosen_deliberately_and_temperature_zero_plays_the_best():
    rms = [_rm("e2e4", 90, 0.10), _rm("d2d4", 5, 0.09), _rm("c2c4", 5, 0.00)]
    rng = np.random.default_rng(2)
    near = Level(elo=1350, nodes=100, temperature=0.0, near_equal_q=0.02, near_equal_prob=0.5)
    reasons = [choose(rms, near, rng) for _ in range(200)]
    assert {c.index for c in reasons} == {0, 1} and {c.reason for c in reasons} == {"best", "near-equal"}
    best = Level(elo=1350, nodes=100, temperature=0.0)
    assert all(choose(rms, best, rng).index == 0 for _ in range(50))


def test_a_proven_win_is_always_played_and_a_proven_loss_never():
    rng = np.random.default_rng(3)
    hot = Level(elo=1350, nodes=100, temperature=10.0, max_q_loss=2.0, near_equal_q=2.0, near_equal_prob=0.5)
    win = [_rm("h5f7", 2, 1.0, proven=1), _rm("e2e4", 50, 0.1)]
    assert all(choose(win, hot, rng).index == 0 for _ in range(50))
    loss = [_rm("e2e4", 50, 0.1), _rm("f2f3", 50, -1.0, proven=-1)]
    assert all(choose(loss, hot, rng).index == 0 for _ in range(50))


def test_at_one_node_moves_are_sampled_from_the_priors_above_min_prior():
    rms = [_rm("e2e4", 0, 0.0, p=0.5), _rm("d2d4", 0, 0.0, p=0.4), _rm("a2a3", 0, 0.0, p=0.01)]
    rng = np.random.default_rng(4)
    picked = {rms[choose(rms, maia_level(), rng).index].move.uci() for _ in range(300)}
    assert picked == {"e2e4", "d2d4"}


def test_the_level_plays_the_chosen_moves_line_read_from_the_search_result_alone():
    from lichessbot.score import Score
    from lichessbot.search import RootLine, SearchResult
    from lichessbot.strength import apply_level

    rms = [_rm("e2e4", 90, 0.10), _rm("d2d4", 5, 0.09)]
    e4, d4, d5, c4 = (chess.Move.from_uci(u) for u in ("e2e4", "d2d4", "d7d5", "c2c4"))
    lines = (RootLine(e4, Score(cp=12, wdl=(0.3, 0.5, 0.2)), (e4,)),
             RootLine(d4, Score(cp=9, wdl=(0.3, 0.45, 0.25)), (d4, d5, c4)))
    result = SearchResult(best_move=e4, ponder_move=None, pv=[e4], q=0.10, score=lines[0].score, nodes=95,
                          playouts=95, reused_nodes=0, nps=1.0, depth=2.0, seldepth=3, time=0.1,
                          stop_reason="nodes limit 95", root_moves=rms, lines=lines)
    always = Level(elo=1350, nodes=100, near_equal_q=0.02, near_equal_prob=1.0)
    played = apply_level(result, always, np.random.default_rng(5))
    assert (played.best_move, played.ponder_move, played.pv, played.q) == (d4, d5, [d4, d5, c4], 0.09)
    assert played.score == lines[1].score and played.stop_reason == "nodes limit 95; strength near-equal d2d4"
    with pytest.raises(ValueError, match="2 root moves but 0 lines"):
        apply_level(SearchResult(**{**result.__dict__, "lines": ()}), always, np.random.default_rng(5))


# -- the level of a bot game -------------------------------------------------------------------------------
def test_adaptive_strength_follows_the_rating_in_casual_games_only(tmp_path):
    t = _table(tmp_path)
    cfg = StrengthConfig(adaptive={"enabled": True, "offset": 100})
    assert level_for_game(cfg, t, 1200, rated=False).nodes == 16  # 1200 + 100 = the 1300 level
    assert level_for_game(cfg, t, 1200, rated=True) is None       # casual_only: full strength
    assert level_for_game(cfg, t, None, rated=False) is None      # no rating (AI, anonymous)
    both = StrengthConfig(elo=1000, adaptive={"enabled": True, "casual_only": False})
    assert level_for_game(both, t, 1300, rated=True).nodes == 16
    fixed = StrengthConfig(elo=1000, adaptive={"enabled": True})
    assert level_for_game(fixed, t, 1300, rated=True).nodes == 4  # rated: back to elo
    assert level_for_game(StrengthConfig(preset="maia"), None, 2000, rated=True).nodes == 1


def test_strength_config_errors_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match="engine.strength: preset"):
        parse_config({"engine": {"strength": {"preset": "maia", "elo": 1500}}})
    with pytest.raises(ConfigError, match="engine.strength.adaptive.offset"):
        parse_config({"engine": {"strength": {"adaptive": {"offset": 5000}}}})
    from lichessbot.thinker.engine import Engine

    cfg = parse_config({"engine": {"backend": "cpu", "strength": {"elo": 1500, "table": str(tmp_path / "no.json")}}})
    with pytest.raises(StrengthError, match="engine.strength.table: .*no.json: cannot read"):
        Engine(cfg)


@pytest.mark.slow
def test_a_weakened_thinker_takes_its_share_of_the_move_budget(tiny_net, tmp_path):
    from lichessbot.thinker.engine import Engine
    from lichessbot.timeman import Clock

    _table(tmp_path)
    cfg = parse_config({"engine": {"network": str(tiny_net), "backend": "cpu", "threads": 1,
                                   "strength": {"elo": 1000, "table": str(tmp_path / "t.json"), "think_share": 0.5}}})
    engine = Engine(cfg)
    thinker = engine.new_game("g1")
    board = chess.Board()
    board.push_uci("e2e4")
    d = thinker.think(board, Clock(time=20_000, inc=0, opp_time=20_000, opp_inc=0))
    budget = thinker.pipeline.timeman.budget
    assert d.nodes <= 4 and budget is not None
    t0 = time.monotonic()
    board.push(d.move)
    board.push(next(iter(board.legal_moves)))
    thinker.think(board, Clock(time=20_000, inc=0, opp_time=20_000, opp_inc=0))
    # the search stopped at the level's 4 nodes, yet the move took at least its share of the budget
    assert time.monotonic() - t0 >= 0.5 * thinker.pipeline.timeman.budget.target
    thinker.close()
    engine.close()


# -- UCI ------------------------------------------------------------------------------------------------
def _uci(*lines: str) -> tuple[UciEngine, io.StringIO]:
    out = io.StringIO()
    eng = UciEngine(out=out)
    for line in ("setoption name Backend value cpu", "setoption name Threads value 1", *lines):
        eng.handle(line)
    return eng, out


def test_uci_limit_strength_plays_the_tables_level_for_uci_elo():
    t = load_table("default")
    lv = t.levels[1]
    eng, out = _uci("setoption name UCI_LimitStrength value true", f"setoption name UCI_Elo value {lv.elo}",
                    "setoption name Seed value 7", "position startpos moves e2e4", "go nodes 5000")
    lines = _wait_for(out, "bestmove")
    assert f"info string strength {lv.describe()}" in lines  # the operator's line names its Elo and that it
    assert "extrapolated, not measured" in lv.describe()      # (1200) was never measured
    final = [ln for ln in lines if ln.startswith("info depth")][-1]
    assert int(final.split(" nodes ")[1].split()[0]) <= lv.nodes
    out.truncate(0)
    out.seek(0)
    eng.handle(f"setoption name UCI_Elo value {t.max_elo + 1}")  # above the table: full strength
    eng.handle("go nodes 300")
    lines = _wait_for(out, "bestmove")
    assert any("full strength" in ln for ln in lines)
    assert int([ln for ln in lines if ln.startswith("info depth")][-1].split(" nodes ")[1].split()[0]) == 300
    eng.handle("quit")


def test_uci_limit_strength_plays_the_levels_choice_and_not_always_the_searchs_best_move(tmp_path, tiny_net):
    """UCI's twin of the bot's test (tests/strength/test_strength_bot.py): with UCI_LimitStrength, the move a
    ``go`` plays is the table level's choice from the root visits (temperature 3 over 24 nodes), not always the
    search's best; ``info string stop`` names it and ``bestmove`` plays it."""
    path = tmp_path / "hot.json"
    StrengthTable("tiny", (Level(elo=1000, nodes=24, temperature=3.0, max_q_loss=2.0),)).save(path)
    eng, out = _uci(f"setoption name WeightsFile value {tiny_net}", f"setoption name StrengthTable value {path}",
                    "setoption name UCI_LimitStrength value true", "setoption name UCI_Elo value 1000",
                    "setoption name Seed value 11")
    board = chess.Board()
    sampled = []
    for _ in range(10):
        out.truncate(0)
        out.seek(0)
        eng.handle(f"position fen {board.fen()}")
        eng.handle("go nodes 400")
        lines = _wait_for(out, "bestmove")
        assert int([ln for ln in lines if ln.startswith("info depth")][-1].split(" nodes ")[1].split()[0]) <= 24
        move = lines[-1].split()[1]
        stop = [ln for ln in lines if ln.startswith("info string stop: ")][-1]
        if "; strength temperature " in stop:
            sampled.append((stop, move))
        board.push_uci(move)
    eng.handle("quit")
    assert sampled and all(stop.endswith(move) for stop, move in sampled)


def test_uci_strength_table_that_does_not_load_is_an_error_line(tmp_path):
    eng, out = _uci(f"setoption name StrengthTable value {tmp_path / 'none.json'}")
    assert "info string error setoption: StrengthTable: strength table" in out.getvalue()
    eng.handle("quit")


def test_maia_preset_plays_sampled_moves_from_the_policy_at_one_node():
    """The preset plays the loaded network from its policy at 1 node; which network does not matter for that,
    so the default one stands in for a Maia net. Its moves are the policy's, among those with at least
    min_prior (0.05) of the top prior at the search's policy temperature (0.04 here: the search stores priors
    in 16 bits)."""
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    (policy,) = evaluate_boards(Evaluator(load_network("default"), backend="cpu", threads=1), [board], input_format=1)
    top = float(policy.priors.max())
    allowed = {m.uci() for m, p in zip(policy.moves, policy.priors.tolist()) if p >= 0.04 * top}
    eng, out = _uci("setoption name StrengthPreset value maia", "setoption name Seed value 5")
    moves = set()
    for _ in range(12):
        out.truncate(0)
        out.seek(0)
        eng.handle(f"position fen {board.fen()}")
        eng.handle("go nodes 800")
        lines = _wait_for(out, "bestmove")
        assert " nodes 1 " in [ln for ln in lines if ln.startswith("info depth")][-1]
        moves.add(lines[-1].split()[1])
    eng.handle("quit")
    assert len(moves) >= 2  # sampled, not always the top prior
    assert moves <= allowed and len(allowed) < board.legal_moves.count()


# -- extrapolated levels (calibration itself: tests/strength/test_strength_calibrate.py) ------------------------------
def test_a_greeting_never_names_an_extrapolated_level_by_its_elo(tmp_path):
    from lichessbot.strength import level_text
    from lichessbot.strength.levels import Level, StrengthTable, load_table

    shipped = load_table("default")
    low = [lv.elo for lv in shipped.levels if lv.extrapolated]
    assert low == [1000, 1200] and all(lv.measured is None for lv in shipped.levels if lv.extrapolated)
    for elo in (900, 1000, 1100, 1200, 1300):  # at, below and between extrapolated levels: no Elo named
        level = shipped.level_for(elo)
        text = level_text(level)
        assert level is not None and level.extrapolated and not any(c.isdigit() for c in text), (elo, text)
        assert "extrapolated" in level.describe()
    assert level_text(shipped.level_for(1350)) == "1350 Elo" and level_text(shipped.level_for(1550)) == "1550 Elo"
    table = StrengthTable("t", (Level(elo=1000, nodes=2, extrapolated=True), Level(elo=1400, nodes=8)))
    table.save(tmp_path / "t.json")
    again = load_table(tmp_path / "t.json")
    assert [lv.extrapolated for lv in again.levels] == [True, False]
