"""The embedded lichess under a property-based API fuzzer (schemathesis over hypothesis), driven by lichess's own
OpenAPI description of the Bot, Board, challenge and account APIs (``tests/data/lichess_api``, bundled from
lichess-org/api). Every operation gets :data:`EXAMPLES` requests fitting the description and as many that do not
(schemathesis's negative mode), with a real bot, real players, a real game and real challenges to aim at, on
127.0.0.1 only, derandomized (the same requests at every run).

Every answer must be a status the description documents for the operation or a 4xx, never a 5xx nor a reset; a
body that parses as JSON where JSON (or NDJSON, line by line) is documented, and lila's error shape (an object with
``error``) on a 4xx; and the server must still answer ``/api/account`` afterwards. The counts are printed at the
end. Left out, as they never end: the streams (``/api/stream/event``, ``/api/{bot,board}/game/stream/{id}``) and a
challenge's ``keepAliveStream`` (dropped from generated bodies; ``tests/local/test_server.py`` covers it)."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from lichessbot.local import LocalLichess

pytestmark = pytest.mark.slow

SPEC = Path(__file__).parent.parent / "data" / "lichess_api" / "bot-board-api.yaml"
BOT, PLAYER, OTHER = "lip_fuzzbot", "lip_fuzzplayer", "lip_fuzzother"
#: Requests per operation and generation mode (positive; negative where there is something to make invalid);
#: ``LICHESSBOT_FUZZ_EXAMPLES`` sets more for a longer, exploratory run.
EXAMPLES = int(os.environ.get("LICHESSBOT_FUZZ_EXAMPLES") or 10)
#: The whole run's limit, seconds (at 10 examples it took 23 s on the loaded 2-core development machine).
BUDGET = 60.0 * max(1, EXAMPLES // 10)
#: Per request: a route that hangs is a failure, not a stuck test.
TIMEOUT = 10.0
STREAMS = {"/api/stream/event", "/api/bot/game/stream/{gameId}", "/api/board/game/stream/{gameId}"}


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _targets(server: LocalLichess) -> dict[str, list[str]]:
    """Real things to aim at: the players' names, a game of the bot and the player (rapid: both APIs may play it)
    and one of two people, and challenges both ways (each of these ids is also tried among the generated ones)."""
    for token in (PLAYER, OTHER):
        requests.get(server.url + "/api/account", headers=_auth(token), timeout=5)
    names = {t: server.account_for_token(t).username for t in (BOT, PLAYER, OTHER)}

    def challenge(by: str, to: str) -> str:
        r = requests.post(f"{server.url}/api/challenge/{names[to]}", headers=_auth(by), timeout=5,
                          data={"clock.limit": 600, "clock.increment": 5})
        assert r.ok, r.text
        return str(r.json()["id"])

    games = [challenge(BOT, PLAYER), challenge(OTHER, PLAYER)]
    for gid in games:
        assert requests.post(f"{server.url}/api/challenge/{gid}/accept", headers=_auth(PLAYER), timeout=5).ok
    return {"gameId": games, "challengeId": [challenge(OTHER, PLAYER), challenge(PLAYER, OTHER),
                                             challenge(BOT, PLAYER)],
            "username": list(names.values())}


def _strategy(op: Any, mode: GenerationMode, targets: dict[str, list[str]]) -> st.SearchStrategy[Any]:
    """``op``'s cases in ``mode``, half of them with a real id in the path where it takes one."""
    names = [p["name"] for p in op.definition.raw.get("parameters", []) if p.get("in") == "path"]
    aimed = [op.as_strategy(mode, path_parameters={name: value})
             for name in names if name in targets for value in targets[name]]
    plain = op.as_strategy(mode)
    return st.one_of(plain, *aimed) if aimed else plain


def _negatable(op: Any) -> bool:
    """Whether ``op`` takes something schemathesis can make invalid: a body, a query, or a path parameter with a
    type or a set of values (any string is a valid id: nothing to negate, and hypothesis would search in vain)."""
    raw = op.definition.raw
    params = [(p.get("in"), p.get("schema") or {}) for p in raw.get("parameters", [])]
    return bool(raw.get("requestBody")) or any(
        where != "path" or schema.get("type") not in (None, "string") or "enum" in schema for where, schema in params)


def _check(op: Any, r: Any) -> None:
    """The answer ``r`` (schemathesis's ``Response``: headers in lower case, as lists) to one of ``op``'s requests
    (see the module's docstring)."""
    documented = op.definition.raw["responses"]
    where = f"{op.method.upper()} {r.request.url}: {r.status_code} {r.content[:200]!r}"
    assert r.status_code < 500, where
    assert str(r.status_code) in documented or 400 <= r.status_code < 500, where
    content = (documented.get(str(r.status_code)) or {}).get("content") or {}
    ctype = (r.headers.get("content-type") or [""])[0]
    if "application/json" in content or r.status_code >= 400:
        assert ctype.startswith("application/json"), (where, ctype)
        body = json.loads(r.content)
        if r.status_code >= 400:
            assert isinstance(body, dict) and "error" in body, where
    elif "application/x-ndjson" in content:
        for line in r.content.splitlines():
            if line.strip():
                json.loads(line)


def _fuzz(op: Any, cases: st.SearchStrategy[Any], call: Callable[[Any], Any], sent: Counter[int],
          per_op: Counter[str]) -> None:
    """Send :data:`EXAMPLES` of ``cases`` with ``call`` and check each answer; counts in ``sent`` (by status) and
    ``per_op``."""
    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=cases)
    def one(case: Any) -> None:
        if isinstance(case.body, dict):
            case.body.pop("keepAliveStream", None)
        r = call(case)
        sent[r.status_code] += 1
        per_op[f"{op.method.upper()} {op.path}"] += 1
        _check(op, r)

    one()


def test_the_embedded_lichess_answers_fuzzed_bot_and_board_api_requests_with_documented_statuses(capsys):
    schema = schemathesis.openapi.from_path(str(SPEC))
    ops = [r.ok() for r in schema.get_all_operations()]
    fuzzed = [op for op in ops if op.path not in STREAMS]
    sent: Counter[int] = Counter()
    per_op: Counter[str] = Counter()
    started = time.monotonic()
    with (LocalLichess(BOT, bot_name="FuzzBot", keepalive=0.5, rate_limits=False) as server,
          requests.Session() as session):
        targets = _targets(server)
        for op in fuzzed:
            token = BOT if op.path.startswith("/api/bot/") else PLAYER
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if _negatable(op) else \
                    (GenerationMode.POSITIVE,):
                _fuzz(op, _strategy(op, mode, targets), lambda case, t=token: case.call(
                    base_url=server.url, session=session, headers=_auth(t), timeout=TIMEOUT), sent, per_op)
                assert time.monotonic() - started < BUDGET, f"over {BUDGET} s at {op.method} {op.path}"
        # the server lives and serves
        r = requests.get(server.url + "/api/account", headers=_auth(BOT), timeout=5)
        assert r.ok and r.json()["username"] == "FuzzBot"
    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(f"\nfuzz: {sum(sent.values())} requests to {len(per_op)} of {len(ops)} operations in {elapsed:.1f} s; "
              f"statuses {dict(sorted(sent.items()))}; 5xx: {sum(n for s, n in sent.items() if s >= 500)}")
    assert len(per_op) == len(fuzzed) and not any(s >= 500 for s in sent)
