"""The opponent's takeback offers, answered by ``max_takebacks_accepted`` (lichess-bot's key and meaning:
how many takebacks the opponent may have in one game; 0: none).

lichess shows an offer in the game stream's ``gameState`` as ``wtakeback``/``btakeback`` (lila
BotJsonView); the answer is ``POST /api/bot/game/{id}/takeback/{yes|no}`` (lichess API spec). An accepted
takeback shortens the game's moves: :func:`reopen` forgets what the game decided for the plies taken back,
so the bot thinks again there.
"""

from __future__ import annotations

from typing import Any

import chess

from lichessbot.lichess.client import LichessClient, LichessError
from lichessbot.lichess.events import GameState

__all__ = ["Takebacks", "reopen"]


class Takebacks:
    """One game's takeback answers: ``limit`` accepted at most (``max_takebacks_accepted``); each offer is
    answered once (an offer stays in every ``gameState`` until it is answered)."""

    def __init__(self, client: LichessClient, game_id: str, limit: int, log: Any):
        self.client, self.game_id, self.limit, self.log = client, game_id, limit, log
        self.accepted = 0
        self._answered: str | None = None  # the moves of the position whose offer we answered

    def on_state(self, state: GameState, color: chess.Color | None) -> bool:
        """Answer the opponent's offer in ``state``, if any (never one of ours: we make none). True: a
        takeback was accepted (the game makes no move in this position: lichess takes it back)."""
        offered = state.btakeback if color == chess.WHITE else state.wtakeback if color == chess.BLACK else False
        if not offered or not state.running or self._answered == state.moves:
            return False
        self._answered = state.moves
        accept = self.accepted < self.limit
        try:
            self.client.answer_takeback(self.game_id, accept)
        except LichessError as err:  # the offer may be gone meanwhile; a new state brings it back if not
            self._answered = None
            self.log.warning("takeback answer failed", error=str(err))
            return False
        self.accepted += accept
        self.log.info("takeback", accepted=accept, taken=self.accepted, max_takebacks_accepted=self.limit)
        return accept


def reopen(plies: int, board: chess.Board | None, *done: Any) -> None:
    """After a takeback (``plies`` now fewer than ``board`` had): forget the plies from ``plies`` on in each
    of ``done`` (sets or dicts keyed by ply: what was decided and posted there)."""
    if board is None or plies >= len(board.move_stack):
        return
    for seen in done:
        for ply in [p for p in seen if p >= plies]:
            seen.discard(ply) if isinstance(seen, set) else seen.pop(ply)
