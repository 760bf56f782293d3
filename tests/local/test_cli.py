"""``lichessbot play --local``'s refusals: a port in use, a bad ``--fen``, a bad ``--clock``, a flag of local mode
without ``--local``: one line naming the value, exit status 2, nothing started (no server, no engine)."""

from __future__ import annotations

import argparse
import socket
import threading

import pytest
import requests

from lichessbot.bot.service import local as local_mode
from lichessbot.cli import main
from lichessbot.errors import LichessbotError


def _refused(capsys, argv: list[str]) -> str:
    before = {t.name for t in threading.enumerate()}
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert {t.name for t in threading.enumerate()} - before == set()  # nothing started
    return err[0]


def test_a_port_in_use_is_named_and_nothing_starts(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = _refused(capsys, ["play", "--local", "--port", str(port)])
    assert line == f"lichessbot: port {port} on 127.0.0.1 is in use by another program: choose another with --port"
    assert not (tmp_path / "lichessbot").exists()  # not even the data directory


@pytest.mark.parametrize(("argv", "says"), [
    (["--fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1"], "--fen: invalid FEN 'rnbqkbnr/ppp"),
    (["--fen", "8/8/8/8/8/8/8/8 w - - 0 1"], "--fen: impossible position '8/8/8/8/8/8/8/8 w - - 0 1' (no white king"),
    (["--fen", "7k/5QQ1/8/8/8/8/8/K7 b - - 0 1"], "--fen: the game is already over in"),
    (["--clock", "5"], "--clock '5': write minutes+increment, e.g. 5+3"),
    (["--clock", "2.3+0"], "--clock '2.3+0': 2.3 minutes is not a lichess clock"),
    (["--clock", "5+200"], "--clock '5+200': the increment must be 0 to 180 seconds"),
    (["--clock", "0.25+0"], "--clock '0.25+0': that is UltraBullet, which lichess does not let bots play"),
])
def test_a_bad_fen_or_clock_is_named_and_nothing_starts(capsys, argv, says):
    line = _refused(capsys, ["play", "--local", "--port", "0", *argv])
    assert line.startswith("lichessbot: " + says), line


def test_local_flags_need_local(capsys):
    line = _refused(capsys, ["play", "--clock", "5+3"])
    assert line == "lichessbot: --clock is for --local (playing here); add --local"
    line = _refused(capsys, ["play", "--allowed-host", "box.lan"])
    assert line == "lichessbot: --allowed-host is for --local (playing here); add --local"
    line = _refused(capsys, ["play", "--show-thinking"])
    assert line == "lichessbot: --show-thinking is for --local (playing here); add --local"


def test_allowed_host_names_reach_the_server_and_others_are_refused():
    parser = argparse.ArgumentParser()
    local_mode.add_local_arguments(parser)
    args = parser.parse_args(["--local", "--port", "0", "--allowed-host", "Box.lan", "--allowed-host", "pi.local"])
    with local_mode._bind("lip_t", args.host, args.port, args.allowed_host) as server:
        for host, status in (("box.lan", 200), (f"pi.local:{server.port}", 200), ("localhost", 200),
                             ("other.lan", 421)):
            r = requests.get(server.url + "/api/account", headers={"Host": host, "Authorization": "Bearer lip_t"},
                             timeout=5)
            assert r.status_code == status, host


def test_the_default_port_is_8080_or_the_next_free_one(monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setattr(local_mode, "DEFAULT_PORT", port)
        try:
            server = local_mode._bind("lip_t", "127.0.0.1", None, [])
        except LichessbotError:  # the next ports are taken by others on this machine: nothing to check
            pytest.skip(f"ports after {port} are taken")
        try:
            assert port < server.port <= port + local_mode.PORT_TRIES
        finally:
            server.httpd.server_close()


def test_allowed_host_names_reach_the_status_page_too(tmp_path):
    """The status page of ``play --local`` answers the ``--allowed-host`` names as the board does (its Host check:
    ``status.allowed_hosts``), beside those the config file names."""
    config = local_mode.local_config(None, tmp_path, 0, "0.0.0.0", ["Box.lan", "pi.local"])
    assert config.status.allowed_hosts == ["box.lan", "pi.local"]
    assert config.status.host == "0.0.0.0"
