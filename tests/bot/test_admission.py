"""The challenge decision as plain calls on the admission (lichessbot/bot/challenges/): lichess's challenges and
the game events in, verdicts with lichess's decline reasons out; the time is the test's (``monotonic``)."""

from __future__ import annotations

import pytest

from lichessbot.bot.challenges import Admission
from lichessbot.bot.challenges.records import DeclineRecords
from lichessbot.config import parse_config
from lichessbot.lichess.events import Challenge, DeclineReason, GameInfo, Opponent, parse_challenge

NOON = 1_700_000_000.0 - 1_700_000_000.0 % 86400 + 43200  # 12:00 UTC on some day


class Clock:
    """Monotonic seconds that move when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def admission(tmp_path, clock: Clock | None = None, **challenge) -> Admission:
    config = parse_config({"challenge": {"accept_bot": True, **challenge},
                           "matchmaking": {"decline_file": str(tmp_path / "state.json")}})
    return Admission(config, records=DeclineRecords(), clock=lambda: NOON, monotonic=clock or Clock())


def challenge(cid: str, name: str, *, bot: bool = False, rating: int = 1500,
              rematch_of: str | None = None) -> Challenge:
    """A blitz challenge of ``name`` as lichess sends it (lila's challenge JSON)."""
    user = {"id": name.lower(), "name": name, "rating": rating, **({"title": "BOT"} if bot else {})}
    data = {"id": cid, "challenger": user, "speed": "blitz", "variant": {"key": "standard"},
            "timeControl": {"type": "clock", "limit": 180, "increment": 2}}
    if rematch_of:
        data["rematchOf"] = rematch_of
    return parse_challenge(data)


def verdicts(decided) -> dict[str, tuple[bool, DeclineReason | None]]:
    return {ch.id: (v.accept, v.reason) for ch, v in decided}


def start(adm: Admission, gid: str, name: str) -> None:
    adm.game_started(GameInfo(game_id=gid, opponent=Opponent(name.lower(), name)))


def test_games_reserved_for_humans_keep_a_slot_free_for_a_human(tmp_path):
    adm = admission(tmp_path, concurrency=2, games_reserved_for_humans=1, queue_wait=0)
    assert verdicts(adm.challenge(challenge("c1", "BotOne", bot=True))) == {"c1": (True, None)}
    assert verdicts(adm.challenge(challenge("c2", "BotTwo", bot=True))) == {"c2": (False, DeclineReason.LATER)}
    assert verdicts(adm.challenge(challenge("c3", "alice"))) == {"c3": (True, None)}
    assert adm.busy() == 2


def test_max_simultaneous_games_per_user_declines_a_second_game_with_the_same_user(tmp_path):
    adm = admission(tmp_path, concurrency=3, max_simultaneous_games_per_user=1, queue_wait=0)
    assert verdicts(adm.challenge(challenge("c1", "alice"))) == {"c1": (True, None)}
    start(adm, "c1", "alice")
    assert verdicts(adm.challenge(challenge("c2", "Alice"))) == {"c2": (False, DeclineReason.LATER)}
    assert verdicts(adm.challenge(challenge("c3", "bob"))) == {"c3": (True, None)}


def test_a_bots_recent_challenges_are_limited_rematches_included_humans_are_not(tmp_path):
    clock = Clock()
    adm = admission(tmp_path, clock, concurrency=2, recent_bot_challenge_age=60, max_recent_bot_challenges=1)
    assert verdicts(adm.challenge(challenge("c1", "Alpha", bot=True))) == {"c1": (True, None)}
    start(adm, "c1", "Alpha")
    adm.game_finished("c1")
    again = adm.challenge(challenge("c2", "Alpha", bot=True, rematch_of="c1"))
    assert verdicts(again) == {"c2": (False, DeclineReason.LATER)}
    clock.now += 61  # the first challenge is no longer recent
    assert verdicts(adm.challenge(challenge("c3", "Alpha", bot=True))) == {"c3": (True, None)}
    assert verdicts(adm.challenge(challenge("h1", "alice"))) == {"h1": (True, None)}  # humans are not limited


def test_a_rematch_offer_frees_the_slot_of_its_game_first(tmp_path):
    adm = admission(tmp_path, queue_wait=0)
    assert verdicts(adm.challenge(challenge("c1", "Alpha", bot=True))) == {"c1": (True, None)}
    start(adm, "c1", "Alpha")  # its gameFinish is not seen yet: lichess offers rematches of ended games only
    assert verdicts(adm.challenge(challenge("c2", "Alpha", bot=True, rematch_of="c1"))) == {"c2": (True, None)}
    assert not adm.may_start("c1") and adm.busy() == 1


@pytest.mark.parametrize("sort_by, preference, first", [
    ("best", "human", "Hilda"),   # humans first, then the best rated
    ("best", "none", "Robo"),     # the best rated
    ("first", "none", "Robo"),    # the first come
    ("first", "bot", "Robo"),
    ("first", "human", "hugo"),   # the first human
])
def test_a_freed_slot_goes_to_the_queued_challenge_sort_by_and_preference_pick(tmp_path, sort_by, preference, first):
    adm = admission(tmp_path, concurrency=1, sort_by=sort_by, preference=preference)
    adm.challenge(challenge("z", "zed"))
    start(adm, "z", "zed")
    for cid, name, bot, rating in (("r", "Robo", True, 2500), ("u", "hugo", False, 1200), ("i", "Hilda", False, 1900)):
        assert adm.challenge(challenge(cid, name, bot=bot, rating=rating)) == []  # each waits for the slot
    assert adm.queued_names()[0] == first
    adm.game_finished("z")
    decided = adm.serve()
    assert [(ch.challenger_name, v.accept) for ch, v in decided] == [(first, True)]  # one slot, one game
    assert adm.serve() == []


def test_a_queued_challenge_is_declined_after_queue_wait_dropped_when_canceled_and_declined_at_stop(tmp_path):
    clock = Clock()
    adm = admission(tmp_path, clock, concurrency=1, queue_wait=1)
    adm.challenge(challenge("z", "zed"))
    start(adm, "z", "zed")
    assert adm.challenge(challenge("w", "amy")) == [] and adm.challenge(challenge("l", "ben")) == []
    adm.canceled("l")
    assert adm.serve() == []
    clock.now += 1.5
    assert verdicts(adm.serve()) == {"w": (False, DeclineReason.LATER)}  # waited queue_wait
    assert adm.challenge(challenge("s", "cid")) == []
    adm.stop()
    assert verdicts(adm.serve()) == {"s": (False, DeclineReason.LATER)}
    assert verdicts(adm.challenge(challenge("t", "tom"))) == {"t": (False, DeclineReason.LATER)}


def test_a_challenge_sent_again_is_answered_once(tmp_path):
    adm = admission(tmp_path, queue_wait=0)
    assert verdicts(adm.challenge(challenge("c1", "alice"))) == {"c1": (True, None)}
    assert adm.challenge(challenge("c1", "alice")) == []  # lichess re-sends pending challenges on reconnect
