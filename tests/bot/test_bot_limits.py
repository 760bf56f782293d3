"""lichess's limits as lila answers them (issue 28): the bot-vs-bot daily limit (lila
modules/bot/src/main/BotLimit.scala: 429 ``JsonLimited`` with ``ratelimit.key`` ``bot.vsBot.day`` for ours,
a 400 naming the date for the opponent's), read from the body, never retried, kept across a restart."""

from __future__ import annotations

import json
import time

import pytest

from devtools.lila.matchmaking import ACCEPT
from devtools.lila.server import FakeLichess
from lichessbot.bot.matchmaking.matchmaker import MatchmakerOptions
from lichessbot.lichess.client import LichessClient, LichessError
from tests.fake_lichess import BotRun, StandInEngine, resign_after

TOKEN = "lip_limits"

pytestmark = pytest.mark.usefixtures("logs")


def _bot(server: FakeLichess, tmp_path, **extra) -> BotRun:
    # the records file relative to state_directory (a restart in another working directory keeps them)
    return BotRun(server, StandInEngine(), {"state_directory": str(tmp_path),
                                            "matchmaking": {"decline_file": "mm.json"},
                                            "challenge": {"concurrency": 2}, **extra})


def _answer(server: FakeLichess, cid: str, timeout: float = 10) -> tuple[str, str | None] | None:
    server.wait_for(lambda: cid in server.answers or server.answer_attempts[cid] > 0, timeout)
    time.sleep(0.3)  # a retry would come within the test client's 0.3 s pause
    return server.answers.get(cid)


def test_the_opponents_limit_in_a_400_is_read_as_seconds_until_its_date(server):
    client = LichessClient(server.token, server.url)
    server.limited_bots["busybot"] = time.time() + 7200
    cid = server.challenge(challenger="BusyBot", title="BOT")
    with pytest.raises(LichessError) as err:
        client.accept_challenge(cid)
    assert err.value.status == 400 and err.value.rate_limit is not None
    assert err.value.rate_limit.key == "bot.vsBot.day" and 7190 < err.value.rate_limit.seconds <= 7200


def test_our_daily_bot_limit_on_accept_stops_bot_games_at_once_and_humans_still_play(server, tmp_path):
    server.bot_games_per_day = 0  # lichess answers every accept of a bot's challenge with 429 bot.vsBot.day
    with _bot(server, tmp_path) as bot:
        first = server.challenge(challenger="BotA", title="BOT", opponent=resign_after(2))
        assert server.wait_for(lambda: bot.service.admission.records.bot_games_paused_until > 0, 10)  # read
        human = server.challenge(challenger="alice", opponent=resign_after(2))
        second = server.challenge(challenger="BotB", title="BOT")
        assert server.wait_for(lambda: human in server.games, 10)  # the answers go on at once
        assert _answer(server, second) == ("decline", "later")
        assert server.answer_attempts[first] == 1  # a limit is not retried
    saved = json.loads((tmp_path / "mm.json").read_text())
    assert saved["bot_games_paused_until"] > time.time() + 86000  # the body's seconds, persisted
    with _bot(server, tmp_path):  # a restart keeps the pause: bots are declined without asking lichess
        refusals = server.bot_limit_refusals
        third = server.challenge(challenger="BotC", title="BOT")
        assert _answer(server, third) == ("decline", "later")
        assert server.bot_limit_refusals == refusals


def test_the_opponents_limit_on_accept_blocks_that_bot_for_its_time_only(server, tmp_path):
    server.limited_bots["busybot"] = time.time() + 3600
    with _bot(server, tmp_path) as bot:
        first = server.challenge(challenger="BusyBot", title="BOT")
        assert server.wait_for(lambda: bot.service.admission.records.opponent_limited, 10)  # the 400 read
        again = server.challenge(challenger="BusyBot", title="BOT")
        assert _answer(server, again) == ("decline", "later")
        other = server.challenge(challenger="FreeBot", title="BOT", opponent=resign_after(2))
        assert server.wait_for(lambda: other in server.games, 10)
        assert server.answer_attempts[first] == 1
    saved = json.loads((tmp_path / "mm.json").read_text())
    assert 3500 < saved["opponent_limited"]["busybot"] - time.time() <= 3600


@pytest.mark.slow
def test_matchmaking_reads_both_limits_from_lilas_answers(server, tmp_path):
    server.add_bot("Busy", policy=ACCEPT)
    server.limited_bots["busy"] = time.time() + 5000
    config = {"matchmaking": {"allow_matchmaking": True, "decline_file": str(tmp_path / "mm.json"),
                              "challenge_timeout": 0, "min_wait": 0, "challenge_expiry": 1.0,
                              "challenge_initial_time": [60], "challenge_increment": [1], "challenge_mode": "casual",
                              "challenge_variant": "standard"}}
    with BotRun(server, StandInEngine(), config, matchmaker=MatchmakerOptions(tick=0.05)):
        assert server.wait_for(lambda: server.bot_limit_refusals >= 1, 10)
        time.sleep(0.5)
    saved = json.loads((tmp_path / "mm.json").read_text())
    assert 4900 < saved["opponent_limited"]["busy"] - time.time() <= 5000  # its date, not decline_hours
    assert server.bot_limit_refusals == 1  # not asked again
    server.limited_bots.clear()
    server.bot_games_per_day = 0
    server.add_bot("Free", policy=ACCEPT)
    with BotRun(server, StandInEngine(), config, matchmaker=MatchmakerOptions(tick=0.05)):
        assert server.wait_for(lambda: server.bot_limit_refusals >= 2, 10)
        time.sleep(0.5)
        cid = server.challenge(challenger="BotZ", title="BOT")
        assert _answer(server, cid) == ("decline", "later")  # our limit stops accepting bots too
    saved = json.loads((tmp_path / "mm.json").read_text())
    assert saved["bot_games_paused_until"] > time.time() + 86000
    assert server.bot_limit_refusals == 2


def test_a_bot_game_without_a_challenge_counts_from_gamefull_and_the_count_survives_a_restart(server, tmp_path):
    config = {"challenge": {"max_bot_games_per_day": 1}}
    with _bot(server, tmp_path, **config):
        paired = server.start_game(challenger="ArenaBot", title="BOT", tournament="arena1", opponent=resign_after(2))
        assert server.wait_for(lambda: paired in server.games and server.games[paired].over, 15)
    saved = json.loads((tmp_path / "mm.json").read_text())
    assert list(saved["bot_games"]) == [paired]  # counted from gameFull's title: no challenge said so
    with _bot(server, tmp_path, **config):
        cid = server.challenge(challenger="OtherBot", title="BOT")
        assert _answer(server, cid) == ("decline", "later")  # 1 in the last 24 h: max_bot_games_per_day
        human = server.challenge(challenger="alice", opponent=resign_after(2))
        assert server.wait_for(lambda: human in server.games, 10)


def test_bot_games_count_in_lilas_fixed_day_window_not_a_rolling_one(server, tmp_path):
    """lila's 100 games a day between bots (BotLimit over memo RateLimit) is a window of a day that opens at the
    first game: games at -24.5 h, -1 h and -45 min all fell in a window that closed 30 minutes ago, so a bot's
    challenge is accepted now, by the bot (its own count: max_bot_games_per_day 2) and by lila (its limit 2),
    where a rolling 24 h would count two games and refuse (issue 40, point 6)."""
    now = time.time()
    starts = [now - 24.5 * 3600, now - 3600, now - 2700]
    (tmp_path / "mm.json").write_text(json.dumps({"bot_games": {f"old{i}": t for i, t in enumerate(starts)}}))
    server.bot_games_per_day, server.bot_game_starts = 2, list(starts)
    with _bot(server, tmp_path, challenge={"max_bot_games_per_day": 2, "concurrency": 2}):
        cid = server.challenge(challenger="Rival", title="BOT", opponent=resign_after(2))
        assert _answer(server, cid) == ("accept", None)
    assert server.bot_limit_refusals == 0
    server.bot_game_starts = [now - 3600, now - 2700]  # a window opened an hour ago: two games in it, lila refuses
    assert server._bot_limit_answer("Rival") is not None and server._bot_limit_answer("Rival")[0] == 429
