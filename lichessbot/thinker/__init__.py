"""The move pipeline: book, tables, search, strength choice and time bookkeeping, one way for the bot and
``lichessbot uci`` (docs/interfaces.md, "pipeline").

Imports point down: the book, the tablebases, the search, the time manager, the strength levels (and the online
sources); nothing here knows lichess or the UCI protocol.
"""

from lichessbot.thinker.pipeline import InfoCallback, MovePipeline, SearchCallback, Thinking
from lichessbot.thinker.sources import (
    BookSource,
    MoveSource,
    OnlineBookSource,
    OnlineTableSource,
    TablebaseSource,
    move_sources,
)
from lichessbot.thinker.types import Decision, MoveRequest, SearchOnly

__all__ = ["BookSource", "Decision", "InfoCallback", "MovePipeline", "MoveRequest", "MoveSource", "OnlineBookSource",
           "OnlineTableSource", "SearchCallback", "SearchOnly", "TablebaseSource", "Thinking", "move_sources"]
