"""Online move sources (docs/online.md): lichess's opening explorer and cloud evals, chessdb.cn's book,
and online endgame tablebases (lichess's or chessdb's), each asked within a budget taken from our clock.

The move pipeline's door::

    online = OnlineMoves(config.online_moves, token=token, pacer=client.pacer, username=me)
    game = online.game(game_id)
    move = game.book_move(board, clock)  # lichessbot.timeman.Clock (ms), None without a clock
    ...  # local tables
    move = game.table_move(board, clock)  # .move, or .search_moves (suggest)

Knows nothing of the search or of lichess's client; the bot's pacer comes in as a value.
"""

from lichessbot.online.http import Pacer, RateLimited, SourceFailure
from lichessbot.online.sources import OnlineGame, OnlineMoves, lookup_budget
from lichessbot.online.types import CHESSDB, CLOUD, EGTB, EXPLORER, OnlineMove

__all__ = ["CHESSDB", "CLOUD", "EGTB", "EXPLORER", "OnlineGame", "OnlineMove", "OnlineMoves", "Pacer",
           "RateLimited", "SourceFailure", "lookup_budget"]
