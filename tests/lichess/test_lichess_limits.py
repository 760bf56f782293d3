"""lila's limits by endpoint class, counted as lila counts them (issue 40, point 7): fixed windows that open at
the first request (lila memo RateLimit), a request's cost in credits (a challenge to a human costs 5, to a bot
1: app/controllers/Challenge.scala), and a request over its window waits (or, a challenge, is not sent)."""

from __future__ import annotations

import threading
import time

import pytest

from lichessbot.lichess.client import ChallengeLimited, ClientSettings, LichessClient, LichessError
from lichessbot.lichess.events import DeclineReason
from lichessbot.lichess.limits import (
    ACCOUNT,
    ANSWER,
    ARENA,
    CHALLENGE,
    CHAT,
    EVENT_STREAM,
    LILA_LIMITS,
    OTHER,
    Window,
    Windows,
    request_class,
)

URL = "https://lichess.org"


@pytest.mark.parametrize(("method", "path", "cls"), [
    ("GET", "/api/stream/event", EVENT_STREAM),
    ("GET", "/api/account", ACCOUNT),
    ("POST", "/api/challenge/someone", CHALLENGE),
    ("POST", "/api/challenge/abcd1234/accept", ANSWER),
    ("POST", "/api/challenge/abcd1234/decline", ANSWER),
    ("POST", "/api/challenge/abcd1234/cancel", ANSWER),
    ("POST", "/api/tournament/xyz/join", ARENA),
    ("POST", "/api/bot/game/abcd1234/chat", CHAT),
    ("GET", "/api/account/playing", OTHER),
    ("POST", "/api/bot/game/abcd1234/resign", OTHER),
])
def test_each_request_has_its_class(method, path, cls):
    assert request_class(method, URL + path) == cls


def test_lila_limits_are_the_ones_of_its_source():
    assert [(w.credits, w.seconds) for w in LILA_LIMITS[CHALLENGE]] == [(25, 60.0), (200, 86_400.0)]
    assert [(w.credits, w.seconds) for w in LILA_LIMITS[EVENT_STREAM]] == [(30, 600.0)]
    assert [(w.credits, w.seconds) for w in LILA_LIMITS[ACCOUNT]] == [(30, 300.0)]
    assert [(w.credits, w.seconds) for w in LILA_LIMITS[ARENA]] == [(30, 600.0)]


def test_a_window_opens_at_its_first_request_and_counts_costs():
    now = [100.0]
    windows = Windows(clock=lambda: now[0])
    for _ in range(5):
        assert windows.take(CHALLENGE, cost=5) == 0.0   # five challenges to humans: 25 credits
    assert windows.take(CHALLENGE, cost=1) == pytest.approx(60.0)  # full until the window opened at 100 closes
    now[0] += 59.9
    assert windows.take(CHALLENGE, cost=1) == pytest.approx(0.1)
    now[0] += 0.1
    assert windows.take(CHALLENGE, cost=1) == 0.0    # a new window (fixed, not rolling): 24 credits left
    assert windows.left(CHALLENGE) == {"challenge.create.user fast": 24, "challenge.create.user slow": 174}
    assert windows.take(OTHER) == 0.0 and windows.left(OTHER) == {}  # no window: never waits


def test_the_daily_window_of_challenges_holds_after_the_minute_ones():
    now = [0.0]
    windows = Windows(clock=lambda: now[0])
    for _minute in range(8):
        for _ in range(25):
            assert windows.take(CHALLENGE) == 0.0
        now[0] += 60.0
    assert windows.take(CHALLENGE) == pytest.approx(86_400.0 - 480.0)  # 200 bot challenges today


def test_a_challenge_over_lilas_window_is_not_sent_and_answers_still_go(server):
    server.add_bot("Opponent1")
    client = LichessClient(server.token, server.url, ClientSettings(retries=0))
    client.session.windows = Windows({CHALLENGE: (Window(2, 60.0, "test"),)})
    client.create_challenge("Opponent1", {"rated": "false", "clock.limit": "60", "clock.increment": "0"})
    client.create_challenge("Opponent1", {"rated": "false", "clock.limit": "60", "clock.increment": "0"}, cost=1)
    with pytest.raises(ChallengeLimited) as err:
        client.create_challenge("Opponent1", {"rated": "false", "clock.limit": "60", "clock.increment": "0"})
    assert err.value.status == 429 and 59 < (err.value.seconds or 0) <= 60
    assert len(server.outgoing) == 2 and client.session.refused_by_limit == 1  # the third was never sent
    cid = server.challenge()
    client.decline_challenge(cid, DeclineReason.LATER)  # another class: not held
    assert server.answers[cid] == ("decline", "later")


def test_an_event_stream_opened_over_its_window_waits_for_the_window(server):
    client = LichessClient(server.token, server.url, ClientSettings(retries=0))
    client.session.windows = Windows({EVENT_STREAM: (Window(2, 0.6, "test"),)})
    t0 = time.monotonic()
    for _ in range(3):
        client.open_event_stream().close()
    took = time.monotonic() - t0
    assert took >= 0.5 and client.session.deferred_by_limit == 1


def test_a_waiting_request_gives_up_at_shutdown(server):
    stop = threading.Event()
    client = LichessClient(server.token, server.url, ClientSettings(retries=0), stop=stop)
    client.session.windows = Windows({ACCOUNT: (Window(1, 600.0, "test"),)})
    client.account()
    threading.Timer(0.2, stop.set).start()
    t0 = time.monotonic()
    with pytest.raises(LichessError, match="stopped"):
        client.account()
    assert time.monotonic() - t0 < 5
