"""The ``book`` section: polyglot opening books (lichessbot/book reads it). lichess-bot: ``engine.polyglot``;
BotLi: ``opening_books``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from lichessbot.config.base import Strict

__all__ = ["BookConfig"]

#: The largest polyglot weight (a uint16: http://hgm.nubati.net/book_format.html).
MAX_WEIGHT = 65535


class BookConfig(Strict):
    """Polyglot opening book."""

    enabled: bool = Field(False, description="Play book moves (files are checked at startup).")
    paths: dict[Literal["standard", "chess960"], list[str]] = Field(
        default_factory=dict, description="Per variant, .bin files tried in order (fromPosition uses standard)."
    )
    selection: Literal["weighted_random", "uniform_random", "best_move"] = Field(
        "weighted_random", description="weighted_random: by weight; uniform_random; best_move: highest weight."
    )
    min_weight: int = Field(
        1, ge=0, le=MAX_WEIGHT, description="Entries with a lower weight are ignored; with normalization sum or "
        "max a percentage (0 to 100) of the position's weights.")
    max_depth: int = Field(
        20, ge=1, description="Use the book only up to this full move number (lichess-bot's max_depth, the same "
        "count: lichess-bot lib/engine_wrapper.py plays from the book while plies played <= max_depth * 2 - 1).")
    normalization: Literal["none", "sum", "max"] = Field(
        "none", description="lichess-bot's key: how min_weight reads: none: a raw weight; sum: a percentage of "
        "the sum of the position's weights; max: a percentage of its largest weight (lichess-bot "
        "lib/engine_wrapper.py get_book_move).")
    max_moves: int | None = Field(
        None, ge=0, description="BotLi's key: at most this many book moves in a game (null: no limit).")
    priority: int = Field(
        0, description="BotLi's opening_books.priority: online books (online_moves) with a higher priority are asked "
        "before this book; the others after it.")
    allow_repetitions: bool = Field(
        True, description="BotLi's key: false: a book move that repeats a position of the game is not played "
        "(an unintended draw by repetition).")

    @model_validator(mode="after")
    def _percentage(self) -> BookConfig:
        if self.normalization != "none" and self.min_weight > 100:
            raise ValueError(f"min_weight {self.min_weight}: with normalization {self.normalization} it is a "
                             "percentage (0 to 100)")
        return self
