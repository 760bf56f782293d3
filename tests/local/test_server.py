"""The embedded lichess on its own (no bot): bad requests never take it down, the page and its guest sessions, the
page's stream (positions with the legal destinations; the spectator room and the bot's evals for watchers, and for
the players once the game is over, as on lichess), keepAliveStream challenges, and the clock thread ending a game
between two people whose streams are all closed."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import urllib.parse
from xml.etree import ElementTree

import pytest
import requests

from lichessbot.local import LocalLichess

BOT = "lip_bot"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _lines(server: LocalLichess, path: str, token: str, n: int, out: list[dict] | None = None) -> list[dict]:
    """The first ``n`` lines of a stream (appended to ``out`` as they come)."""
    out = [] if out is None else out
    with requests.get(server.url + path, headers=_auth(token), stream=True, timeout=5) as r:
        for line in r.iter_lines():
            if line.strip():
                out.append(json.loads(line))
                with server.changed:
                    server.changed.notify_all()
                if len(out) == n:
                    break
    return out


def _raw(server: LocalLichess, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _guest(server: LocalLichess) -> str:
    """A token of the page's guest (who may play bullet: the Board API may not, as on lichess)."""
    return requests.post(server.url + "/local/session", timeout=5).json()["token"]


def _game(server: LocalLichess, white: str = "lip_a", black: str = "lip_b", limit: int = 300, inc: int = 3) -> str:
    """A game between two people (``white`` challenges, ``black`` accepts)."""
    requests.get(server.url + "/api/account", headers=_auth(black), timeout=5)  # the account exists once it is seen
    name = server.account_for_token(black).username
    r = requests.post(f"{server.url}/api/challenge/{name}", headers=_auth(white), timeout=5,
                      data={"clock.limit": limit, "clock.increment": inc, "color": "white"})
    gid = r.json()["id"]
    assert requests.post(f"{server.url}/api/challenge/{gid}/accept", headers=_auth(black), timeout=5).ok
    return gid


def test_the_board_api_refuses_bullet_as_lichess_does_and_the_page_plays_it():
    with LocalLichess(BOT) as server:
        gid = _game(server, limit=60, inc=0)
        r = requests.post(f"{server.url}/api/board/game/{gid}/move/e2e4", headers=_auth("lip_a"), timeout=5)
        assert r.status_code == 400 and r.json() == {"error": "This game cannot be played with the Board API."}
        a, b = _guest(server), _guest(server)
        gid = _game(server, a, b, limit=60, inc=0)
        assert requests.post(f"{server.url}/api/board/game/{gid}/move/e2e4", headers=_auth(a), timeout=5).ok


def test_bad_requests_never_take_the_server_down():
    with LocalLichess(BOT) as server:
        assert b" 400 " in _raw(server, b"GARBAGE\r\n\r\n")
        host = b"Host: 127.0.0.1\r\n"
        assert b" 400 " in _raw(server, b"POST /api/challenge/x HTTP/1.1\r\n" + host + b"Content-Length: abc\r\n\r\n")
        assert b" 413 " in _raw(server, b"POST /api/challenge/x HTTP/1.1\r\n" + host +
                                b"Content-Length: 99999999\r\n\r\n")
        r = requests.post(server.url + "/api/challenge/lichessbot", headers={**_auth("lip_x"),
                          "Content-Type": "application/json"}, data=b"[1, 2", timeout=5)
        assert r.status_code == 400 and "Invalid JSON" in r.json()["error"] and not server.challenges
        r = requests.post(server.url + "/api/challenge/lichessbot", headers=_auth("lip_x"), data={}, timeout=5)
        assert r.status_code == 200 and r.json()["timeControl"] == {"type": "unlimited"}  # no clock, no days
        r = requests.get(server.url + "/api/board/game/stream/nonexist", headers=_auth("lip_x"), timeout=5)
        assert r.status_code == 404 and r.json() == {"error": "No such game"}
        assert requests.get(server.url + "/api/account", timeout=5).status_code == 401
        assert requests.get(server.url + "/api/account", headers=_auth("lip_x"), timeout=5).ok


def test_the_page_is_one_self_contained_html_with_its_settings():
    with LocalLichess(BOT, bot_name="LocalBot") as server:
        server.page_extra["status"] = "http://127.0.0.1:9999"
        for path in ("/", "/abcdEFGH"):
            r = requests.get(server.url + path, timeout=5)
            assert r.ok and r.headers["Content-Type"].startswith("text/html")
            html = r.text
            assert '"bot": "LocalBot"' in html and '"status": "http://127.0.0.1:9999"' in html
            assert "/*CSS*/" not in html and "/*JS*/" not in html and "function renderBoard" in html
            assert "src=" not in html  # nothing from outside: the one <link> is the icon, inline
            assert re.findall(r"<link[^>]*>", html) == [m for m in re.findall(r"<link[^>]*>", html)
                                                        if 'rel="icon" href="data:image/svg+xml,' in m]
        first = requests.post(server.url + "/local/session", timeout=5).json()
        again = requests.post(server.url + "/local/session", data={"token": first["token"]}, timeout=5).json()
        assert again == first and server.account_for_token(first["token"]).web  # a reload is the same guest
        assert requests.post(server.url + "/local/session", data={"token": BOT}, timeout=5).json()["token"] != BOT


def test_favicon_ico_answers_the_pages_own_icon():
    """``GET /favicon.ico`` (asked by browsers and tools whatever the page says) is the page's inline icon, an SVG
    image a browser can draw, not a 404."""
    with LocalLichess(BOT) as server:
        r = requests.get(server.url + "/favicon.ico", timeout=5)
        assert r.status_code == 200 and r.headers["Content-Type"] == "image/svg+xml"
        root = ElementTree.fromstring(r.content)
        assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox") == "0 0 16 16"
        html = requests.get(server.url + "/", timeout=5).text
        inline = re.search(r'rel="icon" href="data:image/svg\+xml,([^"]+)"', html)
        assert inline and urllib.parse.unquote(inline.group(1)).encode() == r.content  # one icon
        assert requests.post(server.url + "/favicon.ico", timeout=5).status_code == 404  # GET only


def test_the_page_stream_sends_positions_and_shows_the_spectator_room_to_players_after_the_game():
    with LocalLichess(BOT, keepalive=0.2) as server:
        gid = _game(server)
        g = server.games[gid]
        first = _lines(server, f"/local/game/{gid}/stream", "lip_a", 2)
        assert first[0]["type"] == "gameFull" and first[1]["type"] == "position"
        pos = first[1]
        assert pos["turn"] == "white" and sorted(pos["dests"]["e2"]) == ["e3", "e4"] and pos["abortable"]
        assert pos["expiresIn"] is None  # a challenge's game never expires (lila Source.expirable)
        live: list[dict] = []
        reader = threading.Thread(target=_lines, args=(server, f"/local/game/{gid}/stream", "lip_a", 3, live))
        reader.start()
        assert server.wait_for(lambda: len(live) == 2, 5)  # the player's stream is open
        server.post_chat(g, server.bot, "spectator", "eval +0.35 | pv e4")  # as a bot would, watched
        server.post_chat(g, server.bot, "player", "hello")
        reader.join(5)
        assert [x.get("text") for x in live] == [None, None, "hello"]  # the spectator room is not a player's
        player = _lines(server, f"/local/game/{gid}/stream", "lip_a", 3)
        assert [x.get("text") for x in player] == [None, None, "hello"]  # nor in the history sent to a player
        watcher = _lines(server, f"/local/game/{gid}/stream", "lip_watcher", 4)
        assert watcher[2] == {"type": "chatLine", "room": "spectator", "username": "lichessbot",
                              "text": "eval +0.35 | pv e4"}
        requests.post(f"{server.url}/api/board/game/{gid}/resign", headers=_auth("lip_b"), timeout=5)
        assert server.wait_for(lambda: g.over, 5)
        after = _lines(server, f"/local/game/{gid}/stream", "lip_a", 4)
        assert after[2]["room"] == "spectator"  # the game is over: the players see it too
        board = requests.get(f"{server.url}/api/board/game/stream/{gid}", headers=_auth("lip_a"), timeout=5)
        assert board.ok and "spectator" not in board.text  # a person's Board API stream has the player room only


def test_a_keep_alive_challenge_answers_until_it_is_accepted():
    with LocalLichess(BOT, keepalive=0.2) as server:
        requests.get(server.url + "/api/account", headers=_auth("lip_b"), timeout=5)
        got: list[dict] = []

        def create() -> None:
            r = requests.post(f"{server.url}/api/challenge/player1", headers=_auth("lip_a"), timeout=10, stream=True,
                              data={"clock.limit": 300, "clock.increment": 3, "keepAliveStream": "true"})
            got.extend(json.loads(x) for x in r.iter_lines() if x.strip())
        t = threading.Thread(target=create)
        t.start()
        assert server.wait_for(lambda: server.challenges, 5)
        cid = next(iter(server.challenges))
        time.sleep(0.5)  # keep-alive lines meanwhile
        requests.post(f"{server.url}/api/challenge/{cid}/accept", headers=_auth("lip_b"), timeout=5)
        t.join(5)
        assert got[0]["id"] == cid and got[0]["direction"] == "out" and got[-1] == {"done": "accepted"}
        declined = requests.post(f"{server.url}/api/challenge/player1", headers=_auth("lip_a"), timeout=5,
                                 data={"clock.limit": 300, "clock.increment": 3}).json()["id"]
        r = requests.post(f"{server.url}/api/challenge/{declined}/decline", headers=_auth("lip_b"), timeout=5,
                          data={"reason": "tooFast"})
        assert r.ok
        shown = requests.get(f"{server.url}/api/challenge/{declined}/show", headers=_auth("lip_a"), timeout=5).json()
        assert shown["status"] == "declined" and shown["declineReasonKey"] == "toofast"
        assert shown["declineReason"].startswith("This time control is too fast for me")


@pytest.mark.slow
def test_the_clock_thread_ends_a_game_nobody_watches():
    with LocalLichess(BOT) as server:
        a, b = _guest(server), _guest(server)
        gid = _game(server, a, b, limit=0, inc=1)  # 0+1: 3 s each
        r = requests.post(f"{server.url}/api/board/game/{gid}/move/e2e4", headers=_auth("lip_c"), timeout=5)
        assert r.status_code == 404  # not a player of it
        for token, uci in ((a, "e2e4"), (b, "e7e5")):
            assert requests.post(f"{server.url}/api/board/game/{gid}/move/{uci}", headers=_auth(token), timeout=5).ok
        g = server.games[gid]
        assert server.wait_for(lambda: g.over, 6)
        assert (g.status, g.winner) == ("outoftime", "black")


def test_a_challenge_game_is_not_aborted_when_its_first_move_never_comes():
    """lila expires only lobby, arena, pool and swiss games (Source.expirable): a friend game waits for its
    players (the bot's own ``abort_time`` decides)."""
    with LocalLichess(BOT) as server:
        gid = _game(server)
        g = server.games[gid]
        g.last_move_at -= 60  # 25 s for a blitz game's first move, long past
        assert not server.wait_for(lambda: g.over, 0.5)
        assert g.status == "started"
        r = requests.post(f"{server.url}/api/board/game/{gid}/move/e2e4", headers=_auth("lip_a"), timeout=5)
        assert r.ok and g.ply() == 1


def test_a_lobby_game_whose_first_move_never_comes_is_aborted():
    with LocalLichess(BOT) as server:
        gid = _game(server)
        g = server.games[gid]
        g.source = "lobby"
        g.last_move_at -= 24.9  # 25 s for a blitz game's first move: 0.1 s left
        assert server.wait_for(lambda: g.over, 3)
        assert (g.status, g.winner) == ("aborted", None)
