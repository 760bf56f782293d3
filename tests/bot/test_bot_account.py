"""The account at start and what every request says (issue 28): the token's scopes checked with
``/api/token/test`` (lichess API spec), the User-Agent naming the bot, 512 online bots asked for."""

from __future__ import annotations

import pytest

from lichessbot import __version__
from lichessbot.bot.service.account import MissingScopeError
from lichessbot.lichess.client import LichessClient
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine, resign_after

TOKEN = "lip_AccountTestToken42"

pytestmark = pytest.mark.usefixtures("logs")


def test_a_token_without_bot_play_stops_the_bot_at_start_with_a_clear_error(server):
    server.token_scopes = "challenge:read,challenge:write"
    run = BotRun(server, StandInEngine())
    run.thread.start()
    run.join()
    assert isinstance(run.error, MissingScopeError)
    assert "bot:play" in str(run.error) and "challenge:write" in str(run.error) and TOKEN not in str(run.error)
    assert server.event_connections == 0  # stopped before anything else


def test_an_unknown_token_is_named_as_such():
    with FakeLichess(token="lip_other") as server:
        client = LichessClient(TOKEN, server.url)
        assert client.token_scopes() is None
        client.close()


def test_every_request_names_the_bot_in_its_user_agent_and_online_bots_are_asked_512(server):
    with BotRun(server, StandInEngine()) as bot:
        bot.play(opponent=resign_after(4))
        bot.client.online_bots()
    assert f"lichessbot/{__version__} user:{server.username}" in server.user_agents
    assert server.token_tests == 1
    assert server.online_nb_asked == 512
    assert bot.client.session.headers["User-Agent"].endswith(f"user:{server.username}")


def test_our_ratings_are_read_again_before_a_challenge_once_they_are_old(server, tmp_path):
    from lichessbot.bot.matchmaking.matchmaker import MatchmakerOptions

    server.add_bot("Busy", policy="later")
    config = {"matchmaking": {"allow_matchmaking": True, "decline_file": str(tmp_path / "mm.json"),
                              "challenge_timeout": 0, "min_wait": 0, "challenge_expiry": 1.0,
                              "challenge_initial_time": [60], "challenge_increment": [1], "challenge_mode": "casual",
                              "challenge_variant": "standard", "challenge_filter": "none"}}
    with BotRun(server, StandInEngine(), config, matchmaker=MatchmakerOptions(tick=0.05, ratings_refresh=0.0)):
        assert server.wait_for(lambda: len(server.outgoing) >= 3, 15)
    reads = sum(1 for m, p, _ in server.requests if (m, p) == ("GET", "/api/account"))
    assert reads >= 1 + 1 + 3  # the service's, the matchmaker's start, one before each challenge
