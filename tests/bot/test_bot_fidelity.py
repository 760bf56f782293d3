"""The bot against a server as strict as lichess (issue 16): each test pins one situation real lichess
produces. The engine is the stand-in (random legal moves): these tests are about the service, the games
and the client, not about chess strength."""

from __future__ import annotations

import time

import chess
import pytest

from lichessbot.bot.chat.lines import render_greeting
from lichessbot.lichess.client import ClientSettings
from tests.fake_lichess import (
    OFFER_DRAW,
    BotRun,
    FakeLichess,
    StandInEngine,
    StandInThinker,
    drops_first,
    random_mover,
    resign_after,
    scripted,
    staller,
)

TOKEN = "lip_Fidelity0Token1"
CZH_HAND = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[Pp] w KQkq - 0 1"  # crazyhouse, a pawn in each hand


# Every test's logs are checked for TOKEN (tests/conftest.py: ``logs``; ``server`` uses it too).
pytestmark = pytest.mark.usefixtures("logs")


def _ended(server: FakeLichess, gid: str, timeout: float = 20) -> bool:
    return server.wait_for(lambda: gid in server.games and server.games[gid].over, timeout)


# 1. rate limits ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_429_on_one_games_move_post_leaves_the_other_games_moving(server):
    settings = ClientSettings(timeout=3.0, move_timeout=1.0, stream_read_timeout=1.5, backoff=0.05,
                              rate_limit_pause=60.0, max_backoff=0.5)  # lichess's minute, no Retry-After
    with BotRun(server, StandInEngine(), {"challenge": {"concurrency": 2}}, settings=settings):
        a = server.challenge(opponent=resign_after(12), limit=60)
        b = server.challenge(opponent=resign_after(12), limit=60)
        assert server.wait_for(lambda: a in server.games and server.games[a].ply() >= 3, 10)
        server.fail_next("move", 429)  # a real one: HTML body, no Retry-After
        assert _ended(server, a, 30) and _ended(server, b, 30)
        assert server.rate_limited["move"] == 1
    for gid in (a, b):
        assert server.games[gid].status == "resign"  # neither flagged nor stalled for a minute


# 2. variants -------------------------------------------------------------------------------------
def test_a_crazyhouse_game_is_left_at_once_without_a_reconnect_loop(server, logs):
    with BotRun(server, StandInEngine()):
        gid = server.start_game(variant="crazyhouse", fen=CZH_HAND, bot_color="black", opponent=drops_first())
        assert _ended(server, gid, 10)
        time.sleep(0.5)
    game = server.games[gid]
    assert game.status == "aborted" and game.stream_connections == 1
    assert logs.getvalue().count("leaving a game the engine cannot play") == 1


def test_ultrabullet_and_bot_incompatible_challenges_are_declined(server):
    with BotRun(server, StandInEngine()):
        ultra = server.challenge(limit=15)
        assert server.wait_for(lambda: ultra in server.answers, 5)
    assert server.answers[ultra] == ("decline", "tooFast")
    assert ultra not in server.games


def test_a_chess960_game_is_played_with_its_initial_fen(server):
    with BotRun(server, StandInEngine(), {"challenge": {"variants": ["chess960"]}}) as bot:
        game = bot.play(variant="chess960", opponent=resign_after(29))
    assert game.status == "resign" and not game.rejected_posts and len(game.posts) == 15


# 4. greetings ------------------------------------------------------------------------------------
def test_greetings_render_safely_and_the_goodbye_path_still_saves_the_pgn(server, tmp_path):
    assert render_greeting("gg {opponent} :-{ {unknown}", me="b", opponent="o") == "gg {opponent} :-{ {unknown}"
    assert render_greeting("gg {opponent} {{me}}", me="b", opponent="o") == "gg o {me}"
    config = {"pgn_directory": str(tmp_path), "greeting": {"goodbye": "GG {opponent} {{:-}}"}}
    with BotRun(server, StandInEngine(), config) as bot:
        game = bot.play(opponent=resign_after(4), challenger="dave")
        assert server.wait_for(lambda: list(tmp_path.glob("*.pgn")), 5)
    assert ("player", "GG dave {:-}") in game.chat


# 5. a missed gameFinish --------------------------------------------------------------------------
@pytest.mark.slow
def test_a_missed_game_finish_does_not_keep_the_slot(server):
    server.skip_game_finish = 1
    with BotRun(server, StandInEngine()) as bot:  # the playing check (60 s) plays no part here
        first = bot.play(opponent=resign_after(4))
        assert server.wait_for(lambda: bot.service.busy() == 0, 5)
        second = server.challenge(opponent=resign_after(4))
        assert server.wait_for(lambda: second in server.answers, 5)
    assert first.status == "resign" and server.answers[second] == ("accept", None)


@pytest.mark.slow
def test_the_playing_check_frees_a_slot_whose_game_ended_unseen(server):
    with BotRun(server, StandInEngine(), {"playing_check_period": 1}) as bot:
        bot.service.admission.running.add("ghost123")  # a game lichess no longer lists, no thread, no gameFinish
        assert server.wait_for(lambda: bot.service.playing_checks >= 1 and bot.service.busy() == 0, 5)


# 6. correspondence -------------------------------------------------------------------------------
CORR = {"abort_time": 1, "challenge": {"time_controls": ["bullet", "correspondence"]},
        "correspondence": {"move_time": 1, "checkin_period": 1, "disconnect_time": 1}}


@pytest.mark.slow
def test_a_correspondence_game_holds_no_slot_is_never_aborted_and_resumes_on_our_move(server):
    opp = {"moves": []}

    def slow_opponent(board: chess.Board):  # answers only when the test says so
        return opp["moves"].pop(0) if opp["moves"] else None
    with BotRun(server, StandInEngine(), CORR) as bot:
        corr = server.challenge(limit=None, days=3, opponent=slow_opponent)
        assert server.wait_for(lambda: corr in server.games and server.games[corr].ply() == 1, 5)
        time.sleep(2.5)  # past abort_time and disconnect_time
        game = server.games[corr]
        assert not game.over and bot.service.busy() == 0
        assert server.wait_for(lambda: corr not in bot.service.games, 5)  # parked: no thread
        live = server.challenge(limit=60, opponent=resign_after(4))  # concurrency 1: the slot is free
        assert _ended(server, live, 10)
        with server.lock:
            opp["moves"].append(next(iter(game.board.legal_moves)))
            server._maybe_opponent(game)
        assert server.wait_for(lambda: game.ply() == 3, 8)  # the check-in found our move
    assert server.answers[live] == ("accept", None)
    assert not any(p.endswith("/abort") for _, p, _ in server.requests)


@pytest.mark.parametrize(("kw", "reason"), [({"days": None}, "tooSlow"), ({"days": 30}, "tooSlow")])
def test_unlimited_and_too_long_correspondence_challenges_are_declined(server, kw, reason):
    with BotRun(server, StandInEngine(), CORR):
        cid = server.challenge(limit=None, **kw)
        assert server.wait_for(lambda: cid in server.answers, 5)
    assert server.answers[cid] == ("decline", reason)


# 8. reconnecting mid-game ------------------------------------------------------------------------
@pytest.mark.slow
def test_the_clock_after_a_slow_reconnection_is_never_overstated(server):
    seen: list[tuple[int, float]] = []

    class Spy(StandInThinker):
        def think(self, board, clock, *, first_moves_unclocked=False, time_left_s=None):
            g = server.games[gid]
            with server.lock:
                truth = g.wtime - (time.monotonic() - g.last_move_at) * 1000
            if clock is not None and len(board.move_stack) >= 2:
                seen.append((clock.time, truth))
            return super().think(board, clock, first_moves_unclocked=first_moves_unclocked)

    class SpyEngine(StandInEngine):
        def new_game(self, game_id=None):
            return Spy()

    def opponent(board: chess.Board):
        if len(board.move_stack) == 3:
            server.blackout(gid, 1.0)  # this move's state is lost; the reconnection answers 1 s late
        return random_mover(1)(board)
    with BotRun(server, SpyEngine()):
        gid = server.challenge(opponent=resign_after(8, opponent), limit=60)
        assert _ended(server, gid, 20)
    assert len(seen) >= 2 and server.games[gid].stream_connections >= 2
    assert all(ours <= truth + 30 for ours, truth in seen), seen


# 9. claims, tournaments, re-sent challenges, draws -----------------------------------------------
@pytest.mark.slow
def test_victory_is_claimed_again_when_lichess_answers_without_effect(server):
    server.ignore_claims = 1
    with BotRun(server, StandInEngine()):
        gid = server.challenge(opponent=scripted(["e7e5"]))
        assert server.wait_for(lambda: gid in server.games and server.games[gid].ply() == 3, 10)
        server.opponent_gone(gid, claim_in=0)
        assert _ended(server, gid, 10)
    claims = [p for _, p, _ in server.requests if p.endswith("/claim-victory")]
    assert server.games[gid].status == "timeout" and len(claims) >= 2


@pytest.mark.slow
def test_a_draw_is_claimed_when_the_config_asks(server):
    with BotRun(server, StandInEngine(), {"draw_or_resign": {"claim_draw_when_gone": True}}):
        gid = server.challenge(opponent=scripted(["e7e5"]))
        assert server.wait_for(lambda: gid in server.games and server.games[gid].ply() == 3, 10)
        server.opponent_gone(gid, claim_in=1)  # 400 until then: claimed again after
        assert _ended(server, gid, 10)
    assert (server.games[gid].status, server.games[gid].winner) == ("draw", None)


@pytest.mark.slow
def test_a_challenge_sent_again_while_its_answer_is_in_flight_is_answered_once(server):
    server.answer_delay = 1.0
    with BotRun(server, StandInEngine()):
        cid = server.challenge(opponent=resign_after(4))
        assert server.wait_for(lambda: server.answering == 1, 5)
        server.drop_event_streams()  # lichess re-sends the still pending challenge on the new stream
        assert server.wait_for(lambda: server.event_connections >= 2, 5)
        assert server.answering == 1  # the event stream came back while the answer was still in flight
        assert _ended(server, cid, 10)
    assert server.answer_attempts[cid] == 1


def test_the_opponents_draw_offer_is_accepted_with_offering_draw_on_the_move(server):
    config = {"draw_or_resign": {"offer_draw_enabled": True, "offer_draw_score": 100_000, "offer_draw_moves": 1}}
    with BotRun(server, StandInEngine(), config) as bot:
        game = bot.play(opponent=scripted(["e7e5", OFFER_DRAW, "d7d6"]))  # offers, then moves
    assert (game.status, game.winner) == ("draw", None) and game.posts[-1] == (4, game.posts[-1][1], True)


@pytest.mark.slow
def test_a_challenge_canceled_before_our_answer_is_not_answered(server):
    server.answer_delay = 1.0
    with BotRun(server, StandInEngine()):
        first = server.challenge(opponent=resign_after(4))
        assert server.wait_for(lambda: server.answering == 1, 5)
        second = server.challenge()
        server.cancel_challenge(second)  # challengeCanceled while the first answer is still in flight
        assert _ended(server, first, 10)
        time.sleep(0.3)
    assert server.answer_attempts[second] == 0 and server.answer_attempts[first] == 1


@pytest.mark.slow
def test_a_challenge_game_whose_opponent_never_moves_is_aborted_by_the_bot(server):
    """lila expires a game for a missing first move only when its source is expirable (lobby, arena, pool, swiss:
    Source.expirable); a challenge's game waits forever, so the bot aborts it itself after abort_time (issue 40).
    The test server keeps lila's rule: a friend game never ends by itself."""
    with BotRun(server, StandInEngine(), {"abort_time": 1}):
        gid = server.challenge(opponent=staller(), bot_color="black")  # white, the opponent, never moves
        assert _ended(server, gid, 10)
    assert server.games[gid].status == "aborted"
    assert any(p == f"/api/bot/game/{gid}/abort" for _, p, _ in server.requests)


def test_the_test_server_never_expires_a_challenge_game_but_an_arena_game_ends_nostart(server):
    server.first_move_s = 0.3
    friend = server.start_game(opponent=staller(), bot_color="black")
    arena = server.start_game(opponent=staller(), bot_color="black", tournament="arena01")
    assert server.wait_for(lambda: server.games[arena].over, 5)
    assert (server.games[arena].status, server.games[arena].winner) == ("noStart", "black")
    assert not server.games[friend].over
