"""Gaviota endgame tablebases at the root (config ``tablebases.gaviota``, lichess-bot's
``lichess_bot_tbs.gaviota``), read with python-chess (``chess.gaviota``: the native libgtb when it is
installed, its pure-Python reader otherwise).

Gaviota tables give the distance to mate (DTM, plies; python-chess ``probe_dtm``: positive when the side to
move mates, 0 for a draw), not the distance to the next capture or pawn move, so they cannot tell a win
from a win the 50-move rule spoils. Each legal move is scored by the DTM after it plus the position's
50-move counter (``plies``, our view) and read as a WDL the way lichess-bot reads it (its
``engine.lichess_bot_tbs.gaviota.min_dtm_to_consider_as_wdl_1``):

* a win in fewer than ``min_dtm_to_consider_as_wdl_1`` plies (120 by default) is a win (2); longer, a
  possible cursed win (1);
* a loss in fewer than 100 plies is a loss (-2) (mate comes before the 50-move rule can); longer, a
  possible blessed loss (-1);
* 0 is a draw.

``best`` plays the move of the best WDL that mates fastest when winning and resists longest when losing
(the first such move otherwise); ``suggest`` hands the search every move of the best WDL (one such move is
played at once). Asked after the Syzygy tables (lichess-bot's order), for standard positions with at most
``max_pieces`` pieces (Gaviota tables stop at 5) and no castling rights.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import chess
import chess.gaviota
import structlog

from lichessbot.config.engine import GaviotaConfig
from lichessbot.errors import LichessbotError
from lichessbot.score import Score
from lichessbot.tablebase import TB_CP

__all__ = ["DtmProbe", "GaviotaError", "GaviotaMove", "GaviotaTables", "gaviota_tables", "move_wdl"]

log = structlog.get_logger(__name__)

#: Plies of the 50-move rule (FIDE 9.3).
RULE50 = 100
#: (W, D, L) of each WDL (cursed wins and blessed losses count as draws).
_TRIPLES = {2: (1.0, 0.0, 0.0), 1: (0.0, 1.0, 0.0), 0: (0.0, 1.0, 0.0), -1: (0.0, 1.0, 0.0), -2: (0.0, 0.0, 1.0)}
_WORDS = {2: "win", 1: "cursed win", 0: "draw", -1: "blessed loss", -2: "loss"}


class GaviotaError(LichessbotError, ValueError):
    """Gaviota paths that cannot be used: the message names the config key and the reason."""


class DtmProbe(Protocol):
    """What probes the tables (python-chess's ``NativeTablebase`` and ``PythonTablebase`` have it)."""

    def probe_dtm(self, board: chess.Board) -> int:
        """Plies to mate with best play (> 0: the side to move mates; 0: a draw). Raises KeyError when the
        position's table is missing."""
        ...


def move_wdl(plies: int, halfmove_clock: int, min_dtm_to_consider_as_wdl_1: int) -> int:
    """Our WDL after a move whose DTM is ``plies`` (our view: > 0 we mate, < 0 we are mated, 0 a draw) with the
    position's ``halfmove_clock`` (see the module docstring for the rule and its source)."""
    if plies == 0:
        return 0
    adjusted = abs(plies) + halfmove_clock
    if plies > 0:
        return 2 if adjusted < min_dtm_to_consider_as_wdl_1 else 1
    return -2 if adjusted < RULE50 else -1


@dataclass(frozen=True)
class GaviotaMove:
    """The tables' choice at the root, our view.

    Attributes:
        moves: the move to play (one), or with ``suggest`` every move that keeps the best WDL (two or more).
        wdl: 2 win ... -2 loss (:func:`move_wdl`).
        plies: plies to mate after ``moves[0]`` counted from the root (> 0 we mate; 0 a draw).
    """

    moves: tuple[chess.Move, ...]
    wdl: int
    plies: int

    @property
    def score(self) -> Score:
        """The verdict as a :class:`~lichessbot.score.Score`: a mate in moves for a decisive 2/-2, else a
        draw (``cp 20000 - plies`` for a win, as the Syzygy root gives)."""
        if self.wdl == 2:
            return Score(cp=TB_CP - self.plies, wdl=_TRIPLES[2], mate=(self.plies + 1) // 2)
        if self.wdl == -2:
            return Score(cp=-(TB_CP - abs(self.plies)), wdl=_TRIPLES[-2], mate=-((abs(self.plies) + 1) // 2))
        return Score(cp=0, wdl=_TRIPLES[self.wdl])

    def describe(self) -> str:
        """``gaviota win, mate in 7`` (for chat, logs, the PGN and UCI ``info string``)."""
        if len(self.moves) > 1:
            return f"gaviota {_WORDS[self.wdl]}: {len(self.moves)} moves keep it"
        if self.wdl in (2, -2):
            return f"gaviota {_WORDS[self.wdl]}, mate in {(abs(self.plies) + 1) // 2}"
        return f"gaviota {_WORDS[self.wdl]}"


def _check_dirs(paths: Sequence[str], key: str) -> list[str]:
    if not paths:
        raise GaviotaError(f"{key}: no directories given")
    out = []
    for p in paths:
        d = Path(p).expanduser()
        if not d.is_dir():
            raise GaviotaError(f"{key}: {p} does not exist or is not a directory")
        if not any(f.name.endswith(".gtb.cp4") for f in d.iterdir()):
            raise GaviotaError(f"{key}: {p} holds no Gaviota tables (*.gtb.cp4)")
        out.append(str(d))
    return out


class GaviotaTables:
    """The Gaviota tables of the process (thread-safe: one probe at a time).

    Args:
        paths: directories of ``*.gtb.cp4`` files.
        max_pieces: probe positions with at most this many pieces (Gaviota: 3 to 5).
        move_quality: ``best`` or ``suggest``.
        min_dtm_to_consider_as_wdl_1: see :func:`move_wdl`.
        key: the config key named in errors.
        probe: the prober (tests); default: python-chess's ``chess.gaviota.open_tablebase`` on ``paths``.

    Raises:
        GaviotaError: a path does not exist or holds no tables.
    """

    def __init__(self, paths: Sequence[str], *, max_pieces: int = 5, move_quality: str = "best",
                 min_dtm_to_consider_as_wdl_1: int = 120, key: str = "tablebases.gaviota.paths",
                 probe: DtmProbe | None = None) -> None:
        self.max_pieces, self.move_quality = max_pieces, move_quality
        self.min_dtm = min_dtm_to_consider_as_wdl_1
        self._lock = threading.Lock()
        self._broken = False
        if probe is None:
            dirs = _check_dirs(paths, key)
            tb = chess.gaviota.open_tablebase(dirs[0])
            for d in dirs[1:]:
                tb.add_directory(d)
            probe = tb
        self._probe: DtmProbe = probe

    def covers(self, board: chess.Board) -> bool:
        return (not self._broken and type(board) is chess.Board and not board.chess960 and not board.castling_rights
                and chess.popcount(board.occupied) <= self.max_pieces)

    def root_move(self, board: chess.Board) -> GaviotaMove | None:
        """The tables' move (or moves, ``suggest``) for ``board``, or None: not covered, a table missing, or the
        tables failing (logged once; probing is then off for good)."""
        if not self.covers(board) or not any(board.legal_moves):
            return None
        try:
            with self._lock:
                return self._choose(board.copy(stack=False))
        except KeyError:  # a table of this material is missing
            return None
        except Exception as err:  # noqa: BLE001 - a corrupt table: python-chess gives no narrower error
            first, self._broken = not self._broken, True
            if first:
                log.error("gaviota probe failed; gaviota tables disabled", error=repr(err), fen=board.fen())
            return None

    def _choose(self, board: chess.Board) -> GaviotaMove:
        scored: list[tuple[chess.Move, int, int]] = []  # (move, wdl, plies our view)
        for move in board.legal_moves:
            board.push(move)
            try:
                if board.is_checkmate():
                    plies = 1
                elif board.is_stalemate() or board.is_insufficient_material():
                    plies = 0
                else:
                    theirs = self._probe.probe_dtm(board)  # the opponent's view, plies from after our move
                    plies = 0 if theirs == 0 else (1 - theirs if theirs < 0 else -(theirs + 1))
            finally:
                board.pop()
            scored.append((move, move_wdl(plies, board.halfmove_clock, self.min_dtm), plies))
        best_wdl = max(w for _, w, _ in scored)
        keep = [s for s in scored if s[1] == best_wdl]
        # wins: the fastest mate; losses: the longest resistance; draws: as generated
        keep.sort(key=lambda s: s[2] if s[2] > 0 else -abs(s[2]) if s[2] < 0 else 0)
        if best_wdl < 0:
            keep.sort(key=lambda s: -abs(s[2]))
        if self.move_quality == "suggest" and len(keep) > 1:
            return GaviotaMove(tuple(m for m, _, _ in keep), best_wdl, keep[0][2])
        return GaviotaMove((keep[0][0],), best_wdl, keep[0][2])


def gaviota_tables(config: GaviotaConfig) -> GaviotaTables | None:
    """The tables of ``tablebases.gaviota`` when it is enabled, else None. Raises :class:`GaviotaError`."""
    if not config.enabled:
        return None
    return GaviotaTables(config.paths, max_pieces=config.max_pieces, move_quality=config.move_quality,
                         min_dtm_to_consider_as_wdl_1=config.min_dtm_to_consider_as_wdl_1)
