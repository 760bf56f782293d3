"""Where the int8 copy of a network is kept between runs, so that it is quantized once, not at every start.

:func:`int8_copy` looks for the copy, and makes it (:func:`lichessbot.neural.quantize.quantize_model`) when
it is missing or damaged. A copy is a plain ONNX file named ``<network>.int8.<key>.<sum>.onnx``:

- ``<key>``: the first 16 hex digits of a sha256 over the fp32 network's bytes (a ``.pb.gz`` network: the
  ONNX model converted from it), the onnxruntime version, the calibration planes' digest
  (:func:`~lichessbot.neural.quantize.planes_digest`: the games, the stride, the input format, the encoder)
  and the quantization settings (:attr:`~lichessbot.neural.quantize.QuantSettings.tag`): any change of
  these makes another name, so a stale copy is never read;
- ``<sum>``: the first 16 hex digits of the sha256 of the file's own bytes: a truncated or damaged file does
  not match its name, is removed (when it can be) and made again, never run.

It is written beside the network when that folder is writable (a folder without any write permission bit
counts as read-only, also for root, who could write it), else in the user cache folder
(platformdirs ``user_cache_path("lichessbot")/int8``, e.g. ``~/.cache/lichessbot/int8`` on Linux), with
:func:`lichessbot.files.write_atomic` (a reader never sees half a file); when neither can be written the
copy is used for this run only (a warning says so). Copies of older keys are not deleted: any
``*.int8.*.onnx`` file may be removed by hand, it is made again when needed.

Imports: lichessbot.files, lichessbot.neural.quantize, lichessbot.neural.network; onnxruntime, platformdirs.
"""

from __future__ import annotations

import errno
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import onnxruntime as ort
import platformdirs
import structlog

from lichessbot.files import write_atomic
from lichessbot.neural.network import Network
from lichessbot.neural.quantize import (
    DEFAULT_SETTINGS,
    QuantSettings,
    calibration_planes,
    planes_digest,
    quantize_model,
)

__all__ = ["Int8Copy", "cache_dirs", "cache_key", "int8_copy", "user_cache_dir"]

log = structlog.get_logger("lichessbot.neural")

#: Hex digits of the key and of the checksum in a copy's name (64 bits each: collisions are not a concern).
_DIGITS = 16


@dataclass(frozen=True)
class Int8Copy:
    """The int8 copy of a network: ``model`` (serialized ONNX), ``path`` (the cache file it was read from or
    written to; None when no folder could be written), ``built`` (True: quantized by this call; False: read
    from the cache) and ``seconds`` (what this call took)."""

    model: bytes
    path: Path | None
    built: bool
    seconds: float


def user_cache_dir() -> Path:
    """The user cache folder of int8 copies: platformdirs ``user_cache_path("lichessbot")/int8`` (read from
    the environment at each call, e.g. ``$XDG_CACHE_HOME/lichessbot/int8`` on Linux)."""
    return platformdirs.user_cache_path("lichessbot", appauthor=False) / "int8"


def cache_dirs(network: Network) -> list[Path]:
    """The folders where ``network``'s int8 copy is looked for and written, in order: the network's own
    folder, then :func:`user_cache_dir` (the only one for the default network: the package's folder is not
    the user's to write)."""
    if network.source == "default":
        return [user_cache_dir()]
    return [Path(network.source).expanduser().parent, user_cache_dir()]


def cache_key(model: bytes, calibration: str, settings: QuantSettings) -> str:
    """sha256 (hex) of fp32 ``model``'s bytes, onnxruntime's version, the ``calibration`` planes' digest and
    the ``settings``: what an int8 copy depends on."""
    h = hashlib.sha256(b"lichessbot int8 v1\n")
    for part in (hashlib.sha256(model).hexdigest(), ort.__version__, calibration, settings.tag):
        h.update(part.encode() + b"\n")
    return h.hexdigest()


def _checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:_DIGITS]


def _read(folder: Path, stem: str, key: str) -> tuple[bytes, Path] | None:
    """The copy of ``key`` in ``folder`` whose bytes match the checksum in its name; any that does not is
    removed (when the folder allows it) with a warning."""
    for path in sorted(folder.glob(f"{stem}.int8.{key[:_DIGITS]}.*.onnx")):
        try:
            data = path.read_bytes()
        except OSError as err:
            log.warning("cannot read the int8 copy; it is made again", path=str(path), error=err.strerror)
            continue
        if path.name.endswith(f".{_checksum(data)}.onnx"):
            return data, path
        log.warning("the int8 copy is damaged (its bytes do not match its checksum); it is made again",
                    path=str(path))
        try:
            path.unlink()
        except OSError:
            pass
    return None


def _write(folders: list[Path], stem: str, key: str, data: bytes) -> Path | None:
    """``data`` written to the first folder that takes it; None (with a warning) when none does."""
    name = f"{stem}.int8.{key[:_DIGITS]}.{_checksum(data)}.onnx"
    errors = []
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if not folder.stat().st_mode & 0o222:  # no write bit for anyone: read-only, also for root
                raise PermissionError(errno.EACCES, "the folder is read-only (no write permission bit)")
            return write_atomic(folder / name, data)
        except OSError as err:
            errors.append(f"{folder}: {err.strerror or err}")
    log.warning("the int8 copy cannot be kept (no folder is writable); it will be made again at the next start",
                errors="; ".join(errors))
    return None


def int8_copy(network: Network, *, settings: QuantSettings = DEFAULT_SETTINGS, history_fill: str = "fen_only",
              folders: list[Path] | None = None) -> Int8Copy:
    """The int8 copy of ``network``, read from the cache or quantized (then cached). ``folders``: where to look
    and write, in order (default :func:`cache_dirs`); ``history_fill``: the encoding of the calibration
    positions (the search's default, lc0's ``fen_only``). Raises NetworkError when onnxruntime's tooling
    cannot quantize the network or the calibration games cannot be read."""
    t = time.perf_counter()
    where = cache_dirs(network) if folders is None else folders
    planes = calibration_planes(network.input_format, history_fill=history_fill)
    key = cache_key(network.model, planes_digest(planes), settings)
    stem = network.name
    for folder in where:
        found = _read(folder, stem, key)
        if found is not None:
            log.debug("int8 copy read from the cache", network=network.name, path=str(found[1]))
            return Int8Copy(found[0], found[1], False, time.perf_counter() - t)
    data = quantize_model(network.model, planes, settings, source=network.source)
    written = _write(where, stem, key, data)
    seconds = time.perf_counter() - t
    log.info("int8 copy of the network made", network=network.name, path=str(written) if written else None,
             settings=settings.tag, positions=len(planes), seconds=round(seconds, 2))
    return Int8Copy(data, written, True, seconds)
