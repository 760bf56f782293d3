"""``lichessbot play --local``'s terminal for a person who plays: one plain line when a game starts and one when
it ends (the log stays off the terminal unless ``--log-level`` is given; ``--log-file`` keeps it as JSON lines).

A game started: ``game AbCd1234 started: alice (white) vs lichessbot (black), 5+3 casual, http://127.0.0.1:8080/AbCd1234``.
A game ended: ``game AbCd1234 ended 0-1: White resigned`` (the words of the page's result, lila's status names)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from lichessbot.local import LocalLichess
from lichessbot.local.export import result
from lichessbot.local.model import Game

__all__ = ["GameLines", "ended_line", "started_line"]

#: Seconds between two looks at the server's games when nothing wakes the watcher.
POLL_S = 0.5
#: A game's end in words, ``{loser}``: the side to move or the side that lost (lila's status names, the page's
#: words; lichess-org/api GameStatusName.yaml).
_ENDS = {"mate": "checkmate", "resign": "{loser} resigned", "stalemate": "stalemate",
         "timeout": "{loser} left the game", "draw": "draw", "outoftime": "{loser} ran out of time",
         "aborted": "aborted",
         "noStart": "{loser} did not play a first move", "variantEnd": "variant ending", "cheat": "cheat detected"}


def _clock(g: Game) -> str:
    if not g.has_clock:
        return f"{g.days} days a move" if g.days else "no clock"
    return f"{g.initial_ms / 60000:g}+{g.increment_ms // 1000}"


def started_line(g: Game, url: str) -> str:
    """The line for ``g``'s start (``url``: the server's address)."""
    return (f"game {g.id} started: {g.white.account.username} (white) vs {g.black.account.username} (black), "
            f"{_clock(g)} {'rated' if g.rated else 'casual'}, {url}/{g.id}")


def ended_line(g: Game) -> str:
    """The line for ``g``'s end."""
    if g.winner:
        loser = "Black" if g.winner == "white" else "White"
    else:
        loser = "White" if g.board.turn else "Black"
    why = _ENDS.get(g.status, g.status).format(loser=loser)
    return f"game {g.id} ended {result(g.status, g.winner)}: {why}"


class GameLines:
    """Watches ``server``'s games in a thread and hands ``say`` a line at each start and end (:meth:`start`,
    :meth:`stop`)."""

    def __init__(self, server: LocalLichess, say: Callable[[str], Any]) -> None:
        self.server, self.say = server, say
        self._seen: dict[str, bool] = {}  # game id -> over, as last said
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="game-lines", daemon=True)

    def start(self) -> GameLines:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self.server.changed:
            self.server.changed.notify_all()
        self._thread.join(2)

    def _run(self) -> None:
        while not self._stop.is_set():
            lines: list[str] = []
            with self.server.changed:
                for g in list(self.server.games.values()):
                    said = self._seen.get(g.id)
                    if said is None:
                        lines.append(started_line(g, self.server.url))
                    if g.over and not said:
                        lines.append(ended_line(g))
                    self._seen[g.id] = g.over
                self.server.changed.wait(POLL_S)
            for line in lines:
                self.say(line)
