"""The values of a converted config that our checks refuse, dropped one key at a time (``lichessbot
migrate-config``): a bad value costs its own key; a rule across keys the key it names to change first
(:class:`lichessbot.config.base.KeyConflict`), or else the first key whose removal meets the rule and breaks no
other; never a whole section, never the token. Imports the config models only.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from lichessbot.config import BotConfig
from lichessbot.config.base import ConfigData, KeyConflict

__all__ = ["KeyPath", "drop_refused"]

#: A key's path in a config mapping, as its parts: ("challenge", "min_base").
KeyPath = tuple[str, ...]


def _lookup(data: ConfigData, path: KeyPath) -> tuple[bool, Any]:
    """(whether ``path`` is set in ``data``, its value)."""
    node: Any = data
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _leaves(node: ConfigData, prefix: KeyPath) -> list[KeyPath]:
    """Every key set under ``node`` (at ``prefix``) whose value is not a mapping with keys in it, in file order."""
    out: list[KeyPath] = []
    for key, value in node.items():
        path = (*prefix, str(key))
        out += _leaves(value, path) if isinstance(value, dict) and value else [path]
    return out


def _without(data: ConfigData, path: KeyPath) -> ConfigData:
    """A copy of ``data`` without the key at ``path``."""
    out = copy.deepcopy(data)
    _, parent = _lookup(out, path[:-1])
    parent.pop(path[-1])
    return out


def _errors(data: ConfigData) -> list[ErrorDetails]:
    """What our checks refuse in ``data`` (empty: it validates)."""
    try:
        BotConfig.model_validate(data)
    except ValidationError as err:
        return err.errors()
    return []


def _meets(trial: ConfigData, error: ErrorDetails, errors: list[ErrorDetails]) -> bool:
    """Whether ``trial`` meets the rule of ``error`` without breaking another: ``error`` is gone and every error
    left was among ``errors`` (a rule checked after it, now reached, does not count as met)."""
    def same(a: ErrorDetails, b: ErrorDetails) -> bool:
        return a["loc"] == b["loc"] and a["msg"] == b["msg"]

    left = _errors(trial)
    return not any(same(e, error) for e in left) and all(any(same(e, o) for o in errors) for e in left)


def _culprit(data: ConfigData, error: ErrorDetails, errors: list[ErrorDetails]) -> KeyPath | None:
    """The one key of ``data`` to drop for ``error`` (one of ``errors``, all that ``data`` breaks): never a section
    with keys in it, never the token.

    1. The error is on a value the file set (a bad value, an unknown key): that key.
    2. A rule across keys (:class:`KeyConflict`, on a section or the whole file): the first key the rule names
       that the file sets.
    3. Any other rule on a section: the first key under it whose removal alone meets the rule and breaks no
       other.
    None: no single key does (the caller keeps everything and says so).
    """
    loc: KeyPath = ()
    for part in error["loc"]:
        if not isinstance(part, str):
            break  # an item of a list: the list's key is the culprit
        loc = (*loc, part)
    found, value = _lookup(data, loc)
    if found and loc and not (isinstance(value, dict) and value):
        return loc if loc != ("token",) else None
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, KeyConflict):
        for key in cause.keys:
            path = (*loc, *key)
            if path != ("token",) and _lookup(data, path)[0]:
                return path
    if not found or not isinstance(value, dict):
        return None
    for leaf in _leaves(value, loc):
        if leaf != ("token",) and _meets(_without(data, leaf), error, errors):
            return leaf
    return None


def drop_refused(out: ConfigData, dropped: list[tuple[str, str]], lost: list[str]) -> list[str]:
    """Remove, one key at a time, the values our checks refuse, each named in ``dropped`` with the rule; those
    that were not empty (a setting the user lost) also in ``lost``. Returns the rules no single key could satisfy
    (the keys they span are kept; check-config names them), empty when the rest validates. Each round drops one
    key, so the rounds are at most the keys set."""
    for _ in range(len(_leaves(out, ()))):
        errors = _errors(out)
        found = next(((e, p) for e in errors if (p := _culprit(out, e, errors)) is not None), None)
        if found is None:
            break
        error, path = found
        _, parent = _lookup(out, path[:-1])
        value = parent.pop(path[-1])
        name = ".".join(path)
        dropped.append((name, f"refused here: {_message(error)}"))
        if value not in (None, "", [], {}):
            lost.append(name)
    return [_message(e) for e in _errors(out)]


def _message(error: ErrorDetails) -> str:
    """The reason of a validation error, as check-config writes it."""
    msg = error["msg"].removeprefix("Value error, ")
    return "unknown key" if error["type"] == "extra_forbidden" else msg
