"""The fake lichess server for the tests (:mod:`lichessbot.fakelichess`; the soak bench uses it too) and the
bot running in-process against it (:mod:`lichessbot.bot.service.botrun`), under one name."""

from lichessbot.bot.service.botrun import BotRun, StandInEngine, StandInThinker, stand_in_decision  # noqa: F401
from lichessbot.fakelichess import *  # noqa: F401,F403
from lichessbot.fakelichess import __all__ as _server_names

__all__ = [*_server_names, "BotRun", "StandInEngine", "StandInThinker", "stand_in_decision"]
