"""BotLi's message variables in greetings: {engine}, {cpu}, {ram}."""

from __future__ import annotations

import os

from lichessbot import __version__
from lichessbot.bot.chat.machine import cpu_text, ram_text
from lichessbot.bot.games.actions import SetOpponent
from tests.bot.test_game_core import core_of, full, said


def test_the_greeting_names_the_engine_the_processor_and_the_memory():
    core = core_of({"greeting": {"hello": "I run {engine} on {cpu} with {ram}.", "hello_spectators": ""}})
    actions = core.on_event(full(), 1000.0)
    assert any(isinstance(a, SetOpponent) for a in actions)
    [(room, text)] = said(core.level_chosen("full strength"))
    assert room == "player" and "{" not in text
    assert f"lichessbot {__version__} (network tiny)" in text and cpu_text() in text and ram_text() in text


def test_the_machine_facts_are_read_from_the_os():
    assert cpu_text().endswith(f"{os.cpu_count()} threads")
    gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    assert ram_text() == f"{gib:.1f} GiB" and gib > 0.1
