"""Challenge rules relative to us and to the challenger: lichess-bot's ``rating_difference``, BotLi's
separate filters for humans and bots (``challenge.human``/``challenge.bot``) and its always-accept list."""

from __future__ import annotations

import pytest

from lichessbot.bot.challenges.filter import decide
from lichessbot.config import ChallengeConfig, ConfigError, parse_config
from tests.bot.test_admission import admission
from tests.bot.test_admission import challenge as adm_challenge
from tests.bot.test_admission_filter import BASE, challenge


def test_rating_difference_is_measured_from_our_rating_in_the_games_perf():
    cfg = ChallengeConfig(**BASE, rating_difference=200)
    ours = {"blitz": 1800, "chess960": 1300}
    assert decide(cfg, challenge(rating=1600), 0, ours).accept
    assert decide(cfg, challenge(rating=2000), 0, ours).accept
    verdict = decide(cfg, challenge(rating=1599), 0, ours)
    assert not verdict.accept and verdict.reason == "generic" and "rating_difference" in verdict.why
    assert not decide(cfg, challenge(rating=2001), 0, ours).accept
    assert not decide(cfg, challenge(rating=1600, variant="chess960"), 0, ours).accept  # 300 from our 1300
    assert decide(cfg, challenge(rating=1000), 0, {}).accept  # no rating of ours in that perf: no limit
    narrower = ChallengeConfig(**BASE, rating_difference=200, min_rating=1700)
    assert not decide(narrower, challenge(rating=1650), 0, ours).accept


def test_the_admission_judges_rating_difference_with_the_accounts_ratings(tmp_path):
    from lichessbot.lichess.users import parse_account

    adm = admission(tmp_path, rating_difference=100)
    assert adm.signed_in(parse_account({"username": "TestBot", "perfs": {"blitz": {"rating": 1500}}})) == "TestBot"
    assert adm.ratings == {"blitz": 1500}
    [(_, far)] = adm.challenge(adm_challenge("c1", "bob", rating=1700))
    assert not far.accept and "rating_difference" in far.why
    [(_, near)] = adm.challenge(adm_challenge("c2", "carol", rating=1550))
    assert near.accept


def test_humans_and_bots_have_their_own_rules_and_the_rest_is_shared():
    cfg = ChallengeConfig(**BASE, human={"time_controls": ["rapid"], "modes": ["rated"]},
                          bot={"max_increment": 0, "min_rating": 2000})
    assert not decide(cfg, challenge(speed="blitz")).accept  # a human in blitz
    assert decide(cfg, challenge(speed="rapid", limit=600, rated=True)).accept
    assert not decide(cfg, challenge(speed="rapid", limit=600, rated=False)).accept  # humans: rated only
    assert not decide(cfg, challenge(title="BOT", rating=2100)).accept  # bots: no increment
    assert decide(cfg, challenge(title="BOT", rating=2100, increment=0)).accept
    assert not decide(cfg, challenge(title="BOT", rating=1900, increment=0)).accept
    assert cfg.for_challenger(True).variants == BASE["variants"]  # a key not given keeps the base value


def test_a_side_is_checked_with_the_base_at_load():
    with pytest.raises(ConfigError, match="challenge: human: min_base is greater than max_base"):
        parse_config({"challenge": {**BASE, "human": {"min_base": 900}}})
    with pytest.raises(ConfigError, match="atomic"):
        parse_config({"challenge": {"bot": {"variants": ["atomic"]}}})


def test_the_always_accept_list_skips_the_rules_but_not_the_engine_lichess_or_the_slots():
    cfg = ChallengeConfig(**BASE, always_accept_list=["Carol"], block_list=["carol"], min_rating=3000,
                          concurrency=1)
    assert decide(cfg, challenge(name="carol", speed="classical", limit=3600, rating=800)).accept
    assert not decide(cfg, challenge(name="carol", variant="atomic")).accept
    assert not decide(cfg, challenge(name="carol", speed="ultraBullet", limit=15, increment=0)).accept
    assert decide(cfg, challenge(name="carol"), running_games=1).reason == "later"
    assert not decide(cfg, challenge(name="dave", rating=800)).accept
