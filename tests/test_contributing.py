"""docs/contributing.md's recipes hold: a type added to an event union without a ``case`` is caught by mypy
(``assert_never`` over the union) and, at run time, by the core itself; the chat-command recipe is shown by
tests/bot/test_chat_commands.py (a toy command added to the table)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.bot.test_game_core import T0, started
from tests.conftest import REPO

_MATCH = '''
from typing import assert_never

from lichessbot.lichess.events import ChatLine, GameEvent, GameFull, GameState, OpponentGone, OtherEvent


def act(event: GameEvent) -> str:
    match event:
        case GameFull() | GameState() | ChatLine(){more}:
            return "handled"
        case OtherEvent():
            return "ignored"
        case _:
            assert_never(event)
'''


def _mypy(tmp_path, source: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "snippet.py"
    path.write_text(source)
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(path)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_mypy_names_an_event_type_the_match_has_no_case_for(tmp_path):
    missing = _mypy(tmp_path, _MATCH.format(more=""))
    assert missing.returncode == 1 and '"assert_never" has incompatible type "OpponentGone"' in missing.stdout
    complete = _mypy(tmp_path, _MATCH.format(more=" | OpponentGone()"))
    assert complete.returncode == 0, complete.stdout


def test_the_core_raises_for_an_event_it_has_no_case_for():
    @dataclass(frozen=True)
    class NewEvent:
        type: str = "newEvent"

    core, _ = started()
    with pytest.raises(AssertionError):
        core.on_event(NewEvent(), T0)  # type: ignore[arg-type]  # not (yet) in the GameEvent union
