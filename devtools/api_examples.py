"""``python -m devtools.api_examples API_CHECKOUT`` (developer-only): copy the example payloads of lichess-org/api
(``doc/specs/examples/*.yaml``, and the ``example`` of the schemas and endpoint files) for the endpoints the bot
uses into ``tests/data/api_examples/<name>.json``, with ``SOURCE.md`` naming the commit. The contract tests
(tests/lichess/test_contract_examples.py) replay them through our readers.

``API_CHECKOUT``: a clone (or a bare git directory) of https://github.com/lichess-org/api.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "api_examples"

#: name -> (file in the checkout, how to find the example in it): ``value`` (doc/specs/examples: the ``value``
#: key), ``example`` (a schema's top-level ``example``), or a path of keys down to the example.
EXAMPLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "account-getMyProfile": ("doc/specs/examples/account-getMyProfile.json.yaml", ("value",)),
    "bot-getOnlineBots": ("doc/specs/examples/bot-getOnlineBots.json.yaml", ("value",)),
    "arenas-getArenaById": ("doc/specs/examples/arenas-getArenaById.json.yaml", ("value",)),
    "arenas-getTeamArenaTournaments": ("doc/specs/examples/arenas-getTeamArenaTournaments.json.yaml", ("value",)),
    "arenas-getCurrentTournaments": ("doc/specs/examples/arenas-getCurrentTournaments.json.yaml", ("value",)),
    "challenges-createChallenge": ("doc/specs/examples/challenges-createChallenge.json.yaml", ("value",)),
    "challenges-acceptChallenge": ("doc/specs/examples/challenges-acceptChallenge.json.yaml", ("value",)),
    "challenges-declineChallenge": ("doc/specs/examples/challenges-declineChallenge.json.yaml", ("value",)),
    "challenges-cancelChallenge": ("doc/specs/examples/challenges-cancelChallenge.json.yaml", ("value",)),
    "games-exportOneGame": ("doc/specs/examples/games-exportOneGame.json.yaml", ("value",)),
    "oauth-testMultipleOauthTokens": ("doc/specs/examples/oauth-testMultipleOauthTokens.json.yaml", ("value",)),
    "openingExplorer-lichess": ("doc/specs/examples/openingExplorer-lichess.json.yaml", ("value",)),
    "openingExplorer-masters": ("doc/specs/examples/openingExplorer-masters.json.yaml", ("value",)),
    "openingExplorer-player": ("doc/specs/examples/openingExplorer-player.json.yaml", ("value",)),
    "stream-challenge": ("doc/specs/examples/stream-challenge.json.yaml", ("value",)),
    "stream-challengeCanceled": ("doc/specs/examples/stream-challengeCanceled.json.yaml", ("value",)),
    "stream-challengeDeclined": ("doc/specs/examples/stream-challengeDeclined.json.yaml", ("value",)),
    "stream-gameStart": ("doc/specs/examples/stream-gameStart.json.yaml", ("value",)),
    "stream-gameStart-ai": ("doc/specs/examples/stream-gameStart-ai.json.yaml", ("value",)),
    "stream-gameFinish": ("doc/specs/examples/stream-gameFinish.json.yaml", ("value",)),
    "stream-gameFinish-ai": ("doc/specs/examples/stream-gameFinish-ai.json.yaml", ("value",)),
    "tablebase-lookupStandard": ("doc/specs/examples/tablebase-lookupStandard.json.yaml", ("value",)),
    "GameFullEvent": ("doc/specs/schemas/GameFullEvent.yaml", ("example",)),
    "GameStateEvent": ("doc/specs/schemas/GameStateEvent.yaml", ("example",)),
    "ChatLineEvent": ("doc/specs/schemas/ChatLineEvent.yaml", ("example",)),
    "OpponentGoneEvent": ("doc/specs/schemas/OpponentGoneEvent.yaml", ("example",)),
    "CloudEval": ("doc/specs/schemas/CloudEval.yaml", ("example",)),
    "account-playing": ("doc/specs/tags/games/api-account-playing.yaml",
                        ("get", "responses", "200", "content", "application/json", "schema", "example")),
}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def extract(repo: Path) -> dict[str, Any]:
    """Every example of :data:`EXAMPLES` from the checkout's HEAD (works on a bare git directory too)."""
    out: dict[str, Any] = {}
    for name, (path, keys) in EXAMPLES.items():
        data: Any = yaml.safe_load(_git(repo, "show", f"HEAD:{path}"))
        for key in keys:
            data = data[key]
        out[name] = data
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.api_examples", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a clone of lichess-org/api (or its git directory)")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in extract(args.checkout).items():
        (OUT / f"{name}.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    commit = _git(args.checkout, "rev-parse", "HEAD").strip()
    (OUT / "SOURCE.md").write_text(
        "# Example payloads of the lichess API\n\n"
        f"Copied from https://github.com/lichess-org/api at commit {commit} (AGPL-3.0, the project's licence) by\n"
        "`python -m devtools.api_examples <checkout>`: the `value` of doc/specs/examples/*.yaml and the `example`\n"
        "of the schemas and endpoint files named in devtools/api_examples.py. tests/lichess/test_contract_examples.py\n"
        "replays them through our readers.\n", encoding="utf-8")
    print(f"{len(EXAMPLES)} examples written to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
