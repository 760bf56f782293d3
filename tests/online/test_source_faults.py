"""A source never costs the game: budgets from the clock, min_time/max_time, retries, the cache, switch-off,
and slow, failing and wrong servers."""

from __future__ import annotations

import json
import time

import chess
import pytest

from lichessbot.config.online import OnlineMovesConfig
from lichessbot.online import lookup_budget
from lichessbot.timeman import Clock
from tests.online.services import cloud_json, explorer_json

TOKEN = "lip_ONLINETOKEN0123456789"
START = chess.Board()
BULLET = Clock(time=60_000, initial=60_000)  # a 1+0 game at its start
BLITZ = Clock(time=300_000, initial=300_000)
BOOKS = {"chessdb_book": {"enabled": True}, "lichess_cloud_analysis": {"enabled": True}}


def _switched_off(logs) -> list[dict]:
    lines = [json.loads(line) for line in logs.getvalue().splitlines() if line.strip()]
    return [x for x in lines if x.get("event") == "online source switched off"]


def _timed(fn):
    t0 = time.monotonic()
    result = fn()
    return result, time.monotonic() - t0


def test_the_budget_is_a_share_of_the_clock_capped_by_the_callers_budget():
    config = OnlineMovesConfig()
    assert lookup_budget(config, BULLET) == pytest.approx(1.2)
    assert lookup_budget(config, Clock(time=20_000)) == pytest.approx(0.4)
    assert lookup_budget(config, BLITZ, budget=0.5) == pytest.approx(0.5)
    assert lookup_budget(config, None) == pytest.approx(2.0 * 3 * 4)  # no clock: timeouts only


@pytest.mark.slow
def test_a_slow_server_costs_a_bullet_game_no_more_than_its_budget_then_is_switched_off(services, make_online, logs):
    services.delay["chessdb"] = 2.0
    services.cloud[START.epd()] = cloud_json(START, [("d2d4", 20)])
    game = make_online(BOOKS).game("g1")
    for _ in range(3):  # chessdb answers in 2 s; the move's budget is 2 % of 60 s
        found, took = _timed(lambda: game.book_move(START, BULLET))
        assert found is None and took < 1.2 + 0.4, took
    assert len(_switched_off(logs)) == 1 and _switched_off(logs)[0]["source"] == "chessdb_book"
    asked = services.count("chessdb")
    found, took = _timed(lambda: game.book_move(START, BULLET))
    assert found is not None and found.move.uci() == "d2d4" and took < 0.5  # chessdb is off: the cloud answers
    assert services.count("chessdb") == asked and len(_switched_off(logs)) == 1  # one log line only
    assert game.out_of_book == 0  # failures are not "out of book"


def test_in_a_longer_game_a_slow_source_is_cut_at_its_timeout_and_the_next_one_answers(services, make_online):
    services.delay["chessdb"] = 2.0
    services.cloud[START.epd()] = cloud_json(START, [("d2d4", 20)])
    online = make_online({**BOOKS, "timeout": 0.5, "max_retries": 0})
    found, took = _timed(lambda: online.game().book_move(START, BLITZ))
    assert found is not None and found.move.uci() == "d2d4" and 0.5 <= took < 0.5 + 0.4


def test_nothing_is_asked_below_min_time_or_when_the_game_is_longer_than_max_time(services, make_online):
    online = make_online({**BOOKS, "online_egtb": {"enabled": True}})
    game = online.game()
    assert game.book_move(START, Clock(time=19_900, initial=60_000)) is None
    assert game.book_move(START, Clock(time=600_000, initial=10_801_000)) is None
    king_pawn = chess.Board("8/8/8/4k3/8/8/4KP2/8 w - - 0 1")
    assert game.table_move(king_pawn, Clock(time=5_000, initial=60_000)) is None
    assert services.requests == []
    assert game.book_move(START, None) is None  # no clock: asked
    assert services.count("chessdb") == 1 and services.count("cloud") == 1


@pytest.mark.parametrize("fault", [503, 500, "drop"])
@pytest.mark.slow
def test_a_failed_request_is_retried_within_max_retries(services, make_online, fault):
    services.cloud[START.epd()] = cloud_json(START, [("e2e4", 30)])
    services.fail_next("cloud", fault)
    online = make_online({"lichess_cloud_analysis": {"enabled": True}})
    found = online.game().book_move(START, BLITZ)
    assert found is not None and found.move.uci() == "e2e4" and services.count("cloud") == 2
    services.fail_next("cloud", fault, 3)
    other = chess.Board("rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1")
    assert online.game().book_move(other, BLITZ) is None  # 1 + max_retries (2) tries, all failed
    assert services.count("cloud") == 5


@pytest.mark.parametrize("what", ["garbage", "illegal", "hang", "drip"])
@pytest.mark.slow
def test_wrong_or_silent_answers_are_failures_never_cached_and_switch_the_source_off(services, make_online, logs,
                                                                                     what):
    if what == "illegal":
        services.explorer[("masters", START.epd())] = explorer_json(START, {"e2e5": (50, 50, 50)})
    else:
        services.explorer[("masters", START.epd())] = explorer_json(START, {"e2e4": (50, 50, 50)})
        services.fail_next("explorer", what, 3)
    online = make_online({"lichess_opening_explorer": {"enabled": True}, "switch_off_time": 1.0},
                         token=TOKEN)
    game = online.game()
    for _ in range(3):
        found, took = _timed(lambda: game.book_move(START, BULLET))
        assert found is None and took < 1.2 + 0.4
    assert services.count("explorer") == 3 and len(online.cache) == 0  # no retry of a wrong answer; hang: timeout
    assert len(_switched_off(logs)) == 1
    assert game.book_move(START, BULLET) is None and services.count("explorer") == 3  # off: not asked
    if what != "illegal":
        time.sleep(1.0)  # switch_off_time
        found = game.book_move(START, BULLET)
        assert found is not None and found.move.uci() == "e2e4"


def test_a_429_switches_the_source_off_at_once(services, make_online, logs):
    services.fail_next("explorer", 429)
    online = make_online({"lichess_opening_explorer": {"enabled": True}})
    assert online.game().book_move(START, BLITZ) is None
    assert services.count("explorer") == 1  # never retried
    (line,) = _switched_off(logs)
    assert line["reason"] == "429 Too Many Requests" and line["seconds"] == 300
    assert not online.health.available("lichess_opening_explorer")


def test_answers_are_cached_per_position(services, make_online):
    services.cloud[START.epd()] = cloud_json(START, [("e2e4", 30)])
    online = make_online({"lichess_cloud_analysis": {"enabled": True}})
    for game in (online.game("a"), online.game("b")):
        assert game.book_move(START, BLITZ).move.uci() == "e2e4"
    transposed = chess.Board(START.fen().replace(" 0 1", " 4 3"))  # same position, other move counters
    assert online.game().book_move(transposed, BLITZ).move.uci() == "e2e4"
    assert services.count("cloud") == 1 and online.cache.hits == 2


def test_a_pacer_wait_past_the_budget_gives_up_without_a_request(services, make_online):
    waits: list[float] = []

    class SlowPacer:
        def acquire(self, kind, endpoint, sleep):
            waits.append(5.0)
            sleep(5.0)  # the bot's budget is short: 5 s to the next token

    online = make_online({"lichess_cloud_analysis": {"enabled": True}}, pacer=SlowPacer(), lichess=services.url)
    found, took = _timed(lambda: online.game().book_move(START, BULLET))
    assert found is None and took < 0.3 and waits and services.requests == []
    for _ in range(3):
        online.game().book_move(START, BULLET)
    assert online.health.available("lichess_cloud_analysis")  # waiting for a token is not the server's fault


def test_the_books_stop_after_max_out_of_book_moves_and_past_max_depth(services, make_online):
    online = make_online({"lichess_cloud_analysis": {"enabled": True}, "max_out_of_book_moves": 2})
    game = online.game()
    board = chess.Board()
    for uci in ("e2e4", "e7e5"):  # no evaluation of these positions (404): no move
        assert game.book_move(board, BLITZ) is None
        board.push_uci(uci)
    assert game.books_done and services.count("cloud") == 2
    services.cloud[board.epd()] = cloud_json(board, [("g1f3", 30)])
    assert game.book_move(board, BLITZ) is None and services.count("cloud") == 2
    assert online.game().book_move(board, BLITZ).move.uci() == "g1f3"  # another game asks again
    deep = make_online({"lichess_cloud_analysis": {"enabled": True}, "max_depth": 1})
    assert deep.game().book_move(board, BLITZ) is None  # move 2: past max_depth 1
    assert deep.game().book_move(chess.Board(), BLITZ) is None and services.count("cloud") == 4
