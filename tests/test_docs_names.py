"""The docs name what exists: every repository path written in backticks in ``docs/*.md`` and the README
(``lichessbot/...``, ``devtools/...``, ``tests/...``, ``rust/...``, ...) is in the repository, and every dotted
name under the package (``lichessbot.thinker.game_thinker.GameThinker``) imports and resolves. A doc that names a file
that moved, or a class that was renamed, fails here."""

from __future__ import annotations

import functools
import importlib
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Paths the docs name that a run writes, not the repository holds (each: what writes it).
WRITTEN: dict[str, str] = {
    "rust/target": "cargo's build directory (README's install figures)",
    "lichessbot/_core.abi3.so": "the search core's extension module, built by the install (maturin)",
    "lichessbot/data/strength_default-matches/": "lichessbot calibrate's PGNs and matches.json (docs/strength.md)",
}
_PATH = re.compile(r"^(?:lichessbot|devtools|scripts|training|tests|rust|docs)/[\w./-]*$")
_DOTTED = re.compile(r"^lichessbot(?:\.\w+)+")


def named(text: str) -> tuple[list[str], list[str]]:
    """The repository paths and the package's dotted names that ``text`` writes in backticks."""
    paths, dotted = [], []
    for m in re.finditer(r"`([^`\n]+)`", text):
        word = m.group(1).strip()
        if _PATH.match(word):
            paths.append(word)
        elif d := _DOTTED.match(word):
            dotted.append(d.group(0))
    return paths, dotted


def resolves(name: str) -> bool:
    """Whether ``name`` (``lichessbot.a.b.C.d``) is a module of the package, or an attribute chain from one."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _docs() -> list[Path]:
    return [*sorted((REPO / "docs").rglob("*.md")), REPO / "README.md"]


def test_the_scan_finds_names_and_missing_ones():
    paths, dotted = named("see `lichessbot/cli.py`, `lichessbot.thinker.game_thinker.GameThinker(...)`, `x = 1` and "
                          "`lichessbot/no_such.py`; `lichessbot.thinker.engine.EngineThinker`")
    assert paths == ["lichessbot/cli.py", "lichessbot/no_such.py"]
    assert dotted == ["lichessbot.thinker.game_thinker.GameThinker", "lichessbot.thinker.engine.EngineThinker"]
    assert resolves("lichessbot.thinker.game_thinker.GameThinker") and resolves("lichessbot.bot.chat.commands")
    assert not resolves("lichessbot.thinker.engine.EngineThinker") and not resolves("lichessbot.search.fake")


@functools.cache
def tracked() -> frozenset[str]:
    """The files git tracks in this checkout and every folder above them (so a doc that names a file only this
    machine has, a build output or a stray file, fails here as it would in a fresh clone)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    names: set[str] = set()
    for f in files.decode().split("\0"):
        parts = f.split("/")
        names.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return frozenset(n for n in names if n)


def test_every_path_and_dotted_name_the_docs_write_exists():
    missing = []
    for doc in _docs():
        paths, dotted = named(doc.read_text(encoding="utf-8"))
        rel = doc.relative_to(REPO)
        missing += [f"{rel}: {p}" for p in paths if p not in WRITTEN and p.rstrip("/") not in tracked()]
        missing += [f"{rel}: {d}" for d in dotted if not resolves(d)]
    assert missing == []
    assert not [p for p in WRITTEN if p.rstrip("/") in tracked()], "tracked now: take it off WRITTEN"
