"""The online sources read their servers' limits as the servers write them (issue 40, point 9 and 7):
chessdb's rate-limit answer (HTTP 200) skips one lookup, its 7-piece ``querypv`` is a table verdict, the
token goes to lichess's own hosts only, and cloud evals keep to lichess's daily budget.
"""

from __future__ import annotations

import chess
import pytest

from lichessbot.online import CHESSDB, CLOUD
from lichessbot.online.http import lichess_url
from lichessbot.timeman import Clock
from tests.online.services import cloud_json, explorer_json

TOKEN = "lip_ONLINETOKEN0123456789"
CLOCK = Clock(time=300_000, initial=300_000)
#: White (Ke2, Rh2, Pf2, Pg2) against Ke5 and Pa7: six pieces, white to move.
ENDGAME = chess.Board("8/p7/8/4k3/8/8/4KPPR/8 w - - 0 1")


def test_a_chessdb_rate_limit_answer_costs_one_skipped_lookup(services, make_online):
    """cdb.php answers ``rate limit exceeded`` with HTTP 200 when our address asked too often this second:
    the lookup goes on to the next source, nothing is cached, the source is not counted as failing, and the
    next lookup asks chessdb again."""
    start = chess.Board()
    services.chessdb[("querybest", start.epd())] = "rate limit exceeded"
    services.cloud[start.epd()] = cloud_json(start, [("d2d4 d7d5", 20)], depth=40)
    online = make_online({"chessdb_book": {"enabled": True}, "lichess_cloud_analysis": {"enabled": True},
                          "switch_off_after": 1})
    game = online.game()
    found = game.book_move(start, CLOCK)
    assert found is not None and (found.source, found.move.uci()) == (CLOUD, "d2d4")  # the next source answered
    assert online.skipped == 1 and online.health.switched_off == 0
    for _ in range(3):  # more than switch_off_after in a row: still never switched off
        online.lookup(online.books[:1], start, CLOCK, None)
    assert online.health.available(CHESSDB) and online.skipped == 4
    services.chessdb[("querybest", start.epd())] = "move:e2e4"
    found = online.lookup(online.books[:1], start, CLOCK, None)[0]  # not cached: asked again, a move now
    assert found is not None and found.move.uci() == "e2e4"
    assert services.count("chessdb") == 5


def test_chessdb_tables_rate_limit_is_skipped_too(services, make_online):
    services.chessdb[("queryall", ENDGAME.epd())] = "rate limit exceeded"
    online = make_online({"online_egtb": {"enabled": True, "source": "chessdb"}, "switch_off_after": 1})
    assert online.game().table_move(ENDGAME, CLOCK) is None
    assert (online.skipped, online.health.switched_off, len(online.cache)) == (1, 0, 0)


@pytest.mark.parametrize(("text", "wdl", "note"), [
    ("score:24986,depth:-14,pv:h2h5", 2, "chessdb: tablebase win, DTZ 14 after the move"),
    ("score:0,depth:0,pv:e2e3", 0, "chessdb: tablebase draw"),
    ("score:-24990,depth:10,pv:h2h1", -2, "chessdb: tablebase loss, DTZ 10 after the move"),
])
def test_chessdb_querypv_within_seven_pieces_is_the_tables_verdict_not_a_mate(services, make_online, text, wdl,
                                                                               note):
    """cdb.php answers querypv from its tables within 7 pieces: depth is the move's DTZ (negative, or 0 for a
    draw: below any min_depth) and the score +-25000 - plies: a table verdict, never 250 pawns or a mate."""
    services.chessdb[("querypv", ENDGAME.epd())] = text
    online = make_online({"chessdb_book": {"enabled": True, "move_quality": "best", "min_depth": 20}})
    found = online.game().book_move(ENDGAME, CLOCK)
    assert found is not None and found.move.uci() == text.rsplit(":", 1)[1]
    assert (found.wdl, found.cp, found.mate, found.note) == (wdl, None, None, note)
    assert found.score is not None and found.score.mate is None
    assert found.score.wdl == {2: (1.0, 0.0, 0.0), 0: (0.0, 1.0, 0.0), -2: (0.0, 0.0, 1.0)}[wdl]


def test_chessdb_querypv_above_seven_pieces_is_still_a_search_line(services, make_online):
    start = chess.Board()
    services.chessdb[("querypv", start.epd())] = "score:35,depth:25,pv:e2e4|e7e5"
    found = make_online({"chessdb_book": {"enabled": True, "move_quality": "best"}}).game().book_move(start, CLOCK)
    assert found is not None and (found.cp, found.depth, found.wdl) == (35, 25, None)


@pytest.mark.parametrize(("url", "own", "trusted"), [
    ("https://explorer.lichess.org/masters", None, True),
    ("https://lichess.org/api/cloud-eval", None, True),
    ("https://tablebase.lichess.ovh/standard", None, True),
    ("http://explorer.lichess.org/masters", None, False),        # never in the clear
    ("https://lichess.org.evil.example/masters", None, False),   # a look-alike
    ("https://notlichess.org/masters", None, False),
    ("https://explorer.example.com/masters", None, False),
    ("http://127.0.0.1:9663/masters", "http://127.0.0.1:9663", True),   # the server the bot plays on
    ("http://127.0.0.1:9664/masters", "http://127.0.0.1:9663", False),  # another port is another server
])
def test_only_lichess_own_hosts_may_get_the_token(url, own, trusted):
    assert lichess_url(url, own) is trusted


def test_an_explorer_elsewhere_never_gets_the_token_nor_the_bots_request_budget(services, make_online):
    taken: list[str] = []

    class Pacer:
        def acquire(self, kind, endpoint, sleep):
            taken.append(endpoint)

    after_e4 = chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    services.explorer[("masters", after_e4.epd())] = explorer_json(after_e4, {"c7c5": (50, 40, 30)})
    online = make_online({"lichess_opening_explorer": {"enabled": True}}, token=TOKEN, pacer=Pacer(),
                         lichess="https://lichess.org")
    found = online.game().book_move(after_e4, CLOCK)
    assert found is not None and found.move.uci() == "c7c5"
    assert services.requests[0][3] is None and taken == []


def test_cloud_evals_keep_to_lichess_daily_budget_in_its_fixed_window(services, make_online):
    """lila counts cloud evals in a window of a day that opens at the first request (memo RateLimit): after
    max_requests_per_day requests none goes until the window closes, then the count starts again."""
    now = [1000.0]
    boards = [chess.Board(), chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"),
              chess.Board("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")]
    online = make_online({"lichess_cloud_analysis": {"enabled": True, "max_requests_per_day": 2}},
                         clock=lambda: now[0])
    for board in boards:
        online.game().book_move(board, None)
    assert services.count("cloud") == 2
    now[0] += 86_399
    online.game().book_move(boards[2], None)
    assert services.count("cloud") == 2  # still the same window
    now[0] += 2
    online.game().book_move(boards[2], None)
    assert services.count("cloud") == 3 and online.health.switched_off == 0
