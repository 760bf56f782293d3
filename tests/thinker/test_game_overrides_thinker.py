"""A game's own settings (``game_overrides``) reach its game core (draws, pondering) and its thinker (search
parameters, time manager, book, strength), and the other games keep the engine's."""

from __future__ import annotations

import chess

from lichessbot.bot.games.actions import SetOpponent
from lichessbot.config import GameFacts, parse_config
from tests.book.test_book import START, write_book
from tests.bot.test_game_core import ME, OPP, core_of, full

OVERRIDES = {"blitz_white": {"engine": {"search": {"cpuct": 2.5}, "ponder": True},
                             "timeman": {"move_overhead": 321},
                             "draw_or_resign": {"offer_draw_enabled": False}}}


def test_the_game_core_uses_the_games_own_config_and_hands_it_to_the_thinker():
    core = core_of({"game_overrides": OVERRIDES})
    [set_opponent] = [a for a in core.on_event(full(white=ME, black=OPP, speed="blitz"), 1000.0)
                      if isinstance(a, SetOpponent)]
    assert set_opponent.config is not None and set_opponent.config.engine.search.cpuct == 2.5
    assert core.game_config.engine.ponder and not core._rules.config.offer_draw_enabled
    other = core_of({"game_overrides": OVERRIDES})
    [plain] = [a for a in other.on_event(full(white=OPP, black=ME, speed="blitz"), 1000.0)
               if isinstance(a, SetOpponent)]
    assert plain.config is None and other._rules.config.offer_draw_enabled  # we are black: no override


def test_the_thinker_searches_times_and_books_with_the_games_own_settings(engine, tmp_path):
    path = write_book(tmp_path / "b.bin", [(START, "g1f3", 10)])
    cfg = parse_config({"game_overrides": {**OVERRIDES, "blitz_white": {
        **OVERRIDES["blitz_white"], "book": {"enabled": True, "paths": {"standard": [str(path)]}}}}})
    own = cfg.for_game(GameFacts("blitz", color="white"))
    thinker = engine.new_game("g1")
    try:
        assert thinker.searcher().params.cpuct == engine.settings.engine.search.cpuct
        thinker.set_opponent(1500, False, own)
        assert thinker.searcher().params.cpuct == 2.5
        assert thinker.pipeline.timeman.config.move_overhead == 321
        decision = thinker.think(chess.Board(), None)
        assert decision.source == "book" and decision.move == chess.Move.from_uci("g1f3")
    finally:
        thinker.close()
    plain = engine.new_game("g2")
    try:
        plain.set_opponent(1500, False, None)
        assert plain.searcher().params.cpuct == engine.settings.engine.search.cpuct
        assert plain.pipeline.timeman.config == engine.settings.timeman
    finally:
        plain.close()


def test_the_bot_plays_the_book_of_the_games_own_settings(server, engine, tmp_path):
    from tests.fake_lichess import BotRun, resign_after

    path = write_book(tmp_path / "b.bin", [(START, "b1c3", 10)])
    book = {"enabled": True, "paths": {"standard": [str(path)]}}
    with BotRun(server, engine, {"game_overrides": {"bullet_white": {"book": book}}}) as bot:
        game = bot.play(opponent=resign_after(1), limit=60, increment=0)
    assert game.posts[0][:2] == (0, "b1c3")
