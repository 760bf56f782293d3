"""``lichessbot calibrate`` (docs/strength.md, "How it is measured"): the rating model (maximum-likelihood Elo, its
95 % interval, the curve over every game), the pooled procedure with a model engine standing in for the match
runner (every match kept: in the fit, in matches.json, as a PGN), its flags, and one real match against Stockfish."""

from __future__ import annotations

import argparse
import json
import math
import re

import chess.pgn
import numpy as np
import pytest

from lichessbot.match import GameRecord, MatchResult, schedule
from lichessbot.strength import StrengthError, load_table
from lichessbot.strength import calibrate as cal
from lichessbot.strength.fit import expected, fit_curve, ml_rating, performance
from lichessbot.strength.levels import Measurement
from tests.conftest import STOCKFISH


# -- the rating model -------------------------------------------------------------------------------------------
def test_performance_is_the_rating_whose_expected_score_matches_the_points():
    assert abs(performance([(1500, 5.0, 10)]) - 1500) < 0.5
    assert abs(performance([(1400, 7.5, 10), (1600, 2.5, 10)]) - 1500) < 0.5
    assert abs(performance([(1500, 7.6, 10)]) - (1500 - 400 * math.log10(1 / 0.76 - 1))) < 0.5


def test_the_ml_rating_has_a_95_percent_interval_that_shrinks_with_more_games():
    few = ml_rating([(1500.0, 1.0)] * 18 + [(1500.0, 0.0)] * 12)
    many = ml_rating([(1500.0, 1.0)] * 72 + [(1500.0, 0.0)] * 48)
    assert abs(few.elo - (1500 + 400 * math.log10(18 / 12))) < 0.01  # the performance rating
    assert abs(many.elo - few.elo) < 0.01
    assert few.low < few.elo < few.high and many.low < many.elo < many.high
    assert 0.45 < (many.high - many.low) / (few.high - few.low) < 0.55  # 4 x the games: half the width
    # the likelihood-ratio interval of 30 games at 60 % is about +-126 Elo (Fisher's: 1.96 / (K sqrt(30 * 0.24)))
    assert 115 < few.margin < 140
    # lopsided scores: asymmetric; a perfect score has no upper end, but a lower one
    won = ml_rating([(1500.0, 1.0)] * 30)
    assert won.elo is None and won.high is None and 1900 < won.low < 2050
    lost = ml_rating([(1500.0, 0.0)] * 30)
    assert lost.elo is None and lost.low is None and abs(lost.high - (3000 - won.low)) < 0.01


def test_a_measurement_pools_the_games_and_carries_its_elo_and_interval():
    games = [(1500.0, 1.0)] * 14 + [(1500.0, 0.5)] * 5 + [(1500.0, 0.0)] * 11
    m = Measurement.of(games, 1500, "Stockfish UCI_Elo 1500", matches=2)
    assert (m.games, m.wins, m.draws, m.losses, m.score, m.matches) == (30, 14, 5, 11, 0.55, 2)
    assert m.elo_diff == pytest.approx(34.9, abs=0.1)  # as the match runner's -400 log10(1/s - 1)
    assert m.elo_low < m.elo < m.elo_high and m.elo == pytest.approx(1500 + m.elo_diff, abs=0.1)
    assert "30 games (2 matches) +14 =5 -11, Elo 1535 (95 %: 1410..1663)" == m.describe()


def _synthetic(truth, xs, per_x, rng):
    """Games of a model engine of rating truth(x): opponents within +-200 of it, 20 % draws, the rest won with
    probability chosen so that the expected score is Elo's."""
    out = []
    for x in xs:
        for _ in range(per_x):
            e = float(round(truth(x) + rng.uniform(-200, 200)))
            p = expected(truth(x), e)
            u = rng.random()
            out.append((x, e, 1.0 if u < p - 0.1 else 0.5 if u < p + 0.1 else 0.0))
    return out


def test_the_curve_fit_recovers_known_ratings_from_synthetic_games():
    rng = np.random.default_rng(7)
    truth = lambda x: 1000 + 50 * x + 4 * x * x  # noqa: E731
    xs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    curve = fit_curve(_synthetic(truth, xs, 300, rng))
    assert all(abs(curve.at(x) - truth(x)) < 25 for x in xs), [(x, curve.at(x), truth(x)) for x in xs]
    assert abs(curve.x_for(truth(6.5)) - 6.5) < 0.2
    assert curve.x_for(truth(11) + 300) is None and curve.x_for(500) == 0


def test_the_curve_never_decreases_and_stays_finite_when_every_game_is_lost():
    rng = np.random.default_rng(8)
    games = _synthetic(lambda x: 1500.0, [0, 2, 4, 6], 200, rng) + _synthetic(lambda x: 1300.0, [8], 200, rng)
    curve = fit_curve(games)
    assert curve.d0 >= 0 and curve.d1 >= 0

    def loglik(r):
        return sum(s * math.log(expected(r(x), e)) + (1 - s) * math.log(1 - expected(r(x), e)) for x, e, s in games)

    flat = performance([(e, s, 1.0) for _, e, s in games])  # the best constant curve: monotone, so no better
    assert loglik(curve.at) >= loglik(lambda x: flat) - 1e-3
    assert all(curve.at(b) >= curve.at(a) for a, b in zip(np.linspace(0, 8, 40), np.linspace(0, 8, 40)[1:]))
    lost = fit_curve([(0.0, 1350.0, 0.0)] * 2 + [(4.0, 1350.0, 0.0)] * 2)  # a tiny run: the virtual draws hold it
    assert math.isfinite(lost.at(4)) and lost.at(4) < 1350


# -- the pooled procedure, with a model engine ------------------------------------------------------------------
def _model(rating_of, calls):
    """A stand-in for run_match: our side's rating is ``rating_of(kind, x)`` at the ladder point of the match's
    tag; the games are won or lost so that the wins so far are always the expected score so far, rounded (error
    diffusion: deterministic, and the 2-game matches of the sweep still measure on average)."""
    expected_so_far = [0.0]

    def fake_run_match(config):
        tag = config.event.removeprefix("calibrate ")
        x = float(re.search(r"-x([0-9.]+)", tag).group(1))
        elo = config.second.options["UCI_Elo"]
        s = expected(rating_of(tag.split("-")[0], x), elo)
        before = round(expected_so_far[0])
        expected_so_far[0] += s * config.games
        wins = round(expected_so_far[0]) - before
        calls.append(tag)
        result = MatchResult(config.first.name, config.second.name)
        for number, _, first_white in schedule(config):
            won = number <= wins
            white_won = won == first_white
            game = chess.pgn.Game()
            game.headers["Event"], game.headers["Round"] = config.event, str(number)
            game.headers["Result"] = "1-0" if white_won else "0-1"
            result.games.append(GameRecord(number, first_white, game.headers["Result"], "normal", "model", None, None,
                                           40, game))
        return result

    return fake_run_match


def _args(tmp_path, **kw):
    base = dict(network="default", levels="1350,1500", extrapolate="1000", games=30, sweep="0,2,4,6,8",
                sweep_games=10, sweep_opponents="", band=0.05, refine=2, stockfish="sf", sf_nodes=1000,
                openings="default", concurrency=1, work=str(tmp_path / "w"), out=str(tmp_path / "table.json"))
    return argparse.Namespace(**{**base, **kw})


@pytest.fixture
def no_stockfish(monkeypatch):
    monkeypatch.setattr("chess.engine.SimpleEngine.popen_uci",
                        lambda cmd: type("E", (), {"id": {"name": "Stockfish test"}, "quit": lambda self: None})())


def test_calibration_pools_every_match_a_moved_level_played_and_records_each_with_its_pgn(tmp_path, monkeypatch,
                                                                                           no_stockfish, capsys):
    """The model engine is 100 Elo stronger in verification than the sweep says (as the real run found), so the
    first level's first match falls outside the band and the level is moved: its first match stays in the fit
    and in matches.json; its measurement is the games at its final x."""
    calls, fits = [], []
    monkeypatch.setattr(cal, "run_match", _model(lambda kind, x: 1200 + 60 * x + (100 if kind == "verify" else 0),
                                                 calls))
    real_fit = cal.fit_curve
    monkeypatch.setattr(cal, "fit_curve", lambda games: fits.append((len(games), len(calls))) or real_fit(games))
    args = _args(tmp_path)
    assert cal.run(args) == 0
    t = load_table(tmp_path / "table.json")
    folder = tmp_path / "table-matches"
    record = json.loads((folder / "matches.json").read_text())["matches"]
    assert [m["tag"] for m in record] == calls  # every match played is listed, in order
    for m in record:  # each with its PGN and each game's result
        assert (folder / m["pgn"]).read_text().count("[Event ") == m["games"] == len(m["results"])
        assert m["wins"] + m["draws"] + m["losses"] == m["games"] and m["settings"]["nodes"] >= 1
        assert {r["colour"] for r in m["results"]} == {"white", "black"} and all(r["opening"] for r in m["results"])
    first = [m for m in record if m["kind"] == "verify" and m["level"] == 1350]
    assert len(first) == 2 and first[0]["x"] != first[1]["x"]  # moved once
    assert abs(first[0]["wins"] / 30 - 0.5) > 0.05 >= abs(first[1]["wins"] / 30 - 0.5)
    # the fit: every game of every match, the moved level's first match included
    every = [(m["x"], m["opponent_elo"], r["score"]) for m in record for r in m["results"]]
    assert t.conditions["curve"] == fit_curve(every).to_json() and t.conditions["curve"]["games"] == len(every)
    assert t.conditions["games_played"] == len(every) and t.conditions["matches"] == "table-matches"
    games_of = {m["tag"]: m["games"] for m in record}
    assert len(fits) == 4 and all(n == sum(games_of[c] for c in calls[:k]) for n, k in fits)  # placements, table
    # the moved level's measurement: its games at its final x, with the Elo and its interval
    lv = {lv.elo: lv for lv in t.levels}
    assert t.conditions["ladder_x"]["1350"] == first[1]["x"]
    m1350 = lv[1350].measured
    assert (m1350.games, m1350.wins, m1350.matches) == (30, first[1]["wins"], 1)
    for level in (lv[1350], lv[1500]):
        m = level.measured
        assert not level.extrapolated and m.elo_low < m.elo < m.elo_high and m.elo_margin > 0
    # below Stockfish's range: read off the curve, marked extrapolated, never measured
    assert lv[1000].extrapolated and lv[1000].measured is None and lv[1000].nodes < lv[1350].nodes
    out = capsys.readouterr().out
    assert "1000\t" in out and "extrapolated, not measured" in out and "(95 %: " in out
    again = len(calls)
    assert cal.run(args) == 0 and len(calls) == again  # resumed from the work directory: no match replayed
    assert load_table(tmp_path / "table.json").conditions == t.conditions


def test_a_level_moved_onto_another_matchs_settings_is_measured_on_every_game_there(tmp_path, monkeypatch,
                                                                                      no_stockfish):
    """A model engine whose verifications play at 1350 up to x = 3.5 and at 1700 above: the 1500 level is far too
    strong where the curve puts it, and moving it down stops at the level under it (never below it), whose
    settings it then shares: its measurement is every game at that x (both levels' matches, pooled), not its
    last match alone; its first match stays in matches.json and in the fit."""
    calls = []
    monkeypatch.setattr(cal, "run_match", _model(lambda kind, x: (1350.0 if x <= 3.5 else 1700.0) if kind == "verify"
                                                 else 1200 + 60 * x, calls))
    assert cal.run(_args(tmp_path, levels="1350,1500", extrapolate="", refine=1)) == 0
    t = load_table(tmp_path / "table.json")
    x = t.conditions["ladder_x"]
    verify = [c for c in calls if c.startswith("verify")]
    assert len(verify) == 3 and verify[0].startswith("verify-e1350-r0") and verify[2].startswith("verify-e1500-r1")
    assert x["1500"] == x["1350"] and verify[1] != f"verify-e1500-r0-x{x['1350']:.3f}"
    lv = {lv.elo: lv for lv in t.levels}
    for elo in (1350, 1500):
        m = lv[elo].measured
        assert (m.games, m.matches, m.opponent) == (60, 2, "Stockfish UCI_Elo 1350, 1500")
        assert m.elo_low < 1350 < m.elo_high
    assert lv[1500].measured.elo_diff < -100  # reported as it is: well below its UCI_Elo
    assert t.conditions["curve"]["games"] == t.conditions["games_played"] == sum(
        m["games"] for m in json.loads((tmp_path / "table-matches" / "matches.json").read_text())["matches"])


def test_bad_calibrate_flags_are_refused_naming_the_flag(tmp_path, no_stockfish):
    for kw, flag in ((dict(levels="1200"), "--levels"), (dict(levels="15x0"), "--levels"),
                     (dict(extrapolate="1400"), "--extrapolate"), (dict(sweep="0,13"), "--sweep"),
                     (dict(games=0), "--games"), (dict(band=0.7), "--band"), (dict(refine=-1), "--refine"),
                     (dict(sweep_opponents="1000"), "--sweep-opponents"),
                     (dict(out=str(tmp_path / "missing" / "t.json")), "--out")):
        with pytest.raises(StrengthError, match=f"^{flag}"):
            cal.run(_args(tmp_path, **kw))
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "sweep.json").write_text("[]")
    with pytest.raises(StrengthError, match="--work .*older lichessbot calibrate"):
        cal.run(_args(tmp_path, work=str(tmp_path / "old")))


def test_a_format_1_table_is_read_with_its_elo_and_interval(tmp_path):
    old = {"format": 1, "network": "n", "levels": [
        {"elo": 1500, "nodes": 64, "measured": {"games": 30, "wins": 14, "draws": 5, "losses": 11, "score": 0.55,
                                                "score_margin": 0.16, "elo_diff": 34.9, "elo_margin": 118.5,
                                                "opponent": "Stockfish UCI_Elo 1500"}}]}
    (tmp_path / "old.json").write_text(json.dumps(old))
    m = load_table(tmp_path / "old.json").levels[0].measured
    assert (m.elo, m.elo_low, m.elo_high, m.matches) == (1534.9, 1410.1, 1662.7, 1)


# -- a real match ---------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_calibration_match_against_stockfish_is_played_through_the_uci_levels(tmp_path, tiny_net):
    if STOCKFISH is None:
        pytest.skip("stockfish is not installed")
    args = argparse.Namespace(network=str(tiny_net), stockfish=STOCKFISH, sf_nodes=200, concurrency=1,
                              work=str(tmp_path), openings="default")
    rec = cal._Runner(args).play("sweep", 1.0, None, 1350, 2, "smoke")
    assert rec.wins + rec.draws + rec.losses == 2 and [g.colour for g in rec.results] == ["white", "black"]
    pgn = (tmp_path / "smoke.pgn").read_text()
    assert pgn.count("[Event") == 2 and '[Black "sf1350"]' in pgn
    assert [g.opening for g in rec.results] == [re.search(r'\[Opening "(.*)"\]', pgn).group(1)] * 2
