"""``migrate-config`` on lichess-bot's own current ``config.yml.default`` (tests/data/lichess_bot/SOURCE.md) and
on a config with every section filled: only the external engine's keys and the placeholder token are dropped,
the book depth and the move overhead are translated, the engine's uci_options map onto ours; the result passes
check-config."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from lichessbot.bot.setup.lichess_bot import EXTERNAL_ENGINE
from lichessbot.bot.setup.migrate import convert
from lichessbot.cli import main
from lichessbot.config import load_config, parse_config
from lichessbot.timeman import Clock
from lichessbot.timeman.allocation import allocate
from tests.conftest import SYZYGY

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "lichess_bot" / "config.yml.default"


def _external(path: str) -> bool:
    """A key of the external engine: one of EXTERNAL_ENGINE's, or an option given to that engine."""
    return path in EXTERNAL_ENGINE or path.startswith("engine.uci_options.")


def _check(tmp_path: Path, config: dict, capsys) -> int:
    dest = tmp_path / "ours.yml"
    dest.write_text(yaml.safe_dump(config), encoding="utf-8")
    rc = main(["check-config", str(dest)])
    capsys.readouterr()
    return rc


def test_lichess_bots_default_file_loses_only_the_external_engine_and_the_placeholder(tmp_path, capsys,
                                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)  # its relative paths (./syzygy/) are looked up here
    dest = tmp_path / "config.yml"
    assert main(["migrate-config", str(DEFAULT), "-o", str(dest)]) == 0
    err = capsys.readouterr().err
    m = convert(yaml.safe_load(DEFAULT.read_text(encoding="utf-8")))
    assert m.lost == [] and m.unresolved == []
    assert [p for p, _ in m.dropped if not _external(p)] == ["token"]
    assert "engine.uci_options.Threads -> engine.threads: 4" in err
    assert main(["check-config", str(dest)]) == 0
    cfg = load_config(dest)
    assert cfg.book.max_depth == 20 and cfg.book.normalization == "none"  # full moves in both
    assert cfg.draw_or_resign.offer_draw_pieces == 10 and cfg.correspondence.ponder is False
    assert cfg.correspondence.checkin_period == 300 and cfg.fake_think_time is False
    assert cfg.online_moves.online_egtb.max_pieces == 7  # lichess-bot's 8: the tables stop at 7
    assert cfg.matchmaking.opponent_rating_difference == 300 and cfg.challenge.max_base == 1800
    assert cfg.engine.nn_cache_size == 512 * 4096  # Hash: 512 MB


def test_move_overhead_is_taken_once_from_the_clock_as_lichess_bot_does():
    m = convert({"move_overhead": 2000})
    cfg = parse_config(m.config)
    budget = allocate(Clock(time=60_000, inc=0), 20, cfg.timeman)
    assert budget.target > 0.5  # a 1+0 game keeps a real target (per move to come it would be 0)
    per_move = allocate(Clock(time=60_000, inc=0), 20, cfg.timeman.model_copy(update={"overhead_per_move": True}))
    assert per_move.target == 0.0  # what the former translation gave
    # lichess-bot hands the engine the clock less move_overhead: the same total as ours
    assert budget.reserve_ms == 2000


def test_an_lc0_engine_block_maps_onto_our_settings_naming_each_mapping(tmp_path, capsys):
    from tests.tinynet import build_tiny_onnx

    net = build_tiny_onnx(tmp_path / "net.onnx", seed=1)
    src = {"engine": {"dir": "./engines", "name": "lc0", "protocol": "uci", "ponder": False, "uci_options": {
        "Threads": 2, "Hash": 128, "SyzygyPath": str(SYZYGY), "WeightsFile": str(net), "Backend": "cuda-fp16",
        "MinibatchSize": 64, "CPuct": 2.2, "FpuValue": 0.4, "PolicyTemperature": 1.5, "NNCacheSize": 300000,
        "UCI_LimitStrength": True, "UCI_Elo": 1800, "Move Overhead": 150, "UCI_ShowWDL": True,
        "SomeOtherOption": 3}}}
    m = convert(src)
    e = m.config["engine"]
    assert e["threads"] == 2 and e["network"] == str(net) and e["backend"] == "cuda" and e["precision"] == "fp16"
    assert e["search"] == {"minibatch_size": 64, "cpuct": 2.2, "fpu_value": 0.4, "policy_temperature": 1.5}
    assert e["nn_cache_size"] == 300000 and e["strength"] == {"elo": 1800}  # NNCacheSize after Hash: it wins
    assert m.config["tablebases"]["syzygy"] == [str(SYZYGY)]
    assert m.config["timeman"] == {"move_overhead": 150}  # the engine's own overhead: per move, as Stockfish's
    mapped = dict(m.mapped)
    assert "engine.threads" in mapped["engine.uci_options.Threads"] and "lc0" in mapped["engine.uci_options.CPuct"]
    dropped = dict(m.dropped)
    assert set(dropped) == {"engine.dir", "engine.name", "engine.protocol", "engine.uci_options.UCI_ShowWDL",
                            "engine.uci_options.SomeOtherOption", "engine.uci_options.UCI_LimitStrength"}
    assert _check(tmp_path, m.config, capsys) == 0


FULL = {
    "token": "lip_abcdefabcdef", "url": "https://lichess.org/",
    "engine": {"dir": "./engines/", "name": "sf", "working_dir": "", "protocol": "uci", "ponder": True,
               "debug": True, "interpreter": "java", "interpreter_options": ["-jar"], "silence_stderr": True,
               "polyglot": {"enabled": True, "book": {"standard": ["BOOK"], "chess960": ["BOOK"]},
                            "min_weight": 10, "selection": "uniform_random", "max_depth": 12,
                            "normalization": "sum"},
               "draw_or_resign": {"resign_enabled": True, "resign_score": -900, "resign_for_egtb_minus_two": True,
                                  "resign_moves": 4, "offer_draw_enabled": True, "offer_draw_score": 5,
                                  "offer_draw_for_egtb_zero": True, "offer_draw_moves": 8, "offer_draw_pieces": 12},
               "online_moves": {"max_out_of_book_moves": 5, "max_retries": 1, "max_depth": 10,
                                "chessdb_book": {"enabled": True, "min_time": 30, "max_time": 600,
                                                 "move_quality": "best", "min_depth": 25},
                                "lichess_cloud_analysis": {"enabled": True, "min_time": 30, "max_time": 600,
                                                           "move_quality": "good", "max_score_difference": 30,
                                                           "min_depth": 22, "min_knodes": 100},
                                "lichess_opening_explorer": {"enabled": True, "min_time": 30, "max_time": 600,
                                                             "source": "player", "player_name": "someone",
                                                             "sort": "games_played", "min_games": 5},
                                "online_egtb": {"enabled": True, "min_time": 10, "max_time": 600, "max_pieces": 8,
                                                "source": "chessdb", "move_quality": "suggest"}},
               "lichess_bot_tbs": {"syzygy": {"enabled": True, "paths": ["SYZYGY"], "max_pieces": 5,
                                              "move_quality": "suggest"},
                                   "gaviota": {"enabled": False, "paths": ["g"], "max_pieces": 5,
                                               "min_dtm_to_consider_as_wdl_1": 120, "move_quality": "best"}},
               "engine_options": {"cpuct": 3.1}, "homemade_options": {"Hash": 256},
               "uci_options": {"Move Overhead": 100, "Threads": 4, "Hash": 512, "UCI_ShowWDL": True,
                               "go_commands": {"nodes": 1}},
               "xboard_options": {"cores": "4"}},
    "abort_time": 40, "fake_think_time": True, "rate_limiting_delay": 50, "move_overhead": 1500,
    "max_takebacks_accepted": 2, "quit_after_all_games_finish": True,
    "correspondence": {"move_time": 90, "checkin_period": 400, "disconnect_time": 200, "ponder": True},
    "challenge": {"concurrency": 3, "games_reserved_for_humans": 1, "sort_by": "first", "preference": "human",
                  "accept_bot": True, "only_bot": False, "max_increment": 30, "min_increment": 0,
                  "max_base": 1800, "min_base": 30, "max_days": 7, "min_days": 1,
                  "variants": ["standard", "chess960"], "time_controls": ["bullet", "blitz", "rapid", "correspondence"],
                  "modes": ["casual", "rated"], "block_list": ["a"], "online_block_list": ["https://example.org/b"],
                  "allow_list": [], "recent_bot_challenge_age": 60, "max_recent_bot_challenges": 2,
                  "min_rating": 1000, "max_rating": 3000, "rating_difference": 400,
                  "bullet_requires_increment": True, "max_simultaneous_games_per_user": 2},
    "greeting": {"hello": "Hi {opponent}, I'm {me}", "goodbye": "gg", "hello_spectators": "hi",
                 "goodbye_spectators": "bye"},
    "pgn_directory": "games", "pgn_file_grouping": "opponent",
    "matchmaking": {"allow_matchmaking": True, "allow_during_games": True, "challenge_variant": "random",
                    "challenge_timeout": 10, "challenge_initial_time": [60, 180], "challenge_increment": [1, 2],
                    "challenge_days": [1, 2], "opponent_min_rating": 800, "opponent_max_rating": 3000,
                    "opponent_rating_difference": 300, "rating_preference": "high", "challenge_mode": "casual",
                    "challenge_filter": "fine", "block_list": ["c"], "online_block_list": ["https://example.org/m"],
                    "include_challenge_block_list": True, "challenge_decliner_file_name": "decliners.txt",
                    "overrides": {"easy": {"challenge_mode": "casual", "opponent_rating_difference": None}}},
}


def test_a_config_with_every_section_filled_carries_all_but_the_external_engine(tmp_path, capsys):
    from tests.book.test_book import START, write_book

    book = str(write_book(tmp_path / "b.bin", [(START, "e2e4", 10)]))
    src = copy.deepcopy(FULL)
    src["engine"]["polyglot"]["book"] = {"standard": [book], "chess960": [book]}
    src["engine"]["lichess_bot_tbs"]["syzygy"]["paths"] = [str(SYZYGY)]
    m = convert(src)
    assert m.lost == [] and m.unresolved == []
    assert sorted(p for p, _ in m.dropped if not _external(p)) == []
    assert {p for p, _ in m.dropped} == {
        "engine.dir", "engine.name", "engine.working_dir", "engine.protocol", "engine.debug", "engine.interpreter",
        "engine.interpreter_options", "engine.silence_stderr", "engine.engine_options", "engine.homemade_options",
        "engine.xboard_options", "engine.uci_options.go_commands", "engine.uci_options.UCI_ShowWDL",
        "engine.uci_options.Move Overhead"}
    cfg = parse_config(m.config)
    assert cfg.token is not None and cfg.book.max_depth == 12 and cfg.book.normalization == "sum"
    assert cfg.tablebases.move_quality == "suggest" and cfg.tablebases.max_pieces == 5
    assert cfg.challenge.rating_difference == 400 and cfg.correspondence.ponder is True
    assert cfg.fake_think_time and cfg.rate_limiting_delay == 50 and cfg.draw_or_resign.offer_draw_pieces == 12
    assert cfg.timeman.move_overhead == 1500 and not cfg.timeman.overhead_per_move
    assert cfg.matchmaking.decline_file == "decliners.txt" and cfg.matchmaking.decline_hours > 24 * 365
    assert cfg.online_moves.online_egtb.max_pieces == 7 and cfg.online_moves.online_egtb.move_quality == "suggest"
    assert cfg.engine.threads == 4 and cfg.pgn_file_grouping == "opponent"
    assert _check(tmp_path, m.config, capsys) == 0


@pytest.mark.parametrize("depth", [1, 8, 20])
def test_the_book_depth_keeps_lichess_bots_count_of_full_moves(depth):
    """lichess-bot lib/engine_wrapper.py: the book is used while ``len(move_stack) <= max_depth * 2 - 1``, i.e.
    up to full move ``max_depth`` of either side; ours: while ``fullmove_number <= max_depth``."""
    import chess

    cfg = parse_config(convert({"engine": {"polyglot": {"max_depth": depth}}}).config)
    for plies in range(0, 2 * depth + 3):
        board = chess.Board()
        for _ in range(plies):
            board.push(next(iter(board.legal_moves)))
        assert (plies <= depth * 2 - 1) == (board.fullmove_number <= cfg.book.max_depth), plies
    assert os.sep  # the file paths above are OS paths


def test_play_with_a_lichess_bot_file_suggests_migrate_config_as_check_config_does(capsys):
    assert main(["play", "--config", str(DEFAULT)]) == 2
    err = capsys.readouterr().err
    assert "migrate-config" in err and "engine.dir: unknown key (lichess-bot's engine.dir" in err
    assert main(["check-config", str(DEFAULT)]) == 2
    assert "migrate-config" in capsys.readouterr().err


def test_play_with_a_bad_config_of_ours_does_not_suggest_it(tmp_path, capsys):
    bad = tmp_path / "bad.yml"
    bad.write_text("challenge:\n  concurrency: 0\n", encoding="utf-8")
    assert main(["play", "--config", str(bad)]) == 2
    assert "migrate-config" not in capsys.readouterr().err
