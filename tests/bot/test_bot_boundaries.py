"""The bot wing's boundaries (issue 30), checked on the import graph of tests/test_architecture.py: the wire
(``lichessbot.lichess``) knows nothing of the config or the bot, and the embedded lichess knows nothing of the bot
(nor of anything of the package but its version, logging and itself)."""

from __future__ import annotations

import pytest

from tests.test_architecture import import_graph


def _imports_of(package: str) -> dict[str, set[str]]:
    return {m: deps for m, deps in import_graph().items() if m == package or m.startswith(package + ".")}


@pytest.mark.slow
def test_the_wire_imports_neither_the_config_nor_anything_above_it():
    allowed = ("lichessbot.lichess", "lichessbot.errors", "lichessbot")
    bad = {m: sorted(d for d in deps if not (d in allowed or d.startswith("lichessbot.lichess.")))
           for m, deps in _imports_of("lichessbot.lichess").items()}
    assert {m: d for m, d in bad.items() if d} == {}
    assert "lichessbot.lichess.events" in import_graph()["lichessbot.lichess.streams"]  # the graph sees real edges


def test_the_embedded_lichess_imports_nothing_of_the_bot():
    found = _imports_of("lichessbot.local")
    assert "lichessbot.local.lila_rules" in found["lichessbot.local.actions"]  # the graph sees its real edges
    allowed = ("lichessbot", "lichessbot.logs", "lichessbot.hosts")  # hosts: the shared Host check, no bot in it
    bad = {m: sorted(d for d in deps if not (d.startswith("lichessbot.local.") or d in allowed))
           for m, deps in found.items()}
    assert {m: d for m, d in bad.items() if d} == {}


def test_admission_is_held_by_the_service_not_inherited():
    from lichessbot.bot.challenges import Admission
    from lichessbot.bot.service.service import BotService

    assert BotService.__mro__ == (BotService, object)
    assert "lichessbot.bot.challenges" in import_graph()["lichessbot.bot.service.service"]
    assert Admission.__mro__ == (Admission, object)
