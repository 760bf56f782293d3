"""``lichessbot.files.write_atomic``: the one way the package replaces a file (game PGNs, the matchmaking records,
the takeback ledger, the health file, strength records, converted networks)."""

from __future__ import annotations

import errno
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


def _recording_os(monkeypatch, calls: list[tuple[str, str]], dir_fsync_error: int | None = None) -> None:
    """Record, in order, the calls of ``write_atomic`` that make a write durable: each open (the temporary file or
    the directory), each fsync (of a file, with the bytes it held then, or of a directory) and the rename."""
    real_open, real_fsync, real_replace = os.open, os.fsync, os.replace

    def open_(path, flags, mode=0o777, **kw):
        calls.append(("open", "dir" if Path(path).is_dir() else "file"))
        return real_open(path, flags, mode, **kw)

    def fsync(fd):
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            calls.append(("fsync", "dir"))
            if dir_fsync_error is not None:
                raise OSError(dir_fsync_error, os.strerror(dir_fsync_error))
        else:
            calls.append(("fsync", f"file of {st.st_size} bytes"))
        real_fsync(fd)

    def replace(src, dst):
        calls.append(("replace", Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "open", open_)
    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)


def test_the_file_is_synced_before_the_rename_and_the_directory_after(tmp_path, monkeypatch):
    """A power cut after the rename must find the new content (the file's fsync came first) and the new name (the
    directory's fsync came after), never an empty file (Linux fsync(2))."""
    calls: list[tuple[str, str]] = []
    _recording_os(monkeypatch, calls)
    write_atomic(tmp_path / "game.pgn", "1. e4 e5 *")
    assert calls == [("open", "file"), ("fsync", "file of 10 bytes"), ("replace", "game.pgn"), ("open", "dir"),
                     ("fsync", "dir")]
    assert (tmp_path / "game.pgn").read_text(encoding="utf-8") == "1. e4 e5 *"


@pytest.mark.parametrize("code", [errno.EINVAL, errno.ENOTSUP])
def test_a_file_system_that_cannot_sync_a_directory_keeps_the_write(tmp_path, monkeypatch, code):
    calls: list[tuple[str, str]] = []
    _recording_os(monkeypatch, calls, dir_fsync_error=code)
    assert write_atomic(tmp_path / "records.json", "{}").read_text(encoding="utf-8") == "{}"
    assert calls[-1] == ("fsync", "dir")


def test_an_io_error_syncing_the_directory_is_raised_with_the_new_content_in_place(tmp_path, monkeypatch):
    _recording_os(monkeypatch, [], dir_fsync_error=errno.EIO)
    with pytest.raises(OSError, match="Input/output error"):
        write_atomic(tmp_path / "records.json", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.json"]


def test_a_failed_fsync_of_the_file_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "game.pgn"
    target.write_text("the old game", encoding="utf-8")

    def fsync(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(files.os, "fsync", fsync)
    with pytest.raises(OSError, match="Input/output"):
        write_atomic(target, "the new game")
    assert target.read_text(encoding="utf-8") == "the old game"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.pgn"]


def test_a_secret_is_written_0600_from_the_start_never_chmodded_after(tmp_path, monkeypatch):
    """``mode=0o600``: the temporary file is created private, so the token is never readable by others, even
    between the write and a chmod; the umask cannot widen it."""
    modes = []
    real_replace = os.replace

    def replace(src, dst):
        modes.append(stat.S_IMODE(os.stat(src).st_mode))
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)
    old = os.umask(0o000)
    try:
        path = write_atomic(tmp_path / "config.yml", "token: lip_x\n", mode=0o600)
    finally:
        os.umask(old)
    assert modes == [0o600] and stat.S_IMODE(path.stat().st_mode) == 0o600
