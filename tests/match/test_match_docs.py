"""docs/match.md's example runs as written from a clone (the repository's root), with Debian's stockfish."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import chess.pgn
import pytest

from tests.conftest import REPO

DOC = REPO / "docs" / "match.md"


def _example() -> str:
    """The first ```sh block of docs/match.md's "Example" section."""
    section = DOC.read_text().split("## Example", 1)[1]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match, "docs/match.md has no sh block in its Example section"
    return match.group(1)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/usr/games/stockfish").exists(), reason="Debian's stockfish is not installed")
def test_the_example_of_docs_match_runs_as_written_from_a_clone():
    command = _example()
    pgn = REPO / re.search(r"--pgn (\S+)", command).group(1)  # pgn/ is ignored by git (.gitignore)
    pgn.unlink(missing_ok=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    try:
        proc = subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "lichessbot vs sf0: 2 games" in proc.stdout
        with open(pgn, encoding="utf-8") as f:
            games = [g for g in iter(lambda: chess.pgn.read_game(f), None)]
    finally:
        pgn.unlink(missing_ok=True)
    assert [g.headers["White"] for g in games] == ["lichessbot", "sf0"]
    assert all(g.headers["Opening"] and g.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for g in games)
