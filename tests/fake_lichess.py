"""The fake lichess server for the tests: it lives in :mod:`lichessbot.fakelichess` (the soak bench uses it
too); this module re-exports it under its old name."""

from lichessbot.fakelichess import *  # noqa: F401,F403
from lichessbot.fakelichess import __all__  # noqa: F401
