"""PGN records of finished games: headers, ``[%eval]`` for our searched moves and ``[%clk]`` for every move.

Comments follow the lichess/ChessBase convention python-chess writes (``GameNode.set_eval`` /
``set_clock``): ``[%eval 0.35]`` in pawns from white's point of view (``#3`` / ``#-3`` for mates),
``[%clk 0:04:59]`` the mover's clock after the move.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine
import chess.pgn

from lichessbot.files import write_atomic
from lichessbot.lichess.events import GameFull
from lichessbot.thinker.protocol import Decision

__all__ = ["GameRecord", "game_stem", "result_string", "to_pgn", "write_pgn"]

#: One game appended to a shared file at a time (every game thread of the bot writes through here).
_APPEND = threading.Lock()


@dataclass
class GameRecord:
    """Everything the PGN of one game needs. Clocks in milliseconds; ``ply`` counts from 0."""

    game_id: str
    site: str
    white: str = "?"
    black: str = "?"
    white_elo: int | None = None
    black_elo: int | None = None
    white_title: str | None = None
    black_title: str | None = None
    rated: bool = False
    speed: str = ""
    variant: str = "standard"
    initial_fen: str = chess.STARTING_FEN
    clock_initial_ms: int | None = None
    clock_increment_ms: int = 0
    started: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    moves: list[chess.Move] = field(default_factory=list)
    clocks: dict[int, int] = field(default_factory=dict)       # ply -> mover's ms after the move
    decisions: dict[int, Decision] = field(default_factory=dict)  # ply -> our decision for that move
    status: str = "started"
    winner: str | None = None

    def take_game_full(self, full: GameFull, initial: chess.Board, variant: str) -> None:
        """The headers of a lichess ``gameFull`` event: players, ratings, titles, mode, speed, variant,
        start position and clock (its ``initial`` and ``increment`` in ms)."""
        white, black = full.white, full.black
        self.white, self.black = (p.name or p.id or "?" for p in (white, black))
        self.white_elo, self.black_elo = white.rating, black.rating
        self.white_title, self.black_title = white.title, black.title
        self.rated, self.speed, self.variant = full.rated, full.speed, variant
        self.initial_fen = initial.fen()
        if full.clock is not None:
            self.clock_initial_ms, self.clock_increment_ms = full.clock.initial, full.clock.increment


def result_string(status: str, winner: str | None) -> str:
    """"1-0", "0-1", "1/2-1/2", or "*" for a game aborted or still running."""
    if winner == "white":
        return "1-0"
    if winner == "black":
        return "0-1"
    if status in ("created", "started", "aborted", "noStart", "unknownFinish"):
        return "*"
    return "1/2-1/2"


_TERMINATION = {"outoftime": "Time forfeit", "timeout": "Abandoned", "noStart": "Abandoned", "aborted": "Abandoned"}


def to_pgn(record: GameRecord) -> str:
    """The PGN text of ``record``."""
    board = chess.Board(record.initial_fen)
    game = chess.pgn.Game.from_board(board)
    h = game.headers
    h["Event"] = f"{'Rated' if record.rated else 'Casual'} {record.speed} game".replace("  ", " ")
    h["Site"] = record.site
    h["Date"] = record.started.strftime("%Y.%m.%d")
    h["Round"] = "-"
    h["White"], h["Black"] = record.white, record.black
    h["Result"] = result_string(record.status, record.winner)
    h["GameId"] = record.game_id
    h["UTCDate"] = record.started.strftime("%Y.%m.%d")
    h["UTCTime"] = record.started.strftime("%H:%M:%S")
    for key, value in (("WhiteElo", record.white_elo), ("BlackElo", record.black_elo),
                       ("WhiteTitle", record.white_title), ("BlackTitle", record.black_title)):
        if value is not None:
            h[key] = str(value)
    h["Variant"] = record.variant.capitalize() if record.variant != "fromPosition" else "From Position"
    h["TimeControl"] = ("-" if record.clock_initial_ms is None
                        else f"{record.clock_initial_ms // 1000}+{record.clock_increment_ms // 1000}")
    h["Termination"] = _TERMINATION.get(record.status, "Normal")
    node: chess.pgn.GameNode = game
    for ply, move in enumerate(record.moves):
        mover = board.turn
        if move not in board.legal_moves:
            break
        node = node.add_variation(move)
        d = record.decisions.get(ply)
        if d is not None and d.source == "search" and d.score is not None:
            node.set_eval(d.score.pov(mover), depth=d.depth or None)
            if d.note and d.note != "fallback":  # a search kept to the online tables' moves
                node.comment = f"{d.note} {node.comment}".strip()
        elif d is not None and d.source == "book":
            node.comment = "book"
        elif d is not None and d.source in ("online_book", "tablebase", "online_tablebase"):
            node.comment = d.note or d.source  # "explorer: masters, 1,234 games", "tablebase win, DTZ 15"
        if ply in record.clocks:
            node.set_clock(max(0, record.clocks[ply]) / 1000.0)
        board.push(move)
    return str(game)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:40] or "_"


def game_stem(record: GameRecord) -> str:
    """``<white>-vs-<black>-<game_id>``: the name of the game's own files (its PGN with ``game`` grouping, its
    eval chart)."""
    return f"{_safe(record.white)}-vs-{_safe(record.black)}-{_safe(record.game_id)}"


def write_pgn(record: GameRecord, directory: str | Path, grouping: str = "game", me: str = "") -> Path:
    """Write the game into ``directory`` (created) and return the file's path. ``grouping`` (lichess-bot's
    ``pgn_file_grouping``): ``game``: its own file ``<white>-vs-<black>-<game_id>.pgn``; ``opponent``: appended
    to ``<me> games vs. <opponent>.pgn``; ``all``: appended to ``<me> games.pgn`` (``me``: our account's name;
    lichess-bot lib/lichess_bot.py ``get_game_file_path``'s names). Games in a shared file are separated by a
    blank line, one writer at a time."""
    d = Path(directory).expanduser()
    d.mkdir(parents=True, exist_ok=True)
    if grouping in ("opponent", "all"):
        mine = me.lower()
        opponent = record.black if record.white.lower() == mine else record.white
        name = f"{_safe(me)} games.pgn" if grouping == "all" else f"{_safe(me)} games vs. {_safe(opponent)}.pgn"
        path = d / name
        with _APPEND, path.open("a", encoding="utf-8") as f:
            f.write(to_pgn(record) + "\n\n")
        return path
    # Written whole under a hidden name, then renamed: a reader watching the directory for *.pgn (a stream
    # overlay, a script, the tests) never opens a file half written.
    return write_atomic(d / f"{game_stem(record)}.pgn", to_pgn(record) + "\n")
