"""A scripted ``lichessbot uci`` session for diffing a refactor's behaviour: the lines it writes, with time and nps
masked (the search is deterministic at a node limit with one thread and a seed).

    python -m tests.capture.uci_session before.txt   # from the repository root; change the code, run again, diff

Go nodes with Seed 7, MultiPV 3 with WDL, VerboseMoveStats with searchmoves, a tablebase move (SyzygyPath),
UCI_Elo, a search parameter, go ponder and ponderhit, a clock, bad input. Not a test: a developer's tool.
"""

from __future__ import annotations

import io
import re
import sys
import tempfile
import time
from pathlib import Path

from lichessbot.uci import UciEngine
from tests.tinynet import build_tiny_onnx


def session(net: Path) -> str:
    """The lines of the scripted session on network ``net``, masked."""
    out = io.StringIO()
    e = UciEngine(out)
    script = [
        "uci", f"setoption name WeightsFile value {net}", "setoption name Backend value cpu",
        "setoption name Threads value 1", "setoption name Seed value 7", "setoption name MinibatchSize value 8",
        "isready", "ucinewgame", "position startpos", "go nodes 64", "WAIT",
        "position startpos moves e2e4 e7e5", "go nodes 64", "WAIT",
        "setoption name MultiPV value 3", "setoption name UCI_ShowWDL value true", "go nodes 48", "WAIT",
        "setoption name MultiPV value 1", "setoption name VerboseMoveStats value true",
        "go nodes 32 searchmoves g1f3 d2d4", "WAIT", "setoption name VerboseMoveStats value false",
        "setoption name SyzygyPath value tests/data/syzygy", "position fen 8/8/8/4k3/8/8/4K3/4Q3 w - - 0 1",
        "go nodes 16", "WAIT",
        "setoption name SyzygyPath value ", "setoption name UCI_LimitStrength value true",
        "setoption name UCI_Elo value 1200", "position startpos moves d2d4", "go nodes 64", "WAIT",
        "setoption name UCI_LimitStrength value false", "setoption name CPuct value 2.5", "position startpos",
        "go nodes 40", "WAIT",
        "setoption name Ponder value true", "position startpos moves e2e4", "go ponder nodes 40", "ponderhit", "WAIT",
        "position startpos moves e2e4 c7c5", "go wtime 2000 btime 2000 winc 0 binc 0 nodes 40", "WAIT",
        "setoption name Bogus value 1", "position startpos moves e2e5", "go nodes 10 depth", "WAIT", "ucinewgame",
        "position startpos", "go nodes 20", "WAIT",
        "quit"]
    for cmd in script:
        if cmd == "WAIT":
            deadline = time.time() + 60
            while "bestmove" not in out.getvalue().rsplit("\n> ", 1)[-1] and time.time() < deadline:
                time.sleep(0.01)
            continue
        out.write(f"> {cmd}\n")
        e.handle(cmd)
    text = out.getvalue().replace(str(net), "NET")
    text = re.sub(r"\btime \d+", "time T", text)
    text = re.sub(r"\bnps \d+", "nps N", text)
    text = re.sub(r"(timeman [^\n]*)", "timeman ...", text)
    return re.sub(r" on \S+$", " on PROVIDER", text, flags=re.M)


def main(path: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        text = session(build_tiny_onnx(Path(tmp) / "tiny.onnx", seed=3))
    Path(path).write_text(text, encoding="utf-8")
    print(f"{len(text.splitlines())} lines")


if __name__ == "__main__":
    main(sys.argv[1])
