"""The operator's extra game handlers (config ``extra_game_handlers``; lichess-bot's ``extra_game_handlers.py``):
their functions imported once at start, and called so that a handler that raises never stops the bot.

A spec is ``module:function`` (imported with :func:`importlib.import_module`) or ``file.py:function`` (a file
loaded with :func:`importlib.util.spec_from_file_location`, relative to the working directory).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from lichessbot.config.handlers import HANDLER_FORM, ExtraGameHandlersConfig
from lichessbot.errors import ConfigError
from lichessbot.lichess.events import Challenge, GameFull

__all__ = ["Handlers", "load_handler"]

log = structlog.get_logger("lichessbot.bot")


def load_handler(spec: str, key: str) -> Callable[..., Any]:
    """The function ``spec`` names. Raises ConfigError naming ``key`` when the module or file cannot be
    imported (the error's text), the function is missing, or it is not callable."""
    m = HANDLER_FORM.match(spec)
    if m is None:
        raise ConfigError(f"{key}: {spec!r} is not module:function")
    where, name = m["module"], m["function"]
    try:
        if where.endswith(".py"):
            path = Path(where).expanduser().resolve()
            file_spec = importlib.util.spec_from_file_location(f"lichessbot_handlers_{path.stem}", path)
            if file_spec is None or file_spec.loader is None or not path.is_file():
                raise ConfigError(f"{key}: {where}: no such Python file")
            module = importlib.util.module_from_spec(file_spec)
            file_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except ConfigError:
        raise
    except Exception as err:  # noqa: BLE001 - the operator's module may raise anything while it loads
        raise ConfigError(f"{key}: {where} cannot be imported ({type(err).__name__}: {err})") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ConfigError(f"{key}: {where} has no function {name}")
    return fn  # type: ignore[no-any-return]


class Handlers:
    """The handlers of ``config`` (each None when not set), imported now.

    Raises:
        ConfigError: a handler cannot be loaded (the key and the reason in the message).
    """

    def __init__(self, config: ExtraGameHandlersConfig) -> None:
        def load(key: str) -> Callable[..., Any] | None:
            spec = getattr(config, key)
            return None if spec is None else load_handler(spec, f"extra_game_handlers.{key}")

        self._filter, self._start, self._end = load("challenge_filter"), load("game_start"), load("game_end")

    @property
    def filters(self) -> bool:
        """A challenge filter is set."""
        return self._filter is not None

    def accepts(self, ch: Challenge) -> tuple[bool, str]:
        """The challenge filter's answer for ``ch`` (True without one) and why when it declines; a filter that
        raises declines (logged)."""
        if self._filter is None:
            return True, ""
        try:
            ok = bool(self._filter(ch))
        except Exception as err:  # noqa: BLE001 - the operator's code
            log.error("extra_game_handlers.challenge_filter failed", challenge_id=ch.id, error=repr(err))
            return False, f"extra_game_handlers.challenge_filter raised {type(err).__name__}"
        return ok, "" if ok else "extra_game_handlers.challenge_filter said no"

    def game_started(self, full: GameFull) -> None:
        """Call ``game_start`` with ``full`` (a failure is logged)."""
        self._call(self._start, "game_start", full)

    def game_ended(self, record: object) -> None:
        """Call ``game_end`` with the game's ``record`` (a :class:`lichessbot.bot.games.pgn.GameRecord`; a failure
        is logged)."""
        self._call(self._end, "game_end", record)

    @staticmethod
    def _call(fn: Callable[..., Any] | None, key: str, arg: object) -> None:
        if fn is None:
            return
        try:
            fn(arg)
        except Exception as err:  # noqa: BLE001 - the operator's code never stops a game
            log.error(f"extra_game_handlers.{key} failed", error=repr(err))
