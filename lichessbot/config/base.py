"""What every config section shares: strict, frozen pydantic models."""

from __future__ import annotations

import os
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

__all__ = ["ConfigData", "HomePath", "KeyConflict", "Strict", "TOKEN_ENV"]

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


class KeyConflict(ValueError):
    """A rule across keys is broken (``min_base`` above ``max_base``; matchmaking on with ``accept_bot`` off).

    The message says the rule; ``keys`` name every key the rule spans, dotted and relative to the model that
    raises it (a section's keys for a section's rule, full paths for a rule of the whole file), in the order
    they should be changed: first the key that asks for something the others do not allow (the feature switched
    on, the lower bound). ``lichessbot migrate-config`` drops the first of them the file sets, so that a broken
    rule costs one key, never a section (pydantic keeps this error as ``ctx["error"]`` of the validation error).
    """

    def __init__(self, message: str, *keys: str | tuple[str, ...]) -> None:
        super().__init__(message)
        #: The keys the rule spans, each as its path's parts, the one to change first.
        self.keys: tuple[tuple[str, ...], ...] = tuple(tuple(k.split(".")) if isinstance(k, str) else k
                                                       for k in keys)
