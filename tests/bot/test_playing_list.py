"""``/api/account/playing`` lists 50 games at most (lila Account.doNowPlaying): a full list may leave running games
out, so it frees no slot by absence (issue 40, point 8); a short list is the whole truth."""

from __future__ import annotations

import time

import pytest

from lichessbot.bot.challenges import Admission
from lichessbot.config import parse_config
from lichessbot.lichess.client import PLAYING_MAX
from lichessbot.lichess.events import GameInfo


def _admission(tmp_path) -> Admission:
    return Admission(parse_config({"matchmaking": {"decline_file": str(tmp_path / "records.json")}}))


def test_a_full_playing_list_frees_no_slot_of_a_game_it_leaves_out(tmp_path):
    admission = _admission(tmp_path)
    admission.game_started(GameInfo("bullet1", speed="bullet"))
    corr = [GameInfo(f"corr{i:04d}", speed="correspondence", is_my_turn=True) for i in range(PLAYING_MAX)]
    asked = time.monotonic() + 5  # well after bullet1 started: no "started while asking" grace
    assert admission.resync(corr, asked, complete=False) == set()
    assert admission.running == {"bullet1"} and len(admission.correspondence) == PLAYING_MAX
    assert admission.unlisted(corr) == {"bullet1"}  # the service asks lichess about this one on its own
    assert admission.resync(corr[:10], asked, complete=True) == {"bullet1"}  # a short list is the whole truth


def test_the_playing_list_asks_for_lilas_maximum():
    assert PLAYING_MAX == 50


@pytest.mark.slow
def test_a_game_beyond_lilas_50_is_not_freed_and_is_asked_about_on_its_own(server):
    """lila lists 50 games at most, most urgent first (Account.doNowPlaying, Pov.priority: games off our move by
    their last move, freshest first): a real-time game that started before 50 correspondence games falls off the
    list. Its slot is kept, and lichess is asked about it alone (GET /game/export/{id}, issue 40, point 8)."""
    from tests.fake_lichess import BotRun, StandInEngine, staller

    rt = server.start_game(opponent=staller(), bot_color="black", limit=600)  # the opponent (white) never moves
    with BotRun(server, StandInEngine(), {"playing_check_period": 1, "abort_time": 120}) as bot:
        assert server.wait_for(lambda: rt in bot.service.admission.running, 10)
        for _ in range(PLAYING_MAX):
            time.sleep(0.001)  # each later: fresher than the real-time game
            server.start_game(opponent=staller(), bot_color="black", limit=None, days=3)
        assert server.wait_for(lambda: bot.service.playing_checks >= 2, 10)
        assert server.wait_for(lambda: any(p == f"/game/export/{rt}" for _, p, _ in server.requests), 5)
        assert rt in bot.service.admission.running  # not freed by its absence
        server._finish(server.games[rt], "aborted", None)
        server.skip_game_finish = 0
        assert server.wait_for(lambda: rt not in bot.service.admission.running, 10)
