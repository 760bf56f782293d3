"""Shared fixtures: the ../shared fixtures (skipped cleanly when absent) and tiny test networks."""

from __future__ import annotations

import io
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lichessbot.fakelichess import FakeLichess
from lichessbot.play.logs import configure_logging
from tests.tinynet import build_tiny_onnx

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
NETS = SHARED / "nets"
#: lc0's reference figures (tests/data/lc0ref/README.md).
LC0REF = REPO / "tests" / "data" / "lc0ref"
STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None)


def shared_file(rel: str) -> Path:
    """A file under ../shared, or skip the test when it is absent."""
    p = SHARED / rel
    if not p.exists():
        pytest.skip(f"../shared/{rel} is not available")
    return p


def maia_net(name: str) -> Path:
    """../shared/nets/``name`` (e.g. "maia-1100.pb.gz"), or skip the test when it is absent."""
    return shared_file(f"nets/{name}")


@pytest.fixture(scope="session")
def tiny_net(tmp_path_factory) -> Path:
    """A tiny random-weight WDL network in Lc0's ONNX layout."""
    return build_tiny_onnx(tmp_path_factory.mktemp("nets") / "tiny.onnx", seed=1)


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[FakeLichess]:
    """The fake lichess server on 127.0.0.1 with the test module's ``TOKEN``."""
    with FakeLichess(token=request.module.TOKEN) as s:
        yield s


@pytest.fixture
def logs(request: pytest.FixtureRequest) -> Iterator[io.StringIO]:
    """The bot's log lines (JSON) of the test; fails the test if the module's ``TOKEN`` appears in them."""
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="debug")
    yield buf
    assert request.module.TOKEN not in buf.getvalue()


@pytest.fixture(scope="session")
def stockfish_path() -> str:
    if STOCKFISH is None:
        pytest.skip("stockfish is not installed (apt-get install stockfish)")
    return STOCKFISH


#: Names of our threads: the bot's (lichessbot/play), the search's (its thread and its network workers) and
#: the evaluation service's. None may outlive the test that started it.
_OUR_THREADS = ("chat", "events", "game-", "stream-", "matchmaker", "status-server", "lichessbot-")


def leaked_threads(before: set[threading.Thread], wait_s: float = 10.0) -> list[str]:
    """Names of our threads started since ``before`` still running after up to ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    while True:
        left = [t.name for t in threading.enumerate()
                if t not in before and t.is_alive() and t.name.startswith(_OUR_THREADS)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def _no_leaked_threads():
    """Fail the test that leaves one of our threads running: a search or evaluation worker (a searcher or
    service not closed) or a bot thread (it would log into a later test's output)."""
    before = set(threading.enumerate())
    yield
    left = leaked_threads(before)
    assert not left, f"threads still running 10 s after the test: {left}"


@pytest.fixture(autouse=True)
def _reset_logging():
    """Undo any logging configuration a test made, so no later test writes to a closed stream."""
    import logging

    import structlog

    yield
    structlog.reset_defaults()
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_lichessbot", False):
            root.removeHandler(h)
