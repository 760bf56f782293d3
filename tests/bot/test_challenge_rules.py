"""The challenge rules that remember (issue 19), against the test server: what needs the service around
them (matchmaking and the slot kept for humans, a bot we already play, the daily bot-game limit and its
records across a restart, a rematch whose game end is seen late). The decisions themselves are plain calls
on the admission (tests/bot/test_admission.py)."""

from __future__ import annotations

import json
import time

import pytest

from devtools.lila.matchmaking import ACCEPT
from lichessbot.bot.challenges.filter import queue_order
from lichessbot.bot.challenges.records import DeclineRecords
from lichessbot.bot.matchmaking.matchmaker import MatchmakerOptions
from lichessbot.lichess.events import parse_challenge
from tests.fake_lichess import BotRun, StandInEngine, resign_after, scripted, staller

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


def test_matchmaking_never_takes_the_slot_reserved_for_humans(server, tmp_path, logs):
    server.add_bot("Alpha", policy=ACCEPT, player=staller)
    with run_bot(server, tmp_path, {"concurrency": 2, "games_reserved_for_humans": 1}, MM):
        assert server.wait_for(lambda: "accepted" in server.outgoing_status.values(), 10)
        time.sleep(0.6)  # many matchmaking rounds with one slot free: it is the humans'
        assert len(server.outgoing) == 1
        human = server.challenge(challenger="alice", opponent=staller())
        assert answer(server, human) == ("accept", None)
    assert "matchmaking waits" in logs.getvalue() and "reserved for humans" in logs.getvalue()


@pytest.mark.slow
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


# the daily limit of bot games -------------------------------------------------------------------------
@pytest.mark.slow
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
        assert run.service.matchmaker.waiting_for.startswith("1 games against bots in lichess's day window")
    state = json.loads((tmp_path / "state.json").read_text())
    assert list(state["bot_games"]) == [server.outgoing[0]["id"]]  # the human game is not counted
    with run_bot(server, tmp_path, {"max_bot_games_per_day": 1}, MM):  # a restart keeps today's count
        time.sleep(0.6)
        bot = server.challenge(challenger="Delta", title="BOT", opponent=staller())
        assert answer(server, bot) == ("decline", "later")
    assert len(server.outgoing) == 1
    assert "max_bot_games_per_day 1)" in logs.getvalue()


def test_bot_games_count_in_lilas_day_window_from_its_first_game(tmp_path):
    rec = DeclineRecords()
    assert rec.count_bot_game("g1", NOON - 13 * 3600) and rec.count_bot_game("g2", NOON)
    assert not rec.count_bot_game("g2", NOON + 60)  # a game counts once (gameStart is sent again)
    assert rec.bot_games_in_day(NOON) == 2  # 13 h ago, yesterday in UTC, still in lila's window
    # the window opened with g1 and closed a day later: g2 no longer counts either (lila's fixed window,
    # memo RateLimit's clearAt; issue 40)
    assert rec.bot_games_in_day(NOON + 12 * 3600) == 0
    assert rec.bot_games_in_day(NOON + 24 * 3600) == 0
    rec.save(tmp_path / "s.json")
    assert DeclineRecords.load(tmp_path / "s.json", NOON).bot_games_in_day(NOON) == 2
    rec.prune(NOON + 3 * 86400)
    assert rec.bot_games == {}


def test_queue_order_puts_the_preferred_kind_first_then_the_best_rated_then_the_first_come():
    bot = parse_challenge({"id": "b", "challenger": {"id": "robo", "name": "Robo", "title": "BOT", "rating": 2000}})
    human = parse_challenge({"id": "h", "challenger": {"id": "amy", "name": "amy", "rating": 1500}})
    assert queue_order(human, 2, "best", "human") < queue_order(bot, 1, "best", "human")
    assert queue_order(bot, 2, "best", "bot") < queue_order(human, 1, "best", "bot")
    assert queue_order(bot, 2, "best", "none") < queue_order(human, 1, "best", "none")
    assert queue_order(human, 1, "first", "none") < queue_order(bot, 2, "first", "none")
