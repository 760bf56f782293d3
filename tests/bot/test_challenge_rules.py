"""The challenge rules that remember (issue 19), against the test server: slots kept for humans,
games per user, recent bot challenges, the daily bot-game limit, the queue (sort_by, preference) and
rematch offers."""

from __future__ import annotations

import json
import time

import pytest

from lichessbot.bot.challenges.filter import queue_order
from lichessbot.bot.challenges.records import DeclineRecords
from lichessbot.bot.matchmaking.matchmaker import MatchmakerOptions
from lichessbot.lichess.events import parse_challenge
from tests.fake_lichess import BotRun, StandInEngine, resign_after, scripted, staller
from tests.lila.matchmaking import ACCEPT

TOKEN = "lip_ChallengeRules0Token1"
NOON = 1_700_000_000.0 - 1_700_000_000.0 % 86400 + 43200  # 12:00 UTC on some day


# Every test's logs are checked for TOKEN (tests/conftest.py: ``logs``; ``server`` uses it too).
pytestmark = pytest.mark.usefixtures("logs")


def run_bot(server, tmp_path, challenge=None, matchmaking=None):
    config = {"challenge": {"concurrency": 1, **(challenge or {})},
              "matchmaking": {"decline_file": str(tmp_path / "state.json"), **(matchmaking or {})}}
    return BotRun(server, StandInEngine(), config, matchmaker=MatchmakerOptions(tick=0.05))


def answer(server, cid, timeout=10):
    assert server.wait_for(lambda: cid in server.answers, timeout), f"{cid} not answered"
    return server.answers[cid]


def started(server, cid, plies=1):
    assert server.wait_for(lambda: cid in server.games and server.games[cid].ply() >= plies, 10)
    return server.games[cid]


def end(server, cid):
    """The opponent resigns game ``cid`` now."""
    with server.lock:
        g = server.games[cid]
        server._finish(g, "resign", g.bot_color)


MM = {"allow_matchmaking": True, "allow_during_games": True, "challenge_timeout": 0, "min_wait": 0,
      "challenge_expiry": 1.0, "challenge_initial_time": [60], "challenge_increment": [1], "challenge_mode": "casual",
      "challenge_variant": "standard"}


# slots reserved for humans -------------------------------------------------------------------------
def test_games_reserved_for_humans_keeps_a_slot_free_for_a_human_challenge(server, tmp_path):
    with run_bot(server, tmp_path, {"concurrency": 2, "games_reserved_for_humans": 1, "queue_wait": 0}):
        bot1 = server.challenge(challenger="BotOne", title="BOT", opponent=staller())
        assert answer(server, bot1) == ("accept", None)
        bot2 = server.challenge(challenger="BotTwo", title="BOT", opponent=staller())
        assert answer(server, bot2) == ("decline", "later")  # the second slot is the humans'
        human = server.challenge(challenger="alice", opponent=staller())
        assert answer(server, human) == ("accept", None)
        assert server.peak_games == 2 and server.peak_bot_games == 1


def test_matchmaking_never_takes_the_slot_reserved_for_humans(server, tmp_path, logs):
    server.add_bot("Alpha", policy=ACCEPT, player=staller)
    with run_bot(server, tmp_path, {"concurrency": 2, "games_reserved_for_humans": 1}, MM):
        assert server.wait_for(lambda: "accepted" in server.outgoing_status.values(), 10)
        time.sleep(0.6)  # many matchmaking rounds with one slot free: it is the humans'
        assert len(server.outgoing) == 1
        human = server.challenge(challenger="alice", opponent=staller())
        assert answer(server, human) == ("accept", None)
    assert "matchmaking waits" in logs.getvalue() and "reserved for humans" in logs.getvalue()


# games per user and recent bot challenges -------------------------------------------------------
def test_max_simultaneous_games_per_user_declines_a_second_game_with_the_same_user(server, tmp_path):
    rules = {"concurrency": 3, "max_simultaneous_games_per_user": 1, "queue_wait": 0}
    with run_bot(server, tmp_path, rules):
        first = server.challenge(challenger="alice", opponent=staller())
        assert answer(server, first) == ("accept", None)
        started(server, first)
        again = server.challenge(challenger="Alice", opponent=staller())
        assert answer(server, again) == ("decline", "later")
        other = server.challenge(challenger="bob", opponent=staller())
        assert answer(server, other) == ("accept", None)
    assert server.peak_games_per_user == 1


def test_matchmaking_skips_a_bot_we_play_max_simultaneous_games_per_user_with(server, tmp_path):
    with run_bot(server, tmp_path, {"concurrency": 3, "max_simultaneous_games_per_user": 1}, MM):
        cid = server.challenge(challenger="Alpha", title="BOT", opponent=staller())
        started(server, cid)
        server.add_bot("Alpha", policy=ACCEPT)  # online now, but we play it already
        time.sleep(0.6)
        assert server.outgoing == []
        server.add_bot("Beta", policy=ACCEPT, player=staller)
        assert server.wait_for(lambda: server.outgoing, 10)
    assert server.outgoing[0]["destUser"]["name"] == "Beta"


def test_a_bots_recent_challenges_are_limited_rematches_included(server, tmp_path):
    rules = {"concurrency": 2, "recent_bot_challenge_age": 60, "max_recent_bot_challenges": 1}
    with run_bot(server, tmp_path, rules):
        cid = server.challenge(challenger="Alpha", title="BOT", opponent=resign_after(4))
        assert answer(server, cid) == ("accept", None)
        assert server.wait_for(lambda: server.games[cid].over, 10)
        again = server.rematch(cid)
        assert server.challenges[again].rematch_of == cid
        assert answer(server, again) == ("decline", "later")
        human = server.challenge(challenger="alice", opponent=resign_after(4))  # humans are not limited
        assert answer(server, human) == ("accept", None)
        assert server.wait_for(lambda: server.games[human].over, 10)
        assert answer(server, server.rematch(human)) == ("accept", None)


# rematch offers -------------------------------------------------------------------------------------
def test_a_rematch_offer_frees_the_slot_of_its_game_before_the_game_end_is_seen(server, tmp_path):
    with run_bot(server, tmp_path, {"queue_wait": 0}) as run:
        cid = server.challenge(challenger="Alpha", title="BOT", opponent=scripted(["e7e5"]))
        started(server, cid, plies=3)
        with server.lock:  # the game ends; the bot hears of it only 3 s later (no gameFinish, stream cut)
            server.skip_game_finish = 1
            server.blackout(cid, 3.0)
            end(server, cid)
        offer = server.rematch(cid)
        assert answer(server, offer, timeout=2) == ("accept", None)  # lichess offers rematches of ended games
        assert server.wait_for(lambda: offer in server.games, 5)
        assert run.service.busy() == 1
    assert server.games[offer].bot_color != server.games[cid].bot_color


def test_a_rematch_offer_is_judged_by_the_challenge_rules(server, tmp_path):
    with run_bot(server, tmp_path, {"queue_wait": 0}):
        cid = server.challenge(challenger="carol", opponent=resign_after(4))
        assert answer(server, cid) == ("accept", None)
        assert server.wait_for(lambda: server.games[cid].over, 10)
        other = server.challenge(challenger="dave", opponent=staller())
        assert answer(server, other) == ("accept", None)
        assert answer(server, server.rematch(cid)) == ("decline", "later")  # the one slot is dave's


# the daily limit of bot games -------------------------------------------------------------------------
def test_the_daily_bot_game_limit_stops_matchmaking_and_declines_bots_with_later(server, tmp_path, logs):
    server.add_bot("Alpha", policy=ACCEPT, player=lambda: resign_after(2))
    with run_bot(server, tmp_path, {"max_bot_games_per_day": 1}, MM) as run:
        assert server.wait_for(lambda: any(g.over for g in server.games.values()), 10)
        time.sleep(0.6)  # many matchmaking rounds: today's one bot game is played
        assert len(server.outgoing) == 1
        bot = server.challenge(challenger="Gamma", title="BOT", opponent=staller())
        assert answer(server, bot) == ("decline", "later")
        human = server.challenge(challenger="alice", opponent=resign_after(2))
        assert answer(server, human) == ("accept", None)
        assert run.service.matchmaker.waiting_for.startswith("1 games against bots in 24 h")
    state = json.loads((tmp_path / "state.json").read_text())
    assert list(state["bot_games"]) == [server.outgoing[0]["id"]]  # the human game is not counted
    with run_bot(server, tmp_path, {"max_bot_games_per_day": 1}, MM):  # a restart keeps today's count
        time.sleep(0.6)
        bot = server.challenge(challenger="Delta", title="BOT", opponent=staller())
        assert answer(server, bot) == ("decline", "later")
    assert len(server.outgoing) == 1
    assert "max_bot_games_per_day 1; in the last 24 h" in logs.getvalue()


def test_bot_games_count_in_a_rolling_day_as_lila_does(tmp_path):
    rec = DeclineRecords()
    assert rec.count_bot_game("g1", NOON - 13 * 3600) and rec.count_bot_game("g2", NOON)
    assert not rec.count_bot_game("g2", NOON + 60)  # a game counts once (gameStart is sent again)
    assert rec.bot_games_in_day(NOON) == 2  # 13 h ago, yesterday in UTC, still in lila's window
    assert rec.bot_games_in_day(NOON + 12 * 3600) == 1  # g1 left the window 24 h after it started
    assert rec.bot_games_in_day(NOON + 24 * 3600) == 0
    rec.save(tmp_path / "s.json")
    assert DeclineRecords.load(tmp_path / "s.json", NOON).bot_games_in_day(NOON) == 2
    rec.prune(NOON + 3 * 86400)
    assert rec.bot_games == {}


# the queue: sort_by and preference ----------------------------------------------------------------------
@pytest.mark.parametrize("sort_by, preference, first", [
    ("best", "human", "Hilda"),   # humans first, then the best rated
    ("best", "none", "Robo"),     # the best rated
    ("first", "none", "Robo"),    # the first come
    ("first", "bot", "Robo"),
    ("first", "human", "hugo"),   # the first human
])
def test_a_freed_slot_goes_to_the_queued_challenge_sort_by_and_preference_pick(server, tmp_path, sort_by, preference,
                                                                                first):
    with run_bot(server, tmp_path, {"sort_by": sort_by, "preference": preference}):
        running = server.challenge(challenger="zed", opponent=staller())
        started(server, running)
        queued = {name: server.challenge(challenger=name, title=title, rating=rating, opponent=staller())
                  for name, title, rating in (("Robo", "BOT", 2500), ("hugo", None, 1200), ("Hilda", None, 1900))}
        time.sleep(0.4)
        assert not any(cid in server.answers for cid in queued.values())  # they wait
        end(server, running)
        winner = queued[first]
        assert answer(server, winner) == ("accept", None)
        time.sleep(0.3)
        assert [n for n, cid in queued.items() if cid in server.answers] == [first]  # one slot, one game


def test_a_queued_challenge_is_declined_after_queue_wait_or_dropped_when_canceled(server, tmp_path):
    with run_bot(server, tmp_path, {"queue_wait": 1.0}) as run:
        running = server.challenge(challenger="zed", opponent=staller())
        started(server, running)
        waits, leaves = server.challenge(challenger="amy"), server.challenge(challenger="ben")
        server.cancel_challenge(leaves)
        assert server.wait_for(lambda: not run.service.admission.rules.queue.get(leaves), 5)
        assert answer(server, waits) == ("decline", "later")
        assert leaves not in server.answers and server.answer_attempts[leaves] == 0


def test_queued_challenges_are_declined_when_the_bot_stops(server, tmp_path):
    with run_bot(server, tmp_path) as run:
        running = server.challenge(challenger="zed", opponent=staller())
        started(server, running)
        queued = server.challenge(challenger="amy")
        time.sleep(0.3)
        assert queued not in server.answers
        run.service.stop()
        assert answer(server, queued) == ("decline", "later")


def test_queue_order_puts_the_preferred_kind_first_then_the_best_rated_then_the_first_come():
    bot = parse_challenge({"id": "b", "challenger": {"id": "robo", "name": "Robo", "title": "BOT", "rating": 2000}})
    human = parse_challenge({"id": "h", "challenger": {"id": "amy", "name": "amy", "rating": 1500}})
    assert queue_order(human, 2, "best", "human") < queue_order(bot, 1, "best", "human")
    assert queue_order(bot, 2, "best", "bot") < queue_order(human, 1, "best", "bot")
    assert queue_order(bot, 2, "best", "none") < queue_order(human, 1, "best", "none")
    assert queue_order(human, 1, "first", "none") < queue_order(bot, 2, "first", "none")
