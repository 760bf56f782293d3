"""Logging for the bot: structlog, readable on a terminal and JSON lines otherwise, secrets redacted; optionally
the JSON lines in a file too while the terminal shows only the more severe lines (``play --local``'s quiet
terminal).

Every game line carries ``game_id`` (bound by :class:`~lichessbot.bot.games.shell.Game`). Any string equal
to a registered secret (the API token) is replaced by ``***`` in every field of every line, including
formatted tracebacks and the lines of the standard ``logging`` module (urllib3, berserk).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, MutableMapping
from typing import IO, Any, TextIO, cast

import structlog

__all__ = ["configure_logging"]

REDACTED = "***"


def _redact(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        for s in secrets:
            value = value.replace(s, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: _redact(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_redact(v, secrets) for v in value)
    return value


class _RedactFilter(logging.Filter):
    def __init__(self, secrets: tuple[str, ...]):
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = _redact(record.getMessage(), self.secrets)
        record.args = ()
        return True


def _level(name: str) -> int:
    return cast(int, logging.getLevelName(name.upper()))


def configure_logging(*, stream: IO[str] | None = None, json: bool | None = None, level: str = "info",
                      secrets: Iterable[str] = (), file: IO[str] | None = None,
                      stream_level: str | None = None) -> None:
    """Configure structlog (and the standard ``logging`` module) for the bot.

    Args:
        stream: where lines go (default stderr).
        json: JSON lines on ``stream``; None: JSON unless ``stream`` is a terminal.
        level: the least severe line kept: "debug", "info", "warning" or "error".
        secrets: strings never to be written (the token); empty strings are ignored.
        file: where JSON lines at ``level`` go too (None: nowhere); the caller opens and closes it.
        stream_level: the least severe line ``stream`` shows (None: ``level``); ``file`` keeps those of ``level``.
    """
    out = stream or sys.stderr
    if json is None:
        json = not (hasattr(out, "isatty") and out.isatty())
    hidden = tuple(s for s in secrets if s)
    shown, kept = _level(stream_level or level), _level(level)
    to_json = structlog.processors.JSONRenderer()

    def redact(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        return _redact(event, hidden) if hidden else event

    renderer: Any = (to_json if json else
                     structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback))

    def render(logger: Any, name: str, event: MutableMapping[str, Any]) -> Any:
        """The JSON line to ``file`` (when set), then the line for ``stream`` unless less severe than it shows."""
        severity = _level(str(event.get("level", "info")))
        if file is not None and severity >= kept:
            file.write(str(to_json(logger, name, dict(event))) + "\n")
            file.flush()
        if severity < shown:
            raise structlog.DropEvent
        return renderer(logger, name, event)

    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact,
            render,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(min(kept, shown)),
        logger_factory=structlog.PrintLoggerFactory(cast(TextIO, out)),
        cache_logger_on_first_use=False,
    )
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_lichessbot", False):
            root.removeHandler(h)
    handler = logging.StreamHandler(out)
    handler._lichessbot = True  # type: ignore[attr-defined]
    handler.addFilter(_RedactFilter(hidden))
    handler.setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
