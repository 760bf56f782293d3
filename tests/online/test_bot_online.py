"""The online move sources in whole bot games: the bot (real engine on the tiny net) against the test server
server, its online sources pointed at the fake services (tests/online/services.py, the services' real JSON).

Issue 29's "done when": the explorer's move in an opening position (its source in the PGN), the online
table's move in a 5-piece endgame, a slow server (2 s) costing a 1+0 game nothing, a failing server switched
off while the bot plays on.
"""

from __future__ import annotations

import io
import json
from typing import Any

import chess
import pytest

from tests.fake_lichess import BotRun, resign_after
from tests.online.services import FakeServices, explorer_json, tablebase_json

TOKEN = "lip_Secret0Token1For2Tests"
#: Five pieces, white to move and win (KQR against K and pawn); no castling rights: the online tables are asked.
ENDGAME = "8/6p1/8/4k3/8/8/2QR4/4K3 w - - 0 1"


def online(services: FakeServices, **sections: dict[str, Any]) -> dict[str, Any]:
    """An ``online_moves`` section with ``sections`` enabled and every url on the fake services."""
    urls = {"lichess_opening_explorer": services.url, "lichess_cloud_analysis": services.url,
            "chessdb_book": services.url + "/cdb.php", "online_egtb": services.url}
    data: dict[str, Any] = {"switch_off_after": 3}
    for key, extra in sections.items():
        data[key] = {"enabled": True, "url": urls[key], **extra}
    return data


def log_events(logs: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in logs.getvalue().splitlines() if line.startswith("{")]


def test_an_opening_position_gets_the_explorers_move_with_its_source_in_the_pgn(server, engine, services, logs,
                                                                               tmp_path):
    start = chess.Board()
    services.explorer[("masters", start.epd())] = explorer_json(start, {"g2g3": (500, 400, 100),
                                                                       "e2e4": (300, 300, 400)})
    config = {"pgn_directory": str(tmp_path), "online_moves": online(services, lichess_opening_explorer={}),
              "chat": {"eval_room": "spectator", "eval_every": 1}, "status": {"enabled": True, "port": 0}}
    with BotRun(server, engine, config) as bot:
        game = bot.play(opponent=resign_after(4), limit=60)
        assert server.wait_for(lambda: list(tmp_path.glob("*.pgn")), 10)
        snap = bot.service.status.game(game.id)
    assert snap is not None and (snap.evals[0].source, snap.evals[0].note[:29]) == ("online_book",
                                                                                   "explorer: masters, 1,000 game")
    assert any(t.startswith("explorer: masters, 1,000 games") and t.endswith("| g3") for _, t in game.chat)
    assert game.posts[0][:2] == (0, "g2g3")  # the explorer's best score for white, not the engine's choice
    pgn = next(tmp_path.glob("*.pgn")).read_text()
    assert "1. g3 { explorer: masters, 1,000 games" in pgn
    asked = [r for r in services.requests if r[0] == "explorer"]
    # The explorer wants a token, but this one is neither lichess's nor the server the bot plays on: it never
    # gets the bot's token (issue 40: only lichess's own hosts may have it).
    assert asked[0][1] == "/masters" and asked[0][3] is None
    assert any(e.get("event") == "move" and e.get("source") == "online_book" for e in log_events(logs))


def test_an_endgame_is_played_by_the_online_tables_move(server, engine, services, tmp_path):
    board = chess.Board(ENDGAME)
    services.tablebase[board.epd()] = tablebase_json(board, "win", 15, [("e1f1", "loss", -14),
                                                                         ("d2d5", "loss", -2)])
    config = {"pgn_directory": str(tmp_path), "online_moves": online(services, online_egtb={})}
    with BotRun(server, engine, config) as bot:
        game = bot.play(fen=ENDGAME, opponent=resign_after(4), limit=60)
        assert server.wait_for(lambda: list(tmp_path.glob("*.pgn")), 10)
    assert game.posts[0][:2] == (0, "e1f1")
    assert "1. Kf1 { tablebase win, DTZ 15 [%clk" in next(tmp_path.glob("*.pgn")).read_text()
    assert services.count("tablebase") >= 2  # asked again after the opponent's move (no answer: searched)


@pytest.mark.slow
def test_a_slow_server_costs_a_one_minute_game_nothing(server, engine, services):
    services.delay["explorer"] = 2.0
    sources = online(services, lichess_opening_explorer={})
    sources["switch_off_after"] = 10  # asked at every move of ours
    with BotRun(server, engine, {"online_moves": sources}) as bot:
        game = bot.play(opponent=resign_after(8), limit=60, timeout=40)
    assert game.status == "resign" and game.winner == "white"
    # Five moves of ours, four on the clock: each waited at most its budget (2% of the clock: 1.2 s at the
    # start) for the server, never its 2 s. A bot that waited for the answers would show 8 s gone.
    assert game.wtime > 60_000 - 4 * 1_200 - 1_000
    assert services.count("explorer") == 5  # asked at every move


@pytest.mark.slow
def test_a_failing_server_is_switched_off_and_the_bot_plays_on(server, engine, services, logs):
    services.fail_next("explorer", 503, n=100)
    config = {"online_moves": online(services, lichess_opening_explorer={})}
    with BotRun(server, engine, config) as bot:
        game = bot.play(opponent=resign_after(12), limit=60)
    assert game.status == "resign" and game.winner == "white"
    off = [e for e in log_events(logs) if e.get("event") == "online source switched off"]
    assert len(off) == 1 and off[0]["source"] == "lichess_opening_explorer"
    asked = services.count("explorer")
    assert asked == 3 * (1 + 2)  # three lookups of three tries (max_retries 2), then no more
