"""The container check: run the built image under podman against the test lichess server and measure what an
operator meets (docs/docker.md, "The build check"). Not a pytest module: it needs podman, root and a built
image, so CI does not run it.

    python -m tests.container_check --image localhost/lichessbot:cpu [--storage-driver vfs] [--root DIR]

The server (:mod:`lichessbot.fakelichess`) listens on 127.0.0.1 behind a TCP proxy on a fixed port that the
container reaches with host networking; cutting the proxy is the network going away. Checks, each timed:

1. ``podman stop`` during start-up, 0.3 s after the start (with and without tini) and while the token
   test hangs on a server that never answers: ends at once.
2. ``podman stop`` mid-game (grace period 10 s, the image's): ends within it, the game left running on lichess;
   ``podman start`` resumes it.
3. A game-record mount the bot's user cannot write: start-up refused with the fix, exit status 2.
4. The health check: healthy while the event stream lives, unhealthy once it is dead longer than its budget
   (100 s), healthy again when it returns.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.fake_lichess import FakeLichess
from tests.tcp_proxy import TcpProxy

TOKEN = "lip_ContainerCheckToken1"
UID = 10001
#: podman flags these machines need: runc (crun refuses hybrid cgroups), limits within the hard ones
RUN_FLAGS = ["--runtime", "runc", "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=4096:4096",
             "--network", "host"]


class Podman:
    def __init__(self, driver: str, root: str | None):
        self.base = ["podman", "--storage-driver", driver] + (["--root", root] if root else [])

    def __call__(self, *args: str, check: bool = False, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([*self.base, *args], capture_output=True, text=True, check=check, timeout=timeout)

    def timed(self, *args: str) -> tuple[float, subprocess.CompletedProcess]:
        t = time.monotonic()
        r = self(*args)
        return time.monotonic() - t, r


def say(what: str, **figures: object) -> None:
    print(json.dumps({"check": what, **figures}), flush=True)


def _dirs(work: Path, port: int) -> tuple[Path, Path, Path]:
    cfg = work / "config.yml"
    cfg.write_text(f"url: http://127.0.0.1:{port}\npgn_directory: /data/game_records\nstate_directory: .\n"
                   "engine:\n  network: default\n  backend: cpu\n  threads: 1\n"
                   "challenge:\n  time_controls: [bullet, blitz]\n")
    cfg.chmod(0o644)
    state, pgn = work / "state", work / "game_records"
    for d in (state, pgn):
        d.mkdir()
        os.chown(d, UID, UID)
    return cfg, state, pgn


def _run(podman: Podman, image: str, name: str, cfg: Path, state: Path, pgn: Path, *extra: str) -> list[str]:
    return ["run", "--name", name, *RUN_FLAGS, "-e", f"LICHESS_BOT_TOKEN={TOKEN}",
            "-v", f"{cfg}:/config/config.yml:ro", "-v", f"{state}:/data/state", "-v", f"{pgn}:/data/game_records",
            *extra, image]


def _exit_code(podman: Podman, name: str) -> str:
    return podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()


def _bot_stop_s(logs: str) -> float | None:
    """Seconds from the bot's first "stopping"/"quitting" log line to its "bot offline" (its own clock)."""
    from datetime import datetime

    stamps: dict[str, float] = {}
    for line in logs.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        key = "offline" if e.get("event") == "bot offline" else "signal" if str(e.get("event", "")).startswith(
            ("stopping", "quitting")) else None
        if key and key not in stamps and "timestamp" in e:
            stamps[key] = datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp()
    return round(stamps["offline"] - stamps["signal"], 2) if len(stamps) == 2 else None


def _wait(predicate, timeout: float, step: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def check_stop_during_start_up(podman: Podman, image: str, work: Path) -> None:
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(8)
    accepted = threading.Event()
    threading.Thread(target=lambda: (hole.accept(), accepted.set()), daemon=True).start()
    (work / "startup").mkdir()
    cfg, state, pgn = _dirs(work / "startup", hole.getsockname()[1])
    name = "lb-check-startup"
    podman("rm", "-f", name)
    args = _run(podman, image, name, cfg, state, pgn)
    podman(args[0], "-d", *args[1:], check=True)
    ok = accepted.wait(120)
    took, _ = podman.timed("stop", "-t", "10", name)
    logs = podman("logs", name).stderr
    say("podman stop during start-up (token test hanging)", reached_lichess=ok, stop_s=round(took, 2),
        exit_code=_exit_code(podman, name), logged="stopped during start-up" in logs)
    podman("rm", "-f", name)
    hole.close()


def check_stop_right_after_start(podman: Podman, image: str, work: Path, port: int) -> None:
    """``podman stop`` 0.3 s after the start (Python still importing), with tini as PID 1 (the image's
    entry point) and, for comparison, without it (the bot itself PID 1: the kernel drops a signal it has no
    handler for yet)."""
    (work / "early").mkdir()
    cfg, state, pgn = _dirs(work / "early", port)
    for label, extra in (("tini", []), ("no tini", ["--entrypoint", "lichessbot"])):
        name = "lb-check-early"
        podman("rm", "-f", name)
        args = _run(podman, image, name, cfg, state, pgn, *extra)
        tail = ["play", "--config", "/config/config.yml"] if extra else []
        podman(args[0], "-d", *args[1:], *tail, check=True)
        time.sleep(0.3)
        took, _ = podman.timed("stop", "-t", "10", name)
        say(f"podman stop 0.3 s after the start ({label})", stop_s=round(took, 2), exit_code=_exit_code(podman, name))
        podman("rm", "-f", name)


def check_stop_mid_game_and_resume(podman: Podman, image: str, work: Path, server: FakeLichess, port: int) -> None:
    (work / "game").mkdir()
    cfg, state, pgn = _dirs(work / "game", port)
    name = "lb-check-game"
    podman("rm", "-f", name)
    args = _run(podman, image, name, cfg, state, pgn)
    podman(args[0], "-d", *args[1:], check=True)
    assert server.wait_for(lambda: server.event_subscribers, 180), podman("logs", name).stderr[-3000:]
    gid = server.challenge(limit=60, increment=1)
    assert server.wait_for(lambda: gid in server.games and server.games[gid].ply() >= 4, 120)
    game = server.games[gid]
    took, _ = podman.timed("stop", "-t", "10", name)
    left_at = game.ply()
    logs = podman("logs", name).stderr
    say("podman stop mid-game (grace 10 s)", stop_s=round(took, 2), bot_stop_s=_bot_stop_s(logs),
        exit_code=_exit_code(podman, name),
        game_over=game.over, ply=left_at, left="leaving the running games" in logs,
        resigned=any(p.endswith("/resign") for _, p, _ in server.requests))
    t = time.monotonic()
    podman("start", name, check=True)
    resumed = server.wait_for(lambda: game.ply() >= left_at + 2 or game.over, 180)
    say("podman start resumes the game", resumed=resumed, after_s=round(time.monotonic() - t, 1), ply=game.ply(),
        game_over=game.over)
    took, _ = podman.timed("stop", "-t", "10", name)
    second = podman("logs", name).stderr.split('"bot online"')[-1]  # the second run's lines
    say("podman stop mid-game again", stop_s=round(took, 2), bot_stop_s=_bot_stop_s(second),
        exit_code=_exit_code(podman, name))
    podman("rm", "-f", name)


def check_unwritable_mount(podman: Podman, image: str, work: Path, port: int) -> None:
    (work / "ro").mkdir()
    cfg, state, pgn = _dirs(work / "ro", port)
    os.chown(pgn, 0, 0)  # a host directory of another user
    pgn.chmod(0o755)
    name = "lb-check-unwritable"
    podman("rm", "-f", name)
    took, r = podman.timed(*_run(podman, image, name, cfg, state, pgn))
    say("unwritable /data/game_records", run_s=round(took, 2), exit_code=_exit_code(podman, name),
        line=r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "")
    podman("rm", "-f", name)


def check_health(podman: Podman, image: str, work: Path, server: FakeLichess, proxy: TcpProxy, port: int) -> None:
    (work / "health").mkdir()
    cfg, state, pgn = _dirs(work / "health", port)
    name = "lb-check-health"
    podman("rm", "-f", name)
    args = _run(podman, image, name, cfg, state, pgn, "--health-start-period", "0s")
    podman(args[0], "-d", *args[1:], check=True)
    assert server.wait_for(lambda: server.event_subscribers, 180)

    def check() -> tuple[int, str]:
        r = podman("exec", name, "lichessbot", "health")
        return r.returncode, r.stdout.strip()

    took, r = podman.timed("healthcheck", "run", name)
    say("health check while connected", healthcheck_run=r.stdout.strip() or r.returncode, run_s=round(took, 2),
        command=check())
    cut = time.monotonic()
    proxy.cut()
    flipped = _wait(lambda: check()[0] != 0, 300, step=2)
    say("health check after the stream died", flipped=flipped, after_s=round(time.monotonic() - cut, 1),
        command=check(), healthcheck_run=podman("healthcheck", "run", name).stdout.strip())
    back = time.monotonic()
    proxy.restore()
    healthy = _wait(lambda: check()[0] == 0, 120, step=1)
    say("health check after the stream returned", healthy=healthy, after_s=round(time.monotonic() - back, 1),
        command=check())
    podman("rm", "-f", name)


def main() -> int:
    parser = argparse.ArgumentParser(description="run the image against the test lichess server; print figures")
    parser.add_argument("--image", default="localhost/lichessbot:cpu")
    parser.add_argument("--storage-driver", default=os.environ.get("STORAGE_DRIVER", "vfs"))
    parser.add_argument("--root", default=os.environ.get("STORAGE_ROOT"))
    parser.add_argument("--port", type=int, default=18765, help="the port the container reaches lichess on")
    parser.add_argument("--only", nargs="*", default=["startup", "game", "unwritable", "health"])
    args = parser.parse_args()
    if shutil.which("podman") is None or os.geteuid() != 0:
        print("container_check: needs podman and root", file=sys.stderr)
        return 2
    podman = Podman(args.storage_driver, args.root)
    work = Path(tempfile.mkdtemp(prefix="lb-container-"))
    work.chmod(0o755)
    try:
        with FakeLichess(token=TOKEN, opponent_delay=0.5) as server, \
                TcpProxy(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), port=args.port) as proxy:
            if "startup" in args.only:
                check_stop_right_after_start(podman, args.image, work, proxy.port)
                check_stop_during_start_up(podman, args.image, work)
            if "game" in args.only:
                check_stop_mid_game_and_resume(podman, args.image, work, server, proxy.port)
            if "unwritable" in args.only:
                check_unwritable_mount(podman, args.image, work, proxy.port)
            if "health" in args.only:
                check_health(podman, args.image, work, server, proxy, proxy.port)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
