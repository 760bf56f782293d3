"""Each online source reads its service's real answer and picks lichess-bot's move, with its note."""

from __future__ import annotations

import random

import chess
import pytest

from lichessbot.online import CHESSDB, CLOUD, EGTB, EXPLORER
from lichessbot.timeman import Clock
from tests.online.services import chessdb_all, cloud_json, explorer_json, tablebase_json

TOKEN = "lip_ONLINETOKEN0123456789"
CLOCK = Clock(time=300_000, initial=300_000)
AFTER_E4 = chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
#: White (Ke2, Rh2, Pf2, Pg2) against Ke5 and Pa7: six pieces, white to move.
ENDGAME = chess.Board("8/p7/8/4k3/8/8/4KPPR/8 w - - 0 1")
ROWS = {"c7c5": (500, 434, 300), "e7e5": (300, 400, 300), "e7e6": (0, 0, 6)}


def _explorer(db: str = "masters", **more):
    return {"lichess_opening_explorer": {"enabled": True, "source": db, **more}}


@pytest.mark.parametrize(("sort", "expected", "note"), [
    ("winrate", "e7e5", "explorer: masters, 1,000 games, 50% score"),
    ("games_played", "c7c5", "explorer: masters, 1,234 games, 42% score"),
])
def test_the_explorer_plays_the_best_move_by_its_sort_among_moves_with_min_games(services, make_online, sort,
                                                                                  expected, note):
    services.explorer[("masters", AFTER_E4.epd())] = explorer_json(AFTER_E4, ROWS)
    game = make_online(_explorer(sort=sort), token=TOKEN, lichess=services.url).game("g1")
    found = game.book_move(AFTER_E4, CLOCK)
    assert found is not None and found.move == chess.Move.from_uci(expected)  # e7e6 scores 100 % in 6 games
    assert (found.source, found.note, found.search_moves) == (EXPLORER, note, ())
    (service, path, params, auth), = services.requests
    assert (path, params["fen"], params["moves"], params["topGames"]) == ("/masters", AFTER_E4.fen(), "100", "0")
    assert auth == f"Bearer {TOKEN}"  # the explorer needs the token (OAuth2 in lichess-org/api); this server is
    # the one the bot plays on (lichess=), so it may have it


def test_the_lichess_database_and_a_players_stream_are_asked_with_their_parameters(services, make_online):
    services.explorer[("lichess", AFTER_E4.epd())] = explorer_json(AFTER_E4, ROWS)
    services.explorer[("player", AFTER_E4.epd())] = explorer_json(AFTER_E4, {"d7d5": (3, 2, 20)})
    found = make_online(_explorer("lichess")).game().book_move(AFTER_E4, CLOCK)
    assert found is not None and found.move.uci() == "e7e5" and found.note.startswith("explorer: lichess, ")
    online = make_online(_explorer("player"), username="OurBot")
    found = online.game().book_move(AFTER_E4, CLOCK)  # the stream's last snapshot counts (the first is empty)
    assert found is not None and found.move.uci() == "d7d5"
    lichess_params, player_params = services.requests[0][2], services.requests[1][2]
    assert (lichess_params["variant"], lichess_params["recentGames"], lichess_params["topGames"]) == \
        ("standard", "0", "0")
    assert (player_params["player"], player_params["color"]) == ("OurBot", "black")
    online = make_online(_explorer("player", player_name="someone"), username="OurBot")
    online.game().book_move(AFTER_E4, CLOCK)
    assert services.requests[-1][2]["player"] == "someone"


def test_cloud_eval_best_plays_the_first_line_with_the_score_from_the_side_to_moves_view(services, make_online):
    services.cloud[AFTER_E4.epd()] = cloud_json(AFTER_E4, [("c7c5 g1f3", 25)], depth=31, knodes=2500)
    found = make_online({"lichess_cloud_analysis": {"enabled": True}}).game().book_move(AFTER_E4, CLOCK)
    assert found is not None and found.move.uci() == "c7c5"
    assert (found.source, found.cp, found.depth) == (CLOUD, -25, 31)  # white's +25 is black's -25
    assert found.note == "cloud eval: -0.25, depth 31, 2,500 knodes"
    assert services.requests[0][2]["multiPv"] == "1"


def test_cloud_eval_needs_min_depth_and_min_knodes_and_a_missing_eval_is_no_move(services, make_online):
    services.cloud[AFTER_E4.epd()] = cloud_json(AFTER_E4, [("c7c5", 25)], depth=19, knodes=2500)
    online = make_online({"lichess_cloud_analysis": {"enabled": True}})
    assert online.game().book_move(AFTER_E4, CLOCK) is None
    start = chess.Board()
    assert online.game().book_move(start, CLOCK) is None  # a 404: no evaluation of that position
    assert len(online.cache) == 2  # answers (cached), not failures (never cached)
    online = make_online({"lichess_cloud_analysis": {"enabled": True, "min_depth": 10, "min_knodes": 3000}})
    assert online.game().book_move(AFTER_E4, CLOCK) is None


def test_cloud_eval_good_picks_at_random_among_lines_within_max_score_difference(services, make_online):
    start = chess.Board()
    services.cloud[start.epd()] = cloud_json(start, [("e2e4", 35), ("d2d4", 30), ("g1f3", -10), ("b1c3", -20)])
    online = make_online({"lichess_cloud_analysis": {"enabled": True, "move_quality": "good"}},
                         rng=random.Random(7))
    game = online.game()
    seen = {game.book_move(start, CLOCK).move.uci() for _ in range(40)}
    assert seen == {"e2e4", "d2d4", "g1f3"}  # g1f3 is 45 cp behind the best line, b1c3 55
    assert services.requests[0][2]["multiPv"] == "5" and services.count("cloud") == 1  # cached


def test_cloud_eval_of_another_position_or_with_mates(services, make_online):
    start = chess.Board()
    services.cloud[start.epd()] = cloud_json(AFTER_E4, [("e2e4", 35)])  # the answer names another position
    online = make_online({"lichess_cloud_analysis": {"enabled": True}})
    assert online.game().book_move(start, CLOCK) is None
    mate_in_one = chess.Board("6k1/5ppp/8/8/8/8/8/R6K w - - 0 1")
    services.cloud[mate_in_one.epd()] = cloud_json(mate_in_one, [("a1a8", 1)], mate=True)
    found = online.game().book_move(mate_in_one, CLOCK)
    assert found is not None and (found.move.uci(), found.mate, found.cp) == ("a1a8", 1, None)
    assert found.note.startswith("cloud eval: mate 1")


@pytest.mark.parametrize(("quality", "action", "text", "expected"), [
    ("best", "querypv", "score:35,depth:25,pv:e2e4|e7e5|g1f3", "e2e4"),
    ("best", "querypv", "score:35,depth:15,pv:e2e4|e7e5", None),  # below min_depth 20
    ("good", "querybest", "move:d2d4", "d2d4"),
    ("all", "query", "move:g1f3", "g1f3"),
    ("good", "querybest", "nobestmove", None),
    ("all", "query", "unknown", None),
])
def test_chessdb_book_reads_its_text_answers(services, make_online, quality, action, text, expected):
    start = chess.Board()
    services.chessdb[(action, start.epd())] = text
    online = make_online({"chessdb_book": {"enabled": True, "move_quality": quality}}, token=TOKEN)
    found = online.game().book_move(start, CLOCK)
    assert (found.move.uci() if found else None) == expected
    (service, path, params, auth), = services.requests
    assert (params["action"], params["board"], auth) == (action, start.fen(), None)  # never our token
    if expected and quality == "best":
        assert (found.source, found.cp, found.depth, found.note) == (CHESSDB, 35, 25, "chessdb: +0.35, depth 25")
    assert online.health.switched_off == 0


def _tables(source: str = "lichess", quality: str = "best") -> dict:
    return {"online_egtb": {"enabled": True, "source": source, "move_quality": quality}}


ENDGAME_MOVES = [("h2h5", "loss", -14), ("g2g4", "loss", -20), ("e2e3", "draw", 0), ("h2h1", "maybe-win", 40)]


def test_lichess_tables_best_plays_the_first_move_with_its_dtz(services, make_online):
    services.tablebase[ENDGAME.epd()] = tablebase_json(ENDGAME, "win", 15, ENDGAME_MOVES)
    online = make_online(_tables(), token=TOKEN, lichess=services.url)
    found = online.game().table_move(ENDGAME, CLOCK)
    assert found is not None and found.move.uci() == "h2h5" and found.search_moves == ()
    assert (found.source, found.note, found.wdl, found.dtz) == (EGTB, "tablebase win, DTZ 15", 2, 15)
    assert found.score is not None and found.score.cp == 20_000 - 15 and found.score.wdl == (1.0, 0.0, 0.0)
    (_, path, params, auth), = services.requests
    assert (path, params["fen"], auth) == ("/standard", ENDGAME.fen(), f"Bearer {TOKEN}")


def test_lichess_tables_suggest_the_moves_that_keep_the_result(services, make_online):
    services.tablebase[ENDGAME.epd()] = tablebase_json(ENDGAME, "win", 15, ENDGAME_MOVES)
    found = make_online(_tables(quality="suggest")).game().table_move(ENDGAME, CLOCK)
    assert found is not None and found.move is None
    assert {m.uci() for m in found.search_moves} == {"h2h5", "g2g4"}
    assert found.note == "tablebase win: 2 moves keep it"
    drawn = chess.Board("8/8/8/4k3/8/8/4KP2/8 w - - 0 1")
    services.tablebase[drawn.epd()] = tablebase_json(drawn, "blessed-loss", -3, [
        ("e2d3", "cursed-win", 5), ("f2f4", "win", 3)])
    found = make_online(_tables(quality="suggest")).game().table_move(drawn, CLOCK)
    assert found is not None and found.move.uci() == "e2d3" and found.wdl == -1  # one move keeps it: played
    assert found.note == "tablebase blessed loss, DTZ 3"


def test_tables_are_not_asked_with_castling_rights_or_too_many_pieces(services, make_online):
    online = make_online({"online_egtb": {"enabled": True, "max_pieces": 5}})
    assert online.game().table_move(ENDGAME, CLOCK) is None  # six pieces
    castling = chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    assert online.game().table_move(castling, CLOCK) is None
    assert services.requests == []


def test_an_unknown_position_of_the_tables_is_no_move(services, make_online):
    online = make_online(_tables())
    assert online.game().table_move(ENDGAME, CLOCK) is None  # category unknown, no moves
    assert online.health.switched_off == 0 and len(online.cache) == 1


def test_chessdb_tables_read_queryall_scores(services, make_online):
    services.chessdb[("queryall", ENDGAME.epd())] = chessdb_all([("h2h5", 24986), ("g2g4", 24980), ("e2e3", 0),
                                                                  ("h2h1", -19960)])
    found = make_online(_tables("chessdb")).game().table_move(ENDGAME, CLOCK)
    assert found is not None and found.move.uci() == "h2h5"
    assert (found.wdl, found.note) == (2, "tablebase win (chessdb), DTZ 14 after the move")
    found = make_online(_tables("chessdb", "suggest")).game().table_move(ENDGAME, CLOCK)
    assert found is not None and {m.uci() for m in found.search_moves} == {"h2h5", "g2g4"}
    assert services.requests[0][2]["action"] == "queryall"
    king_pawn = chess.Board("8/8/8/4k3/8/8/4KP2/8 w - - 0 1")
    for score, wdl, words in ((19980, 1, "cursed win"), (0, 0, "draw"), (-19990, -1, "blessed loss"),
                              (-24990, -2, "loss")):
        services.chessdb[("queryall", king_pawn.epd())] = chessdb_all([("e2d3", score), ("f2f4", score - 1)])
        found = make_online(_tables("chessdb")).game().table_move(king_pawn, CLOCK)
        assert (found.move.uci(), found.wdl) == ("e2d3", wdl) and found.note.startswith(f"tablebase {words} (chessdb)")


def test_only_lichess_requests_go_through_the_pacer(services, make_online):
    taken: list[tuple[str, str]] = []

    class Pacer:
        def acquire(self, kind, endpoint, sleep):
            taken.append((kind, endpoint))

    start = chess.Board()
    services.chessdb[("querybest", start.epd())] = "unknown"
    online = make_online({"chessdb_book": {"enabled": True}, "lichess_cloud_analysis": {"enabled": True},
                          **_explorer()}, pacer=Pacer(), lichess=services.url)
    assert online.game().book_move(start, CLOCK) is None
    assert [r[0] for r in services.requests] == ["chessdb", "cloud", "explorer"]  # lichess-bot's order
    assert taken == [("other", "GET /api/cloud-eval"), ("other", "GET explorer/masters")]
