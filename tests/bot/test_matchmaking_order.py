"""BotLi's matchmaking types as our settings and overrides: weights, sequential and cyclic order, and
``target_rating_diff``."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from lichessbot.bot.matchmaking.order import SettingsOrder
from lichessbot.config import ConfigError, parse_config
from tests.bot.test_matchmaking import bot, pick

OVERRIDES = {"fast": {"challenge_initial_time": [60], "weight": 3}, "slow": {"challenge_initial_time": [600],
                                                                          "weight": 0}}


def order(selection: str, seed: int = 0) -> SettingsOrder:
    cfg = parse_config({"matchmaking": {"selection": selection, "weight": 1, "overrides": OVERRIDES}})
    return SettingsOrder(cfg.matchmaking, random.Random(seed))


def test_weighted_random_draws_by_weight_and_a_weight_of_0_never():
    o = order("weighted_random")
    drawn = Counter(o.pick() for _ in range(2000))
    assert drawn["slow"] == 0 and 2.5 < drawn["fast"] / drawn[None] < 3.6


def test_sequential_keeps_the_heaviest_until_no_bot_suits_it():
    o = order("sequential")
    assert [o.pick() for _ in range(3)] == ["fast"] * 3
    o.sent()
    assert o.pick() == "fast"
    o.no_opponent()
    assert o.pick() is None
    o.no_opponent()
    assert o.pick() == "slow"


def test_cyclic_moves_on_after_each_challenge_sent():
    o = order("cyclic")
    seen = []
    for _ in range(4):
        seen.append(o.pick())
        o.sent()
    assert seen == ["fast", None, "slow", "fast"]


def test_selection_cannot_be_overridden_and_a_weight_is_not_null():
    with pytest.raises(ConfigError, match="selection cannot be overridden"):
        parse_config({"matchmaking": {"overrides": {"x": {"selection": "cyclic"}}}})
    with pytest.raises(ConfigError, match="weight"):
        parse_config({"matchmaking": {"overrides": {"x": {"weight": None}}}})


def test_target_rating_diff_challenges_the_bot_nearest_that_distance_first():
    online = [bot("Same", rating=2000), bot("Plus100", rating=2100), bot("Plus300", rating=2300)]
    for seed in range(20):  # our blitz rating is 2000 (tests/bot/test_matchmaking.py ME)
        assert pick(online, seed=seed, target_rating_diff=100)[0].username == "Plus100"
    assert {pick(online, seed=s)[0].username for s in range(40)} == {"Same", "Plus100", "Plus300"}


@pytest.mark.slow
def test_the_matchmaker_cycles_through_the_settings_in_the_order_of_their_weights(server, tmp_path):
    from tests.bot.test_matchmaking import run_bot

    server.add_bot("Busy", policy="later")
    slow = {"challenge_initial_time": [300], "challenge_increment": [0], "weight": 2}
    with run_bot(server, tmp_path, rng=random.Random(3), challenge_filter="none", selection="cyclic",
                 overrides={"slow": slow}):
        assert server.wait_for(lambda: len(server.outgoing) >= 4, 15)
    clocks = [(c["timeControl"]["limit"], c["timeControl"]["increment"]) for c in server.outgoing[:4]]
    assert clocks == [(300, 0), (60, 1), (300, 0), (60, 1)]  # slow (weight 2) first, then the base settings
