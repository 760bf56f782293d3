"""Files written whole: the new content goes to a hidden temporary file beside the target, which is then renamed
over it (:func:`os.replace`, atomic within one file system, POSIX ``rename(2)``). A reader (a stream overlay
globbing ``*.pgn``, a restart reading its records, a health probe) sees the old content or the new, never a file
half written; a crash mid-write leaves the old file as it was."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Replace ``path`` with ``data`` (``str``: written as UTF-8) in one step and return it as a :class:`Path`.

    The temporary file is ``.<name>.<random>.tmp`` in the same directory (so the rename stays on one file
    system and never crosses a reader's ``*.<suffix>`` glob), created with the mode the process's umask gives a
    new file (as :meth:`Path.write_text` does; not ``tempfile.mkstemp``'s 0600, so a PGN stays readable by an
    overlay running as another user). The directory must exist.

    Raises:
        OSError: the directory cannot be written or the rename fails; the temporary file is removed first and
            ``path`` keeps its old content.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target
