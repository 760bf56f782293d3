"""The thinker's settings, typed: everything that decides how this process chooses its moves, in one frozen value.

The bot builds it from its config (:meth:`ThinkerSettings.of_config`); ``lichessbot uci`` from its options
(each ``setoption`` makes a new value and hands it to the engine, which rebuilds only what changed:
:meth:`lichessbot.thinker.engine.Engine.configure`). Imports point down: config only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lichessbot.config import BookConfig, BotConfig, EngineConfig, TablebaseConfig, TimemanConfig

__all__ = ["CONFIG_NAMES", "UCI_NAMES", "SettingNames", "ThinkerSettings"]


@dataclass(frozen=True)
class SettingNames:
    """How errors name a setting to its user: the config key, or the UCI option."""

    tablebases: str
    strength_table: str


#: The bot's names (config.yml keys).
CONFIG_NAMES = SettingNames(tablebases="tablebases.syzygy", strength_table="engine.strength.table")
#: ``lichessbot uci``'s names (its options).
UCI_NAMES = SettingNames(tablebases="SyzygyPath", strength_table="StrengthTable")


@dataclass(frozen=True)
class ThinkerSettings:
    """How moves are chosen.

    Attributes:
        engine: the network and what runs it (network, backend, threads, NN cache, precision), the search
            parameters, the strength level (``engine.strength``) and pondering.
        timeman: the time manager (milliseconds, shares).
        book: the polyglot book (asked before anything else when enabled).
        book_seed: the seed of the book's random choice (None: from the OS).
        tablebases: the Syzygy tables (root move and probes inside the search).
        correspondence_move_time: seconds to think per move in a game without a real-time clock (the bot's
            ``correspondence.move_time``).
        nodes: a cap on nodes per move (tests, weaker play), None: the time manager alone decides.
        names: how errors name the settings (config keys or UCI options).
    """

    engine: EngineConfig = field(default_factory=EngineConfig)
    timeman: TimemanConfig = field(default_factory=TimemanConfig)
    book: BookConfig = field(default_factory=BookConfig)
    book_seed: int | None = None
    tablebases: TablebaseConfig = field(default_factory=TablebaseConfig)
    correspondence_move_time: float = 60.0
    nodes: int | None = None
    names: SettingNames = CONFIG_NAMES

    @classmethod
    def of_config(cls, config: BotConfig, *, nodes: int | None = None) -> ThinkerSettings:
        """The bot's settings: sections engine, timeman, book, tablebases and correspondence of ``config``."""
        return cls(engine=config.engine, timeman=config.timeman, book=config.book, tablebases=config.tablebases,
                   correspondence_move_time=float(config.correspondence.move_time), nodes=nodes)

    @property
    def plays_levels(self) -> bool:
        """A strength level may be played (``engine.strength.elo`` or adaptive): the table is needed."""
        sc = self.engine.strength
        return sc.elo is not None or sc.adaptive.enabled
