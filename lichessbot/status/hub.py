"""The snapshots the bot publishes for the status page, and the hub that holds them.

Writers (the service loop, game threads, search threads through the thinker) replace a whole frozen
snapshot under the hub's lock: a publish is one dict assignment, so a game never waits on the web
server. Readers (the web server) take references to the frozen snapshots under the same lock and build
their JSON outside it. Nothing here knows the search: a live search arrives as plain numbers.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["GameSnapshot", "LiveSearch", "PlyEval", "SearchLine", "StatusHub"]


@dataclass(frozen=True)
class SearchLine:
    """One root move of a running search.

    Attributes:
        move: UCI of the root move.
        visits: visits (N) of the move.
        policy: the network's prior for the move (fraction, 0..1).
        q: expected score W - L of the move (-1..1), the searching side's view.
        draw: draw probability (0..1).
        pv: the principal variation starting with ``move`` (UCI).
    """

    move: str
    visits: int
    policy: float
    q: float
    draw: float
    pv: tuple[str, ...] = ()


@dataclass(frozen=True)
class LiveSearch:
    """The latest figures of one game's search (the one running, or the last one).

    Attributes:
        ply: plies played before the searched position (0: the initial position).
        pondering: True while it searches on the opponent's time.
        done: True once the search has returned its move.
        elapsed: seconds since the search started.
        nodes: nodes of the root (reused ones included); nps: playouts per second.
        depth: mean depth (plies); seldepth: deepest line (plies).
        cp: centipawns of the best move, the searching side's view; mate: moves to mate or None.
        wdl: win/draw/loss probabilities of the best move (fractions), the searching side's view.
        lines: the root moves, most visited first (at most ``LINES``).
        at: Unix time (seconds) of these figures.
    """

    ply: int
    pondering: bool
    done: bool
    elapsed: float
    nodes: int
    nps: float
    depth: float
    seldepth: int
    cp: int | None
    mate: int | None
    wdl: tuple[float, float, float]
    lines: tuple[SearchLine, ...]
    at: float = field(default_factory=time.time)

    #: Root moves kept per snapshot.
    LINES = 8


@dataclass(frozen=True)
class PlyEval:
    """Our evaluation after our move at ``ply``, white's view: ``cp`` centipawns or ``mate`` moves; ``source``
    where the move came from (``book``, ``online_book``, ``tablebase``, ``online_tablebase``, ``search``) and
    ``note`` its words ("explorer: masters, 1,234 games", "tablebase win, DTZ 15"; "" for a plain search)."""

    ply: int
    cp: int | None
    mate: int | None
    source: str
    note: str = ""


@dataclass(frozen=True)
class GameSnapshot:
    """One game as the page shows it. Clocks in milliseconds; times are Unix seconds.

    Attributes:
        game_id, url: the game on lichess.
        white, black: names; white_rating, black_rating: ratings or None.
        our_color: "white", "black" or None (not known yet).
        speed, rated, variant: as lichess gives them.
        initial_fen: the start position; moves: every move played (UCI).
        wtime, btime, winc, binc: the clocks as lichess sent them, ms (None: no clock).
        clock_at: Unix seconds when lichess's clock values were read.
        clock_running: True when the side to move's clock runs (lichess: from each side's second move on).
        status, winner: lichess's game status ("started", "mate", ...) and "white"/"black"/None.
        over: True once the game ended.
        evals: our searched evaluations, by ply.
        live: the latest search of this game, or None.
        updated_at: Unix seconds of this snapshot.
    """

    game_id: str
    url: str
    white: str = "?"
    black: str = "?"
    white_rating: int | None = None
    black_rating: int | None = None
    our_color: str | None = None
    speed: str = ""
    rated: bool = False
    variant: str = "standard"
    initial_fen: str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    moves: tuple[str, ...] = ()
    wtime: int | None = None
    btime: int | None = None
    winc: int = 0
    binc: int = 0
    clock_at: float = 0.0
    clock_running: bool = False
    status: str = "started"
    winner: str | None = None
    over: bool = False
    evals: tuple[PlyEval, ...] = ()
    live: LiveSearch | None = None
    updated_at: float = field(default_factory=time.time)


def _our_result(snap: GameSnapshot) -> str:
    """"win", "draw" or "loss" of a game that ended (aborted games are not counted)."""
    if snap.winner is None or snap.our_color is None:
        return "draw"
    return "win" if snap.winner == snap.our_color else "loss"


class StatusHub:
    """Thread-safe store of the latest snapshots; ``version`` grows with every publish.

    Args:
        keep_finished: finished games kept for the page (the oldest goes first).
    """

    #: Recent challenge verdicts kept.
    CHALLENGES = 20

    def __init__(self, keep_finished: int = 20) -> None:
        self._lock = threading.Lock()  # guards every field below
        self._games: OrderedDict[str, GameSnapshot] = OrderedDict()
        self._service: dict[str, Any] = {}
        self._keep = keep_finished
        self._challenges: deque[dict[str, Any]] = deque(maxlen=self.CHALLENGES)
        self._verdicts = {"accepted": 0, "declined": 0}
        self._results: dict[str, dict[str, int]] = {}  # UTC date -> {"win", "draw", "loss"}: games ended that day
        self.started_at = time.time()
        self.service_at = 0.0  # Unix time of the last publish_service (0: never)
        self.version = 0

    def publish_game(self, snap: GameSnapshot) -> None:
        """Replace the snapshot of ``snap.game_id`` (its live search is kept when ``snap.live`` is None)."""
        with self._lock:
            old = self._games.get(snap.game_id)
            if snap.over and (old is None or not old.over) and snap.status not in ("aborted", "noStart"):
                day = self._results.setdefault(time.strftime("%Y-%m-%d", time.gmtime(snap.updated_at)),
                                               {"win": 0, "draw": 0, "loss": 0})
                day[_our_result(snap)] += 1
            if snap.live is None and old is not None and old.live is not None:
                snap = replace(snap, live=old.live)
            self._games[snap.game_id] = snap
            self._games.move_to_end(snap.game_id)
            finished = [gid for gid, g in self._games.items() if g.over]
            for gid in finished[:max(0, len(finished) - self._keep)]:
                del self._games[gid]
            self.version += 1

    def publish_live(self, game_id: str, live: LiveSearch) -> None:
        """Set the live search of a game already published (ignored otherwise)."""
        with self._lock:
            old = self._games.get(game_id)
            if old is None:
                return
            self._games[game_id] = replace(old, live=live)
            self.version += 1

    def publish_service(self, figures: dict[str, Any]) -> None:
        """Replace the service's figures (plain JSON-able values; never a token)."""
        with self._lock:
            self.service_at = time.time()
            if figures != self._service:
                self._service = dict(figures)
                self.version += 1

    def note_challenge(self, challenge_id: str, challenger: str, speed: str | None, accepted: bool,
                       reason: str | None, why: str | None) -> None:
        """Count a challenge verdict and keep it among the recent ones (``reason``: lichess's decline key)."""
        with self._lock:
            self._verdicts["accepted" if accepted else "declined"] += 1
            self._challenges.append({"id": challenge_id, "challenger": challenger, "speed": speed,
                                     "accepted": accepted, "reason": reason, "why": why, "at": time.time()})
            self.version += 1

    def results_today(self) -> dict[str, int]:
        """Our wins, draws and losses in the games that ended today (UTC)."""
        with self._lock:
            return dict(self._results.get(time.strftime("%Y-%m-%d", time.gmtime()), {"win": 0, "draw": 0, "loss": 0}))

    def challenges(self) -> dict[str, Any]:
        """``{"accepted": n, "declined": n, "recent": [verdict, ...]}`` (newest last)."""
        with self._lock:
            return {**self._verdicts, "recent": list(self._challenges)}

    def games(self) -> list[GameSnapshot]:
        """Every game kept, oldest first."""
        with self._lock:
            return list(self._games.values())

    def game(self, game_id: str) -> GameSnapshot | None:
        with self._lock:
            return self._games.get(game_id)

    def service(self) -> dict[str, Any]:
        with self._lock:
            return dict(self._service)
