"""The test server (a lichess as strict as lila, built on the embedded lichess of :mod:`lichessbot.local`) with
its server-played opponents and fault injection, and the bot running in-process against it: test doubles, out of
the package, shared by the tests and the developer tools (the soaks)."""

from devtools.lila.botrun import BotRun, FakeEngine, FakeEngineThinker, StandInEngine, StandInThinker, stand_in_decision
from devtools.lila.players import (
    OFFER_DRAW,
    RESIGN,
    Opponent,
    drops_first,
    mate_or_random,
    random_mover,
    resign_after,
    scripted,
    shuffler,
    staller,
)
from devtools.lila.server import FakeGame, FakeLichess

__all__ = ["OFFER_DRAW", "RESIGN", "BotRun", "FakeEngine", "FakeEngineThinker", "FakeGame", "FakeLichess", "Opponent",
           "StandInEngine", "StandInThinker",
           "drops_first", "mate_or_random", "random_mover", "resign_after", "scripted", "shuffler", "staller",
           "stand_in_decision"]
