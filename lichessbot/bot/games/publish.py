"""A running game as a :class:`~lichessbot.status.GameSnapshot` for the status page (built in the game
thread from its own fields, then handed to the hub in one assignment: the page never touches a game)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

import chess

from lichessbot.bot.games.pgn import GameRecord
from lichessbot.lichess.client import LichessClient
from lichessbot.status import GameSnapshot, PlyEval
from lichessbot.status.render import eval_svg

__all__ = ["game_snapshot", "service_figures", "write_eval_svg"]


def game_snapshot(*, game_id: str, record: GameRecord, initial: chess.Board | None, times: tuple[int, ...],
                  state_at: float, over: bool, color: chess.Color | None, correspondence: bool) -> GameSnapshot:
    """The game now: players, moves, clocks (``times``: wtime, btime, winc, binc in ms, as lichess last sent
    them at monotonic time ``state_at``), status and our evals (white's view). The live search is left out
    (the thinker publishes it)."""
    r = record
    init = initial or chess.Board(r.initial_fen)
    evals = []
    for ply, d in sorted(r.decisions.items()):
        mover_white = (init.turn == chess.WHITE) == (ply % 2 == 0)
        score = d.score if d.score is None or mover_white else d.score.flipped()  # white's view
        evals.append(PlyEval(ply=ply, cp=None if score is None else score.cp,
                             mate=None if score is None else score.mate, source=d.source,
                             note="" if d.note == "fallback" else d.note))
    wtime, btime, winc, binc = times
    clocked = r.clock_initial_ms is not None and not correspondence
    now = time.time()
    our_color = None if color is None else ("white" if color == chess.WHITE else "black")
    return GameSnapshot(
        game_id=game_id, url=r.site, white=r.white, black=r.black, white_rating=r.white_elo,
        black_rating=r.black_elo, our_color=our_color, speed=r.speed, rated=r.rated, variant=r.variant,
        initial_fen=r.initial_fen, moves=tuple(m.uci() for m in r.moves),
        wtime=wtime if clocked else None, btime=btime if clocked else None, winc=winc, binc=binc,
        clock_at=now - (time.monotonic() - state_at), clock_running=clocked and len(r.moves) >= 2,
        status=r.status if over else "started", winner=r.winner, over=over, evals=tuple(evals),
        updated_at=now)


def write_eval_svg(snapshot: GameSnapshot, path: Path) -> None:
    """Write the game's eval graph (:func:`lichessbot.status.render.eval_svg`, 600 x 160 px) to ``path``."""
    path.write_text(eval_svg(snapshot, width=600, height=160) + "\n", encoding="utf-8")


def service_figures(engine_name: str, engine: Mapping[str, object], client: LichessClient,
                    service: dict[str, object]) -> dict[str, object]:
    """The figures of the overview (plain values, never the token): the ``service``'s own (username, game
    counts read under its lock, ...), the ``engine``'s (its name; ponder counts, the evaluation service's stats,
    the execution provider: :func:`lichessbot.bot.service.attached.engine_figures`) and the client's request
    budget (``client.session``: waits, chat lines given up, 429 pauses, lila's own windows)."""
    session = client.session
    pacer = session.pacer
    return {**service, "engine": engine_name, "lichess": client.url, **engine,
            "requests": {"deferred": pacer.deferred, "dropped": pacer.dropped, "tokens": round(pacer.tokens, 1),
                         "paused": session.pauses(), "deferred_by_limit": session.deferred_by_limit,
                         "refused_by_limit": session.refused_by_limit}}
