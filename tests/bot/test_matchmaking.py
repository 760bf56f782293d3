"""Matchmaking: the pure choices and decline records, and the loop against the test server."""

from __future__ import annotations

import json
import random
import time

import pytest

from devtools.lila.matchmaking import ACCEPT, IGNORE
from lichessbot.bot.challenges.records import DeclineRecords
from lichessbot.bot.matchmaking.choice import Choice, choose, decline_aspect, game_speed
from lichessbot.bot.matchmaking.matchmaker import MatchmakerOptions
from lichessbot.config import ChallengeConfig, ConfigError, MatchmakingConfig, parse_config
from lichessbot.lichess.events import DeclineReason, GameStart, parse_account, parse_challenge, parse_game
from tests.fake_lichess import BotRun, StandInEngine, resign_after

TOKEN = "lip_Matchmaking0Token1"
NOW = 1_000_000.0


# Every test's logs are checked for TOKEN (tests/conftest.py: ``logs``; ``server`` uses it too).
pytestmark = pytest.mark.usefixtures("logs")


def bot(name, rating=1500, games=10, **extra):
    speeds = ("bullet", "blitz", "rapid", "classical", "correspondence", "chess960")
    return parse_account({"id": name.lower(), "username": name, "title": "BOT",
                          "perfs": {s: {"rating": rating, "games": games} for s in speeds}, **extra})


ME = parse_account({"username": "TestBot",
                    "perfs": {"blitz": {"rating": 2000, "games": 5}, "bullet": {"rating": 1800}}})
MM = dict(allow_matchmaking=True, challenge_initial_time=[180], challenge_increment=[2], challenge_mode="casual",
          challenge_variant="standard")


def pick(online, records=None, seed=0, ch=None, **mm):
    cfg = MatchmakingConfig(**{**MM, **mm})
    return choose(cfg, ch or ChallengeConfig(accept_bot=True), ME, online, records or DeclineRecords(), NOW,
                  random.Random(seed))


# pure choices ------------------------------------------------------------------------------------
def test_lichess_speeds_follow_the_estimated_duration():
    assert [game_speed(15, 0), game_speed(60, 1), game_speed(180, 2), game_speed(600, 0), game_speed(1800, 0),
            game_speed(0, 0, 3)] == ["ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence"]


def test_the_choice_names_the_game_and_its_form_matches_the_api_spec():
    choice, _ = pick([bot("Alpha")])
    assert choice == Choice("Alpha", "standard", False, "blitz", 180, 2, None)
    assert choice.form() == {"rated": "false", "variant": "standard", "color": "random", "clock.limit": "180",
                             "clock.increment": "2"}
    corr, _ = pick([bot("Alpha")], challenge_days=[3], challenge_initial_time=[], ch=ChallengeConfig(
        accept_bot=True, time_controls=["blitz", "correspondence"]))
    assert corr.days == 3 and corr.form()["days"] == "3" and "clock.limit" not in corr.form()


@pytest.mark.parametrize("candidate, extra", [
    (bot("TestBot"), {}),                                  # ourselves
    (bot("Blocked"), {"block_list": ["blocked"]}),
    (bot("Cheater", tosViolation=True), {}),
    (bot("Closed", disabled=True), {}),
    (bot("Newbie", games=0), {}),                          # no games in this perf
    (bot("Weak", rating=500), {}),                         # below opponent_min_rating 600
    (bot("Strong", rating=4100), {}),
    (bot("FarAway", rating=1500), {"opponent_rating_difference": 300}),  # our blitz 2000 +- 300
])
def test_unsuitable_bots_are_never_chosen(candidate, extra):
    for seed in range(5):
        choice, why = pick([candidate], seed=seed, **extra)
        assert choice is None and "no suitable bot" in why


def test_rating_difference_is_around_our_rating_in_the_games_perf():
    choice, _ = pick([bot("Near", rating=2200), bot("Far", rating=2400)], opponent_rating_difference=300)
    assert choice.username == "Near"
    tos, _ = pick([bot("Cheater", tosViolation=True)], opponent_allow_tos_violation=True)
    assert tos.username == "Cheater"


def test_rating_preference_high_prefers_the_stronger_bot():
    online = [bot("Low", rating=1000), bot("High", rating=3000)]
    highs = sum(pick(online, seed=s, rating_preference="high")[0].username == "High" for s in range(200))
    lows = sum(pick(online, seed=s, rating_preference="low")[0].username == "High" for s in range(200))
    assert highs > 110 and lows < 90


def test_a_game_our_own_filter_would_decline_is_never_proposed():
    choice, why = pick([bot("Alpha")], ch=ChallengeConfig(accept_bot=True, time_controls=["rapid"]))
    assert choice is None and "our own filter" in why


@pytest.mark.parametrize("reason, filt, expected", [
    ("tooFast", "fine", ("speed_up_to", "blitz")), ("tooSlow", "fine", ("speed_from", "blitz")),
    ("timeControl", "fine", ("speed", "blitz")),
    ("casual", "fine", ("mode", "casual")), ("variant", "fine", ("variant", "standard")),
    ("generic", "fine", ("", "")), ("later", "fine", ("", "")), ("noBot", "fine", ("", "")),
    ("tooFast", "coarse", ("", "")), ("tooFast", "none", None),
    # as lila writes declineReasonKey (lowercase: the OpenAPI schema ChallengeDeclinedJson)
    ("toofast", "fine", ("speed_up_to", "blitz")), ("tooslow", "fine", ("speed_from", "blitz")),
    ("timecontrol", "fine", ("speed", "blitz")), ("nobot", "fine", ("", "")), ("onlybot", "fine", ("", "")),
])
def test_a_decline_filters_the_aspect_it_objects_to(reason, filt, expected):
    ch = parse_challenge({"id": "c", "speed": "blitz", "rated": False, "variant": {"key": "standard"}})
    assert decline_aspect(filt, DeclineReason.from_key(reason), ch) == expected


def test_a_correspondence_decline_filters_correspondence_only():
    ch = parse_challenge({"id": "c", "speed": "correspondence", "rated": False, "variant": {"key": "standard"}})
    assert decline_aspect("fine", DeclineReason.TOO_FAST, ch) == ("speed", "correspondence")


@pytest.mark.parametrize("reason, blocked, asked", [
    ("tooFast", ["bullet", "blitz"], ["rapid", "classical", "correspondence"]),
    ("tooSlow", ["blitz", "rapid", "classical", "correspondence"], ["bullet"]),
    ("timeControl", ["blitz"], ["bullet", "rapid"]),
])
def test_too_fast_stops_that_speed_and_faster_ones_too_slow_that_speed_and_slower_ones(reason, blocked, asked):
    rec = DeclineRecords()
    aspect = decline_aspect("fine", DeclineReason(reason), parse_challenge({"id": "c", "speed": "blitz"}))
    rec.add("Alpha", aspect, NOW + 3600)
    assert [s for s in blocked + asked if rec.blocks("alpha", {"speed": s}, NOW)] == blocked


def test_a_fine_decline_blocks_that_speed_only_and_expires():
    rec = DeclineRecords()
    rec.add("Alpha", ("speed", "blitz"), NOW + 3600)
    assert pick([bot("Alpha")], rec)[0] is None
    assert pick([bot("Alpha")], rec, challenge_initial_time=[600], challenge_increment=[0])[0].speed == "rapid"
    rec.prune(NOW + 3601)
    assert pick([bot("Alpha")], rec)[0].username == "Alpha"


def test_decline_records_survive_a_save_and_load_and_drop_expired_ones(tmp_path):
    path = tmp_path / "state" / "mm.json"
    rec = DeclineRecords()
    rec.add("Alpha", ("", ""), NOW + 100)
    rec.add("Beta", ("mode", "rated"), NOW - 1)
    rec.paused_until = NOW + 50
    rec.save(path)
    back = DeclineRecords.load(path, NOW)
    assert back.blocks("alpha", {}, NOW) and not back.blocks("beta", {"mode": "rated"}, NOW)
    assert back.paused_until == NOW + 50
    path.write_text("{not json")
    assert DeclineRecords.load(path, NOW).until == {}


# config -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mm, challenge, message", [
    ({"challenge_initial_time": [100]}, {}, "matchmaking.challenge_initial_time: 100 s is not a lichess clock"),
    ({"challenge_days": [4]}, {}, "matchmaking.challenge_days: 4 is not a lichess days-per-move"),
    ({"challenge_filter": "fuzzy"}, {}, "matchmaking.challenge_filter"),
    ({"allow_matchmaking": True, "challenge_initial_time": [60]}, {"min_base": 120, "accept_bot": True},
     "matchmaking.challenge_initial_time: 60 s is outside challenge.min_base"),
    ({"allow_matchmaking": True, "challenge_mode": "rated"}, {"modes": ["casual"], "accept_bot": True},
     "matchmaking.challenge_mode"),
    ({"allow_matchmaking": True}, {"accept_bot": False}, "matchmaking.allow_matchmaking: challenges go to bots"),
    ({"opponent_min_rating": 2000, "opponent_max_rating": 1000}, {}, "matchmaking: opponent_min_rating is greater"),
    ({"challenge_timout": 5}, {}, "matchmaking.challenge_timout: unknown key"),
    ({"include_challenge_block_list": "yes please"}, {}, "matchmaking.include_challenge_block_list:"),
    ({"overrides": {"fast": {"challenge_initial_time": [100]}}}, {},
     "matchmaking.overrides.fast.challenge_initial_time: 100 s is not a lichess clock"),
    ({"overrides": {"fast": {"challenge_timeout": 1}}}, {}, "matchmaking.overrides.fast: challenge_timeout cannot "
                                                              "be overridden"),
    ({"overrides": {"fast": {"challenge_mode": None}}}, {}, "matchmaking.overrides.fast.challenge_mode: null is "
                                                              "not a value here"),
    ({"overrides": {"fast": {"challenge_speed": "bullet"}}}, {}, "matchmaking.overrides.fast.challenge_speed: "
                                                                  "unknown key"),
    ({"overrides": {"weak": {"opponent_min_rating": 5000}}}, {},
     "matchmaking: overrides.weak: opponent_min_rating is greater than opponent_max_rating"),
    ({"allow_matchmaking": True, "overrides": {"slow": {"challenge_initial_time": [600]}}},
     {"max_base": 300, "accept_bot": True}, "matchmaking.overrides.slow.challenge_initial_time: 600 s is outside"),
    ({"allow_matchmaking": True, "overrides": {"corr": {"challenge_initial_time": None}}}, {"accept_bot": True},
     "matchmaking: overrides.corr: no time control to challenge with"),
    ({"allow_matchmaking": True, "challenge_days": [14]}, {"max_days": 7, "accept_bot": True},
     "matchmaking.challenge_days: 14 is outside challenge.min_days..challenge.max_days"),
    ({"allow_matchmaking": True}, {"accept_bot": True, "concurrency": 2, "games_reserved_for_humans": 2},
     "matchmaking.allow_matchmaking: every slot is reserved for humans"),
    ({"allow_matchmaking": True}, {"accept_bot": True, "max_bot_games_per_day": 0},
     "matchmaking.allow_matchmaking: challenge.max_bot_games_per_day is 0"),
])
def test_bad_matchmaking_config_names_the_key_and_the_reason(mm, challenge, message):
    with pytest.raises(ConfigError, match="^" + message.replace(".", r"\.")):
        parse_config({"matchmaking": mm, "challenge": challenge})


def test_an_override_replaces_only_the_keys_it_names_and_null_empties_a_list():
    mm = parse_config({"matchmaking": {"opponent_rating_difference": 300, "overrides": {
        "corr": {"challenge_initial_time": None, "challenge_days": [2, 3], "challenge_mode": "casual"},
        "easy": {"opponent_rating_difference": None, "opponent_max_rating": 1200}}}}).matchmaking
    corr, easy = mm.with_override("corr"), mm.with_override("easy")
    assert (corr.challenge_initial_time, corr.challenge_days, corr.challenge_mode) == ([], [2, 3], "casual")
    assert corr.challenge_increment == [1, 2] and corr.opponent_rating_difference == 300  # kept
    assert (easy.opponent_rating_difference, easy.opponent_max_rating) == (None, 1200)
    assert mm.with_override(None) is mm and corr.overrides == {}


def test_include_challenge_block_list_also_skips_the_bots_we_decline():
    ch = ChallengeConfig(accept_bot=True, block_list=["Rude"])
    assert pick([bot("Rude")], ch=ch)[0].username == "Rude"
    assert pick([bot("Rude")], ch=ch, include_challenge_block_list=True)[0] is None


def test_only_time_controls_our_own_filter_accepts_are_drawn():
    ch = ChallengeConfig(accept_bot=True, bullet_requires_increment=True)
    speeds = {pick([bot("Alpha")], seed=s, ch=ch, challenge_initial_time=[60], challenge_increment=[0, 1])[0].increment
              for s in range(20)}
    assert speeds == {1}  # 60+0 is bullet without increment: never proposed to a bot


def test_bots_we_play_enough_games_with_are_not_challenged():
    online = [bot("Alpha"), bot("Beta")]
    cfg, ch = MatchmakingConfig(**MM), ChallengeConfig(accept_bot=True)
    picked = {choose(cfg, ch, ME, online, DeclineRecords(), NOW, random.Random(s), busy_with={"alpha"})[0].username
              for s in range(10)}
    assert picked == {"Beta"}


def test_lichess_bots_null_days_mean_real_time_only():
    assert parse_config({"matchmaking": {"challenge_days": [None]}}).matchmaking.challenge_days == []


# against the fake server --------------------------------------------------------------------------
FAST = {"challenge_timeout": 0, "min_wait": 0, "challenge_expiry": 1.0, "challenge_initial_time": [60],
        "challenge_increment": [1], "challenge_mode": "casual", "challenge_variant": "standard"}


def run_bot(server, tmp_path, challenge=None, rng=None, **mm):
    config = {"matchmaking": {"allow_matchmaking": True, "decline_file": str(tmp_path / "mm.json"), **FAST, **mm},
              "challenge": challenge or {}}
    options = MatchmakerOptions(tick=0.05, **({"rng": rng} if rng else {}))
    return BotRun(server, StandInEngine(), config, matchmaker=options)


@pytest.mark.slow
def test_an_idle_bot_challenges_an_online_bot_and_plays_the_game(server, tmp_path):
    server.add_bot("Alpha", policy=ACCEPT)
    with run_bot(server, tmp_path):
        assert server.wait_for(lambda: any(g.over for g in server.games.values()), 30)
    first = server.outgoing[0]
    assert first["destUser"]["name"] == "Alpha" and first["timeControl"]["limit"] == 60
    game = server.games[first["id"]]
    assert game.over and game.posts  # the bot moved in the game it asked for


@pytest.mark.slow
def test_no_challenge_while_a_game_runs_or_before_challenge_timeout(server, tmp_path):
    server.add_bot("Alpha", policy=ACCEPT)
    with run_bot(server, tmp_path, challenge_timeout=0.02):  # 1.2 s after start or the last game
        gid = server.challenge(opponent=resign_after(30), limit=60)
        assert server.wait_for(lambda: gid in server.games and server.games[gid].ply() >= 4, 10)
        assert server.outgoing == []  # a game runs (allow_during_games false)
        assert server.wait_for(lambda: server.games[gid].over, 30)
        ended = time.monotonic()
        assert server.wait_for(lambda: server.outgoing, 10)
        assert time.monotonic() - ended >= 1.0


@pytest.mark.slow
def test_a_declined_challenge_is_recorded_persisted_and_not_repeated_after_a_restart(server, tmp_path):
    server.add_bot("Picky", policy="tooFast")
    with run_bot(server, tmp_path):
        assert server.wait_for(lambda: server.outgoing_status and "declined" in server.outgoing_status.values(), 10)
        time.sleep(0.5)  # many ticks: no second challenge to Picky at this speed
    assert len(server.outgoing) == 1
    saved = json.loads((tmp_path / "mm.json").read_text())
    assert [(d["opponent"], d["aspect"], d["value"]) for d in saved["declines"]] == [
        ("picky", "speed_up_to", "bullet")]
    with run_bot(server, tmp_path):  # a restart reads the records
        time.sleep(0.5)
    assert len(server.outgoing) == 1
    with run_bot(server, tmp_path, challenge_initial_time=[300], challenge_increment=[0]):  # another speed: asked
        assert server.wait_for(lambda: len(server.outgoing) == 2, 10)
    assert server.outgoing[1]["speed"] == "blitz"


@pytest.mark.slow
def test_each_challenge_draws_the_base_settings_or_an_override(server, tmp_path):
    server.add_bot("Busy", policy="later")
    slow = {"challenge_initial_time": [300], "challenge_increment": [0]}
    with run_bot(server, tmp_path, rng=random.Random(3), challenge_filter="none", overrides={"slow": slow}) as run:
        assert server.wait_for(lambda: len(server.outgoing) >= 12, 15)
        drawn = dict(run.service.matchmaker.drawn)
    clocks = {(c["timeControl"]["limit"], c["timeControl"]["increment"]) for c in server.outgoing}
    assert clocks == {(60, 1), (300, 0)}
    assert set(drawn) == {"default", "slow"} and min(drawn.values()) >= 3


def test_an_unanswered_challenge_is_canceled_and_its_slot_freed(server, tmp_path):
    server.add_bot("Silent", policy=IGNORE)
    with run_bot(server, tmp_path, challenge_expiry=0.5) as run:
        assert server.wait_for(lambda: "canceled" in server.outgoing_status.values(), 10)
        assert server.wait_for(lambda: run.service.busy() == 0, 5)
        assert run.service.matchmaker.canceled >= 1


@pytest.mark.slow
def test_the_daily_limit_pauses_matchmaking_and_the_pause_survives_a_restart(server, tmp_path):
    server.add_bot("Picky", policy="generic")
    server.add_bot("Other", policy="generic")
    server.daily_challenge_limit = 1
    server.daily_limit_seconds = 7200
    with run_bot(server, tmp_path):
        assert server.wait_for(lambda: server.challenge_refusals == 1, 10)
        time.sleep(0.5)
    assert server.challenge_refusals == 1 and len(server.outgoing) == 1  # no retry, no hammering
    paused = json.loads((tmp_path / "mm.json").read_text())["paused_until"]
    assert paused == pytest.approx(time.time() + 7200, abs=30)
    with run_bot(server, tmp_path):
        time.sleep(0.5)
    assert server.challenge_refusals == 1


@pytest.mark.slow
def test_our_challenge_holds_a_slot_so_an_incoming_one_waits_in_the_queue(server, tmp_path):
    server.add_bot("Silent", policy=IGNORE)
    with run_bot(server, tmp_path, challenge_expiry=1.5) as run:
        assert server.wait_for(lambda: run.service.matchmaker.outstanding is not None, 10)
        cid = server.challenge(limit=60)
        time.sleep(0.5)
        assert cid not in server.answers  # concurrency 1 is held by our challenge: it waits
        assert server.wait_for(lambda: cid in server.answers, 10)  # ours is canceled at its expiry
        assert server.answers[cid] == ("accept", None)
        assert len(server.outgoing) == 1  # the freed slot went to the queued challenge, not to a new one of ours


def test_without_a_queue_an_incoming_challenge_is_declined_while_ours_holds_the_slot(server, tmp_path):
    server.add_bot("Silent", policy=IGNORE)
    with run_bot(server, tmp_path, challenge={"queue_wait": 0}, challenge_expiry=5.0) as run:
        assert server.wait_for(lambda: run.service.matchmaker.outstanding is not None, 10)
        cid = server.challenge(limit=60)
        assert server.wait_for(lambda: cid in server.answers, 10)
    assert server.answers[cid] == ("decline", "later")


def test_an_answer_that_beats_lichesss_reply_to_our_challenge_is_still_matched(server, tmp_path):
    server.add_bot("Quick", policy="tooFast")
    server.answer_after = 0.0
    server.answer_delay_reply = 0.3  # the reply to the creation reaches us after the decline event
    with run_bot(server, tmp_path) as run:
        assert server.wait_for(lambda: "declined" in server.outgoing_status.values(), 10)
        assert server.wait_for(lambda: run.service.matchmaker.declined == 1, 5)
        assert server.wait_for(lambda: run.service.busy() == 0, 5)
        assert run.service.matchmaker.outstanding is None
    assert json.loads((tmp_path / "mm.json").read_text())["declines"][0]["opponent"] == "quick"


@pytest.mark.slow
def test_a_challenge_accepted_while_its_event_is_late_keeps_its_slot_and_blocks_new_challenges(server, tmp_path):
    server.add_bot("Accepts", policy=ACCEPT)
    server.answer_after = 0.0
    with run_bot(server, tmp_path, challenge_expiry=0.3) as run:
        service = run.service
        on_event = service._on_event
        service._on_event = lambda e: None if isinstance(e, GameStart) else on_event(e)  # a stalled stream
        assert server.wait_for(lambda: "accepted" in server.outgoing_status.values(), 10)
        time.sleep(1.0)  # the expiry passed: lichess refuses the cancel (404), the event has not come
        assert len(server.outgoing) == 1 and service.busy() == 1
        service._on_event = on_event
        gid = server.outgoing[0]["id"]
        on_event(GameStart(parse_game(server._game_info(server.games[gid]))))  # it arrives at last
        assert server.wait_for(lambda: not service.matchmaker._unseen and gid in service.games, 5)


@pytest.mark.parametrize("key, reason", [("toofast", DeclineReason.TOO_FAST), ("tooFast", DeclineReason.TOO_FAST),
                                         ("nobot", DeclineReason.NO_BOT), ("later", DeclineReason.LATER),
                                         ("someNewReason", DeclineReason.GENERIC)])
def test_lichess_decline_keys_are_read_in_any_case_and_an_unknown_one_is_generic(key, reason):
    ch = parse_challenge({"id": "c", "status": "declined", "declineReasonKey": key})
    assert ch.decline_reason_key is reason
    assert parse_challenge({"id": "c"}).decline_reason_key is None


@pytest.mark.slow
def test_a_challenge_accepted_at_the_moment_we_would_cancel_it_is_played_not_aborted(server, tmp_path):
    """lila answers a cancel of an accepted challenge with 200 and aborts the new game (Challenge.apiCancel). The
    opponent accepts just before our challenge_expiry while its gameStart lags on the event stream: the verdict
    on the challenge's keep-alive stream (ChallengeKeepAliveStream) tells the bot not to cancel (issue 40, point 3)."""
    server.add_bot("Late", player=lambda: resign_after(6))
    server.answer_after = 0.85  # challenge_expiry is 1.0 s
    server.game_start_lag = 1.0
    with run_bot(server, tmp_path):
        assert server.wait_for(lambda: server.outgoing, 10)
        cid = server.outgoing[0]["id"]
        assert server.wait_for(lambda: cid in server.games and server.games[cid].over, 20)
    game = server.games[cid]
    assert server.kept_alive >= 1 and server.aborted_by_cancel == 0
    assert game.status != "aborted" and game.posts  # played


def test_a_429_on_creating_a_challenge_never_holds_the_answers_to_challenges_we_receive(server, tmp_path):
    """lila limits each endpoint on its own (issue 40, point 7): lichess's 429 (an HTML page, no ratelimit body) on
    our challenge creation pauses our creations only; a challenge we receive meanwhile is answered at once (it
    used to wait the 60 s pause of every request but moves)."""
    from lichessbot.lichess.client import ClientSettings

    server.add_bot("Alpha")
    server.fail_next("challenge", 429)
    config = {"matchmaking": {"allow_matchmaking": True, "decline_file": str(tmp_path / "mm.json"), **FAST}}
    settings = ClientSettings(timeout=3.0, move_timeout=1.0, stream_read_timeout=1.5, retries=3, backoff=0.05,
                              rate_limit_pause=60.0, pace_rate=50.0, pace_burst=20.0)  # lichess's full minute
    with BotRun(server, StandInEngine(), config, matchmaker=MatchmakerOptions(tick=0.05), settings=settings):
        assert server.wait_for(lambda: server.rate_limited["challenge"] == 1, 10)
        t0 = time.monotonic()
        cid = server.challenge(challenger="carol", opponent=resign_after(2))
        assert server.wait_for(lambda: cid in server.answers, 10)
        assert time.monotonic() - t0 < 5  # not the 60 s pause
    assert server.answers[cid][0] == "accept" and server.outgoing == []  # no second creation within the pause
