"""A lichess Bot API server on 127.0.0.1 as strict as lichess (it imports nothing of the bot).

Used by the tests (``tests/fake_lichess.py`` re-exports it, with :mod:`lichessbot.bot.service.botrun`, the bot
running in-process against it) and by ``lichessbot bench bot``. It only ever listens on 127.0.0.1.
"""

from lichessbot.fakelichess.players import (
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
from lichessbot.fakelichess.server import FakeGame, FakeLichess

__all__ = ["OFFER_DRAW", "RESIGN", "FakeGame", "FakeLichess", "Opponent", "drops_first", "mate_or_random",
           "random_mover", "resign_after", "scripted", "shuffler", "staller"]
