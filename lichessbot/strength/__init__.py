"""Strength levels for playing people: calibrated ``UCI_Elo`` levels, adaptive strength, the Maia preset
(docs/strength.md). Imports point down: config, search results; nothing here knows lichess."""

from lichessbot.strength.choice import Choice, apply_level, choose
from lichessbot.strength.levels import (
    DEFAULT_TABLE,
    Level,
    Measurement,
    StrengthError,
    StrengthTable,
    load_table,
    maia_level,
)
from lichessbot.strength.play import (
    LevelPlayer,
    level_for_game,
    level_text,
    table_from_config,
    table_mismatch,
    uci_level,
)

__all__ = [
    "DEFAULT_TABLE",
    "Choice",
    "Level",
    "LevelPlayer",
    "Measurement",
    "StrengthError",
    "StrengthTable",
    "apply_level",
    "choose",
    "level_for_game",
    "level_text",
    "load_table",
    "maia_level",
    "table_from_config",
    "table_mismatch",
    "uci_level",
]
