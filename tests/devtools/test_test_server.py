"""The fake server is as strict as lichess: these pin the strictness the bot tests rely on."""

from __future__ import annotations

import json
import threading

import chess
import pytest
import requests

from lichessbot.lichess.client import ClientSettings, LichessClient, LichessError
from tests.fake_lichess import FakeLichess, scripted, shuffler, staller

FAST = ClientSettings(timeout=3.0, stream_read_timeout=1.5, retries=0, backoff=0.02, max_backoff=0.1)


def _auth(server: FakeLichess) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}"}


def _first_lines(server: FakeLichess, path: str, n: int) -> list[dict]:
    with requests.get(server.url + path, headers=_auth(server), stream=True, timeout=5) as r:
        out = []
        for line in r.iter_lines():
            if line.strip():
                out.append(json.loads(line))
                if len(out) == n:
                    return out
    return out


def _first_lines_quietly(server: FakeLichess, path: str, n: int) -> None:
    try:
        _first_lines(server, path, n)
    except requests.RequestException:  # the server may shut down first
        pass


def test_a_quota_429_has_an_html_body_and_no_retry_after():
    with FakeLichess(quota=(0.001, 2)) as server:
        codes = [requests.get(server.url + "/api/account", headers=_auth(server), timeout=5) for _ in range(3)]
        assert [r.status_code for r in codes] == [200, 200, 429]
        assert codes[2].headers["Content-Type"].startswith("text/html") and "Retry-After" not in codes[2].headers


def test_a_decline_sent_as_json_loses_its_reason_and_a_form_keeps_it(server):
    """lila reads the decline's reason from a form only; anything else is ``generic`` (DeclineReason default)."""
    cid = server.challenge()
    r = requests.post(f"{server.url}/api/challenge/{cid}/decline", json={"reason": "later"}, headers=_auth(server),
                      timeout=5)
    assert r.status_code == 200 and server.answers[cid] == ("decline", "generic")
    cid = server.challenge()
    r = requests.post(f"{server.url}/api/challenge/{cid}/decline", data={"reason": "later"}, headers=_auth(server),
                      timeout=5)
    assert r.status_code == 200 and server.answers[cid] == ("decline", "later")


def test_pending_challenges_are_sent_again_on_connect_with_compat(server):
    ultra = server.challenge(limit=15)
    first = _first_lines(server, "/api/stream/event", 1)[0]
    assert first["challenge"]["id"] == ultra and first["compat"] == {"bot": False, "board": False}
    again = _first_lines(server, "/api/stream/event", 1)[0]
    assert again["challenge"]["id"] == ultra  # still pending: sent again
    client = LichessClient(server.token, server.url, FAST)
    with pytest.raises(LichessError) as err:
        client.accept_challenge(ultra)
    assert err.value.status == 400  # lichess refuses bots in UltraBullet


def test_a_second_event_stream_ends_the_first(server):
    ended = threading.Event()

    def first() -> None:
        with requests.get(server.url + "/api/stream/event", headers=_auth(server), stream=True, timeout=5) as r:
            for _ in r.iter_lines():
                pass
        ended.set()
    t = threading.Thread(target=first, daemon=True)
    t.start()
    assert server.wait_for(lambda: server.event_connections == 1, 5)
    second = threading.Thread(target=_first_lines_quietly, args=(server, "/api/stream/event", 1), daemon=True)
    second.start()
    assert ended.wait(5)
    server.challenge()  # the second stream is the one still open: it gets the event and ends
    t.join(5)
    second.join(5)
    assert not second.is_alive()


def test_keys_lichess_omits_are_omitted_and_correspondence_has_days(server):
    gid = server.start_game(limit=None, days=3, opponent=staller())
    full = _first_lines(server, f"/api/bot/game/stream/{gid}", 1)[0]
    assert "clock" not in full and full["daysPerTurn"] == 3
    assert "wdraw" not in full["state"] and "bdraw" not in full["state"] and "winner" not in full["state"]


def test_threefold_repetition_draws_and_claims_wait_for_claim_win_in_seconds(server):
    client = LichessClient(server.token, server.url, FAST)
    gid = server.start_game(opponent=shuffler(("g8", "f6")))
    for uci in ["g1f3", "f3g1", "g1f3", "f3g1"]:
        assert server.wait_for(lambda: server.games[gid].bot_turn() or server.games[gid].over, 5)
        if server.games[gid].over:
            break
        client.make_move(gid, uci)
    assert server.wait_for(lambda: server.games[gid].over, 5)
    assert (server.games[gid].status, server.games[gid].winner) == ("draw", None)
    other = server.start_game(opponent=scripted(["e7e5"]))
    client.make_move(other, "e2e4")
    server.opponent_gone(other, claim_in=30)
    with pytest.raises(LichessError) as err:
        client.claim_victory(other)
    assert err.value.status == 400 and not server.games[other].over


def test_a_crazyhouse_game_sends_drop_moves(server):
    from tests.fake_lichess import drops_first

    gid = server.start_game(variant="crazyhouse", fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[Pp] w KQkq - 0 1",
                            bot_color="black", opponent=drops_first())
    assert server.wait_for(lambda: server.games[gid].ply() == 1, 5)
    full = _first_lines(server, f"/api/bot/game/stream/{gid}", 1)[0]
    assert full["variant"]["key"] == "crazyhouse" and "@" in full["state"]["moves"]
    with pytest.raises(ValueError):
        chess.Board().parse_uci(full["state"]["moves"])
