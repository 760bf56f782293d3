"""Where a move is chosen, the same way for the bot and ``lichessbot uci`` (docs/interfaces.md, "thinker").

* :mod:`~lichessbot.thinker.settings`: how moves are chosen, typed (:class:`ThinkerSettings`);
* :mod:`~lichessbot.thinker.engine`: the engine built once from them (network and what runs it, book, tables,
  strength table, online sources), rebuilding only what new settings change;
* :mod:`~lichessbot.thinker.game_thinker`: one game's thinker (its searcher, time manager and move pipeline; the
  bot's :class:`~lichessbot.thinker.protocol.Thinker`);
* :mod:`~lichessbot.thinker.pipeline`, :mod:`~lichessbot.thinker.sources`, :mod:`~lichessbot.thinker.types`:
  the move pipeline (book, online books, tables, online tables, then the search under the time manager with
  the strength level's choice) and its values (:class:`MoveRequest`, :class:`Decision`);
* :mod:`~lichessbot.thinker.wiring`: how the network, its evaluator, a searcher and a time manager are made.

Imports point down: the book, the tablebases, the search, the engine room (networks), the time manager, the
strength levels, the online sources and the status page's values; nothing here knows lichess or the UCI
protocol.
"""

from lichessbot.thinker.pipeline import InfoCallback, MovePipeline, SearchCallback, Thinking
from lichessbot.thinker.settings import ThinkerSettings
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
           "OnlineTableSource", "SearchCallback", "SearchOnly", "TablebaseSource", "ThinkerSettings", "Thinking",
           "move_sources"]
