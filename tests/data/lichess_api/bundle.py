"""Bundle the Bot, Board, challenge and account paths of lichess's OpenAPI description (lichess-org/api, split over
many files under ``doc/specs``) into one file: every schema a path needs goes under ``components/schemas`` by its
file's name, references become local (``#/components/schemas/Name``), and the example files are left out (their
inline ``example`` values stay).

Usage (a clone or a bare mirror of https://github.com/lichess-org/api):
``python tests/data/lichess_api/bundle.py GIT_DIR > tests/data/lichess_api/bot-board-api.yaml``."""

from __future__ import annotations

import posixpath
import subprocess
import sys
from typing import Any

import yaml

#: The paths the embedded lichess serves (lichessbot/local), as lichess-org/api names them.
PATHS = [
    "/api/account", "/api/account/playing", "/api/token/test", "/api/stream/event",
    "/api/bot/online", "/api/bot/account/upgrade",
    *(f"/api/{api}/game/{rest}" for api in ("bot", "board") for rest in (
        "stream/{gameId}", "{gameId}/move/{move}", "{gameId}/chat", "{gameId}/abort", "{gameId}/resign",
        "{gameId}/draw/{accept}", "{gameId}/takeback/{accept}", "{gameId}/claim-victory", "{gameId}/claim-draw")),
    "/api/board/game/{gameId}/berserk",
    "/api/challenge/{username}", "/api/challenge/{challengeId}/show", "/api/challenge/{challengeId}/accept",
    "/api/challenge/{challengeId}/decline", "/api/challenge/{challengeId}/cancel",
]
ROOT = "doc/specs/lichess-api.yaml"


class Bundler:
    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir
        self.commit = self._git("rev-parse", "HEAD").strip()
        self.schemas: dict[str, Any] = {}

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", f"--git-dir={self.git_dir}", *args], check=True, capture_output=True,
                              text=True).stdout

    def load(self, path: str) -> Any:
        return yaml.safe_load(self._git("show", f"HEAD:{path}"))

    def inline(self, node: Any, here: str) -> Any:
        """``node`` (read from the file ``here``) with its references made local."""
        if isinstance(node, list):
            return [self.inline(x, here) for x in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "examples" and isinstance(value, dict):
                continue  # example files: large, and not needed to generate requests
            if key == "$ref" and isinstance(value, str) and not value.startswith("#"):
                target = posixpath.normpath(posixpath.join(posixpath.dirname(here), value))
                if "/schemas/" not in target:
                    raise ValueError(f"{here}: unexpected reference {value}")
                name = posixpath.basename(target).removesuffix(".yaml")
                if name not in self.schemas:
                    self.schemas[name] = {}  # a placeholder first: schemas may refer to themselves
                    self.schemas[name] = self.inline(self.load(target), target)
                out[key] = f"#/components/schemas/{name}"
                continue
            out[key] = self.inline(value, here)
        return out

    def bundle(self) -> dict[str, Any]:
        root = self.load(ROOT)
        paths = {}
        for p in PATHS:
            ref = root["paths"][p]["$ref"]
            target = posixpath.normpath(posixpath.join(posixpath.dirname(ROOT), ref))
            paths[p] = self.inline(self.load(target), target)
        info = {k: root["info"][k] for k in ("version", "title", "license")}
        info["description"] = (f"The Bot, Board, challenge and account paths of lichess-org/api {ROOT} at commit "
                               f"{self.commit}, bundled by tests/data/lichess_api/bundle.py.")
        return {"openapi": root["openapi"], "info": info, "servers": root.get("servers", []), "paths": paths,
                "components": {"schemas": dict(sorted(self.schemas.items())),
                               "securitySchemes": root["components"]["securitySchemes"]}}


def main() -> None:
    b = Bundler(sys.argv[1])
    spec = b.bundle()
    sys.stdout.write(f"# lichess-org/api {ROOT} at {b.commit} (AGPL-3.0-or-later); see README.md\n")
    sys.stdout.write(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=120))


if __name__ == "__main__":
    main()
