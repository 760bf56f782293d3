"""Smoke test of an installed lichessbot: ``lichessbot uci`` searches the start position with ``go nodes N``
(python-chess sends it) and answers a legal bestmove. Used by scripts/check-wheel.sh and the release workflow.

    python scripts/smoke_uci.py [NODES]      (default 200)
"""

from __future__ import annotations

import shutil
import sys

import chess
import chess.engine


def main(argv: list[str]) -> int:
    nodes = int(argv[0]) if argv else 200
    command = shutil.which("lichessbot")
    if command is None:
        print("lichessbot is not on the PATH", file=sys.stderr)
        return 1
    with chess.engine.SimpleEngine.popen_uci([command, "uci"]) as engine:
        print("id name", engine.id.get("name"))
        result = engine.play(chess.Board(), chess.engine.Limit(nodes=nodes), info=chess.engine.INFO_ALL)
    move = result.move
    if move is None or move not in chess.Board().legal_moves:
        print(f"no legal bestmove: {result}", file=sys.stderr)
        return 1
    print(f"bestmove {move.uci()} (go nodes {nodes}: nodes {result.info.get('nodes')}, "
          f"score {result.info.get('score')})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
