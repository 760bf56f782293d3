"""`lichessbot play` as a process: plays a game against the fake server, Ctrl-C stops it, logs are JSON."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.fake_lichess import FakeLichess, resign_after
from tests.tinynet import build_tiny_onnx

TOKEN = "lip_ProcessTestToken777"


def _start(tmp_path, server, *extra: str) -> subprocess.Popen:
    net = build_tiny_onnx(tmp_path / "tiny.onnx", seed=2)
    cfg = tmp_path / "config.yml"
    cfg.write_text(f"url: {server.url}\npgn_directory: {tmp_path / 'pgn'}\n"
                   f"engine:\n  network: {net}\n  backend: cpu\n  threads: 1\n  search:\n    minibatch_size: 8\n"
                   "timeman:\n  first_moves_think: 50\n"
                   "challenge:\n  time_controls: [bullet, blitz]\n")
    env = {**os.environ, "LICHESS_BOT_TOKEN": TOKEN}
    return subprocess.Popen([sys.executable, "-m", "lichessbot", "play", "--config", str(cfg), *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_play_process_plays_a_game_and_a_signal_lets_it_finish(tmp_path, sig):
    with FakeLichess(token=TOKEN) as server:
        proc = _start(tmp_path, server)
        try:
            assert server.wait_for(lambda: server.event_subscribers or proc.poll() is not None, 30)
            cid = server.challenge(opponent=resign_after(5), limit=60, increment=1)
            assert server.wait_for(lambda: cid in server.games and server.games[cid].ply() >= 2, 30)
            proc.send_signal(sig)  # once (Ctrl-C, docker stop, systemctl stop): finish the game, then exit
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        game = server.games[cid]
    assert proc.returncode == 0, err[-2000:]
    assert (game.status, game.winner) == ("resign", "white") and len(game.posts) == 3  # the opponent resigned
    assert TOKEN not in err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    moves = [e for e in lines if e.get("event") == "move"]
    assert len(moves) == 3 and all(e["game_id"] == cid and "nodes" in e and "stop" in e for e in moves)
    assert list((tmp_path / "pgn").glob("*.pgn"))


@pytest.mark.slow
def test_play_process_refuses_a_non_bot_account(tmp_path):
    with FakeLichess(token=TOKEN, title=None) as server:
        proc = _start(tmp_path, server)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "is not a BOT account" in err and "--upgrade" in err and TOKEN not in err
