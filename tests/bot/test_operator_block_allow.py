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
        assert run("clear", "terminal") == "cleared 2 blocks and allows"
        assert adm.blocked_until == {} and adm.allowed_until == {}
        assert run("reset mallory", "terminal") == "forgot 1 matchmaking declines of mallory"
        assert not adm.records.blocks("mallory", {}, time.time())
        assert run("block mallory soon", "terminal") == "'soon' is not a number of minutes"
        assert "block USER [MINUTES]" in HELP
