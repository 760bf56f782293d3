"""Shared fixtures: the ../shared fixtures (skipped cleanly when absent) and tiny test networks."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from tests.tinynet import build_tiny_onnx

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
NETS = SHARED / "nets"
REF = SHARED / "ref"
STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None)


def shared_file(rel: str) -> Path:
    """A file under ../shared, or skip the test when it is absent."""
    p = SHARED / rel
    if not p.exists():
        pytest.skip(f"../shared/{rel} is not available")
    return p


@pytest.fixture(scope="session")
def tiny_net(tmp_path_factory) -> Path:
    """A tiny random-weight WDL network in Lc0's ONNX layout."""
    return build_tiny_onnx(tmp_path_factory.mktemp("nets") / "tiny.onnx", seed=1)


@pytest.fixture(scope="session")
def stockfish_path() -> str:
    if STOCKFISH is None:
        pytest.skip("stockfish is not installed (apt-get install stockfish)")
    return STOCKFISH


#: Names of the bot's own threads (lichessbot/play): none may outlive the test that started it.
_BOT_THREADS = ("chat", "events", "game-", "stream-")


@pytest.fixture(autouse=True)
def _no_leaked_bot_threads():
    """Fail the test that leaves a bot thread running (it would log into a later test's output)."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 10
    while True:
        left = [t.name for t in threading.enumerate()
                if t not in before and t.is_alive() and t.name.startswith(_BOT_THREADS)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left, f"bot threads still running 10 s after the test: {left}"


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
