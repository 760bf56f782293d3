"""Where the bot keeps what it writes when the config names no directory (issue 48): ``state_directory`` in the
user's state directory and ``pgn_directory`` in the user's data directory (platformdirs; on Linux the XDG
variables, which the suite points at a temporary folder for every test: tests/conftest.py), made when first
written; the takeback ledger in ``state_directory`` whatever ``matchmaking.decline_file`` says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from lichessbot.bot.games.takeback import LEDGER_FILE, TakebackLedger
from lichessbot.bot.service.local import local_config, local_data_dir
from lichessbot.bot.service.service import BotService
from lichessbot.bot.service.writable import check_writable, directories_written
from lichessbot.config import parse_config
from lichessbot.lichess.client import ClientSettings, LichessClient
from tests.fake_lichess import StandInEngine

REPO = Path(__file__).resolve().parents[2]


def _xdg(monkeypatch, tmp_path) -> tuple[Path, Path]:
    data, state = tmp_path / "data-home", tmp_path / "state-home"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return data, state


def test_the_defaults_are_the_users_state_and_data_directories_not_the_working_directory(tmp_path, monkeypatch):
    data, state = _xdg(monkeypatch, tmp_path)
    monkeypatch.chdir(tmp_path)
    config = parse_config({})
    assert config.state_directory == str(state / "lichessbot")
    assert config.pgn_directory == str(data / "lichessbot" / "games")
    assert config.records_file() == str(state / "lichessbot" / "matchmaking_state.json")
    assert local_data_dir() == data / "lichessbot" / "local"
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # reading a config makes no directory
    assert parse_config({"pgn_directory": None}).pgn_directory is None  # null still means nowhere


def test_the_takeback_ledger_lives_in_the_state_directory_whatever_the_decline_file(tmp_path):
    client = LichessClient("lip_x", "http://127.0.0.1:9", ClientSettings())
    for decline_file in (None, str(tmp_path / "elsewhere" / "mm.json"), "sub/records.json"):
        config = parse_config({"state_directory": str(tmp_path / "state"),
                               "matchmaking": {"decline_file": decline_file}})
        service = BotService(config, client, StandInEngine())
        assert service.takebacks.path == str(tmp_path / "state" / LEDGER_FILE), decline_file


def test_a_first_run_makes_the_state_directory_when_it_first_writes(tmp_path):
    path = tmp_path / "state" / "lichessbot" / LEDGER_FILE  # nothing of it exists yet
    with capture_logs() as logs:
        TakebackLedger(str(path)).add("game0001")
    assert [e for e in logs if e["log_level"] == "warning"] == []  # no "takeback ledger not saved"
    assert path.read_text(encoding="utf-8") == '{"game0001": 1}'


def test_the_start_checks_and_makes_the_state_directory_when_takebacks_are_kept_there(tmp_path, monkeypatch):
    data, state = _xdg(monkeypatch, tmp_path)
    config = parse_config({"max_takebacks_accepted": 2, "matchmaking": {"decline_file": None}})
    dirs = directories_written(config, tensorrt=False)
    assert dirs == [("state_directory", state / "lichessbot"), ("pgn_directory", data / "lichessbot" / "games")]
    check_writable(dirs)
    assert (state / "lichessbot").is_dir() and (data / "lichessbot" / "games").is_dir()
    assert directories_written(parse_config({"matchmaking": {"decline_file": None}, "pgn_directory": None}),
                               tensorrt=False) == []  # nothing kept: nothing made


@pytest.mark.parametrize(("text", "pgn"), [(None, "local"), ("abort_time: 20\n", "local"),
                                           ("pgn_directory: null\n", "local"), ("pgn_directory: {mine}\n", "mine")])
def test_play_local_keeps_its_files_apart_unless_the_file_names_a_pgn_directory(tmp_path, monkeypatch, text, pgn):
    data, _ = _xdg(monkeypatch, tmp_path)
    path = None
    if text is not None:
        path = tmp_path / "config.yml"
        path.write_text(text.format(mine=tmp_path / "mine"), encoding="utf-8")
    config = local_config(None if path is None else str(path), local_data_dir(), 0, "127.0.0.1")
    assert config.state_directory == str(data / "lichessbot" / "local")
    assert config.pgn_directory == str(tmp_path / "mine" if pgn == "mine" else data / "lichessbot" / "local" / "games")


def test_the_repository_tracks_no_state_file():
    import subprocess

    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    state_files = {LEDGER_FILE, "matchmaking_state.json"}
    assert not [f for f in tracked if os.path.basename(f) in state_files and "/" not in f]


def test_the_suite_never_writes_into_the_users_real_directories(tmp_path_factory):
    """tests/conftest.py points the user directories of every test at a folder of its own under pytest's
    temporary directory: a bot run with the defaults writes there, never into ~/.local/share or ~/.local/state."""
    base = tmp_path_factory.getbasetemp()
    config = parse_config({})
    for path in (config.state_directory, config.pgn_directory, str(local_data_dir())):
        assert Path(path).is_relative_to(base), path


def test_check_config_says_where_the_games_and_the_state_go(tmp_path, monkeypatch, capsys):
    from lichessbot.cli import main

    data, state = _xdg(monkeypatch, tmp_path)
    cfg = tmp_path / "config.yml"
    cfg.write_text("abort_time: 20\n", encoding="utf-8")
    assert main(["check-config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert f"PGN: {data / 'lichessbot' / 'games'}; state: {state / 'lichessbot'}" in out
