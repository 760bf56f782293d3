"""``lichessbot.files.write_atomic``: the one way the package replaces a file (game PGNs, the matchmaking records,
the takeback ledger, the health file, strength records, converted networks)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lichessbot import files
from lichessbot.files import write_atomic


def test_the_new_content_appears_in_one_rename_and_no_temporary_file_stays(tmp_path, monkeypatch):
    target = tmp_path / "records.json"
    target.write_text("old", encoding="utf-8")
    seen = []
    real_replace = os.replace

    def replace(src, dst):
        seen.append((target.read_text(encoding="utf-8"), Path(src).read_text(encoding="utf-8"), Path(src).name))
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)
    assert write_atomic(target, "new ✓") == target
    assert len(seen) == 1
    before, written, name = seen[0]
    assert before == "old" and written == "new ✓"   # the reader saw the old file until the rename
    assert name.startswith(".records.json.") and name.endswith(".tmp")   # hidden, outside a *.json glob
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.json"]
    write_atomic(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "game.pgn"
    target.write_text("the old game", encoding="utf-8")

    def replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", replace)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "the new game")
    assert target.read_text(encoding="utf-8") == "the old game"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.pgn"]
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "absent" / "x.pgn", "a game")


def test_the_file_gets_the_mode_of_a_new_file_not_mkstemps_0600(tmp_path):
    """A PGN read by a stream overlay running as another user must stay readable, as ``write_text`` made it."""
    old = os.umask(0o022)
    try:
        path = write_atomic(tmp_path / "game.pgn", "1. e4 *")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
