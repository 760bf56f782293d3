"""The opponent's takeback offers, answered by ``max_takebacks_accepted`` (lichess-bot's key and meaning:
how many takebacks the opponent may have in one game; 0: none). :class:`Takebacks` is pure: the game's shell
posts the answer and writes the :class:`TakebackLedger` (the core's :class:`~lichessbot.bot.games.actions.CountTakeback`
and :class:`~lichessbot.bot.games.actions.ForgetTakebacks`).

lichess shows an offer in the game stream's ``gameState`` as ``wtakeback``/``btakeback`` (lila
BotJsonView); the answer is ``POST /api/bot/game/{id}/takeback/{yes|no}`` (lichess API spec), and lila
answers 200 whatever happened. As lila reads them (round ``Takebacker``):

* ``yes`` **without a pending offer of the opponent is our own proposal**: an answer is given only for an
  offer of the current state, once, never retried (a lost answer is given again only if the next state still
  shows the offer), and never from a state the shell knows to be stale; a proposal of ours lichess shows
  anyway (``wtakeback`` for white...) is withdrawn with ``no`` at once;
* a takeback happens only if both players' takeback preferences allow it (``IfAllowed``), and lila sets a
  bot's preference to "never" when the account is upgraded (pref ``PrefApi.setBot``): for
  ``max_takebacks_accepted`` to mean anything the operator sets "Takebacks" on lichess.org (docs/bot.md);
* never in arena, swiss or simul games: offers there are declined.

An accepted takeback shortens the game's moves (:func:`taken_back`): the game forgets what it decided for
the plies taken back, so the bot thinks again there. The count accepted in each game survives a restart
(:class:`TakebackLedger`, ``takebacks.json`` in ``state_directory``, made with its directory at the first
takeback accepted).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import chess
import structlog

from lichessbot.files import write_atomic
from lichessbot.lichess.events import GameState

__all__ = ["LEDGER_FILE", "TakebackLedger", "Takebacks", "taken_back"]

log = structlog.get_logger("lichessbot.game")

#: The ledger's file name in ``state_directory``.
LEDGER_FILE = "takebacks.json"


class TakebackLedger:
    """Takebacks accepted per running game (game id -> count), kept in ``path`` (None: memory only) so that a
    restart does not give the opponent ``max_takebacks_accepted`` more. The file's directory is made at the first
    write (a first run starts without one). Thread-safe; a file that cannot be read or written is logged and the
    bot plays on with the counts in memory."""

    def __init__(self, path: str | None = None):
        self.path = path
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        if path is not None and os.path.exists(path):
            try:
                data = json.loads(Path(path).read_text(encoding="utf-8"))
                self._counts = {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}
            except (OSError, ValueError) as err:
                log.warning("takeback ledger not read", path=path, error=str(err))

    def count(self, game_id: str) -> int:
        with self._lock:
            return self._counts.get(game_id, 0)

    def add(self, game_id: str) -> None:
        """One more takeback accepted in ``game_id``."""
        with self._lock:
            self._counts[game_id] = self._counts.get(game_id, 0) + 1
            self._save()

    def forget(self, game_id: str) -> None:
        """The game is over: its count goes."""
        with self._lock:
            if self._counts.pop(game_id, None) is not None:
                self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, json.dumps(self._counts))
        except OSError as err:
            log.warning("takeback ledger not saved", path=self.path, error=str(err))


class Takebacks:
    """One game's takeback answers: ``limit`` accepted at most (``max_takebacks_accepted``), ``accepted`` of them
    before a restart (the ledger's count, read by the shell); each offer is answered once. An offer stays in every
    ``gameState`` until it is answered, also across the proposer's own moves (lila declines only the opponent's
    proposal with a move: round ``MovePlayer.postHumanOrBotPlay``), so an offer is the same offer until a state
    shows it gone. No I/O: the ledger's writes are the shell's."""

    def __init__(self, limit: int, game_id: str = "", accepted: int = 0) -> None:
        self.limit, self.game_id = limit, game_id
        self.accepted = accepted
        self._answered = False  # the offer shown now was answered (a state without it clears this)
        self._withdrawn: str | None = None  # the moves of the position where we withdrew a proposal of ours
        self.no_takebacks = False  # arena, swiss or simul: offers are declined

    def answer(self, state: GameState, color: chess.Color | None) -> bool | None:
        """The answer to the opponent's offer in ``state`` (True: accept, while fewer than ``limit`` were), False
        to withdraw a proposal of ours lichess shows (we make none), or None when there is nothing to answer (no
        offer, or one answered already)."""
        if color is None or not state.running:
            return None
        ours = state.wtakeback if color == chess.WHITE else state.btakeback
        offered = state.btakeback if color == chess.WHITE else state.wtakeback
        if ours and self._withdrawn != state.moves:
            self._withdrawn = state.moves
            log.warning("withdrawing a takeback proposal of ours", game_id=self.game_id,
                        reason="a takeback yes without the opponent's offer proposes one (lila Takebacker.yes)")
            return False
        if not offered:
            self._answered = False
            return None
        if self._answered:
            return None
        self._answered = True
        return not self.no_takebacks and self.accepted < self.limit

    def posted(self, accept: bool, ok: bool) -> bool:
        """The answer was posted (``ok``), or its post failed: the offer may be gone meanwhile, and if it is
        not, the next state brings it back and it is answered again. True: one more takeback accepted (the
        ledger's count goes up)."""
        if not ok:
            self._answered = False
            return False
        if accept:
            self.accepted += 1
        return accept


def taken_back(plies: int, board: chess.Board | None) -> bool:
    """Whether a state of ``plies`` plies takes moves back from ``board`` (the game's board before it)."""
    return board is not None and plies < len(board.move_stack)
