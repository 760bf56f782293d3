"""Takebacks in the test server, as lila plays them for the Bot API (lichess API spec
``POST /api/bot/game/{gameId}/takeback/{accept}``, ``accept`` yes or no; the offer shows in the game
stream's ``gameState`` as ``wtakeback``/``btakeback``, omitted when false).

:meth:`TakebackRoutes.propose_takeback` makes the opponent ask; the bot's yes takes back the opponent's last
move (and our reply to it, when we have moved since), no withdraws the offer. An answer without an offer is
a 400."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

__all__ = ["TakebackRoutes"]


class TakebackRoutes:
    """Mixin of :class:`lichessbot.fakelichess.routes.Routes` (methods with ``_locked`` run under its lock)."""

    lock: threading.RLock
    games: dict[str, Any]
    if TYPE_CHECKING:
        def _game_push(self, g: Any, obj: Any) -> None: ...
        def _state(self, g: Any) -> dict[str, Any]: ...
        def _maybe_opponent(self, g: Any, delay: float | None = None) -> None: ...

    def propose_takeback(self, game_id: str) -> None:
        """The opponent offers a takeback of its last move (sent at once in a ``gameState``)."""
        with self.lock:
            g = self.games[game_id]
            g.opp_takeback = True
            self._game_push(g, self._state(g))

    def _takeback_locked(self, h: Any, g: Any, answer: str) -> None:
        if not g.opp_takeback or g.over or answer not in ("yes", "no"):
            return h.reply(400, {"error": "No takeback to answer"})
        g.opp_takeback = False
        if answer == "yes":
            g.takebacks += 1
            opp_to_move = (g.board.turn == (g.bot_color != "white"))  # we moved after the opponent's move
            for _ in range(2 if opp_to_move else 1):
                if g.board.move_stack:
                    g.board.pop()
        h.reply(200, {"ok": True})
        self._game_push(g, self._state(g))
        self._maybe_opponent(g)
        return None
