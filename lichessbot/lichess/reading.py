"""Reading lichess's JSON: the field readers every parser of :mod:`lichessbot.lichess.events` uses, so the
missing-key rules live in one place. A key that is absent (or ``null``) gets the reader's default
(``bool_``: False, as lila leaves false keys out; ``opt_*``: None); a key of the wrong type raises
:class:`MalformedEvent`; a key the bot needs to act right (:func:`need`: a game state's moves and clocks,
whose default would mislead it) raises :class:`MalformedEvent` naming it when it is absent. A key we do not
know is never read, so it never breaks anything. Imports nothing of the project but :mod:`lichessbot.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lichessbot.errors import LichessbotError

__all__ = ["JSON", "MalformedEvent", "bool_", "int_", "key_", "need", "obj", "opt_int", "opt_str", "status_",
           "str_"]


class MalformedEvent(LichessbotError, ValueError):
    """A line of lichess's JSON with a known key of the wrong type (the stream skips it)."""


JSON = Mapping[str, Any]


def need(d: JSON, where: str, *keys: str) -> None:
    """:class:`MalformedEvent` naming the first of ``keys`` absent (or null) from ``d`` (``where``: e.g.
    ``gameState``)."""
    for key in keys:
        if d.get(key) is None:
            raise MalformedEvent(f"{where} without {key}")


def obj(d: JSON, key: str) -> JSON:
    v = d.get(key)
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise MalformedEvent(f"{key}: expected an object, got {type(v).__name__}")
    return v


def str_(d: JSON, key: str, default: str = "") -> str:
    v = d.get(key)
    if v is None:
        return default
    if isinstance(v, (str, int)) and not isinstance(v, bool):
        return str(v)
    raise MalformedEvent(f"{key}: expected a string, got {type(v).__name__}")


def opt_str(d: JSON, key: str) -> str | None:
    return str_(d, key) if d.get(key) is not None else None


def int_(d: JSON, key: str, default: int = 0) -> int:
    v = d.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise MalformedEvent(f"{key}: expected a number, got {type(v).__name__}")
    return int(v)


def opt_int(d: JSON, key: str) -> int | None:
    return int_(d, key) if d.get(key) is not None else None


def bool_(d: JSON, key: str) -> bool:
    """A key lila leaves out when false."""
    v = d.get(key, False)
    if not isinstance(v, bool):
        raise MalformedEvent(f"{key}: expected true/false, got {type(v).__name__}")
    return v


def status_(d: JSON) -> str:
    """A game status: ``{"id": 20, "name": "started"}`` (ownerPreview) or ``"started"`` (gameState)."""
    v = d.get("status")
    return str_(v, "name") if isinstance(v, Mapping) else str_(d, "status")


def key_(d: JSON, key: str, default: str) -> str:
    """A variant: ``{"key": "standard", ...}`` or a bare key."""
    v = d.get(key)
    return str_(v, "key", default) if isinstance(v, Mapping) else str_(d, key, default)
