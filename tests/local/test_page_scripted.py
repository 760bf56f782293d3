"""The page in Debian's chromium (skipped without it) against the embedded lichess in this process, its bot played
by a script over the Bot API (so the test says what the bot does and when): the bot's figures on the thinking
line when the operator shows them (``show_thinking``, ``play --local --show-thinking``) and not otherwise, and a
rematch the bot declines."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from lichessbot.local import LocalLichess
from tests.browser import Browser
from tests.local.test_page import LocalProcess, click_at

pytestmark = pytest.mark.slow

BOT = "lip_bot"
G = "window.localGame"
EVAL_LINE = "eval +0.35 | W 41% D 33% L 26% | nodes 1.2k (reused 300) nps 850 depth 6/14 | pv e5 Nf3"


def _post(server: LocalLichess, path: str, token: str = BOT, **form: str) -> requests.Response:
    return requests.post(f"{server.url}{path}", data=form or None, timeout=5,
                         headers={"Authorization": f"Bearer {token}"})


def _incoming(server: LocalLichess) -> dict:
    """The bot's first incoming challenge (waits up to 10 s)."""
    for _ in range(100):
        found = requests.get(f"{server.url}/api/challenge", headers={"Authorization": f"Bearer {BOT}"},
                             timeout=5).json()["in"]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError("no challenge reached the bot")


def _page_game(server: LocalLichess, b: Browser) -> str:
    """The page challenges the bot (white, 5+3), the bot accepts; the game's id once the page shows it."""
    click_at(b, '#tcs [data-tc="5+3"]')
    click_at(b, '#colors [data-color="white"]')
    click_at(b, "#play")
    gid = _incoming(server)["id"]
    assert _post(server, f"/api/challenge/{gid}/accept").ok
    assert b.wait_for(f"{G}.gameId === {gid!r} && {G}.pos && {G}.color === 'white'", 10)
    return gid


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    exe = Browser.find()
    if exe is None:
        pytest.skip("chromium not installed")
    with Browser(exe, str(tmp_path / "profile"), 1200, 450) as b:
        yield b


THINKING = "document.getElementById('thinking')"


@pytest.mark.parametrize("show", [True, False], ids=["shown", "lichess-default"])
def test_the_thinking_line_has_the_bots_figures_only_when_the_operator_shows_them(browser: Browser, show: bool):
    b = browser
    with LocalLichess(BOT, rate_limits=False, show_thinking=show) as server:
        b.open(server.url)
        assert b.wait_for(f"{G} && {G}.token", 10)
        gid = _page_game(server, b)
        token = b.eval(f"{G}.token")
        assert _post(server, f"/api/board/game/{gid}/move/e2e4", token).ok
        assert b.wait_for(f"{G}.pos.sans.length === 1", 5)
        assert _post(server, f"/api/bot/game/{gid}/chat", room="spectator", text="good luck").ok  # no figures
        assert _post(server, f"/api/bot/game/{gid}/chat", room="spectator", text=EVAL_LINE).ok
        time.sleep(0.5)  # the line's time to arrive (or not)
        text = b.eval(f"{THINKING}.textContent")
        assert b.eval(f"{THINKING}.hidden") is False and "is thinking" in text  # the bot's turn
        figures = "eval +0.35 \u00b7 depth 6/14 \u00b7 850 nps"
        if not show:
            assert figures not in text and "850" not in text, text
            assert b.eval(f"{G}.thinking") is None
            return
        assert f"(last search: {figures})" in text, text
        assert _post(server, f"/api/bot/game/{gid}/move/e7e5").ok  # our turn: the bot's last search stays in sight
        assert b.wait_for(f"{G}.pos.sans.length === 2", 5)
        assert b.eval(f"{THINKING}.hidden") is False
        assert b.eval(f"{THINKING}.textContent") == f"lichessbot\u2019s last search: {figures}"
        b.call("Page.reload")  # a page that opens the game mid-way has them at once
        assert b.wait_for(f"{G} && {G}.gameId === {gid!r} && {G}.thinking && {G}.pos", 10)
        assert figures in b.eval(f"{THINKING}.textContent")
        assert _post(server, f"/api/board/game/{gid}/resign", token).ok  # after the game: the review's, not these
        assert b.wait_for(f"{THINKING}.hidden", 5)


def test_a_rematch_the_bot_declines_says_so_and_may_be_offered_again(browser: Browser):
    b = browser
    with LocalLichess(BOT, rate_limits=False) as server:
        b.open(server.url)
        assert b.wait_for(f"{G} && {G}.token", 10)
        gid = _page_game(server, b)
        assert _post(server, f"/api/board/game/{gid}/abort", b.eval(f"{G}.token")).ok
        assert b.wait_for("!document.getElementById('result').hidden", 5)
        click_at(b, "#rematch")
        assert b.wait_for("document.getElementById('rematch-msg').textContent === 'Rematch offer sent'", 5)
        assert b.eval("document.getElementById('rematch').disabled") is True
        offer = _incoming(server)
        assert (offer["rematchOf"], offer["color"]) == (gid, "black")  # the page's colour swapped
        assert _post(server, f"/api/challenge/{offer['id']}/decline", reason="later").ok
        declined = ("Rematch offer declined: This is not the right time for me, please ask again later.")
        assert b.wait_for(f"document.getElementById('rematch-msg').textContent === {declined!r}", 5), \
            b.eval("document.getElementById('rematch-msg').textContent")
        assert b.eval(f"{G}.gameId") == gid  # still the old game
        assert b.eval("document.getElementById('rematch').disabled") is False


def test_play_local_show_thinking_sends_the_real_bots_figures_to_its_player(tmp_path: Path, tiny_net):
    """``lichessbot play --local --show-thinking`` (the command, the real bot on the tiny net): after the bot's
    move, the player's page stream has a ``thinking`` line with the figures of the bot's own eval line."""
    app = LocalProcess(tmp_path, tiny_net, "--show-thinking")
    try:
        s = requests.post(f"{app.url}/local/session", data={"token": ""}, timeout=5).json()
        auth = {"Authorization": f"Bearer {s['token']}"}
        r = requests.post(f"{app.url}/api/challenge/lichessbot", headers=auth, timeout=5, data={
            "rated": "false", "clock.limit": "300", "clock.increment": "3", "color": "white"})
        assert r.ok, r.text
        gid = r.json()["id"]
        for _ in range(100):
            if requests.get(f"{app.url}/api/challenge/{gid}/show", headers=auth, timeout=5).json()["status"] \
                    == "accepted":
                break
            time.sleep(0.1)
        assert requests.post(f"{app.url}/api/board/game/{gid}/move/e2e4", headers=auth, timeout=5).ok
        deadline = time.monotonic() + 20
        with requests.get(f"{app.url}/local/game/{gid}/stream", headers=auth, stream=True, timeout=20) as stream:
            for raw in stream.iter_lines():  # an empty line every 6 s at least (the keepalive)
                line = json.loads(raw) if raw else {}
                if line.get("type") == "thinking" or time.monotonic() > deadline:
                    break
        assert line.get("type") == "thinking", line
        assert line["eval"].startswith(("eval ", "mate ")) and line["depth"] and line["nps"], line
    finally:
        app.stop()
