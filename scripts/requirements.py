#!/usr/bin/env python3
"""Print the requirements of pyproject.toml, one per line (markers kept), for `pip install -r`.

    scripts/requirements.py pyproject.toml            # [project] dependencies
    scripts/requirements.py pyproject.toml --extra gpu # what the gpu extra adds (lichessbot[...] resolved)

The Dockerfile installs the dependencies from these lists in layers of their own, before our code, so a change
to our code never reinstalls them, and a change to one list reinstalls that list alone. Python >= 3.11
(tomllib); imports nothing else.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from typing import Any


def extra_requirements(project: dict[str, Any], extra: str, seen: set[str] | None = None) -> list[str]:
    """The requirements of ``extra``, with ``name[other]`` (the project's own extras) replaced by theirs.

    Raises:
        KeyError: ``extra`` is not one of the project's extras.
    """
    extras: dict[str, list[str]] = project.get("optional-dependencies", {})
    if extra not in extras:
        raise KeyError(f"pyproject.toml has no extra {extra!r} (it has: {', '.join(sorted(extras))})")
    seen = seen if seen is not None else set()
    seen.add(extra)
    own = re.compile(rf"^\s*{re.escape(project['name'])}\s*\[([^\]]+)\]\s*$", re.IGNORECASE)
    out: list[str] = []
    for req in extras[extra]:
        m = own.match(req)
        if m is None:
            out.append(req)
            continue
        for other in (e.strip() for e in m.group(1).split(",")):
            if other not in seen:
                out += extra_requirements(project, other, seen)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pyproject")
    parser.add_argument("--extra", help="print what this extra adds instead of the dependencies")
    args = parser.parse_args()
    with open(args.pyproject, "rb") as f:
        project = tomllib.load(f)["project"]
    try:
        reqs: list[str] = (project.get("dependencies", []) if args.extra is None
                           else extra_requirements(project, args.extra))
    except KeyError as err:
        print(f"requirements.py: {err.args[0]}", file=sys.stderr)
        return 2
    print("\n".join(reqs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
