"""BotLi's conditions on the online books: ``priority`` (among them and against the local book's
``book.priority``), ``only_without_book``, ``allow_repetitions``, ``trust_eval``; and the book's ``max_moves``."""

from __future__ import annotations

import chess

from lichessbot.book import Book
from lichessbot.config import BookConfig
from lichessbot.thinker import MoveRequest, move_sources
from tests.book.test_book import START, write_book
from tests.online.services import cloud_json, explorer_json

CLOCK = None  # no clock: every min_time passes


def decide(sources, board):
    for s in sources:
        d = s.move(board, MoveRequest())
        if d is not None:
            return s.name, d
    return None, None


def test_the_highest_priority_online_book_is_asked_first(make_online, services):
    b = chess.Board()
    services.explorer[("masters", b.epd())] = explorer_json(b, {"b2b3": (60, 30, 10)})
    services.cloud[b.epd()] = cloud_json(b, [("g1f3", 30)])
    both = {"lichess_opening_explorer": {"enabled": True}, "lichess_cloud_analysis": {"enabled": True}}
    assert make_online(both).game("g").book_move(b, CLOCK).source == "lichess_cloud_analysis"  # lichess-bot's order
    first = {**both, "lichess_opening_explorer": {"enabled": True, "priority": 5}}
    assert make_online(first).game("g").book_move(b, CLOCK).source == "lichess_opening_explorer"


def test_an_online_book_above_the_local_books_priority_is_asked_before_it(make_online, services, tmp_path):
    b = chess.Board()
    services.explorer[("masters", b.epd())] = explorer_json(b, {"b2b3": (60, 30, 10)})
    book = Book({"standard": [str(write_book(tmp_path / "b.bin", [(START, "e2e4", 10)]))]})
    for priority, expected in ((0, "e2e4"), (1, "b2b3")):
        online = make_online({"lichess_opening_explorer": {"enabled": True, "priority": priority}})
        sources = move_sources(book=book, online=online.game("g"), book_config=BookConfig(priority=0))
        assert decide(sources, b)[1].move.uci() == expected


def test_only_without_book_skips_a_source_once_the_book_played(make_online, services):
    b = chess.Board()
    services.explorer[("masters", b.epd())] = explorer_json(b, {"b2b3": (60, 30, 10)})
    game = make_online({"lichess_opening_explorer": {"enabled": True, "only_without_book": True}}).game("g")
    assert game.book_move(b, CLOCK, book_moves=0) is not None
    assert game.book_move(b, CLOCK, book_moves=1) is None


def test_a_move_that_repeats_a_position_is_not_played_without_repetitions(make_online, services):
    b = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1"):
        b.push_uci(uci)
    services.cloud[b.epd()] = cloud_json(b, [("f6g8", 0)])
    allowed = make_online({"lichess_cloud_analysis": {"enabled": True}}).game("g")
    assert allowed.book_move(b, CLOCK).move.uci() == "f6g8"
    strict = make_online({"lichess_cloud_analysis": {"enabled": True, "allow_repetitions": False}}).game("g")
    assert strict.book_move(b, CLOCK) is None


def test_a_trusted_eval_counts_for_draws_and_resignation(make_online, services):
    b = chess.Board()
    services.cloud[b.epd()] = cloud_json(b, [("e2e4", 25)])
    for trust, cp in ((False, None), (True, 25)):
        online = make_online({"lichess_cloud_analysis": {"enabled": True, "trust_eval": trust}})
        _, decision = decide(move_sources(online=online.game("g")), b)
        assert decision.move.uci() == "e2e4" and decision.score_cp == cp


def test_max_moves_limits_the_book_moves_of_a_game(tmp_path):
    board = chess.Board()
    book = Book({"standard": [str(write_book(tmp_path / "b.bin", [(START, "e2e4", 10)]))]})
    assert decide(move_sources(book=book, book_config=BookConfig(max_moves=1), book_moves=0), board)[0] == "book"
    assert decide(move_sources(book=book, book_config=BookConfig(max_moves=1), book_moves=1), board)[0] is None


def test_the_game_thinker_counts_its_book_moves(engine, tmp_path):
    from lichessbot.config import GameFacts, parse_config

    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    path = write_book(tmp_path / "c.bin", [(START, "e2e4", 10), (board, "g1f3", 10)])
    cfg = parse_config({"game_overrides": {"white": {"book": {"enabled": True, "max_moves": 1,
                                                               "paths": {"standard": [str(path)]}}}}})
    thinker = engine.new_game("g")
    try:
        thinker.set_opponent(None, False, cfg.for_game(GameFacts("blitz", color="white")))
        assert thinker.think(chess.Board(), None).source == "book" and thinker.book_moves == 1
        assert thinker.think(board, None).source != "book"  # max_moves 1: the search plays the second
    finally:
        thinker.close()


def test_only_with_wins_leaves_out_moves_the_side_to_move_never_won_with(make_online, services):
    b = chess.Board()
    services.explorer[("masters", b.epd())] = explorer_json(b, {"b2b3": (0, 90, 10), "g2g3": (5, 10, 80)})
    plain = make_online({"lichess_opening_explorer": {"enabled": True}}).game("g")
    assert plain.book_move(b, CLOCK).move.uci() == "b2b3"  # the best score: 45 %, without a win
    wins = make_online({"lichess_opening_explorer": {"enabled": True, "only_with_wins": True}}).game("g")
    assert wins.book_move(b, CLOCK).move.uci() == "g2g3"


def test_anti_asks_the_opponents_games_as_their_colour(make_online, services):
    b = chess.Board()
    services.explorer[("player", b.epd())] = explorer_json(b, {"d2d4": (70, 10, 20), "e2e4": (20, 10, 70)})
    explorer = {"lichess_opening_explorer": {"enabled": True, "source": "player", "anti": True, "min_games": 1}}
    game = make_online(explorer, username="TestBot").game("g")
    assert game.book_move(b, CLOCK) is None  # the opponent is not known yet: nothing asked
    game.opponent = "Rival"
    assert game.book_move(b, CLOCK).move.uci() == "d2d4"  # white (us) scored best against Rival's black
    [(service, path, params, _)] = [r for r in services.requests if r[0] == "explorer"]
    assert path == "/player" and params["player"] == "Rival" and params["color"] == "black"


def test_the_game_thinker_tells_its_online_game_the_opponent(engine, make_online):
    online = make_online({"lichess_opening_explorer": {"enabled": True}})
    engine.use_online(online)
    thinker = engine.new_game("g")
    try:
        thinker.set_opponent(1500, False, None, "Rival")
        assert thinker.pipeline.sources and thinker._online is not None and thinker._online.opponent == "Rival"
    finally:
        thinker.close()
        engine.use_online(None)


def test_the_game_core_names_the_opponent_to_the_thinker():
    from lichessbot.bot.games.actions import SetOpponent
    from tests.bot.test_game_core import core_of, full

    [action] = [a for a in core_of().on_event(full(), 1000.0) if isinstance(a, SetOpponent)]
    assert action.name == "alice"
