"""Snapshots to JSON and SVG: the board (python-chess's ``chess.svg``), the eval graph, the post-game card.

Every function is pure: it reads a frozen snapshot and returns text or plain data.
"""

from __future__ import annotations

import html
import math
import time
from dataclasses import asdict
from typing import Any

import chess
import chess.svg

from lichessbot.status.hub import GameSnapshot, LiveSearch

__all__ = ["board_of", "board_svg", "eval_svg", "game_json", "game_summary", "live_json", "summary_svg"]

#: Centipawns at the edge of the eval graph (scores beyond it, and mates, are drawn at the edge).
GRAPH_CP = 1000


def board_of(snap: GameSnapshot) -> chess.Board:
    """The position after the snapshot's moves (the legal prefix, should one not be legal)."""
    board = chess.Board(snap.initial_fen, chess960=snap.variant == "chess960")
    for uci in snap.moves:
        try:
            board.push_uci(uci)
        except ValueError:
            break
    return board


def _pv_arrows(snap: GameSnapshot, board: chess.Board) -> list[chess.svg.Arrow]:
    """Arrows for the first moves of the live search's PV when it searches the position on the board."""
    live = snap.live
    if live is None or live.pondering or live.done or live.ply != len(board.move_stack) or not live.lines:
        return []
    arrows, b = [], board.copy(stack=False)
    for i, uci in enumerate(live.lines[0].pv[:3] or (live.lines[0].move,)):
        move = chess.Move.from_uci(uci)
        if move not in b.legal_moves:
            break
        color = ("#15781Bcc", "#882020aa", "#15781B77")[i]  # ours, the reply, ours again
        arrows.append(chess.svg.Arrow(move.from_square, move.to_square, color=color))
        b.push(move)
    return arrows


def board_svg(snap: GameSnapshot, size: int = 400) -> str:
    """The current board, ``size`` pixels wide, from our side: the last move and a check marked, arrows
    for the running search's PV (first three plies)."""
    board = board_of(snap)
    last = board.peek() if board.move_stack else None
    check = board.king(board.turn) if board.is_check() else None
    orientation = chess.BLACK if snap.our_color == "black" else chess.WHITE
    return chess.svg.board(board, orientation=orientation, lastmove=last, check=check, size=size,
                           arrows=_pv_arrows(snap, board))


def _white_cp(cp: int | None, mate: int | None) -> float:
    if mate is not None:
        return GRAPH_CP if mate > 0 else -GRAPH_CP
    return max(-GRAPH_CP, min(GRAPH_CP, float(cp or 0)))


def eval_svg(snap: GameSnapshot, width: int = 400, height: int = 120) -> str:
    """Our evaluations by ply as a line (white's view; up is good for white), ``width`` x ``height`` px.

    The vertical scale is ``atan``-compressed up to +-``GRAPH_CP`` centipawns; mates sit at the edge.
    Book moves (local or online) are marked by blue ticks on the middle line.
    """
    plies = max(len(snap.moves), 1)
    mid = height / 2

    def y(cp: float) -> float:
        return mid - (math.atan(cp / 300) / math.atan(GRAPH_CP / 300)) * (mid - 4)

    pts = [(e.ply / plies * width, y(_white_cp(e.cp, e.mate))) for e in snap.evals if e.source == "search"]
    path = " ".join(f"{x:.1f},{yy:.1f}" for x, yy in pts)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="evalgraph" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}">',
             f'<rect width="{width}" height="{mid:.1f}" fill="#f0f0f0"/>',
             f'<rect y="{mid:.1f}" width="{width}" height="{mid:.1f}" fill="#3a3a3a"/>',
             f'<line x1="0" y1="{mid:.1f}" x2="{width}" y2="{mid:.1f}" stroke="#888" stroke-width="1"/>']
    if pts:
        parts.append(f'<polyline points="{path}" fill="none" stroke="#d08020" stroke-width="2"/>')
        parts += [f'<circle cx="{x:.1f}" cy="{yy:.1f}" r="2.5" fill="#d08020"/>' for x, yy in pts]
    parts += [f'<rect class="book" x="{e.ply / plies * width - 1.5:.1f}" y="{mid - 5:.1f}" width="3" height="10" '
              f'fill="#3070d0"/>' for e in snap.evals
              if e.source in ("book", "online_book")]
    parts.append("</svg>")
    return "".join(parts)


def _result(snap: GameSnapshot) -> str:
    if snap.winner == "white":
        return "1-0"
    if snap.winner == "black":
        return "0-1"
    if not snap.over or snap.status in ("aborted", "noStart", "unknownFinish"):
        return "*"
    return "1/2-1/2"


def summary_svg(snap: GameSnapshot) -> str:
    """The post-game card: players, result and status above the final board, the eval graph below."""
    esc = html.escape
    w = 400

    def player(name: str, rating: int | None) -> str:
        return esc(name if rating is None else f"{name} ({rating})")

    board = board_svg(snap, size=w).replace("<svg ", '<svg y="40" ', 1)
    graph = eval_svg(snap, width=w, height=100).replace("<svg ", f'<svg y="{w + 50}" ', 1)
    title = f"{player(snap.white, snap.white_rating)} vs {player(snap.black, snap.black_rating)}"
    sub = f"{_result(snap)} ({esc(snap.status)}) · {len(snap.moves)} plies · {esc(snap.speed)}"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'width="{w}" height="{w + 160}" viewBox="0 0 {w} {w + 160}">'
            f'<rect width="100%" height="100%" fill="#ffffff"/>'
            f'<text x="4" y="16" font-family="sans-serif" font-size="14" font-weight="bold">{title}</text>'
            f'<text x="4" y="33" font-family="sans-serif" font-size="12">{sub}</text>'
            f"{board}{graph}"
            f'<text x="4" y="{w + 158}" font-family="sans-serif" font-size="10" fill="#666">'
            f"eval: white's view, centipawns (atan scale, +-{GRAPH_CP} cp at the edges)</text></svg>")


def _san_line(board: chess.Board, ucis: tuple[str, ...]) -> list[str]:
    """UCI moves as SAN from ``board`` (stops at the first move that is not legal there)."""
    b, out = board.copy(stack=False), []
    for u in ucis:
        try:
            move = chess.Move.from_uci(u)
            out.append(b.san(move))
            b.push(move)
        except (ValueError, AssertionError):
            break
    return out


def live_json(live: LiveSearch | None, board: chess.Board | None) -> dict[str, Any] | None:
    """A live search as JSON, moves in SAN when ``board`` is the searched position."""
    if live is None:
        return None
    d = asdict(live)
    d["lines"] = []
    for line in live.lines:
        row = asdict(line)
        row["pv_san"] = _san_line(board, line.pv or (line.move,)) if board is not None else []
        row["san"] = row["pv_san"][0] if row["pv_san"] else line.move
        d["lines"].append(row)
    return d


def game_summary(snap: GameSnapshot) -> dict[str, Any]:
    """The overview row of a game (no moves, no search)."""
    return {"id": snap.game_id, "url": snap.url, "white": snap.white, "black": snap.black,
            "white_rating": snap.white_rating, "black_rating": snap.black_rating, "our_color": snap.our_color,
            "speed": snap.speed, "rated": snap.rated, "variant": snap.variant, "plies": len(snap.moves),
            "status": snap.status, "winner": snap.winner, "over": snap.over, "result": _result(snap),
            "nps": snap.live.nps if snap.live is not None and not snap.over else None,
            "updated_at": snap.updated_at}


def game_json(snap: GameSnapshot) -> dict[str, Any]:
    """Everything the game view shows: the summary, moves (UCI and SAN), clocks, evals, live search, SVGs."""
    board = board_of(snap)
    live = snap.live
    searched = None
    if live is not None and not live.pondering and live.ply <= len(snap.moves):
        # a pondered position (after the expected reply) may not be in the game: its moves stay UCI
        searched = chess.Board(snap.initial_fen, chess960=snap.variant == "chess960")
        for uci in snap.moves[:live.ply]:
            try:
                searched.push_uci(uci)
            except ValueError:
                searched = None
                break
    out = game_summary(snap)
    out.update({
        "initial_fen": snap.initial_fen, "fen": board.fen(), "moves": list(snap.moves),
        "san": _san_line(chess.Board(snap.initial_fen, chess960=snap.variant == "chess960"), snap.moves),
        "turn": "white" if board.turn == chess.WHITE else "black",
        "clock": None if snap.wtime is None else {
            "wtime_ms": snap.wtime, "btime_ms": snap.btime, "winc_ms": snap.winc, "binc_ms": snap.binc,
            "at": snap.clock_at, "running": snap.clock_running and not snap.over},
        "evals": [asdict(e) for e in snap.evals],
        "live": live_json(live, searched),
        "board_svg": board_svg(snap),
        "eval_svg": eval_svg(snap),
        "now": time.time(),
    })
    return out
