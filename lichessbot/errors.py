"""Errors that reach the user as one line (the CLI prints them and exits with status 2).

Each room defines narrow exceptions that subclass a built-in and :class:`LichessbotError`, e.g.
``class NetworkError(LichessbotError, ValueError)``. The message must say what is wrong and where,
and must never contain the API token.
"""

from __future__ import annotations

__all__ = ["ConfigError", "LichessbotError", "NetworkError"]


class LichessbotError(Exception):
    """Base of every error meant for the user: the CLI prints ``lichessbot: <message>`` and exits 2."""


class ConfigError(LichessbotError, ValueError):
    """A config file that cannot be used. The message names the key's dotted path and the reason."""


class NetworkError(LichessbotError, ValueError):
    """A network that cannot be loaded or used; the message names the file and the problem."""
