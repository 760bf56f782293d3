"""The values that cross the online room's door: the move a source gives (the clock is the time manager's).

Imports python-chess, :mod:`lichessbot.score` and the tablebase convention of :mod:`lichessbot.tablebase`.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from lichessbot.score import Score
from lichessbot.tablebase import TB_CP

__all__ = ["EXPLORER", "CHESSDB", "CLOUD", "EGTB", "OnlineMove", "WDL_WORDS", "tablebase_score"]

#: Source names: the config keys under ``online_moves``.
CHESSDB, CLOUD, EXPLORER, EGTB = "chessdb_book", "lichess_cloud_analysis", "lichess_opening_explorer", "online_egtb"

#: A tablebase verdict in words, by WDL (2 win ... -2 loss, under the 50-move rule).
WDL_WORDS = {2: "win", 1: "cursed win", 0: "draw", -1: "blessed loss", -2: "loss"}


@dataclass(frozen=True)
class OnlineMove:
    """What one online source answered for the side to move (every score is the side to move's view).

    Attributes:
        source: the config key of the source (``chessdb_book``, ``lichess_cloud_analysis``,
            ``lichess_opening_explorer``, ``online_egtb``).
        note: for the PGN comment, chat, the eval line and the status page, e.g. ``"explorer: masters,
            1,234 games"`` or ``"tablebase win, DTZ 15"``.
        move: the move to play; None when the answer is ``search_moves`` (online_egtb ``suggest``).
        search_moves: online_egtb ``suggest``: the legal moves (two or more) that keep the table's
            result; the search must choose among them. Empty otherwise.
        cp: centipawns when the source gives them (cloud eval, chessdb's analysed line).
        mate: moves to mate when the source gives them (> 0: the side to move mates).
        depth: the source's search depth (cloud eval, chessdb ``best``), plies.
        wdl: tablebases: 2 win, 1 cursed win, 0 draw, -1 blessed loss, -2 loss after the move.
        dtz: tablebases: plies to the next zeroing move (DTZ50'', lichess's rounding), when known.
    """

    source: str
    note: str
    move: chess.Move | None
    search_moves: tuple[chess.Move, ...] = ()
    cp: int | None = None
    mate: int | None = None
    depth: int | None = None
    wdl: int | None = None
    dtz: int | None = None
    #: The source's ``trust_eval`` (BotLi): ``cp`` counts for draw offers and resignation.
    trusted: bool = False

    @property
    def score(self) -> Score | None:
        """The verdict as a :class:`~lichessbot.score.Score` where the source gives an exact one (the
        tablebases, as :class:`lichessbot.tablebase.TablebaseMove` does: ``cp = 20000 - DTZ`` for a win,
        its negative for a loss, 0 otherwise); None for books and cloud evals (centipawns only: ``cp``)."""
        return None if self.wdl is None else tablebase_score(self.wdl, self.dtz)


def tablebase_score(wdl: int, dtz: int | None) -> Score:
    """A tablebase verdict as a Score: (1, 0, 0) for a win, (0, 0, 1) for a loss, a draw otherwise
    (cursed wins and blessed losses are draws under the 50-move rule)."""
    plies = abs(dtz) if dtz is not None else 0
    if wdl == 2:
        return Score(cp=TB_CP - plies, wdl=(1.0, 0.0, 0.0))
    if wdl == -2:
        return Score(cp=-(TB_CP - plies), wdl=(0.0, 0.0, 1.0))
    return Score(cp=0, wdl=(0.0, 1.0, 0.0))
