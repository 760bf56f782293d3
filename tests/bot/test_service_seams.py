"""The bot service's seams, typed (issue 52, "typed seams"): the status page's figures come from the real engine
through :func:`~lichessbot.bot.service.attached.engine_figures` (its concrete type, no attribute probing) and
from the client's session; a stand-in engine reports none."""

from __future__ import annotations

import chess

from lichessbot.bot.games.publish import service_figures
from lichessbot.bot.service.attached import engine_figures
from lichessbot.lichess.client import ClientSettings, LichessClient


def test_the_real_engines_figures_name_its_provider_eval_service_and_ponders(engine):
    thinker = engine.new_game("g1")
    try:
        thinker.think(chess.Board(), None)
    finally:
        thinker.close()
    figures = engine_figures(engine)
    assert figures["provider"] == "CPUExecutionProvider"
    assert set(figures) == {"ponders", "ponder_hits", "eval_service", "provider"}
    assert figures["eval_service"]["batches"] > 0  # type: ignore[index]


def test_the_overview_joins_the_service_the_engine_and_the_request_budget():
    client = LichessClient("lip_x", "http://127.0.0.1:9", ClientSettings())
    try:
        out = service_figures("tiny", {"ponders": 3}, client, {"username": "bot"})
    finally:
        client.close()
    assert out["engine"] == "tiny" and out["ponders"] == 3 and out["username"] == "bot"
    assert out["lichess"] == "http://127.0.0.1:9"
    assert set(out["requests"]) == {"deferred", "dropped", "tokens", "paused", "deferred_by_limit",  # type: ignore
                                    "refused_by_limit"}
    assert "lip_x" not in repr(out)
