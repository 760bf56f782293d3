"""The test server (a lichess as strict as lila, built on the embedded lichess of :mod:`lichessbot.local`) with
its server-played opponents and fault injection, and the bot running in-process against it: test doubles, out of
the package."""

from tests.lila.botrun import BotRun, StandInEngine, StandInThinker, stand_in_decision
from tests.lila.players import (
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
from tests.lila.server import FakeGame, FakeLichess

__all__ = ["OFFER_DRAW", "RESIGN", "BotRun", "FakeGame", "FakeLichess", "Opponent", "StandInEngine", "StandInThinker",
           "drops_first", "mate_or_random", "random_mover", "resign_after", "scripted", "shuffler", "staller",
           "stand_in_decision"]
