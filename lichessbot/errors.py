"""Errors that reach the user as one line (the CLI prints them and exits with status 2).

Each room defines narrow exceptions that subclass a built-in and :class:`LichessbotError`, e.g.
``class NetworkError(LichessbotError, ValueError)``. The message must say what is wrong and where,
and must never contain the API token.
"""

from __future__ import annotations


class LichessbotError(Exception):
    """Base of every error meant for the user: the CLI prints ``lichessbot: <message>`` and exits 2."""
