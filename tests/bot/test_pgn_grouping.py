"""``pgn_file_grouping`` (lichess-bot's key, issue 40): one file per game, per opponent, or one file for all,
every game whole and readable (games appended to a shared file one at a time)."""

from __future__ import annotations

import os
from pathlib import Path

import chess.pgn
import pytest

from lichessbot import files
from lichessbot.bot.games import pgn as pgn_mod
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine, resign_after


def _games(path) -> list[chess.pgn.Game]:
    out = []
    with path.open(encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            out.append(game)
    return out


@pytest.mark.parametrize(("grouping", "files"), [
    ("game", None),
    ("opponent", {"TestBot games vs. alice.pgn": 2, "TestBot games vs. bob.pgn": 1}),
    ("all", {"TestBot games.pgn": 3}),
])
def test_games_are_grouped_into_files_as_configured(tmp_path, grouping, files):
    with FakeLichess() as server, BotRun(server, StandInEngine(), {"pgn_directory": str(tmp_path),
                                                                   "pgn_file_grouping": grouping}) as bot:
        ids = [bot.play(challenger=name, opponent=resign_after(4), limit=60).id for name in ("alice", "bob", "alice")]
        assert server.wait_for(lambda: sum(len(_games(p)) for p in tmp_path.glob("*.pgn")) == 3, 10)
    pgns = {p.name: _games(p) for p in tmp_path.glob("*.pgn")}
    if files is None:
        assert len(pgns) == 3 and all(any(gid in name for gid in ids) for name in pgns)
    else:
        assert {name: len(games) for name, games in pgns.items()} == files
    seen = sorted(g.headers["Site"].rsplit("/", 1)[-1] for games in pgns.values() for g in games)
    assert seen == sorted(ids)
    assert all(g.headers["Result"] == "1-0" and len(list(g.mainline_moves())) >= 4
               for games in pgns.values() for g in games)
    assert len(list(tmp_path.glob("*.svg"))) == 3  # each game keeps its own eval chart


def test_a_games_own_pgn_appears_whole_never_half_written(tmp_path, monkeypatch):
    """With ``game`` grouping the file is written under a hidden name and renamed into place, so a reader
    globbing ``*.pgn`` (a test once read one mid-write and found no game) sees the whole game or nothing."""
    seen = []
    real_replace = os.replace

    def replace(src, dst):
        seen.append((sorted(p.name for p in tmp_path.glob("*.pgn")), _games(Path(src))))
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)
    with FakeLichess() as server, BotRun(server, StandInEngine(), {"pgn_directory": str(tmp_path),
                                                                   "pgn_file_grouping": "game"}) as bot:
        gid = bot.play(challenger="alice", opponent=resign_after(4), limit=60).id
        assert server.wait_for(lambda: len(list(tmp_path.glob("*.pgn"))) == 1, 10)
    assert len(seen) == 1
    visible, games = seen[0]
    assert visible == [] and len(games) == 1 and games[0].headers["Site"].endswith(gid)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("grouping", ["game", "opponent", "all"])
def test_a_home_relative_directory_means_the_home_directory_for_every_grouping(tmp_path, monkeypatch, grouping):
    """``write_pgn`` called with ``~/...`` writes under the home directory whatever the grouping (``game``
    grouping once made a directory named ``~`` in the working directory)."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    record = pgn_mod.GameRecord(game_id="abcd1234", site="https://lichess.org/abcd1234", white="TestBot", black="alice")
    path = pgn_mod.write_pgn(record, "~/games", grouping, me="TestBot")
    assert path.parent == home / "games" and path.exists()
    assert list(cwd.iterdir()) == []
