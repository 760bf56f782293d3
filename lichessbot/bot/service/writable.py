"""The start-up check of every directory ``lichessbot play`` writes: the state (``matchmaking.decline_file``
under ``state_directory``, and the takeback ledger there), the game records (``pgn_directory``) and the TensorRT
engine cache; each is created when missing. A directory the bot cannot write stops the start with one line that
names it, the user and the fix, before any call to lichess: a game recorded nowhere, or records lost at the next
restart, are found out at once, not from a log line hours later. Imports the config, the errors and where the
engine keeps its cache.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from lichessbot.config import BotConfig
from lichessbot.errors import LichessbotError
from lichessbot.neural.providers import tensorrt_cache_path

__all__ = ["NotWritableError", "check_writable", "directories_written"]


class NotWritableError(LichessbotError, PermissionError):
    """A directory the bot must write cannot be written; the message names it, the user and the fix."""


def directories_written(config: BotConfig, *, tensorrt: bool) -> list[tuple[str, Path]]:
    """``(what, directory)`` for each directory the bot will write with ``config``: the folder of
    ``matchmaking.decline_file`` (none when that is null), ``state_directory`` when takebacks may be accepted
    (``max_takebacks_accepted`` above 0: the ledger ``takebacks.json`` lives there), ``pgn_directory`` (unless
    null) and,
    when ``tensorrt`` (the TensorRT provider may run: ``engine.backend: tensorrt``), its engine cache, which
    spares minutes of engine building at each start (:func:`lichessbot.neural.providers.tensorrt_cache_path`)."""
    out: list[tuple[str, Path]] = []
    records = config.records_file()
    if records is not None:
        absolute = os.path.isabs(config.matchmaking.decline_file or "")
        out.append(("matchmaking.decline_file" if absolute else "state_directory", Path(records).parent))
    state = Path(config.state_directory)
    if config.max_takebacks_accepted > 0 and all(path != state for _, path in out):
        out.append(("state_directory", state))
    if config.pgn_directory:
        out.append(("pgn_directory", Path(config.pgn_directory)))
    if tensorrt:
        try:
            out.append(("the TensorRT cache", tensorrt_cache_path()))
        except (RuntimeError, KeyError):
            pass  # no home directory: the engine runs TensorRT without a cache and says so
    return out


def _who() -> str:
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    return "this user" if uid is None else f"uid {uid}"


def _fix(path: Path, err: OSError) -> str:
    if err.errno == errno.EROFS:
        return "it is on a read-only file system: mount it read-write (no :ro on its volume)"
    who = _who()
    if who == "this user":
        return "make it writable by this user"
    uid = who.removeprefix("uid ")
    return (f"give it to {who} (on the host: chown -R {uid} <the directory mounted at {path}>) or run the bot "
            f"as the directory's owner (docker run --user UID:GID)")


def _probe(path: Path) -> None:
    """Create ``path`` (and its parents) if missing, then create and remove a file in it. Raises OSError."""
    path.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path, prefix=".lichessbot-write-test-")
    os.close(fd)
    os.unlink(name)


def check_writable(directories: Iterable[tuple[str, Path]]) -> None:
    """Check that each directory can be written (created when missing), by writing a file in it: permission
    bits, ACLs, read-only mounts and a file in the way are all found as the bot would meet them.

    Raises:
        NotWritableError: for the first directory that cannot be written, e.g. ``pgn_directory
            /data/game_records is not writable by uid 10001 (Permission denied): give it to uid 10001 (on the
            host: chown -R 10001 <the directory mounted at /data/game_records>) or run the bot as the
            directory's owner (docker run --user UID:GID)``.
    """
    for what, path in directories:
        try:
            _probe(path)
        except OSError as err:
            reason = err.strerror or type(err).__name__
            raise NotWritableError(f"{what} {path} is not writable by {_who()} ({reason}): {_fix(path, err)}; "
                                   "the bot does not start") from None
