"""lichess-bot's ``online_block_list`` (issue 40): users named in lists on the web are declined (challenge) and
never challenged (matchmaking); lists are read before the first challenge, refreshed with their ETag, and a
list that cannot be read keeps its last version."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from lichessbot.bot.matchmaking.matchmaker import MatchmakerOptions
from lichessbot.online.blocklists import OnlineBlockLists
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine


class ListServer:
    """Plain-text lists on 127.0.0.1: ``lists[path]`` -> text; answers 304 to a matching If-None-Match;
    ``fail`` answers 503 to every request."""

    def __init__(self) -> None:
        self.lists: dict[str, str] = {}
        self.fail = False
        self.requests: list[tuple[str, str | None]] = []  # (path, If-None-Match)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                server.requests.append((self.path, self.headers.get("If-None-Match")))
                assert "Authorization" not in self.headers  # the bot's token never leaves for these hosts
                text = server.lists.get(self.path)
                if server.fail or text is None:
                    self.send_response(503 if server.fail else 404)
                    self.end_headers()
                    return
                etag = f'"{abs(hash(text))}"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.end_headers()
                    return
                data = text.encode()
                self.send_response(200)
                self.send_header("ETag", etag)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> ListServer:
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def lists():
    with ListServer() as s:
        yield s


def test_lists_are_read_refreshed_with_their_etag_and_kept_when_unreadable(lists):
    lists.lists["/a.txt"] = "Spammer1\n\n  spammer2  \n"
    lists.lists["/b.txt"] = "Other"
    blocked = OnlineBlockLists([f"{lists.url}/a.txt", f"{lists.url}/b.txt"])
    blocked.refresh()
    assert blocked.names == {"spammer1", "spammer2", "other"} and "SPAMMER1" in blocked
    blocked.refresh()
    assert lists.requests[-2][1] is not None  # asked with the ETag: 304, the list kept
    assert blocked.names == {"spammer1", "spammer2", "other"}
    lists.lists["/a.txt"] = "spammer3"
    blocked.refresh()
    assert blocked.names == {"spammer3", "other"}
    lists.fail = True
    blocked.refresh()
    assert blocked.names == {"spammer3", "other"} and blocked.failures == 2


def test_a_challenger_on_an_online_list_is_declined_from_the_first_challenge(lists):
    lists.lists["/block.txt"] = "Mallory\n"
    with FakeLichess() as server, BotRun(server, StandInEngine(),
                                         {"challenge": {"online_block_list": [f"{lists.url}/block.txt"]}}):
        blocked = server.challenge(challenger="mallory")
        welcome = server.challenge(challenger="alice", opponent=None)
        assert server.wait_for(lambda: blocked in server.answers and welcome in server.answers, 10)
        assert server.answers[blocked] == ("decline", "generic")
        assert server.answers[welcome][0] == "accept"


def test_matchmaking_never_challenges_a_bot_on_its_online_list(lists, tmp_path):
    lists.lists["/bots.txt"] = "Blocked1\nblocked2\n"
    fast = {"challenge_timeout": 0, "min_wait": 0, "challenge_expiry": 1.0, "challenge_initial_time": [60],
            "challenge_increment": [1], "challenge_mode": "casual", "challenge_variant": "standard"}
    config = {"matchmaking": {"allow_matchmaking": True, "decline_file": str(tmp_path / "mm.json"), **fast,
                              "online_block_list": [f"{lists.url}/bots.txt"]}}
    with FakeLichess() as server:
        for name in ("Blocked1", "Blocked2", "Welcome"):
            server.add_bot(name)  # accepts
        with BotRun(server, StandInEngine(), config, matchmaker=MatchmakerOptions(tick=0.05)):
            assert server.wait_for(lambda: server.outgoing, 10)
        assert {c["destUser"]["name"] for c in server.outgoing} == {"Welcome"}
