"""A running game as a :class:`~lichessbot.status.GameSnapshot` for the status page (built in the game
thread from its own fields, then handed to the hub in one assignment: the page never touches a game)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import chess

from lichessbot.bot.games.pgn import GameRecord
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


def service_figures(engine: Any, client: Any, service: dict[str, object]) -> dict[str, object]:
    """The figures of the overview (plain values, never the token): the ``service``'s own (username, game
    counts read under its lock, ...) plus what the engine and the client report (name, ponder counts,
    the evaluation service's stats, the execution provider, the request budget)."""
    figures: dict[str, object] = {**service, "engine": engine.name, "lichess": client.url}
    for key in ("ponders", "ponder_hits"):
        if hasattr(engine, key):
            figures[key] = getattr(engine, key)
    evals = getattr(engine, "service", None)
    if evals is not None and hasattr(evals, "stats"):
        figures["eval_service"] = evals.stats()
    provider = getattr(getattr(engine, "evaluator", None), "provider", None)
    if provider is not None:  # the onnxruntime execution provider in use
        figures["provider"] = str(provider)
    session = getattr(client, "session", None)
    pacer = getattr(session, "pacer", None)
    if session is not None and pacer is not None:  # the request budget: waits, chat lines given up, 429 pauses
        figures["requests"] = {"deferred": pacer.deferred, "dropped": pacer.dropped,
                               "tokens": round(pacer.tokens, 1), "paused": session.pauses(),
                               "deferred_by_limit": getattr(session, "deferred_by_limit", 0),
                               "refused_by_limit": getattr(session, "refused_by_limit", 0)}
    return figures
