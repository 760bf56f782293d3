"""Opening positions of a match, read from EPD or PGN files."""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.pgn

from lichessbot.match.types import MatchError, Opening

__all__ = ["Opening", "load_openings"]


def _from_epd(text: str, source: str) -> list[Opening]:
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        board = chess.Board()
        try:
            ops = board.set_epd(line)
        except ValueError as err:
            raise MatchError(f"{source}:{i}: not an EPD position ({err})") from None
        if not board.is_valid() or board.is_game_over():
            raise MatchError(f"{source}:{i}: position is not playable")
        name = str(ops.get("id", "")) or f"{Path(source).name}:{i}"
        out.append(Opening(board.fen(), (), name))
    return out


def _from_pgn(text: str, source: str, plies: int | None) -> list[Opening]:
    out: list[Opening] = []
    stream = io.StringIO(text)
    while True:
        game = chess.pgn.read_game(stream)
        if game is None:
            break
        if game.errors:
            raise MatchError(f"{source}: game {len(out) + 1}: {game.errors[0]}")
        board = game.board()
        moves = list(game.mainline_moves())[:plies]
        name = game.headers.get("Opening") or f"{Path(source).name} #{len(out) + 1}"
        out.append(Opening(board.fen(), tuple(moves), name))
    return out


def load_openings(path: str, *, plies: int | None = None) -> list[Opening]:
    """The openings of an ``.epd`` file (one position per line, operations ignored except ``id``) or a
    ``.pgn`` file (each game's start position and its first ``plies`` mainline moves; None: all).

    Raises:
        MatchError: the file is missing, unreadable, holds no opening or a bad one (file and line named).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise MatchError(f"openings file {path}: cannot be read ({err.strerror or err})") from None
    if p.suffix.lower() == ".pgn":
        openings = _from_pgn(text, path, plies)
    else:
        openings = _from_epd(text, path)
    if not openings:
        raise MatchError(f"openings file {path}: holds no opening")
    return openings
