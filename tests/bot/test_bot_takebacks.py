"""Takeback offers answered by ``max_takebacks_accepted`` (lichess-bot's key; issue 28), against the test
server's takebacks as lila plays them (``wtakeback``/``btakeback`` in gameState, ``/takeback/{yes|no}``): the
answers reach lichess and the game goes on from the position it gives. The rule itself (the limit, one answer
per offer, thinking again) is pinned on the game's core (tests/bot/test_game_core.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_lichess import BotRun, FakeLichess, StandInEngine, resign_after

TOKEN = "lip_takebacks"

pytestmark = pytest.mark.usefixtures("logs")


def _offer_at(server, gid: str, ply: int) -> None:
    """The opponent (black, moving 0.3 s after us) offers a takeback while it is to move, at ``ply`` or later."""
    g = server.games[gid]
    assert server.wait_for(lambda: g.ply() >= ply and g.ply() % 2 == 1, 10)
    server.propose_takeback(gid)
    assert server.wait_for(lambda: not g.opp_takeback or g.over, 10)  # answered


@pytest.mark.slow
def test_takebacks_are_accepted_up_to_the_limit_and_the_game_goes_on_without_a_bad_post():
    config = {"max_takebacks_accepted": 1}
    with FakeLichess(token=TOKEN, opponent_delay=0.3) as server, BotRun(server, StandInEngine(), config) as run:
        ledger = Path(run.service.takebacks.path or "")
        gid = server.challenge(opponent=resign_after(16), limit=120, increment=1)
        assert server.wait_for(lambda: gid in server.games, 10)
        _offer_at(server, gid, 4)
        # the game's shell wrote the core's CountTakeback into the ledger's file (a restart keeps the count)
        assert server.wait_for(lambda: ledger.exists() and json.loads(ledger.read_text()) == {gid: 1}, 5)
        _offer_at(server, gid, 8)
        g = server.games[gid]
        assert server.wait_for(lambda: g.over, 20)
        assert server.wait_for(lambda: json.loads(ledger.read_text()) == {}, 5)  # ForgetTakebacks: the game is over
    assert g.takebacks == 1 and g.status == "resign" and g.winner == "white"
    assert not g.rejected_posts  # after the takeback the bot moved from the position lichess gave
    answers = [p for _, p, _ in server.requests if "/takeback/" in p]
    assert [a.rsplit("/", 1)[1] for a in answers] == ["yes", "no"]


@pytest.mark.slow
def test_a_takeback_yes_whose_answer_is_lost_is_never_posted_again():
    """lila answers every takeback post with 200 and reads a yes without the opponent's proposal as a proposal of
    ours (round Takebacker.yes): a yes that reached lila but whose answer was lost must not be sent again
    (issue 40, point 4). The test server counts such proposals."""
    config = {"max_takebacks_accepted": 2}
    with FakeLichess(token=TOKEN, opponent_delay=0.3) as server, BotRun(server, StandInEngine(), config):
        server.lose_takeback_answers = 1
        gid = server.challenge(opponent=resign_after(12), limit=120, increment=1)
        assert server.wait_for(lambda: gid in server.games, 10)
        _offer_at(server, gid, 4)
        g = server.games[gid]
        assert server.wait_for(lambda: g.over, 20)
    assert g.takebacks == 1 and g.bot_proposals == 0
    assert [p.rsplit("/", 1)[1] for _, p, _ in server.requests if "/takeback/" in p] == ["yes"]


@pytest.mark.slow
def test_takeback_offers_in_an_arena_game_are_declined():
    with FakeLichess(token=TOKEN, opponent_delay=0.3) as server, BotRun(server, StandInEngine(),
                                                                         {"max_takebacks_accepted": 5}):
        gid = server.start_game(opponent=resign_after(10), tournament="arena001", limit=120, increment=1)
        _offer_at(server, gid, 4)
        g = server.games[gid]
        assert server.wait_for(lambda: g.over, 20)
    assert g.takebacks == 0 and g.bot_proposals == 0
    assert [p.rsplit("/", 1)[1] for _, p, _ in server.requests if "/takeback/" in p] == ["no"]
