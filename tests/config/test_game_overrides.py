"""``game_overrides``: settings for some games only (BotLi's per-time-control and per-colour engines and books),
one mechanism over engine.search/strength/ponder, timeman, book and draw_or_resign."""

from __future__ import annotations

import pytest

from lichessbot.config import ConfigError, GameFacts, parse_config

CONFIG = {"game_overrides": {
    "blitz": {"engine": {"search": {"cpuct": 2.0}}, "draw_or_resign": {"offer_draw_enabled": False}},
    "blitz_white": {"engine": {"search": {"cpuct": 3.0}}, "timeman": {"move_overhead": 300}},
    "bot_rated": {"book": {"max_depth": 4}},
    "chess960_black": {"engine": {"strength": {"elo": 1500}}},
}}


def test_the_matching_entries_apply_the_most_specific_last_and_sections_merge_key_by_key():
    cfg = parse_config(CONFIG)
    white = cfg.for_game(GameFacts("blitz", color="white"))
    assert white.engine.search.cpuct == 3.0 and white.timeman.move_overhead == 300
    assert white.draw_or_resign.offer_draw_enabled is False  # from blitz: kept, blitz_white does not set it
    assert white.engine.search.fpu_value == cfg.engine.search.fpu_value
    black = cfg.for_game(GameFacts("blitz", color="black"))
    assert black.engine.search.cpuct == 2.0 and black.timeman.move_overhead == cfg.timeman.move_overhead
    assert cfg.for_game(GameFacts("rapid", color="white")) is cfg  # nothing matches: the config itself
    assert cfg.for_game(GameFacts("rapid", bot=True, rated=True)).book.max_depth == 4
    assert cfg.for_game(GameFacts("rapid", bot=True, rated=False)).book.max_depth == cfg.book.max_depth
    assert cfg.for_game(GameFacts("bullet", variant="chess960", color="black")).engine.strength.elo == 1500
    assert cfg.for_game(GameFacts("bullet", variant="standard", color="black")).engine.strength.elo is None


@pytest.mark.parametrize(("overrides", "error"), [
    ({"blitz_superfast": {}}, "'superfast' is not a condition"),
    ({"blitz_bullet": {}}, "two speed conditions"),
    ({"blitz": {"engine": {"network": "x.onnx"}}}, "engine.network cannot change per game"),
    ({"blitz": {"book": {"max_depth": 0}}}, "game_overrides.blitz: book.max_depth"),
    ({"white": {"draw_or_resign": {"nonsense": 1}}}, "game_overrides.white: draw_or_resign.nonsense"),
    ({"white": {"challenge": {}}}, "game_overrides.white.challenge"),
])
def test_bad_entries_are_refused_at_load_naming_the_entry(overrides, error):
    with pytest.raises(ConfigError, match=error):
        parse_config({"game_overrides": overrides})
