"""Strength in play: which level a game or a ``go`` uses, its node cap, its move choice and its pace.

The bot (:mod:`lichessbot.thinker.engine`) and ``lichessbot uci`` (:mod:`lichessbot.uci`) each give
one :class:`LevelPlayer` per game to their move pipeline (:mod:`lichessbot.thinker`), which calls it at two
points: the node limit of a search (:meth:`LevelPlayer.nodes`) and the move once the search is done
(:meth:`LevelPlayer.choose`, from the result alone). The bot also asks it the least time to spend on the
move (:meth:`LevelPlayer.min_think_s`).
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lichessbot.neural.network import _default_path
from lichessbot.strength.choice import apply_level
from lichessbot.strength.levels import (
    Level,
    StrengthError,
    StrengthTable,
    load_table,
    maia_level,
)

if TYPE_CHECKING:
    from lichessbot.config import StrengthConfig
    from lichessbot.search import SearchResult

__all__ = ["LevelPlayer", "level_for_game", "level_text", "table_from_config", "table_mismatch", "uci_level"]


def table_mismatch(table: StrengthTable, network: str) -> str | None:
    """A warning when ``table`` was calibrated for another network than ``network`` (a path or "default"),
    by the SHA-256 of the file recorded in the table; None when they match or the table records none."""
    if not table.network_sha256:
        return None
    if network == "default":
        path = _default_path()
    else:
        path = Path(network)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
    if digest == table.network_sha256:
        return None
    return (f"the strength table {table.source or table.network} was calibrated for another network "
            f"({table.network}); its Elo levels are not measured for {network} (lichessbot calibrate)")


#: How a greeting names an extrapolated level: no Elo it has not shown (docs/strength.md).
EXTRAPOLATED_TEXT = "an easy level below the range our Elo levels were measured in"


def level_text(level: Level | None) -> str:
    """How a greeting names the level (``{level}``): "full strength", "1450 Elo", "the Maia preset", or for
    an extrapolated level (never measured) :data:`EXTRAPOLATED_TEXT`, without its Elo."""
    if level is None:
        return "full strength"
    if level.elo is None:
        return "the Maia preset"
    return EXTRAPOLATED_TEXT if level.extrapolated else f"{level.elo} Elo"


class LevelPlayer:
    """One game's strength level (None: full strength) and its move sampler.

    ``seed``: seed of the sampler (None: from the OS). ``think_share``: the bot's least thinking time as a
    share of the time manager's target for the move (0..1; 0 moves as soon as the search stops).
    """

    def __init__(self, level: Level | None = None, *, seed: int | None = None, think_share: float = 0.0) -> None:
        self.level = level
        self.think_share = think_share
        self._rng = np.random.default_rng(seed)
        self._stop = threading.Event()

    @property
    def active(self) -> bool:
        return self.level is not None

    def nodes(self, nodes: int | None) -> int | None:
        """The node limit of a search asked for ``nodes`` (None: none) under the level's node cap: the smaller
        of the two."""
        if self.level is None:
            return nodes
        return self.level.nodes if nodes is None else min(nodes, self.level.nodes)

    def choose(self, result: SearchResult) -> SearchResult:
        """The result with the level's move (:func:`lichessbot.strength.choice.apply_level`), read from the
        result alone."""
        if self.level is None:
            return result
        return apply_level(result, self.level, self._rng)

    def min_think_s(self, target_s: float | None) -> float:
        """Seconds a move should take at least: ``think_share`` x the time manager's target (seconds), 0
        at full strength or without a target. The bot waits out the rest after a node-capped search, so a
        weakened bot does not answer every move at once (docs/strength.md)."""
        if self.level is None or not target_s or self.think_share <= 0:
            return 0.0
        return self.think_share * target_s

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds`` unless :meth:`interrupt` is called (the game ends, the thinker stops)."""
        if seconds > 0:
            self._stop.wait(seconds)

    def interrupt(self) -> None:
        self._stop.set()


def table_from_config(path: str, key: str = "engine.strength.table") -> StrengthTable:
    """The table at ``path`` ("default": the shipped one); a StrengthError names ``key`` when it cannot be read."""
    try:
        return load_table(path)
    except StrengthError as err:
        raise StrengthError(f"{key}: {err}") from None


def uci_level(limit_strength: bool, elo: int, preset: str, table: StrengthTable | None) -> Level | None:
    """The level of ``lichessbot uci``: the preset (``StrengthPreset`` maia), else with
    ``UCI_LimitStrength`` the table's level for ``UCI_Elo``, else None (full strength)."""
    if preset == "maia":
        return maia_level()
    if not limit_strength or table is None:
        return None
    return table.level_for(elo)


def level_for_game(cfg: StrengthConfig, table: StrengthTable | None, opponent_rating: int | None,
                   rated: bool) -> Level | None:
    """The level of one bot game (None: full strength), from ``engine.strength``:

    * ``preset: maia``: the Maia preset in every game;
    * ``adaptive.enabled``, and the game is casual or ``adaptive.casual_only`` is false, and the opponent
      has a rating for the game's speed: the table's level for rating + ``adaptive.offset``;
    * else ``elo`` when set: the table's level for it; else full strength.

    Above the table's top level the engine plays at full strength (:meth:`StrengthTable.level_for`).
    """
    if cfg.preset == "maia":
        return maia_level()
    if table is None:
        return None
    ad = cfg.adaptive
    if ad.enabled and opponent_rating is not None and (not rated or not ad.casual_only):
        return table.level_for(int(opponent_rating) + ad.offset)
    if cfg.elo is not None:
        return table.level_for(cfg.elo)
    return None
