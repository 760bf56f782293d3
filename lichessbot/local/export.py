"""A game as lichess exports it (``GET /game/export/{id}``, lila modules/game/src/main/PgnDump.scala): the
headers lichess writes, the moves with ``[%clk]`` (the mover's clock after the move; lichess's ``clocks=true``)
and ``[%eval]`` where the bot announced one, and the result. The evals are the bot's own, read from the eval
lines it posts in the spectator room (``eval +0.35 | ... | pv Nf3 ...`` or ``mate +3 | ...``: its score in pawns
from white's side, as lichess shows evals), the only thing the server knows of them."""

from __future__ import annotations

import datetime as dt
import re

import chess
import chess.pgn

from lichessbot.local.model import VARIANT_NAMES, Game

__all__ = ["attach_eval", "pgn", "result"]

_EVAL = re.compile(r"(?:^|\| )(?:eval ([+-]?\d+(?:\.\d+)?)|mate ([+-]?\d+))(?: |$)")
_PV = re.compile(r"\| pv (\S+)")
#: lichess's Termination header (PgnDump ``termination``).
_TERMINATION = {"outoftime": "Time forfeit", "timeout": "Abandoned", "noStart": "Abandoned", "aborted": "Abandoned",
                "cheat": "Rules infraction", "insufficientMaterialClaim": "Insufficient material"}


def attach_eval(g: Game, bot_white: bool, line: str) -> None:
    """Keep the eval of the bot's eval ``line`` for its move: the latest of its moves whose SAN is the line's
    first PV move (the latest of its moves when the line has no PV), as ``[%eval]`` text (the line's and the
    PGN's are both from white's side, as lichess writes them)."""
    m = _EVAL.search(line)
    if m is None:
        return
    if m.group(1) is not None:
        text = f"{float(m.group(1)):.2f}"
    else:
        text = f"#{int(m.group(2))}"
    pv = _PV.search(line)
    board = g.start_board()
    sans: list[tuple[int, str]] = []
    for i, move in enumerate(g.board.move_stack):
        if board.turn == bot_white:
            sans.append((i, board.san(move)))
        board.push(move)
    for ply, san in reversed(sans):
        if pv is None or san == pv.group(1):
            g.evals[ply] = text
            return


def result(status: str, winner: str | None) -> str:
    """"1-0", "0-1", "1/2-1/2", or "*" (a game not over, or aborted)."""
    if winner == "white":
        return "1-0"
    if winner == "black":
        return "0-1"
    return "*" if status in ("created", "started", "aborted", "noStart", "unknownFinish") else "1/2-1/2"


def pgn(g: Game, site: str) -> str:
    """The PGN of ``g`` (``site``: the game's URL)."""
    board = g.start_board()
    game = chess.pgn.Game()
    if g.initial_fen != "startpos":
        game.setup(board)  # FEN and SetUp (lichess writes them for a game from a position)
    h = game.headers
    started = dt.datetime.fromtimestamp(g.created_ms / 1000, dt.UTC)
    speed = g.speed.capitalize() if g.speed != "ultraBullet" else "UltraBullet"
    h["Event"] = f"{'Rated' if g.rated else 'Casual'} {speed} game"
    h["Site"] = site
    h["Date"] = started.strftime("%Y.%m.%d")
    h["White"], h["Black"] = g.white.account.username, g.black.account.username
    h["Result"] = result(g.status, g.winner)
    h["GameId"] = g.id
    h["UTCDate"], h["UTCTime"] = started.strftime("%Y.%m.%d"), started.strftime("%H:%M:%S")
    for side, seat in (("White", g.white), ("Black", g.black)):
        h[f"{side}Elo"] = str(seat.account.rating)
        if seat.account.title:
            h[f"{side}Title"] = seat.account.title
    h["Variant"] = VARIANT_NAMES.get(g.variant, g.variant)
    h["TimeControl"] = f"{g.initial_ms // 1000}+{g.increment_ms // 1000}" if g.has_clock else "-"
    h["Termination"] = _TERMINATION.get(g.status, "Normal") if g.over else "Unterminated"
    node: chess.pgn.GameNode = game
    for ply, move in enumerate(g.board.move_stack):
        node = node.add_variation(move)
        if ply in g.evals:
            node.comment = f"[%eval {g.evals[ply]}]"
        if g.has_clock and ply < len(g.clocks):
            node.set_clock(max(0, g.clocks[ply]) / 1000.0)
    game.headers["Result"] = h["Result"]
    exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
    return game.accept(exporter) + "\n"
