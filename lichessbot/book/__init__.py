"""Polyglot opening books: lookup and move selection over python-chess's :mod:`chess.polyglot`.

A book is a set of polyglot ``.bin`` files per variant, tried in order: the first file that has at least
one legal entry of weight >= ``min_weight`` for the position decides the move. Files are opened and
checked once, at startup (:meth:`Book.from_config`), so a missing or corrupt file is reported before any
game starts, never in the middle of one.

Polyglot format (http://hgm.nubati.net/book_format.html): 16-byte big-endian entries sorted by key --
key (uint64, :func:`chess.polyglot.zobrist_hash`), move (uint16: to 0-5, from 6-11, promotion 12-14),
weight (uint16), learn (uint32). Castling is stored king-takes-rook (e1h1); python-chess's reader turns
it into the board's normal form (e1g1 on a standard board, e1h1 on a Chess960 board).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import chess
import chess.polyglot
import numpy as np

from lichessbot.errors import LichessbotError

if TYPE_CHECKING:
    from lichessbot.config import BookConfig

__all__ = ["Book", "BookError", "BookMove", "Selection", "book_variant", "open_book_file"]

Selection = Literal["weighted_random", "uniform_random", "best_move"]
SELECTIONS: tuple[str, ...] = ("weighted_random", "uniform_random", "best_move")

ENTRY_SIZE = 16  # bytes per polyglot entry
_ENTRY_DTYPE = np.dtype([("key", ">u8"), ("move", ">u2"), ("weight", ">u2"), ("learn", ">u4")])


class BookError(LichessbotError, ValueError):
    """A book file that cannot be used (missing, unreadable, corrupt) or a bad book setting."""


@dataclass(frozen=True, slots=True)
class BookMove:
    """A move chosen from a book, with what the logs and PGN comments show.

    Attributes:
        move: the move in python-chess's normal form for the board (e1g1 castling on standard boards).
        weight: the entry's polyglot weight.
        total_weight: the sum of the weights of all the candidate entries (weight >= min_weight).
        learn: the entry's polyglot learn field.
        path: the book file the entry came from.
    """

    move: chess.Move
    weight: int
    total_weight: int
    learn: int
    path: str

    def __str__(self) -> str:
        share = 100.0 * self.weight / self.total_weight if self.total_weight else 0.0
        return f"{self.move.uci()} (book {Path(self.path).name}, weight {self.weight}, {share:.0f}%)"


def book_variant(variant: str) -> str | None:
    """The book section used for a lichess variant key: standard and fromPosition use ``standard``,
    chess960 uses ``chess960``; other variants have no book (None)."""
    if variant in ("standard", "fromPosition"):
        return "standard"
    if variant == "chess960":
        return "chess960"
    return None


def _open_checked(path: str) -> chess.polyglot.MemoryMappedReader:
    """Open one .bin file and check it: exists, non-empty, size a multiple of 16, keys sorted.

    Raises:
        BookError: naming the file and what is wrong with it.
    """
    p = Path(path)
    if not p.is_file():
        raise BookError(f"book file {path}: not found")
    size = p.stat().st_size
    if size == 0:
        raise BookError(f"book file {path}: is empty")
    if size % ENTRY_SIZE:
        raise BookError(f"book file {path}: corrupt (size {size} bytes is not a multiple of {ENTRY_SIZE})")
    try:
        reader = chess.polyglot.open_reader(path)
    except OSError as err:
        raise BookError(f"book file {path}: cannot be read ({err.strerror or err})") from None
    keys = np.frombuffer(reader.mmap, dtype=_ENTRY_DTYPE)["key"]
    ordered = bool(np.all(keys[1:] >= keys[:-1]))
    del keys  # release the buffer export so the mmap can be closed
    if not ordered:
        reader.close()
        raise BookError(f"book file {path}: corrupt (entries are not sorted by key)")
    return reader


def _repeats(board: chess.Board, move: chess.Move) -> bool:
    """``move`` leads to a position already seen in ``board``'s game."""
    board.push(move)
    try:
        return board.is_repetition(2)
    finally:
        board.pop()


class Book:
    """Polyglot books per variant with a selection rule. Thread-safe for lookups (read-only mmaps).

    Args:
        paths: per book section (``standard``, ``chess960``), the .bin files tried in order.
        selection: ``weighted_random`` (probability weight / total weight), ``uniform_random``, or
            ``best_move`` (the highest weight; the first entry in file order on ties).
        min_weight: entries with a lower weight are ignored (0 admits deleted, weight-0 entries).
        max_depth: the book is used while ``board.fullmove_number <= max_depth``.
        normalization: how ``min_weight`` reads (lichess-bot ``polyglot.normalization``, lib/engine_wrapper.py):
            ``none``, a weight; ``sum`` (``max``), a percentage of the sum (the largest) of the position's weights
            in that file.
        allow_repetitions: False: entries whose move repeats a position of ``board``'s game are left out (BotLi).
        rng: the generator of the random choices (seed it in tests); None: a fresh ``random.Random()``.

    Raises:
        BookError: a file is missing or corrupt (the message names it), or a setting is invalid.
    """

    def __init__(
        self,
        paths: Mapping[str, Sequence[str]],
        *,
        selection: Selection = "weighted_random",
        min_weight: int = 1,
        max_depth: int = 20,
        normalization: Literal["none", "sum", "max"] = "none",
        allow_repetitions: bool = True,
        rng: random.Random | None = None,
    ) -> None:
        if selection not in SELECTIONS:
            raise BookError(f"book selection {selection!r} is not one of {', '.join(SELECTIONS)}")
        if min_weight < 0 or max_depth < 1:
            raise BookError(f"book min_weight must be >= 0 and max_depth >= 1 (got {min_weight}, {max_depth})")
        self.selection: Selection = selection
        self.min_weight = min_weight
        self.max_depth = max_depth
        self.normalization = normalization
        self.allow_repetitions = allow_repetitions
        self.rng = rng if rng is not None else random.Random()
        self._readers: dict[str, list[tuple[str, chess.polyglot.MemoryMappedReader]]] = {}
        try:
            for section, files in paths.items():
                self._readers[section] = [(str(f), _open_checked(str(f))) for f in files]
        except BookError:
            self.close()
            raise

    @classmethod
    def from_config(cls, config: BookConfig, rng: random.Random | None = None) -> Book | None:
        """The book of the ``book`` config section, or None when it is disabled or lists no file.

        Raises:
            BookError: a listed file is missing or corrupt (the message names it).
        """
        if not config.enabled or not any(config.paths.values()):
            return None
        return cls(
            {k: list(v) for k, v in config.paths.items()},
            selection=config.selection,
            min_weight=config.min_weight,
            max_depth=config.max_depth,
            normalization=config.normalization,
            allow_repetitions=config.allow_repetitions,
            rng=rng,
        )

    @property
    def paths(self) -> dict[str, list[str]]:
        """Per book section, the files in the order they are tried."""
        return {k: [p for p, _ in v] for k, v in self._readers.items()}

    def candidates(self, board: chess.Board, variant: str = "standard") -> tuple[str, list[chess.polyglot.Entry]]:
        """The entries that decide the move: those of the first file with a legal entry of weight >=
        ``min_weight`` for ``board``, with that file's path; ``("", [])`` when there are none or when
        ``max_depth`` is passed. Entry moves are in python-chess's normal form for ``board``."""
        section = book_variant(variant)
        if section is None or board.fullmove_number > self.max_depth:
            return "", []
        for path, reader in self._readers.get(section, ()):
            entries = self._kept(board, list(reader.find_all(board, minimum_weight=0)))
            if entries:
                return path, entries
        return "", []

    def _kept(self, board: chess.Board, entries: list[chess.polyglot.Entry]) -> list[chess.polyglot.Entry]:
        """``entries`` at or above the weight threshold (``min_weight`` read by ``normalization``), without
        the moves that repeat a position when repetitions are not allowed."""
        weights = [e.weight for e in entries]
        scale = (sum(weights) if self.normalization == "sum" else max(weights, default=0)
                 if self.normalization == "max" else 100)
        threshold = self.min_weight * scale / 100
        kept = [e for e in entries if e.weight >= threshold]
        if not self.allow_repetitions:
            kept = [e for e in kept if not _repeats(board, e.move)]
        return kept

    def find(self, board: chess.Board, variant: str = "standard") -> BookMove | None:
        """The book move for ``board`` by the selection rule, with its weight; None when out of book.

        ``variant`` is the lichess variant key (``standard``, ``chess960``, ``fromPosition``, ...).
        """
        path, entries = self.candidates(board, variant)
        if not entries:
            return None
        total = sum(e.weight for e in entries)
        if self.selection == "best_move":
            chosen = max(entries, key=lambda e: e.weight)  # max keeps the first of equal weights
        elif self.selection == "uniform_random" or total == 0:
            chosen = entries[self.rng.randrange(len(entries))]
        else:
            x = self.rng.randrange(total)
            acc = 0
            for chosen in entries:
                acc += chosen.weight
                if acc > x:
                    break
        return BookMove(chosen.move, chosen.weight, total, chosen.learn, path)

    def choose(self, board: chess.Board, variant: str = "standard") -> chess.Move | None:
        """The book move for ``board`` (see :meth:`find`), or None when out of book."""
        found = self.find(board, variant)
        return found.move if found is not None else None

    def close(self) -> None:
        """Close every file. The book cannot be used afterwards."""
        for readers in self._readers.values():
            for _, reader in readers:
                reader.close()
        self._readers = {}

    def __enter__(self) -> Book:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_book_file(path: str, rng: random.Random | None = None) -> Book | None:
    """A weighted-random book of one .bin file for both standard and Chess960 (UCI ``BookFile``);
    None for an empty path (``""`` or UCI's ``<empty>``).

    Raises:
        BookError: the file is missing or corrupt (named in the message).
    """
    path = path.strip()
    if path in ("", "<empty>"):
        return None
    return Book({"standard": [path], "chess960": [path]}, rng=rng)
