"""Files written whole and kept: the new content goes to a hidden temporary file beside the target, is flushed to
the disk (``fsync``), then renamed over the target (:func:`os.replace`, atomic within one file system, POSIX
``rename(2)``), and the directory is flushed too so that the rename itself survives a power cut. A reader (a
stream overlay globbing ``*.pgn``, a restart reading its records, a health probe) sees the old content or the
new, never a file half written; a crash or a power cut mid-write leaves the old file as it was, never an empty
one.

Why both flushes (Linux ``fsync(2)``): "Calling fsync() does not necessarily ensure that the entry in the
directory containing the file has also reached disk. For that an explicit fsync() on a file descriptor for the
directory is also needed." Without the file's fsync before the rename, a file system that orders metadata before
data (ext4 ``data=writeback``, XFS) can show the new name with no content after a power cut.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from pathlib import Path

__all__ = ["write_atomic"]

#: ``errno`` values of a directory's fsync that mean "this file system cannot sync a directory", not "the
#: data is lost": EINVAL (Linux fsync(2): "fd is bound to a special file ... which does not support
#: synchronization"; some network and FUSE file systems answer it for a directory) and ENOTSUP/EOPNOTSUPP. They
#: are ignored, as SQLite ignores a failed directory sync (os_unix.c ``unixSync``, ticket #1657: "fsync()
#: returning errors when applied to directories on certain file systems"). Any other error is raised.
_DIR_SYNC_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})


def _fsync_directory(directory: Path) -> None:
    """Flush ``directory``'s entries (a rename into it) to the disk.

    Skipped on Windows: a directory cannot be opened with ``os.open`` there (``CreateFile`` needs
    ``FILE_FLAG_BACKUP_SEMANTICS``, which Python's ``os.open`` does not pass), and NTFS journals the rename's
    metadata itself. An error of :data:`_DIR_SYNC_UNSUPPORTED` is ignored (the file itself was synced).

    Raises:
        OSError: the directory cannot be opened, or its fsync fails for another reason (e.g. EIO).
    """
    if os.name == "nt":
        return
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as err:
        if err.errno not in _DIR_SYNC_UNSUPPORTED:
            raise
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, mode: int = 0o666) -> Path:
    """Replace ``path`` with ``data`` (``str``: written as UTF-8) in one step, durably, and return it as a
    :class:`Path`.

    In this order: write the temporary file, ``fsync`` it, rename it over ``path``, ``fsync`` the directory.
    The temporary file is ``.<name>.<random>.tmp`` in the same directory (so the rename stays on one file
    system and never crosses a reader's ``*.<suffix>`` glob), created with ``mode`` less the process's umask
    (the default 0o666 gives what :meth:`Path.write_text` gives, not ``tempfile.mkstemp``'s 0600, so a PGN stays
    readable by an overlay running as another user; 0o600 for a file that holds a secret: it is never readable by
    others, not even for an instant). The directory must exist.

    Raises:
        OSError: the directory cannot be written, the write or the file's fsync or the rename fails (the
            temporary file is removed first and ``path`` keeps its old content), or the directory's fsync fails
            (the new content is in place but may not survive a power cut); a file system that cannot sync a
            directory at all (EINVAL, ENOTSUP) is not an error.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(target.parent)
    return target
