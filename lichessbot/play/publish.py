"""A running game as a :class:`~lichessbot.status.GameSnapshot` for the status page (built in the game
thread from its own fields, then handed to the hub in one assignment: the page never touches a game)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chess

from lichessbot.status import GameSnapshot, PlyEval
from lichessbot.status.render import eval_svg

if TYPE_CHECKING:
    from lichessbot.play.game import Game
    from lichessbot.play.service import BotService

__all__ = ["game_snapshot", "service_figures", "write_eval_svg"]


def game_snapshot(game: Game) -> GameSnapshot:
    """The game now: players, moves, clocks (ms, as lichess last sent them), status and our evals
    (white's view). The live search is left out (the thinker publishes it)."""
    r = game.record
    init = game.initial or chess.Board(r.initial_fen)
    evals = []
    for ply, d in sorted(r.decisions.items()):
        mover_white = (init.turn == chess.WHITE) == (ply % 2 == 0)
        score = d.score if d.score is None or mover_white else d.score.flipped()  # white's view
        evals.append(PlyEval(ply=ply, cp=None if score is None else score.cp,
                             mate=None if score is None else score.mate, source=d.source))
    wtime, btime, winc, binc = game._times
    clocked = r.clock_initial_ms is not None and not game.correspondence
    now = time.time()
    color = None if game.color is None else ("white" if game.color == chess.WHITE else "black")
    return GameSnapshot(
        game_id=game.id, url=r.site, white=r.white, black=r.black, white_rating=r.white_elo,
        black_rating=r.black_elo, our_color=color, speed=r.speed, rated=r.rated, variant=r.variant,
        initial_fen=r.initial_fen, moves=tuple(m.uci() for m in r.moves),
        wtime=wtime if clocked else None, btime=btime if clocked else None, winc=winc, binc=binc,
        clock_at=now - (time.monotonic() - game._state_at), clock_running=clocked and len(r.moves) >= 2,
        status=r.status if game.over else "started", winner=r.winner, over=game.over, evals=tuple(evals),
        updated_at=now)


def write_eval_svg(game: Game, path: Path) -> None:
    """Write the game's eval graph (:func:`lichessbot.status.render.eval_svg`, 600 x 160 px) to ``path``."""
    path.write_text(eval_svg(game_snapshot(game), width=600, height=160) + "\n", encoding="utf-8")


def service_figures(service: BotService, running: int, correspondence: int) -> dict[str, Any]:
    """The service's figures for the overview (plain values, never the token): ``running`` and
    ``correspondence`` are the game counts read under the service's lock."""
    engine, client = service.engine, service.client
    figures: dict[str, Any] = {
        "username": service.me, "engine": engine.name, "lichess": client.url,
        "games_running": running, "correspondence_games": correspondence, "games_started": service.games_played,
        "concurrency": service.config.challenge.concurrency, "stopping": service._stopping.is_set(),
        "playing_checks": service.playing_checks, "challenges_queued": len(service.rules.queue),
        "bot_games_today": service.records.bot_games_on(time.time())}
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
                               "tokens": round(pacer.tokens, 1), "paused": session.pauses()}
    return figures
