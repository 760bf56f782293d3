"""What every config section shares: strict, frozen pydantic models."""

from __future__ import annotations

import os
from typing import Annotated, Any

import platformdirs
from pydantic import AfterValidator, BaseModel, ConfigDict

__all__ = ["APP_NAME", "ConfigData", "HomePath", "KeyConflict", "Strict", "TOKEN_ENV", "default_pgn_directory",
           "default_state_directory", "user_data_path"]

#: A config document as YAML reads it (ours or lichess-bot's), before the models check it.
ConfigData = dict[str, Any]


#: A path of the config with ``~`` and ``~user`` expanded (:func:`os.path.expanduser`) when the file is read, so
#: every reader of it (the PGN writer, the eval charts, the writability check at start, the records) means the
#: same file or directory.
HomePath = Annotated[str, AfterValidator(os.path.expanduser)]

#: The environment variable that holds the bot's API token (it wins over ``token:`` in the file).
TOKEN_ENV = "LICHESS_BOT_TOKEN"

#: The application's name in the user's directories (platformdirs' ``appname``; no vendor folder on Windows).
APP_NAME = "lichessbot"


def user_data_path() -> str:
    """The user's data directory of the bot (platformdirs ``user_data_path``, read from the environment at each
    call): Linux ``$XDG_DATA_HOME/lichessbot`` (``~/.local/share/lichessbot`` when unset), macOS
    ``~/Library/Application Support/lichessbot``, Windows ``%LOCALAPPDATA%\\lichessbot``. Not created here."""
    return str(platformdirs.user_data_path(APP_NAME, appauthor=False))


def default_state_directory() -> str:
    """``state_directory``'s default: the user's state directory of the bot (platformdirs ``user_state_path``;
    the XDG Base Directory spec's state home holds "data that should persist between (application) restarts"):
    Linux ``$XDG_STATE_HOME/lichessbot`` (``~/.local/state/lichessbot`` when unset); macOS and Windows, the data
    directory (:func:`user_data_path`). Created when the bot first writes there, not by reading the config."""
    return str(platformdirs.user_state_path(APP_NAME, appauthor=False))


def default_pgn_directory() -> str:
    """``pgn_directory``'s default: ``games`` in :func:`user_data_path` (Linux ``~/.local/share/lichessbot/games``
    with XDG_DATA_HOME unset). Created when the first game is saved (or by the start-up check)."""
    return os.path.join(user_data_path(), "games")


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
