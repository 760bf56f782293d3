"""Shared fixtures: the data under tests/data, tiny test networks, the fake server, and the closing line
that names why tests were skipped.

Everything the suite needs is in the repository (tests/data: Syzygy tables, lc0's reference figures)
except the Maia networks, which tests/data/fetch.sh links or downloads into tests/data/nets; the two tests
that need them skip without them.
"""

from __future__ import annotations

import io
import json
import shutil
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.lila.server import FakeLichess
from lichessbot.config import parse_config
from lichessbot.logs import configure_logging
from lichessbot.thinker.engine import Engine
from tests.tinynet import build_tiny_onnx

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
#: Seven 3-4-piece Syzygy tables (tests/data/syzygy/SOURCE.md).
SYZYGY = DATA / "syzygy"
#: lc0's reference figures (tests/data/lc0ref/README.md).
LC0REF = DATA / "lc0ref"
#: The Maia networks, put here by tests/data/fetch.sh (not in the repository).
NETS = DATA / "nets"
#: The reason a test that needs the Maia networks skips without them.
NO_MAIA = "maia nets not found, run tests/data/fetch.sh"
STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None)


def maia_net(name: str) -> Path:
    """tests/data/nets/``name`` (e.g. "maia-1100.pb.gz"), or skip the test with :data:`NO_MAIA`."""
    path = NETS / name
    if not path.exists():
        pytest.skip(NO_MAIA)
    return path


def pytest_terminal_summary(terminalreporter) -> None:
    """One closing line with every skipped test's reason, e.g. "2 tests skipped: 2 maia nets not found, run
    tests/data/fetch.sh"."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons: Counter[str] = Counter()
    for report in skipped:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    parts = "; ".join(f"{n} {reason}" for reason, n in reasons.most_common())
    terminalreporter.write_line(f"{len(skipped)} test{'s' if len(skipped) > 1 else ''} skipped: {parts}")


@pytest.fixture(scope="session")
def tiny_net(tmp_path_factory) -> Path:
    """A tiny random-weight WDL network in Lc0's ONNX layout."""
    return build_tiny_onnx(tmp_path_factory.mktemp("nets") / "tiny.onnx", seed=1)


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[FakeLichess]:
    """The fake lichess server on 127.0.0.1 with the test module's ``TOKEN`` (the server's own without one)."""
    token = getattr(request.module, "TOKEN", None)
    with (FakeLichess(token=token) if token else FakeLichess()) as s:
        yield s


@pytest.fixture
def logs(request: pytest.FixtureRequest) -> Iterator[io.StringIO]:
    """The bot's log lines of the test, JSON at debug level and *without* redaction; fails the test if the
    module's ``TOKEN`` appears in them or a line is not one JSON object."""
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="debug")
    yield buf
    text = buf.getvalue()
    token = getattr(request.module, "TOKEN", None)
    assert not token or token not in text
    for line in text.splitlines():
        if line.startswith("{"):
            json.loads(line)  # every structlog line is one JSON object


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The bot's real engine on a tiny network (seed 3; CPU, one thread, minibatch 8), 24 nodes a move; one
    per test module."""
    net = build_tiny_onnx(tmp_path_factory.mktemp("net") / "tiny.onnx", seed=3)
    cfg = parse_config({"engine": {"network": str(net), "backend": "cpu", "threads": 1,
                                   "search": {"minibatch_size": 8}}})
    with Engine(cfg, nodes=24) as eng:
        yield eng


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


#: The environment variables that place the bot's default directories on Linux (platformdirs honours them):
#: ``state_directory`` under XDG_STATE_HOME, ``pgn_directory`` and ``play --local``'s files under XDG_DATA_HOME.
#: XDG_CACHE_HOME: the int8 copies of networks (lichessbot/neural/int8_cache.py) and TensorRT's engines.
USER_DIRS = ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


@pytest.fixture(autouse=True, scope="session")
def _user_dirs_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test writes into the user's real data or state directory (~/.local/share, ~/.local/state), not even
    a module- or session-scoped fixture that runs before :func:`_user_dirs`."""
    with pytest.MonkeyPatch.context() as mp:
        base = tmp_path_factory.mktemp("user-dirs")
        for name in USER_DIRS:
            mp.setenv(name, str(base / name.lower()))
        yield


@pytest.fixture(autouse=True)
def _user_dirs(_user_dirs_of_the_session: None, tmp_path_factory: pytest.TempPathFactory,
               monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets empty user directories of its own (a bot's takeback ledger or decline records written with
    the default ``state_directory`` never reach the next test), outside its ``tmp_path`` (which a test may list)."""
    base = tmp_path_factory.mktemp("user-dirs")
    for name in USER_DIRS:
        monkeypatch.setenv(name, str(base / name.lower()))


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
