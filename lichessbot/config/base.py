"""What every config section shares: strict, frozen pydantic models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ConfigData", "Strict", "TOKEN_ENV"]

#: A config document as YAML reads it (ours or lichess-bot's), before the models check it.
ConfigData = dict[str, Any]


#: The environment variable that holds the bot's API token (it wins over ``token:`` in the file).
TOKEN_ENV = "LICHESS_BOT_TOKEN"


class Strict(BaseModel):
    """A config section: unknown keys are refused, values are checked (defaults too) and never change."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)
