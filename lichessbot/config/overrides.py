"""The ``game_overrides`` section: settings for some games only, as BotLi's per-time-control and per-colour
engines and books (its keys ``bullet``, ``blitz_white``, ``standard_black``, ``..._human``, ``..._rated``).

Each entry is named by its conditions, joined with ``_`` (at most one of each kind, in any order):

* a speed: ``bullet``, ``blitz``, ``rapid``, ``classical``, ``correspondence`` (lichess's speed of the game);
* a variant: ``standard`` (standard and fromPosition) or ``chess960``;
* our colour: ``white`` or ``black``;
* the opponent: ``human`` or ``bot``;
* the mode: ``rated`` or ``casual``;
* ``tournament``: an arena game.

and holds the keys that change for such games, in any of the sections ``engine`` (``search``, ``strength``,
``ponder``: the network is one for the whole process), ``timeman``, ``book`` and ``draw_or_resign``. Every entry
whose conditions all hold applies, those with fewer conditions first, so a more specific entry wins
(``blitz_white`` over ``blitz``); a nested section (``engine.search``) is merged key by key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field, field_validator

from lichessbot.config.base import Strict

__all__ = ["CONDITIONS", "GameFacts", "GameOverride", "conditions_of", "merge"]

#: The kinds of condition and their words.
CONDITIONS: dict[str, tuple[str, ...]] = {
    "speed": ("bullet", "blitz", "rapid", "classical", "correspondence"),
    "variant": ("standard", "chess960"),
    "color": ("white", "black"),
    "opponent": ("human", "bot"),
    "mode": ("rated", "casual"),
    "tournament": ("tournament",),
}
#: The engine keys an override may set (the network, its runner and the tables are one for the process).
ENGINE_KEYS = ("search", "strength", "ponder")


@dataclass(frozen=True)
class GameFacts:
    """What the conditions are checked against: lichess's ``speed``, the ``variant`` key, our ``color``
    (white/black), the opponent a ``bot`` or not, ``rated``, and ``tournament`` (an arena game)."""

    speed: str
    variant: str = "standard"
    color: str = "white"
    bot: bool = False
    rated: bool = False
    tournament: bool = False

    def words(self) -> set[str]:
        return {self.speed, "chess960" if self.variant == "chess960" else "standard", self.color,
                "bot" if self.bot else "human", "rated" if self.rated else "casual",
                *(("tournament",) if self.tournament else ())}


def conditions_of(name: str) -> dict[str, str]:
    """The conditions of an entry's ``name`` (kind -> word). Raises ValueError naming an unknown word or a
    kind given twice."""
    found: dict[str, str] = {}
    for word in name.split("_"):
        kind = next((k for k, words in CONDITIONS.items() if word in words), None)
        if kind is None:
            known = ", ".join(w for words in CONDITIONS.values() for w in words)
            raise ValueError(f"{name}: {word!r} is not a condition ({known}, joined with _)")
        if kind in found:
            raise ValueError(f"{name}: two {kind} conditions ({found[kind]}, {word})")
        found[kind] = word
    return found


def merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` applied: mappings merged key by key, other values replaced."""
    out = dict(base)
    for key, value in changes.items():
        old = out.get(key)
        out[key] = merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return out


class GameOverride(Strict):
    """One entry of ``game_overrides``: the keys that change for its games (sections as at the top level)."""

    engine: dict[str, Any] = Field(default_factory=dict, description="Keys of engine: search, strength, ponder.")
    timeman: dict[str, Any] = Field(default_factory=dict, description="Keys of timeman.")
    book: dict[str, Any] = Field(default_factory=dict, description="Keys of book.")
    draw_or_resign: dict[str, Any] = Field(default_factory=dict, description="Keys of draw_or_resign.")

    @field_validator("engine")
    @classmethod
    def _engine_keys(cls, keys: dict[str, Any]) -> dict[str, Any]:
        for key in keys:
            if key not in ENGINE_KEYS:
                raise ValueError(f"engine.{key} cannot change per game (the network and what runs it are one for "
                                 f"the process); an override may set engine.{', engine.'.join(ENGINE_KEYS)}")
        return keys

    def changes(self) -> dict[str, Any]:
        """The sections this entry changes, as a partial config."""
        return {k: v for k, v in self.model_dump().items() if v}
