"""The operator's commands while the bot runs (issue 40, BotLi's console commands): the same set from the terminal
where the bot runs (its standard input) and from the status page (``POST /api/command``, this machine only by
default), each logged."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request

import pytest

from lichessbot.bot.service.commands import HELP, read_commands
from lichessbot.logs import configure_logging
from tests.browser import Browser
from tests.fake_lichess import BotRun, StandInEngine, resign_after

CHROMIUM = Browser.find()


def _post(url: str, body: bytes, token: str, ctype: str = "application/json") -> tuple[int, dict]:
    """POST with the status page's token (``X-Lichessbot-Token``, as the page sends it)."""
    req = urllib.request.Request(url, data=body, headers={"Content-Type": ctype, "X-Lichessbot-Token": token},
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_terminal_commands_challenge_pause_matchmaking_and_quit_after_the_games(server, tmp_path):
    logs = io.StringIO()
    configure_logging(stream=logs, json=True, level="info")
    server.add_bot("Sparring", player=lambda: resign_after(6))
    config = {"matchmaking": {"allow_matchmaking": True, "decline_file": str(tmp_path / "mm.json"),
                              "challenge_timeout": 0, "min_wait": 0, "challenge_initial_time": [60],
                              "challenge_increment": [1], "challenge_mode": "casual"}}
    with BotRun(server, StandInEngine(), config) as bot:
        out = io.StringIO()
        read_commands(io.StringIO("matchmaking off\n"), bot.service.commands.run, out.write)
        n = len(server.outgoing)  # a challenge may have gone before the pause
        read_commands(io.StringIO("challenge Sparring 2+1 casual white\nstatus\nhelp\nfrobnicate\n"),
                      bot.service.commands.run, out.write)
        assert server.wait_for(lambda: len(server.outgoing) == n + 1, 5)
        ours = server.outgoing[-1]
        assert (ours["destUser"]["name"], ours["timeControl"]["limit"], ours["timeControl"]["increment"]) == \
            ("Sparring", 120, 1)
        assert server.wait_for(lambda: server.games.get(ours["id"]) is not None, 5)
        lines = out.getvalue().splitlines()
        assert lines[0] == "matchmaking off" and lines[1].startswith("challenged Sparring (2+1 casual, white)")
        assert "matchmaking off" in lines[2] and lines[3] == HELP and lines[4].startswith("unknown command")
        read_commands(io.StringIO("quit\n"), bot.service.commands.run, out.write)
        bot.join(40)  # the running game is played out, then the bot exits
        assert bot.rc == 0 and server.games[ours["id"]].over
    assert len(server.outgoing) == n + 1  # paused: matchmaking sent nothing more
    logged = [json.loads(x) for x in logs.getvalue().splitlines() if x.startswith("{")]
    cmds = [(e["origin"], e["command"]) for e in logged if e.get("event") == "operator command"]
    assert cmds[:2] == [("terminal", "matchmaking off"), ("terminal", "challenge Sparring 2+1 casual white")]
    assert ("terminal", "quit") in cmds


def test_rematch_challenges_the_last_opponent_with_the_last_games_settings(server):
    server.add_bot("Alice")
    with BotRun(server, StandInEngine(), {"matchmaking": {"decline_file": None}}) as bot:
        bot.play(challenger="Alice", title="BOT", opponent=resign_after(4), limit=180, increment=2, rated=False)
        answer = bot.service.commands.run("rematch", "terminal")
        assert answer.startswith("challenged Alice (3+2 casual")
        assert server.wait_for(lambda: server.outgoing, 5)
    again = server.outgoing[0]
    assert (again["destUser"]["name"], again["timeControl"]["limit"], again["timeControl"]["increment"],
            again["rated"]) == ("Alice", 180, 2, False)


def test_the_status_page_takes_the_same_commands_from_this_machine_only(server):
    config = {"status": {"enabled": True, "port": 0}, "matchmaking": {"decline_file": None}}
    with BotRun(server, StandInEngine(), config) as bot:
        url, token = bot.service.status_server.url + "/api/command", bot.service.status_server.token
        status, body = _post(url, json.dumps({"command": "status"}).encode(), token)
        assert status == 200 and body["answer"] == bot.service.commands.run("status", "terminal")
        assert _post(url, b"command=status", token, "application/x-www-form-urlencoded")[0] == 415  # no forms
        assert _post(url, b"{}", token)[0] == 400
        assert _post(url, b'{"command": "status"}', "")[0] == 403  # not from the page (tests/status/test_guard.py)
        status, body = _post(url, json.dumps({"command": "matchmaking on"}).encode(), token)
        assert (status, body["answer"]) == (200, "matchmaking on")
        assert bot.service.matchmaker is not None and not bot.service.matchmaker.paused
        assert [h[:2] for h in bot.service.commands.history][:1] == [("status page", "status")]


def test_commands_from_another_address_are_refused_unless_allowed(server):
    from lichessbot.status import StatusHub
    from lichessbot.status.server import StatusServer

    ran: list[str] = []
    addr = _lan_address()
    if addr is None:
        pytest.skip("no address but the loopback on this machine")
    for remote, expected in ((False, 403), (True, 200)):
        # the LAN address is a Host the page answers to only when listed (status.allowed_hosts)
        with StatusServer(StatusHub(5), "0.0.0.0", 0, commands=lambda line, origin: ran.append(line) or "ok",
                          remote_commands=remote, allowed_hosts=[addr]) as page:
            status, _ = _post(f"http://{addr}:{page.port}/api/command", json.dumps({"command": "status"}).encode(),
                              page.token)
            assert status == expected
            assert _post(f"http://127.0.0.1:{page.port}/api/command", b'{"command": "help"}', page.token)[0] == 200
    assert ran == ["help", "status", "help"]


def _lan_address() -> str | None:
    import socket

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # no packet is sent: only the route's source address is read
        addr = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if addr.startswith("127.") else addr


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_the_page_runs_a_command_typed_in_its_box(server, tmp_path):
    with BotRun(server, StandInEngine(), {"status": {"enabled": True, "port": 0},
                                          "matchmaking": {"decline_file": None}}) as bot:
        with Browser(CHROMIUM, str(tmp_path / "profile")) as browser:
            browser.open(bot.service.status_server.url + "/")
            assert browser.wait_for("document.getElementById('cmd') !== null")
            browser.eval("document.getElementById('cmd').value = 'matchmaking off';"
                         "document.getElementById('cmdform').requestSubmit(); true")
            assert browser.wait_for("document.getElementById('cmdout').textContent.includes('matchmaking off')")
    assert ("status page", "matchmaking off", "matchmaking is off") in bot.service.commands.history
