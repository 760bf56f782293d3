"""Bot arenas (config ``tournaments``): the bot joins bot-allowed arenas on the test server (by id, or
a team's once they start), plays the pairings that arrive as ``gameStart``, and withdraws at a graceful stop.
A stand-in engine plays (no network needed)."""

from __future__ import annotations

import pytest

from lichessbot.config import ConfigError, parse_config
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine, resign_after


def test_the_bot_joins_an_arena_plays_its_pairings_and_withdraws_on_stop():
    with FakeLichess() as server:
        tid = server.add_arena(games=2, opponent=resign_after(4))
        closed = server.add_arena(bots_allowed=False)
        with BotRun(server, StandInEngine(), {"tournaments": {"join": [closed, tid]}}) as bot:
            assert server.wait_for(lambda: len(server.arenas[tid].paired) == 2
                                   and all(server.games[g].over for g in server.arenas[tid].paired), 15)
            bot.service.stop()
            bot.join()
        games = [server.games[g] for g in server.arenas[tid].paired]
    assert [(g.tournament, g.status, g.winner) for g in games] == [(tid, "resign", "white"), (tid, "resign", "black")]
    # the closed arena's page says no bots: it is not even asked (issue 40: each arena's page is read)
    assert server.arena_calls == [(tid, "join", {}), (tid, "withdraw", {})]
    assert not server.arenas[tid].joined


@pytest.mark.slow
def test_a_teams_arenas_are_joined_when_they_start_within_max_arena_games():
    with FakeLichess() as server:
        battle = server.add_arena(team="bot-club", team_battle=("bot-club", "rivals"), games=0)
        server.add_arena(team="bot-club", bots_allowed=False, games=0)
        later = server.add_arena(team="bot-club", status="created", games=0)
        third = server.add_arena(team="bot-club", status="created", games=0)
        config = {"tournaments": {"teams": ["bot-club"], "max_arena_games": 2, "check_period": 1}}
        with BotRun(server, StandInEngine(), config) as bot:
            assert server.wait_for(lambda: server.arenas[battle].joined, 5)
            server.set_arena_status(later, "started")
            assert server.wait_for(lambda: server.arenas[later].joined, 5)
            server.set_arena_status(third, "started")
            assert not server.wait_for(lambda: server.arenas[third].joined, 1.5)  # two arenas at once at most
            bot.service.stop()
            bot.join()
    assert server.arena_calls == [(battle, "join", {"team": "bot-club"}), (later, "join", {}),
                                  (battle, "withdraw", {}), (later, "withdraw", {})]


@pytest.mark.parametrize(("section", "key"), [({"join": ["not-an-id"]}, "tournaments.join"),
                                              ({"teams": ["Bot Club"]}, "tournaments.teams"),
                                              ({"max_arena_games": 0}, "tournaments.max_arena_games")])
def test_bad_tournament_keys_are_refused_naming_the_key(section, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        parse_config({"tournaments": section})
