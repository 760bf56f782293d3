"""What every config section shares: strict, frozen pydantic models."""

from __future__ import annotations

import os
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

__all__ = ["ConfigData", "HomePath", "Strict", "TOKEN_ENV"]

#: A config document as YAML reads it (ours or lichess-bot's), before the models check it.
ConfigData = dict[str, Any]


#: A path of the config with ``~`` and ``~user`` expanded (:func:`os.path.expanduser`) when the file is read, so
#: every reader of it (the PGN writer, the eval charts, the writability check at start, the records) means the
#: same file or directory.
HomePath = Annotated[str, AfterValidator(os.path.expanduser)]

#: The environment variable that holds the bot's API token (it wins over ``token:`` in the file).
TOKEN_ENV = "LICHESS_BOT_TOKEN"


class Strict(BaseModel):
    """A config section: unknown keys are refused, values are checked (defaults too) and never change."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)
