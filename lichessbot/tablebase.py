"""Syzygy endgame tablebases: the move at the root, and the tables the search probes (docs/tablebases.md).

At the root (bot and UCI, before any search) the position is probed through python-chess's
``chess.syzygy``: among the moves that keep the best WDL under the 50-move rule the one by DTZ is
played at once (winning: the fastest conversion, i.e. the smallest DTZ; losing: the longest
resistance), like lc0's root filter (lc0 src/syzygy/syzygy.cc ``root_probe``, from Stockfish).
Inside the search the Rust core probes the same directories (``lichessbot._core.Tablebases``, shakmaty-
syzygy) when it expands a node (lc0 src/search/classic/search.cc ``ExtendNode``).

A tablebase score is reported as Stockfish does (src/uci.cpp ``to_score``): ``cp 20000 - plies`` for a
win (plies: the DTZ of the move played), its negative for a loss, ``cp 0`` for a draw; the WDL triple is
exact.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import chess
import chess.syzygy
import structlog

from lichessbot import _core
from lichessbot.errors import LichessbotError
from lichessbot.score import Score

if TYPE_CHECKING:
    from lichessbot.config import TablebaseConfig

__all__ = ["TB_CP", "TablebaseError", "TablebaseMove", "Tablebases", "split_path"]

_log = structlog.get_logger(__name__)

#: Centipawns of a tablebase win with 0 plies to conversion (Stockfish src/uci.cpp ``to_score``, TB_CP).
TB_CP = 20_000

#: The 50-move rule in plies (FIDE 9.3; Syzygy's DTZ50'' counts against it).
_RULE50 = 100

#: (W, D, L) of each WDL value under the 50-move rule (cursed wins and blessed losses are draws).
_TRIPLES = {2: (1.0, 0.0, 0.0), 1: (0.0, 1.0, 0.0), 0: (0.0, 1.0, 0.0), -1: (0.0, 1.0, 0.0), -2: (0.0, 0.0, 1.0)}
_WORDS = {2: "win", 1: "cursed win (draw by the 50-move rule)", 0: "draw",
          -1: "blessed loss (draw by the 50-move rule)", -2: "loss"}


class TablebaseError(LichessbotError, ValueError):
    """Tablebase paths that cannot be used: the message names the config key and the reason."""


@dataclass(frozen=True)
class TablebaseMove:
    """The move the tables choose at the root, from the root side to move's view.

    Attributes:
        move: the move to play.
        wdl: 2 win, 1 cursed win, 0 draw, -1 blessed loss, -2 loss, after this move and with the
            position's 50-move counter.
        dtz: plies from the root to the next zeroing move (capture, pawn move, mate) with best play
            (0 when the move mates), python-chess's DTZ50'' (it may be one ply short).
        cp: centipawns (Stockfish's TB convention, see :data:`TB_CP`).
        mate: 1 when ``move`` mates, else None.
        candidates: the legal moves and how many of them keep the best WDL.
        keep: the moves that keep the best WDL (``move`` among them), in move generation order.
    """

    move: chess.Move
    wdl: int
    dtz: int
    cp: int
    mate: int | None
    candidates: tuple[int, int] = (0, 0)
    keep: tuple[chess.Move, ...] = ()

    @property
    def wdl_triple(self) -> tuple[float, float, float]:
        """(W, D, L) fractions for the bot and UCI ``wdl``."""
        return _TRIPLES[self.wdl]

    @property
    def score(self) -> Score:
        """The verdict as a :class:`~lichessbot.score.Score` (root side to move's view)."""
        return Score(cp=self.cp, wdl=self.wdl_triple, mate=self.mate)

    def describe(self) -> str:
        """``tablebase win, DTZ 13`` (for chat, logs and UCI ``info string``)."""
        if self.mate is not None:
            return "tablebase win, mate in 1"
        return f"tablebase {_WORDS[self.wdl]}, DTZ {self.dtz}"


def split_path(text: str) -> list[str]:
    """Directories of a UCI ``SyzygyPath`` (lc0: separated by ``:`` on Unix, ``;`` on Windows)."""
    return [p for p in text.split(os.pathsep) if p.strip()]


def _count_pieces(stem: str) -> int:
    return sum(1 for c in stem if c.isalpha() and c != "v")


def _check_dirs(paths: list[str], key: str) -> int:
    """The most pieces of the tables in ``paths``; TablebaseError for a bad path."""
    if not paths:
        raise TablebaseError(f"{key}: no directories given")
    top = 0
    for p in paths:
        d = Path(p).expanduser()
        if not d.is_dir():
            raise TablebaseError(f"{key}: {p} does not exist or is not a directory")
        stems = [f.stem for f in d.iterdir() if f.suffix == ".rtbw"]
        if not stems:
            raise TablebaseError(f"{key}: {p} holds no Syzygy tables (*.rtbw)")
        top = max(top, max(_count_pieces(s) for s in stems))
    return top


class Tablebases:
    """The Syzygy tables of the process: python-chess for the root, the Rust core's prober for the search.

    Args:
        paths: directories with ``*.rtbw`` (WDL) and ``*.rtbz`` (DTZ) files.
        max_pieces: probe positions with at most this many pieces (0: the tables' maximum).
        root_probe: choose the root move by the tables (:meth:`root_move` returns None when False).
        search_probe: open the core's prober (:attr:`core`) for probes inside the search.
        move_quality: ``best``: the root source plays the tables' move; ``suggest``: the search keeps to the
            moves that keep the best WDL (:attr:`TablebaseMove.keep`; lichess-bot's Syzygy ``move_quality``).
        key: the config key or UCI option named in errors.

    Raises:
        TablebaseError: a path does not exist or holds no tables.
    """

    def __init__(self, paths: list[str], *, max_pieces: int = 0, root_probe: bool = True,
                 search_probe: bool = True, move_quality: str = "best", key: str = "tablebases.syzygy") -> None:
        top = _check_dirs(paths, key)
        self.paths = [str(Path(p).expanduser()) for p in paths]
        #: The most pieces a probed position may have.
        self.max_pieces = min(max_pieces, top) if max_pieces else top
        self.root_probe = root_probe
        self.move_quality = move_quality
        self._lock = threading.Lock()
        self._broken = False
        self._tb = chess.syzygy.Tablebase()
        for p in self.paths:
            self._tb.add_directory(p)
        #: The core's prober (``lichessbot._core.Tablebases``) for the search, or None.
        self.core = None
        if search_probe:
            try:
                self.core = _core.Tablebases(self.paths, self.max_pieces)
            except ValueError as err:
                raise TablebaseError(f"{key}: {err}") from None

    @classmethod
    def from_config(cls, config: TablebaseConfig) -> Tablebases | None:
        """From a :class:`lichessbot.config.TablebaseConfig`; None when it names no directory."""
        if not config.syzygy:
            return None
        return cls(list(config.syzygy), max_pieces=config.max_pieces, root_probe=config.root_probe,
                   search_probe=config.search_probe, move_quality=config.move_quality)

    def close(self) -> None:
        self._tb.close()

    def covers(self, board: chess.Board) -> bool:
        """True when ``board`` is a standard position the tables hold (few pieces, no castling rights)."""
        return (not self._broken and type(board) is chess.Board and not board.chess960
                and not board.castling_rights and chess.popcount(board.occupied) <= self.max_pieces)

    def root_move(self, board: chess.Board) -> TablebaseMove | None:
        """The move the tables choose in ``board`` (see the module docstring), or None when ``board`` is
        not covered, root probing is off, a table is missing, or the tables fail (logged once; probing
        at the root is then off for good and the game goes on with the search)."""
        if not self.root_probe or not self.covers(board):
            return None
        try:
            return self._choose(board)
        except KeyError:  # chess.syzygy.MissingTableError: an incomplete set
            return None
        except Exception as err:  # noqa: BLE001 - a corrupt table: python-chess gives no narrower error
            with self._lock:
                first, self._broken = not self._broken, True
            if first:
                _log.error("tablebase probe failed; root probing disabled", error=repr(err), fen=board.fen())
            return None

    def _choose(self, board: chess.Board) -> TablebaseMove | None:
        clock = board.halfmove_clock
        best: tuple[tuple[int, int], chess.Move, int, int] | None = None
        ranked = []
        for move in board.legal_moves:
            zeroing = board.is_zeroing(move)
            board.push(move)
            try:
                if board.is_checkmate():
                    wdl, dtz = 2, 0
                elif board.is_stalemate() or board.is_insufficient_material():  # K v K has no table
                    wdl, dtz = 0, 1
                else:
                    child = self._tb.probe_dtz(board)  # the opponent's view
                    h = 0 if zeroing else clock + 1
                    dtz = 1 if zeroing else 1 + abs(child)
                    if child < 0:
                        wdl = 2 if h + abs(child) <= _RULE50 else 1
                    elif child > 0:
                        wdl = -2 if h + child <= _RULE50 else -1
                    else:
                        wdl = 0
            finally:
                board.pop()
            # Best WDL first; wins by the shortest DTZ, losses (and blessed ones) by the longest.
            key = (wdl, -dtz if wdl > 0 else dtz)
            ranked.append((move, wdl))
            if best is None or key > best[0]:
                best = (key, move, wdl, dtz)
        if best is None:
            return None
        _, move, wdl, dtz = best
        cp = TB_CP - dtz if wdl == 2 else -(TB_CP - dtz) if wdl == -2 else 0
        return TablebaseMove(move=move, wdl=wdl, dtz=dtz, cp=cp, mate=1 if dtz == 0 and wdl == 2 else None,
                             candidates=(len(ranked), sum(1 for _, w in ranked if w == wdl)),
                             keep=tuple(m for m, w in ranked if w == wdl))
