"""The admission's challenge filter: every rule gives lichess's decline reason key."""

from __future__ import annotations

import pytest

from lichessbot.bot.challenges.filter import decide
from lichessbot.config import ChallengeConfig
from lichessbot.lichess.events import Compat, DeclineReason, parse_challenge


def challenge(*, name="alice", title=None, rating=1500, variant="standard", rated=False, speed="blitz",
              limit=180, increment=2, tc_type="clock", days=None, compat=None):
    tc = {"type": tc_type, "limit": limit, "increment": increment} if tc_type == "clock" else {"type": tc_type}
    if days is not None:
        tc["daysPerTurn"] = days
    challenger = {"id": name.lower(), "name": name, "rating": rating, **({"title": title} if title else {})}
    ch = {"id": "c1", "challenger": challenger, "variant": {"key": variant}, "rated": rated, "speed": speed,
          "timeControl": tc}
    return parse_challenge(ch, None if compat is None else Compat(**compat))


BASE = dict(accept_bot=True, variants=["standard", "chess960"], time_controls=["bullet", "blitz", "rapid"],
            modes=["casual", "rated"], min_base=60, max_base=600, min_increment=0, max_increment=10)

MATRIX = [
    # (config overrides, challenge overrides, running games, expected reason or None for accept)
    ({}, {}, 0, None),
    ({"block_list": ["Alice"]}, {}, 0, "generic"),
    ({"allow_list": ["bob"]}, {}, 0, "generic"),
    ({"allow_list": ["ALICE"]}, {}, 0, None),
    ({"accept_bot": False}, {"title": "BOT"}, 0, "noBot"),
    ({"only_bot": True}, {}, 0, "onlyBot"),
    ({"only_bot": True}, {"title": "BOT"}, 0, None),
    ({}, {"variant": "atomic"}, 0, "variant"),
    ({"variants": ["standard"]}, {"variant": "chess960"}, 0, "standard"),
    ({}, {"speed": "ultraBullet", "limit": 15, "increment": 0}, 0, "tooFast"),
    ({}, {"speed": "classical", "limit": 1800, "increment": 0}, 0, "tooSlow"),
    ({"time_controls": ["bullet", "rapid"]}, {"speed": "blitz"}, 0, "timeControl"),
    ({}, {"speed": "correspondence", "tc_type": "correspondence", "days": 3}, 0, "tooSlow"),
    ({"time_controls": ["blitz", "correspondence"]}, {"speed": "correspondence", "tc_type": "correspondence",
                                                      "days": 3}, 0, None),
    ({"time_controls": ["correspondence"], "min_days": 2}, {"speed": "correspondence", "tc_type": "correspondence",
                                                            "days": 1}, 0, "tooFast"),
    ({"time_controls": ["correspondence"], "max_days": 7}, {"speed": "correspondence", "tc_type": "correspondence",
                                                            "days": 14}, 0, "tooSlow"),
    ({"time_controls": ["correspondence"]}, {"speed": "correspondence", "tc_type": "unlimited"}, 0, "tooSlow"),
    ({"time_controls": ["correspondence"], "max_days": "unlimited"},
     {"speed": "correspondence", "tc_type": "unlimited"}, 0, None),
    ({}, {"compat": {"bot": False, "board": True}}, 0, "generic"),
    ({"time_controls": ["bullet"]}, {"speed": "ultraBullet", "limit": 15, "increment": 0,
                                     "compat": {"bot": False, "board": False}}, 0, "tooFast"),
    ({"time_controls": ["blitz"]}, {"speed": "blitz", "tc_type": "weird"}, 0, "timeControl"),
    ({}, {"limit": 30}, 0, "tooFast"),
    ({"min_increment": 1}, {"increment": 0}, 0, "tooFast"),
    ({}, {"limit": 900, "speed": "rapid"}, 0, "tooSlow"),
    ({}, {"increment": 20}, 0, "tooSlow"),
    ({"modes": ["casual"]}, {"rated": True}, 0, "casual"),
    ({"modes": ["rated"]}, {"rated": False}, 0, "rated"),
    ({"min_rating": 1600}, {"rating": 1500}, 0, "generic"),
    ({"max_rating": 1400}, {"rating": 1500}, 0, "generic"),
    ({"bullet_requires_increment": True}, {"title": "BOT", "speed": "bullet", "limit": 60, "increment": 0}, 0,
     "timeControl"),
    ({"bullet_requires_increment": True}, {"title": "BOT", "speed": "bullet", "limit": 60, "increment": 1}, 0, None),
    ({"bullet_requires_increment": True}, {"speed": "bullet", "limit": 60, "increment": 0}, 0, None),  # a human
    ({"bullet_requires_increment": True}, {"title": "BOT", "speed": "blitz", "limit": 180, "increment": 0}, 0, None),
    ({"concurrency": 2}, {}, 1, None),
    ({"concurrency": 2}, {}, 2, "later"),
]


@pytest.mark.parametrize(("cfg", "ch", "running", "expected"), MATRIX)
def test_accept_decline_matrix_gives_lichess_reason_keys(cfg, ch, running, expected):
    verdict = decide(ChallengeConfig(**{**BASE, **cfg}), challenge(**ch), running)
    assert verdict.accept is (expected is None), verdict
    assert verdict.reason == expected
    assert verdict.reason is None or isinstance(verdict.reason, DeclineReason)


def test_a_challenge_with_missing_fields_is_judged_not_crashed():
    verdict = decide(ChallengeConfig(), parse_challenge({"id": "x"}))
    assert not verdict.accept and isinstance(verdict.reason, DeclineReason)
