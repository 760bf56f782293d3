"""Draw offers and resignation limited by the position and the opponent: lichess-bot's ``offer_draw_pieces``,
BotLi's ``min_game_length``, ``against_humans`` and ``min_rating`` (config ``draw_or_resign``)."""

from __future__ import annotations

import chess

from lichessbot.bot.games.move_rules import ScoreRules
from lichessbot.config import DrawOrResignConfig, parse_config
from tests.bot.test_game_core import OPP, play, started

#: 4 pieces: two kings, a rook each; full move 40.
ENDGAME = chess.Board("4k3/8/8/3r4/8/8/3R4/4K3 w - - 0 40")


def rules(**kw: object) -> ScoreRules:
    r = ScoreRules(DrawOrResignConfig(offer_draw_enabled=True, offer_draw_score=20, offer_draw_moves=2,
                                      resign_enabled=True, resign_score=-300, resign_moves=2, **kw))  # type: ignore[arg-type]
    r.opponent(2000, is_bot=True)
    r.add(5)
    r.add(-5)
    return r


def test_offer_draw_pieces_counts_every_piece_on_the_board():
    assert rules(offer_draw_pieces=4).should_offer_draw(ENDGAME)
    assert not rules(offer_draw_pieces=3).should_offer_draw(ENDGAME)
    assert not rules(offer_draw_pieces=31).should_offer_draw(chess.Board())  # 32 pieces
    assert rules().should_offer_draw(chess.Board())  # the default: any position


def test_offer_draw_min_game_length_waits_past_that_full_move():
    assert not rules(offer_draw_min_game_length=40).should_offer_draw(ENDGAME)
    assert rules(offer_draw_min_game_length=39).should_offer_draw(ENDGAME)


def test_against_humans_and_min_rating_limit_offers_and_resignation():
    human = rules(offer_draw_against_humans=False, resign_against_humans=False)
    human.opponent(2000, is_bot=False)
    human.add(-400)
    human.add(-400)
    assert not human.should_offer_draw(ENDGAME) and not human.should_resign()
    human.opponent(2000, is_bot=True)
    assert human.should_resign()
    low = rules(resign_min_rating=2100, offer_draw_min_rating=2100)
    low.add(-400)
    low.add(-400)
    assert not low.should_resign()
    low.opponent(2100, is_bot=True)
    assert low.should_resign()
    low.opponent(None, is_bot=True)  # unrated: 0
    assert not low.should_resign()
    low.scores[:] = [5, 5]
    low.opponent(2100, is_bot=False)
    assert low.should_offer_draw(ENDGAME)
    low.opponent(2099, is_bot=False)
    assert not low.should_offer_draw(ENDGAME)


def test_the_game_core_tells_the_rules_its_opponent_and_position():
    core, _ = started({"draw_or_resign": {"offer_draw_enabled": True, "offer_draw_score": 20, "offer_draw_moves": 1,
                                          "offer_draw_min_rating": OPP.rating + 1}})
    assert play(core, 1000.0)[0].offer_draw is False  # alice is rated 1620
    core, _ = started({"draw_or_resign": {"offer_draw_enabled": True, "offer_draw_score": 20, "offer_draw_moves": 1,
                                          "offer_draw_pieces": 31}})
    assert play(core, 1000.0)[0].offer_draw is False  # 32 pieces at the start
    core, _ = started({"draw_or_resign": {"offer_draw_enabled": True, "offer_draw_score": 20, "offer_draw_moves": 1,
                                          "offer_draw_min_rating": OPP.rating}})
    assert play(core, 1000.0)[0].offer_draw is True


def test_the_settings_are_checked_at_load():
    import pytest

    from lichessbot.config import ConfigError
    with pytest.raises(ConfigError, match="draw_or_resign.offer_draw_pieces"):
        parse_config({"draw_or_resign": {"offer_draw_pieces": 1}})
