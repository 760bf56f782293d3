"""The opponent's takeback offers, answered by ``max_takebacks_accepted`` (lichess-bot's key and meaning:
how many takebacks the opponent may have in one game; 0: none). Pure: the game's shell posts the answer.

lichess shows an offer in the game stream's ``gameState`` as ``wtakeback``/``btakeback`` (lila
BotJsonView); the answer is ``POST /api/bot/game/{id}/takeback/{yes|no}`` (lichess API spec). An accepted
takeback shortens the game's moves (:func:`taken_back`): the game forgets what it decided for the plies
taken back, so the bot thinks again there.
"""

from __future__ import annotations

import chess

from lichessbot.lichess.events import GameState

__all__ = ["Takebacks", "taken_back"]


class Takebacks:
    """One game's takeback answers: ``limit`` accepted at most (``max_takebacks_accepted``); each offer is
    answered once (an offer stays in every ``gameState`` until it is answered)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.accepted = 0
        self._answered: str | None = None  # the moves of the position whose offer we answer

    def answer(self, state: GameState, color: chess.Color | None) -> bool | None:
        """The answer to the opponent's offer in ``state`` (True: accept, while fewer than ``limit`` were), or
        None when there is none to answer (no offer, one of ours: we make none, or one answered already)."""
        offered = state.btakeback if color == chess.WHITE else state.wtakeback if color == chess.BLACK else False
        if not offered or not state.running or self._answered == state.moves:
            return None
        self._answered = state.moves
        return self.accepted < self.limit

    def posted(self, accept: bool, ok: bool) -> None:
        """The answer was posted (``ok``), or its post failed: the offer may be gone meanwhile, and if it is
        not, the next state brings it back and it is answered again."""
        if ok:
            self.accepted += accept
        else:
            self._answered = None


def taken_back(plies: int, board: chess.Board | None) -> bool:
    """Whether a state of ``plies`` plies takes moves back from ``board`` (the game's board before it)."""
    return board is not None and plies < len(board.move_stack)
