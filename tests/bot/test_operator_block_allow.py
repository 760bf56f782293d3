"""BotLi's console commands blacklist/whitelist (for a while), reset and clear, as operator commands."""

from __future__ import annotations

import time

import pytest

from lichessbot.bot.service.commands import HELP
from tests.fake_lichess import BotRun, StandInEngine

pytestmark = pytest.mark.usefixtures("logs")


def test_block_allow_clear_and_reset_change_who_plays(server):
    config = {"matchmaking": {"decline_file": None}, "challenge": {"block_list": ["carol"], "accept_bot": True}}
    with BotRun(server, StandInEngine(), config) as bot:
        run = bot.service.commands.run
        adm = bot.service.admission
        assert run("block mallory 30", "terminal") == "blocked mallory for 30 minutes"
        cid = server.challenge(challenger="mallory", limit=60, increment=1)
        assert server.wait_for(lambda: cid in server.answers, 10)
        assert server.answers[cid] == ("decline", "generic")
        assert adm.records.blocks("mallory", {}, time.time())  # matchmaking does not challenge mallory either
        assert run("allow carol", "terminal") == "allowed carol for 60 minutes"  # in challenge.block_list
        assert 59 * 60 < adm.allowed_until["carol"] - time.monotonic() <= 3600
        cid = server.challenge(challenger="carol", limit=60, increment=1)
        assert server.wait_for(lambda: cid in server.answers, 10)
        assert server.answers[cid][0] == "accept"
        assert run("clear", "terminal") == "cleared 2 blocks and allows, 0 challenges not sent"
        assert adm.blocked_until == {} and adm.allowed_until == {}
        assert run("reset mallory", "terminal") == "forgot 1 matchmaking declines of mallory"
        assert not adm.records.blocks("mallory", {}, time.time())
        assert run("block mallory soon", "terminal") == "'soon' is not a number of minutes"
        assert "block USER [MINUTES]" in HELP


def test_create_sends_pairs_one_at_a_time_alternating_colours(server):
    server.add_bot("Alice", policy="generic")  # declines each: the next goes out once the last is answered
    with BotRun(server, StandInEngine(), {"matchmaking": {"decline_file": None}}) as bot:
        run = bot.service.commands.run
        assert run("create 2 Alice 1+0", "terminal") == "4 challenges to Alice queued (2 pairs), one at a time"
        assert run("create 0 Alice", "terminal").startswith("usage: create COUNT USER")
        assert server.wait_for(lambda: len(server.outgoing) == 4, 15)
        assert run("create 3 Alice", "terminal").startswith("6 challenges")
        assert run("clear", "terminal").endswith(" challenges not sent")
    colors = [c.get("color") for c in server.outgoing[:4]]
    assert colors == ["white", "black", "white", "black"], colors
    assert all(c["timeControl"]["limit"] == 60 and c["timeControl"]["increment"] == 0 for c in server.outgoing[:4])


@pytest.mark.slow
def test_create_waits_for_the_answer_before_the_next_challenge(server):
    from devtools.lila.matchmaking import IGNORE

    server.add_bot("Silent", policy=IGNORE)
    with BotRun(server, StandInEngine(), {"matchmaking": {"decline_file": None}}) as bot:
        bot.service.commands.run("create 1 Silent", "terminal")
        assert server.wait_for(lambda: len(server.outgoing) == 1, 10)
        time.sleep(1.0)  # many loop turns
        assert len(server.outgoing) == 1 and len(bot.service.commands.queued) == 1
