"""The lichess client and streams against the fake server: retries, 429 pauses, reconnects, token hygiene."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from lichessbot.lichess.client import ClientSettings, LichessClient, LichessError, endpoint_key
from lichessbot.lichess.events import ChallengeEvent, Connected, DeclineReason
from lichessbot.lichess.limits import ACCOUNT, ANSWER, CHALLENGE, EVENT_STREAM
from lichessbot.lichess.pacing import CHAT, MOVE, OTHER, Pacer, RequestDropped, pause_key
from lichessbot.lichess.streams import ReconnectingStream, event_stream, game_stream
from tests.fake_lichess import FakeLichess, staller

FAST = ClientSettings(timeout=3.0, stream_read_timeout=1.5, retries=3, backoff=0.02, rate_limit_pause=0.3,
                      max_backoff=0.1)


def _game(server: FakeLichess, client: LichessClient) -> str:
    cid = server.challenge(opponent=staller(), bot_color="white")
    client.accept_challenge(cid)
    return cid


def test_endpoint_key_replaces_ids():
    assert endpoint_key("post", "https://lichess.org/api/bot/game/abcd1234/move/e2e4") == "POST /api/bot/game/*/move/*"
    assert endpoint_key("POST", "http://x/api/bot/game/abcd1234/chat") == "POST /api/bot/game/*/chat"
    assert endpoint_key("POST", "http://x/api/challenge/xyz/decline") == "POST /api/challenge/*/decline"
    assert endpoint_key("GET", "http://x/api/account") == "GET /api/account"


def test_5xx_on_a_move_post_is_retried_and_the_move_made_once(server):
    client = LichessClient(server.token, server.url, FAST)
    gid = _game(server, client)
    server.move_failures = [500, 503]
    client.make_move(gid, "e2e4")
    game = server.games[gid]
    assert [s for _, _, s in game.rejected_posts] == [500, 503]
    assert game.posts == [(0, "e2e4", False)]


def test_429_on_a_move_pauses_that_games_moves_only_for_the_bodys_ratelimit_seconds(server):
    client = LichessClient(server.token, server.url, ClientSettings(retries=0, rate_limit_pause=0.3, backoff=0.01))
    gid, other = _game(server, client), _game(server, client)
    server.move_failures, server.limit_seconds = [429], 2
    with pytest.raises(LichessError) as err:
        client.make_move(gid, "e2e4")
    assert err.value.status == 429
    assert client.session.pause_left(f"POST /api/bot/game/{gid}/move/*") > 1.0  # ratelimit.seconds (2), not 0.3
    assert client.session.pause_left(f"POST /api/bot/game/{other}/move/*") == 0.0
    client.make_move(other, "e2e4")  # the other game's moves keep flowing
    client.post_chat(gid, "player", "not paused")
    assert server.games[other].posts == [(0, "e2e4", False)]
    assert server.games[gid].chat == [("player", "not paused")]


def test_a_real_429_with_an_html_body_pauses_its_endpoint_class_for_a_minute_and_nothing_else(server):
    """lila limits each endpoint on its own: a 429 on a challenge answer pauses the answers (a full minute
    without lila's body: api-tips), never the account, challenge creations, the event stream or moves."""
    client = LichessClient(server.token, server.url, ClientSettings(retries=0, backoff=0.01))
    gid = _game(server, client)
    cid, other = server.challenge(), server.challenge()
    server.fail_next("answer", 429)
    with pytest.raises(LichessError) as err:
        client.decline_challenge(cid, DeclineReason.LATER)
    assert err.value.status == 429 and "<" not in str(err.value)
    assert 59 < client.session.pause_left(ANSWER) <= 60  # lichess: wait a full minute
    assert pause_key("POST", server.url + f"/api/challenge/{other}/accept", "x") == ANSWER
    for key in (ACCOUNT, CHALLENGE, EVENT_STREAM):
        assert client.session.pause_left(key) == 0.0
    client.account()  # not paused: another class
    client.make_move(gid, "e2e4")  # moves are another class
    assert server.games[gid].posts == [(0, "e2e4", False)]


def test_a_move_paused_by_a_429_is_posted_at_its_deadline_rather_than_lose_on_time(server):
    client = LichessClient(server.token, server.url, ClientSettings(retries=2, backoff=0.01))
    gid = _game(server, client)
    server.fail_next("move", 429)  # no Retry-After: a 60 s pause of this game's moves
    client.make_move(gid, "e2e4", deadline=time.monotonic() + 0.3)
    assert server.games[gid].posts == [(0, "e2e4", False)]
    assert client.session.posted_in_pause == 1 and client.session.rate_limited == 1


def test_a_lost_move_post_is_retried_after_the_move_timeout_not_the_call_timeout(server):
    client = LichessClient(server.token, server.url, ClientSettings(timeout=10.0, move_timeout=0.3, backoff=0.01))
    gid = _game(server, client)
    server.stall_moves = [5.0]
    client.make_move(gid, "e2e4")
    assert server.games[gid].posts == [(0, "e2e4", False)]
    assert server.stalled == 1  # the first post still hangs: the retry did not wait for it


def test_a_decline_is_sent_as_a_form_as_the_api_spec_says(server):
    client = LichessClient(server.token, server.url, FAST)
    cid = server.challenge()
    client.decline_challenge(cid, DeclineReason.TOO_FAST)
    assert server.answers[cid] == ("decline", "tooFast")


def test_pacing_moves_never_wait_others_are_deferred_chat_is_dropped():
    now = [0.0]
    pacer = Pacer(rate=2.0, burst=4.0, chat_reserve=2.0, chat_max_wait=1.0, clock=lambda: now[0])
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s
    for _ in range(6):
        pacer.acquire(MOVE, "move", sleep)
    assert slept == [] and pacer.tokens == 4.0  # moves never wait and take nothing from the others
    for _ in range(4):
        pacer.acquire(OTHER, "accept", sleep)
    assert slept == [] and pacer.tokens == 0.0
    with pytest.raises(RequestDropped):
        pacer.acquire(CHAT, "chat", sleep)  # needs 3 tokens: would wait 1.5 s > chat_max_wait
    pacer.acquire(OTHER, "accept", sleep)
    assert sum(slept) == pytest.approx(0.5) and pacer.deferred == 1 and pacer.dropped == 1
    now[0] += 10
    pacer.acquire(CHAT, "chat", sleep)  # a full bucket: chat goes at once
    assert pacer.dropped == 1


def test_429_then_success_posts_the_move_after_the_pause(server):
    client = LichessClient(server.token, server.url, FAST)
    gid = _game(server, client)
    server.move_failures, server.limit_seconds = [429], 0
    client.make_move(gid, "e2e4", offering_draw=True)
    assert server.games[gid].posts == [(0, "e2e4", True)]


def test_4xx_is_not_retried(server):
    client = LichessClient(server.token, server.url, FAST)
    gid = _game(server, client)
    with pytest.raises(LichessError) as err:
        client.make_move(gid, "e2e5")
    assert err.value.status == 400 and "Piece on e2 cannot move to e5" in str(err.value)  # lila's message
    assert len(server.games[gid].rejected_posts) == 1


def test_a_bad_token_gives_a_401_error_that_does_not_contain_the_token(server):
    secret = "lip_WRONGsecretTOKEN42"
    with pytest.raises(LichessError) as err:
        LichessClient(secret, server.url, FAST).account()
    assert err.value.status == 401
    assert secret not in str(err.value) and secret not in repr(err.value)


def test_connection_errors_are_retried_then_reported_without_the_token():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    secret = "lip_SECRET_conn_test"
    client = LichessClient(secret, f"http://127.0.0.1:{port}", FAST)
    with pytest.raises(LichessError) as err:
        client.account()
    assert err.value.status is None and secret not in str(err.value)


def test_closing_the_client_ends_a_call_waiting_to_retry():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = LichessClient("lip_x", f"http://127.0.0.1:{port}",
                           ClientSettings(retries=5, backoff=30.0, max_backoff=30.0))
    errors: list[LichessError] = []

    def call() -> None:
        try:
            client.post_chat("abcd1234", "player", "hi")
        except LichessError as err:
            errors.append(err)
    t = threading.Thread(target=call)
    t.start()
    t.join(0.5)
    assert t.is_alive()  # refused at once, now in its 30 s backoff
    client.close()
    t.join(5)
    assert not t.is_alive() and len(errors) == 1


def _collect(stream: ReconnectingStream, out: list, until: threading.Event) -> None:
    for event in stream:
        out.append(event)
        if until.is_set():
            break


def test_event_stream_reconnects_after_a_drop_and_skips_a_malformed_line(server):
    client = LichessClient(server.token, server.url, FAST)
    stream = event_stream(client, backoff=0.02)
    events: list = []
    t = threading.Thread(target=_collect, args=(stream, events, threading.Event()), daemon=True)
    t.start()
    assert server.wait_for(lambda: server.event_subscribers, 5)
    server.push_event_raw(b"{this is not json\n")
    server.push_event_raw(b"[1, 2]\n")
    server.push_event_raw(b'{"type": "challenge", "challenge": {"id": "x1", "rated": "yes"}}\n')  # a wrong type
    server.drop_event_streams()
    assert server.wait_for(lambda: server.event_connections >= 2 and server.event_subscribers, 5)
    cid = server.challenge()
    assert server.wait_for(lambda: any(isinstance(e, ChallengeEvent) for e in events), 5)
    stream.close()
    t.join(5)
    assert not t.is_alive()
    assert [e.reconnect for e in events if isinstance(e, Connected)] == [False, True]
    assert stream.malformed == 3
    assert [e.challenge.id for e in events if isinstance(e, ChallengeEvent)] == [cid]


def test_a_silent_stream_is_reopened():
    with FakeLichess(keepalive=30) as server:  # no keepalive within the read timeout
        client = LichessClient(server.token, server.url, ClientSettings(stream_read_timeout=0.3, backoff=0.01))
        stream = event_stream(client, backoff=0.01)
        t = threading.Thread(target=_collect, args=(stream, [], threading.Event()), daemon=True)
        t.start()
        assert server.wait_for(lambda: server.event_connections >= 3, 10)
        stream.close()
        t.join(5)


def test_game_stream_of_an_unknown_game_raises():
    with FakeLichess() as server:
        client = LichessClient(server.token, server.url, FAST)
        with pytest.raises(LichessError) as err:
            list(game_stream(client, "nope"))
        assert err.value.status == 404


def test_a_connection_error_names_the_url_and_never_the_token():
    import berserk
    import requests

    from lichessbot.lichess.client import ClientSettings, LichessClient

    client = LichessClient("lip_NeverShowThisToken", "http://127.0.0.1:1",
                           ClientSettings(timeout=1.0, retries=0, backoff=0.01))
    with pytest.raises((requests.ConnectionError, berserk.exceptions.ApiError)) as info:
        client.api.account.get()  # berserk wraps the error, keeping its message
    assert "http://127.0.0.1:1/api/account" in str(info.value)
    assert "lip_NeverShowThisToken" not in str(info.value)
    client.close()


def test_the_default_pace_keeps_within_lichess_published_figure_for_bots():
    settings = ClientSettings()
    assert settings.pace_rate * 60 <= 180  # requests a minute (lichess, for bots)
    assert Pacer().rate * 60 <= 180


@pytest.mark.slow
def test_requests_other_than_moves_go_one_at_a_time_and_moves_never_wait_for_them(server):
    client = LichessClient(server.token, server.url, FAST)
    gid = _game(server, client)
    ids = [server.challenge() for _ in range(2)]
    server.answer_delay = 0.6
    threads = [threading.Thread(target=client.decline_challenge, args=(cid, DeclineReason.LATER)) for cid in ids]
    for t in threads:
        t.start()
    assert server.wait_for(lambda: server.answering == 1, 2)
    client.make_move(gid, "e2e4")  # while a decline is in flight
    assert server.games[gid].posts == [(0, "e2e4", False)]
    assert not server.wait_for(lambda: server.answering >= 2, 1.0)  # never two at once (lichess api-tips)
    for t in threads:
        t.join(5)
    assert [server.answers[c] for c in ids] == [("decline", "later")] * 2
