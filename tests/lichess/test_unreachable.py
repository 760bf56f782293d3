"""A server the bot cannot reach is named with the cause and what to check, within 10 s, over real sockets:
a closed port, a name that does not resolve, a server that never answers, a TLS handshake that fails."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from lichessbot.lichess.client import ClientSettings, LichessClient, LichessError
from lichessbot.lichess.unreachable import Cause, cause
from tests.fake_lichess import FakeLichess

TOKEN = "lip_UnreachableTestToken42"
#: Short timeouts and backoff, so that each cause costs the test about a second.
QUICK = ClientSettings(timeout=1.0, backoff=0.05, first_contact=2.0)


@pytest.fixture
def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then closed)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return int(port)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield int(s.getsockname()[1])
    s.close()


def _first_contact(url: str, settings: ClientSettings = QUICK) -> tuple[str, float]:
    """The message of the token test against ``url`` and the seconds it took."""
    client = LichessClient(TOKEN, url, settings)
    t = time.monotonic()
    with pytest.raises(LichessError) as info:
        client.token_scopes()
    client.close()
    return str(info.value), time.monotonic() - t


def test_a_closed_port_is_named_as_refused(closed_port):
    message, seconds = _first_contact(f"http://127.0.0.1:{closed_port}")
    assert message.startswith(f"testing the token: cannot reach http://127.0.0.1:{closed_port}/api/token/test: ")
    assert f"127.0.0.1:{closed_port} refused the connection: check the url's port and that the server runs" in message
    assert TOKEN not in message and seconds < QUICK.first_contact + 1


def test_a_name_that_does_not_resolve_is_named_as_dns():
    # .invalid never resolves (RFC 6761): offline or online, the resolver says so at once
    message, _ = _first_contact("https://lichess.invalid")
    assert "cannot reach https://lichess.invalid/api/token/test" in message
    assert "the name lichess.invalid does not resolve (DNS): check the url and that this machine is online" in message


@pytest.mark.slow
def test_a_server_that_never_answers_is_named_within_the_first_contact_budget(silent_server):
    message, seconds = _first_contact(f"http://127.0.0.1:{silent_server}")
    assert f"127.0.0.1:{silent_server} did not answer within 1 s" in message  # the connect timeout
    assert "check the network, a firewall or a proxy" in message
    assert seconds < QUICK.first_contact + 0.5, seconds  # retries included


def test_a_failed_tls_handshake_is_named_with_its_reason():
    with FakeLichess(token=TOKEN) as server:  # plain HTTP: https:// to it fails in the handshake
        message, _ = _first_contact(server.url.replace("http://", "https://"))
    assert "the TLS handshake with 127.0.0.1:" in message and "WRONG_VERSION_NUMBER" in message
    assert "check the url's scheme (http:// for a server without TLS)" in message


def test_the_causes_are_told_apart_in_the_exception_chain(closed_port):
    import requests

    for url, expected in ((f"http://127.0.0.1:{closed_port}/", Cause.REFUSED), ("http://x.invalid/", Cause.NAME)):
        with pytest.raises(requests.ConnectionError) as info:
            requests.get(url, timeout=1)
        assert cause(info.value)[0] is expected
    assert cause(ValueError("odd"))[0] is Cause.OTHER


@pytest.mark.slow
def test_with_the_default_settings_a_silent_server_is_named_within_10_seconds(silent_server):
    message, seconds = _first_contact(f"http://127.0.0.1:{silent_server}", ClientSettings())
    assert "did not answer within" in message and seconds < 10, (seconds, message)


@pytest.mark.slow
def test_lichessbot_play_says_it_in_one_line_and_exits_2(tmp_path, closed_port):
    cfg = tmp_path / "config.yml"
    cfg.write_text(f"url: http://127.0.0.1:{closed_port}\n")
    t = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "lichessbot", "play", "--config", str(cfg)], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "LICHESS_BOT_TOKEN": TOKEN})
    seconds = time.monotonic() - t
    lines = [line for line in proc.stderr.splitlines() if line.startswith("lichessbot:")]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert f"cannot reach http://127.0.0.1:{closed_port}/api/token/test" in lines[0] and "refused" in lines[0]
    assert TOKEN not in proc.stderr and seconds < 10 + 5  # the first contact, plus the interpreter's start
