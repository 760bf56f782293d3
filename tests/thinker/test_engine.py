"""The engine built once from typed settings (lichessbot/thinker/engine.py) and the UCI options read into them
(lichessbot/uci/options.py): what a change of settings rebuilds, and what it keeps."""

from __future__ import annotations

from dataclasses import replace

import chess
import pytest

from lichessbot.book import BookError
from lichessbot.config import EngineConfig, SearchParams, TablebaseConfig
from lichessbot.tablebase import TablebaseError
from lichessbot.thinker import MoveRequest
from lichessbot.thinker.engine import Engine
from lichessbot.thinker.settings import UCI_NAMES, ThinkerSettings
from lichessbot.uci.options import UciSettings, thinker_settings
from tests.conftest import SYZYGY

KQK = "4k3/8/8/8/8/8/8/3QK3 w - - 0 1"


def _settings(tiny_net, **search) -> ThinkerSettings:
    engine = EngineConfig.model_validate({"network": str(tiny_net), "backend": "cpu", "threads": 1,
                                          "search": {"minibatch_size": 8, **search}})
    return ThinkerSettings(engine=engine, names=UCI_NAMES)


def test_a_search_parameter_keeps_the_network_and_rebuilds_the_searchers(tiny_net):
    engine = Engine(_settings(tiny_net), shared=False, lazy=True)
    assert engine.evaluator is None  # lazy: nothing loaded before the first search
    thinker = engine.new_game(eager=False)
    first = thinker.searcher()
    evaluator, generation = engine.evaluator, engine.generation
    assert evaluator is not None and thinker.searcher() is first
    engine.configure(_settings(tiny_net, cpuct=2.5))
    assert engine.evaluator is evaluator and engine.generation == generation + 1
    second = thinker.searcher()
    assert second is not first and second.params.cpuct == 2.5
    thinker.settle()  # the replaced searcher is closed once no search runs
    engine.configure(replace(_settings(tiny_net, cpuct=2.5), engine=engine.settings.engine.model_copy(
        update={"threads": 2})))
    assert engine.evaluator is None  # a setting of the network's runner: a new one at the next search
    thinker.close()
    engine.close()


def test_settings_equal_to_the_engines_change_nothing(tiny_net):
    engine = Engine(_settings(tiny_net), shared=False, lazy=True)
    engine.configure(_settings(tiny_net))
    assert engine.generation == 0
    engine.close()


def test_a_table_or_book_that_cannot_be_read_leaves_the_settings_as_they_were(tiny_net, tmp_path):
    settings = _settings(tiny_net)
    engine = Engine(settings, shared=False, lazy=True)
    with pytest.raises(TablebaseError, match="SyzygyPath"):
        engine.configure(replace(settings, tablebases=TablebaseConfig(syzygy=[str(tmp_path / "none")])))
    with pytest.raises(BookError):
        engine.configure(thinker_settings(UciSettings(own_book=True, book_file=str(tmp_path / "no.bin")), settings))
    assert engine.settings == settings and engine.tablebases is None and engine.book is None
    engine.configure(replace(settings, tablebases=TablebaseConfig(syzygy=[str(SYZYGY)])))
    thinker = engine.new_game(eager=False)
    thinker.refresh()
    decision = thinker.pipeline.think(chess.Board(KQK), MoveRequest())
    assert decision.source == "tablebase" and engine.evaluator is None  # the tables answered: no network
    thinker.close()


def test_the_uci_options_are_read_into_the_thinkers_settings():
    base = ThinkerSettings(engine=EngineConfig(search=SearchParams(cpuct=3.0)), names=UCI_NAMES)
    uci = UciSettings(seed=7, own_book=True, book_file="b.bin", syzygy_path="", limit_strength=True,
                      uci_elo=1200, strength_table="t.json", strength_preset="none")
    s = thinker_settings(uci, base)
    assert s.engine.search.seed == 7 and s.book_seed == 7 and s.engine.search.cpuct == 3.0
    assert s.book.enabled and s.book.paths == {"standard": ["b.bin"], "chess960": ["b.bin"]}
    assert (s.engine.strength.elo, s.engine.strength.table, s.engine.strength.preset) == (1200, "t.json", None)
    off = thinker_settings(replace(uci, seed=0, own_book=False, limit_strength=False, strength_preset="maia"), base)
    assert off.engine.search.seed is None and not off.book.enabled and off.engine.strength.elo is None
    assert off.engine.strength.preset == "maia" and not off.plays_levels and s.plays_levels
