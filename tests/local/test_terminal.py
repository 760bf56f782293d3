"""``lichessbot play --local``'s terminal for a person who plays: plain lines (the address, each game's start and
end), warnings only from the log (in plain words, no JSON), the JSON log in ``--log-file``; Ctrl-C says what
becomes of the games (the embedded lichess stops with the process)."""

from __future__ import annotations

import io
import json
import queue
import signal
import threading
import time
from pathlib import Path
from typing import IO

import pytest
import structlog

from lichessbot.logs import configure_logging
from tests.local.test_page import LocalProcess, person_at


def test_the_file_keeps_the_json_log_while_the_terminal_shows_only_warnings():
    terminal, file = io.StringIO(), io.StringIO()
    configure_logging(stream=terminal, json=False, level="info", stream_level="warning", file=file,
                      secrets=["lip_secret"])
    log = structlog.get_logger("t")
    log.info("move", game_id="g1", token="lip_secret")
    log.warning("slow answer", game_id="g1")
    log.debug("not kept")
    lines = [json.loads(x) for x in file.getvalue().splitlines()]
    assert [x["event"] for x in lines] == ["move", "slow answer"]
    assert lines[0]["token"] == "***"
    shown = terminal.getvalue()
    assert "slow answer" in shown and "move" not in shown and "{" not in shown
    configure_logging(stream=io.StringIO(), level="info")  # as the other tests expect it


class Lines:
    """The process's standard output line by line, read in a thread (a missing line fails the test by a time-out
    instead of blocking it)."""

    def __init__(self, stream: IO[str]) -> None:
        self.q: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.q.put(x.rstrip("\n")) for x in stream], daemon=True).start()

    def until(self, pattern: str, timeout: float = 20) -> list[str]:
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                seen.append(self.q.get(timeout=left))
            except queue.Empty:
                break
            if pattern in seen[-1]:
                return seen
        raise AssertionError(f"no line with {pattern!r} in {seen}")


@pytest.mark.slow
def test_play_local_says_each_game_in_a_plain_line_and_keeps_the_json_log_in_the_file(tmp_path: Path, tiny_net):
    log_file = tmp_path / "bot.jsonl"
    app = LocalProcess(tmp_path, tiny_net, "--log-file", str(log_file))
    out = Lines(app.proc.stdout)
    try:
        me = person_at(app.url, "lip_person")
        gid = me.challenges.create("lichessbot", rated=False, clock_limit=300, clock_increment=3,
                                   color="black")["id"]
        started = out.until(f"game {gid} started")
        assert started[-1].startswith(f"game {gid} started: lichessbot (white) vs "), started
        assert started[-1].endswith(f" (black), 5+3 casual, {app.url}/{gid}"), started
        for event in me.board.stream_game_state(gid):  # the bot's first move, then we resign (lila: an abort)
            if event.get("state", event).get("moves"):
                break
        me.board.resign_game(gid)
        ended = out.until(f"game {gid} ended")
        assert ended[-1] == f"game {gid} ended *: aborted", ended
        # a second game left running when Ctrl-C comes
        gid2 = me.challenges.create("lichessbot", rated=False, clock_limit=300, clock_increment=3,
                                    color="black")["id"]
        out.until(f"game {gid2} started")
        app.proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        app.proc.send_signal(signal.SIGINT)
        assert app.proc.wait(20) == 0
    finally:
        if app.proc.poll() is None:
            app.stop()
    terminal = (tmp_path / "stderr.log").read_text()
    assert "ended unfinished with the embedded lichess" in terminal, terminal
    assert "left running on lichess" not in terminal
    assert not [x for x in terminal.splitlines() if x.lstrip().startswith("{")], terminal  # no JSON line
    assert "[info" not in terminal, terminal  # the moves' log lines are off the terminal
    logged = [json.loads(x) for x in log_file.read_text().splitlines()]
    assert any(x.get("game_id") == gid for x in logged)  # the full log is in the file
