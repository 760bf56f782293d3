"""`lichessbot play` as a process, as a container runs it: a signal during start-up ends it at once; a signal
mid-game with a grace period leaves the game within it and the next start resumes it; a directory it must
write and cannot stops it before any call to lichess, naming the fix."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.fake_lichess import BotRun, FakeLichess, StandInThinker
from tests.tinynet import build_tiny_onnx

TOKEN = "lip_StopTestToken4242"


def _config(tmp_path, url: str, extra: str = "") -> str:
    net = tmp_path / "tiny.onnx"
    if not net.exists():
        build_tiny_onnx(net, seed=2)
    cfg = tmp_path / "config.yml"
    cfg.write_text(f"url: {url}\npgn_directory: {tmp_path / 'pgn'}\nstate_directory: {tmp_path / 'state'}\n"
                   f"engine:\n  network: {net}\n  backend: cpu\n  threads: 1\n  search:\n    minibatch_size: 8\n"
                   "timeman:\n  first_moves_think: 50\n"
                   "challenge:\n  time_controls: [bullet, blitz]\n" + extra)
    os.chmod(tmp_path, 0o755)
    return str(cfg)


def _play(cfg: str, *args: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen:
    env = {**os.environ, "LICHESS_BOT_TOKEN": TOKEN}
    env.pop("LICHESSBOT_STOP_GRACE_PERIOD", None)
    env.pop("LICHESSBOT_HEALTH_FILE", None)
    return subprocess.Popen([*prefix, sys.executable, "-m", "lichessbot", "play", "--config", cfg, *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _health(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lichessbot", "health", "--file", str(path)],
                          capture_output=True, text=True, timeout=60)


class _BlackHole:
    """A server that accepts connections and never answers (lichess unreachable, as a dead network)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted = threading.Event()
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self._conns.append(conn)
            self.accepted.set()

    def close(self) -> None:
        for c in [*self._conns, self.sock]:
            c.close()


def test_a_signal_during_start_up_ends_the_command_at_once(tmp_path):
    hole = _BlackHole()
    try:
        proc = _play(_config(tmp_path, hole.url), "--stop-grace-period", "10")
        try:
            assert hole.accepted.wait(60), "the bot never called lichess"  # it waits on the token test now
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
    finally:
        hole.close()
    assert proc.returncode == 0, err[-2000:]  # handled, not killed by the signal (-15)
    assert "stopped during start-up" in err and took < 5, (took, err[-2000:])


@pytest.mark.slow
def test_sigterm_mid_game_leaves_the_game_within_the_grace_period_and_the_next_start_resumes_it(tmp_path):
    health = tmp_path / "health.json"
    with FakeLichess(token=TOKEN, opponent_delay=0.5) as server:
        cfg = _config(tmp_path, server.url)
        proc = _play(cfg, "--stop-grace-period", "6", "--health-file", str(health))
        try:
            assert server.wait_for(lambda: server.event_subscribers or proc.poll() is not None, 60)
            gid = server.challenge(limit=60, increment=1)
            assert server.wait_for(lambda: gid in server.games and server.games[gid].ply() >= 4, 60)
            ok = _health(health)
            assert ok.returncode == 0 and ok.stdout.startswith("healthy"), ok.stdout + ok.stderr
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            late = server.challenge(challenger="bob", limit=60, increment=1)  # after the signal: declined
            _, err = proc.communicate(timeout=30)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, err[-3000:]
        assert took < 6, f"took {took:.1f} s, beyond the grace period"
        assert server.answers.get(late) == ("decline", "later")
        game = server.games[gid]
        assert not game.over, game.status  # left running on lichess, neither resigned nor aborted
        assert "leaving the running games" in err
        left_at = game.ply()
        gone = _health(health)
        assert gone.returncode == 1 and "no health file" in gone.stdout  # a stopped bot is not healthy

        again = _play(cfg)  # the next start finds the game (its gameStart comes again) and plays on
        try:
            assert server.wait_for(lambda: game.ply() >= left_at + 2 or again.poll() is not None, 60), \
                f"the game was not resumed (ply {game.ply()}, left at {left_at})"
            assert again.poll() is None
        finally:
            again.send_signal(signal.SIGINT)
            time.sleep(0.5)  # two signals sent at once may arrive as one
            again.send_signal(signal.SIGINT)  # twice: leave at once
            try:
                again.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                again.kill()


def _without_root_override() -> tuple[str, ...]:
    """A prefix that makes permission bits apply to this test's process (root bypasses them)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permission bits cannot be made to apply")
    return (setpriv, "--bounding-set", "-dac_override,-dac_read_search")


@pytest.mark.parametrize("key", ["pgn_directory", "state_directory"])
def test_a_directory_the_bot_cannot_write_stops_the_start_naming_it_and_the_fix(tmp_path, key):
    prefix = _without_root_override()
    with FakeLichess(token=TOKEN) as server:
        cfg = _config(tmp_path, server.url)
        folder = tmp_path / ("pgn" if key == "pgn_directory" else "state")
        folder.mkdir()
        folder.chmod(0o555)  # as a host directory owned by another user, mounted into the container
        try:
            proc = _play(cfg, prefix=prefix)
            _, err = proc.communicate(timeout=60)
        finally:
            folder.chmod(0o755)
        assert proc.returncode == 2, err[-2000:]
        line = err.strip().splitlines()[-1]
        assert line.startswith(f"lichessbot: {key} {folder} is not writable by uid ")
        assert "Permission denied" in line and "chown -R" in line and "--user" in line
        assert "the bot does not start" in line
        assert server.requests == [] and not server.event_connections  # nothing was asked of lichess


class _LongThinker(StandInThinker):
    """Thinks until stopped (a long search), then plays its move; counts its moves."""

    def __init__(self) -> None:
        super().__init__()
        self.thinking = threading.Event()
        self._stop = threading.Event()

    def think(self, board, clock, **kwargs):
        self.thinking.set()
        self._stop.wait(60)
        return super().think(board, clock, **kwargs)

    def stop(self) -> None:
        self._stop.set()


class _LongEngine:
    name = "long"

    def __init__(self) -> None:
        self.thinkers: list[_LongThinker] = []

    def new_game(self, game_id=None):
        self.thinkers.append(_LongThinker())
        return self.thinkers[-1]


def test_leaving_the_games_cuts_a_search_short_and_posts_its_move_first():
    engine = _LongEngine()
    with FakeLichess() as server, BotRun(server, engine) as bot:
        gid = server.challenge(limit=600, increment=0)
        assert server.wait_for(lambda: engine.thinkers and engine.thinkers[0].thinking.is_set(), 20)
        left = time.monotonic()
        bot.service.quit()  # the grace period's end (or a second signal) in the middle of our search
        bot.join(10)
        took = time.monotonic() - left
        game = server.games[gid]
    assert took < 5, f"leaving took {took:.1f} s"  # the search was cut, not waited for
    assert not game.over and len(game.posts) == 1  # our move was posted before the game was left, none after
