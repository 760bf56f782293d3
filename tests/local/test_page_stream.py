"""The page's ``position`` line (:meth:`lichessbot.local.page.PageRoutes.position_line`): what the page needs to
grey out ½ inside lila's 20-ply window and to browse the game without chess rules."""

from __future__ import annotations

from lichessbot.local.lila_rules import decline_draw, offer_draw
from lichessbot.local.page import can_offer_draw
from tests.local.test_lila_rules import T0, game, play


def test_a_side_may_offer_a_draw_from_ply_2_and_again_only_20_plies_after_its_last_offer():
    g = game()
    play(g, ("e2e4", T0))
    assert not can_offer_draw(g, True) and not can_offer_draw(g, False)  # lila: ply >= 2
    play(g, ("e7e5", T0 + 1))
    assert can_offer_draw(g, True)
    assert offer_draw(g, True, T0 + 2)
    assert not can_offer_draw(g, True)  # offering now
    assert decline_draw(g, False)
    assert not can_offer_draw(g, True) and can_offer_draw(g, False)  # offered at ply 2: not before ply 23
    moves = ("a2a3 a7a6 b2b3 b7b6 c2c3 c7c6 d2d3 d7d6 g2g3 g7g6 h2h3 h7h6 a3a4 a6a5 b3b4 b6b5 c3c4 c6c5 d3d4 d6d5 "
             "g3g4").split()
    for i, uci in enumerate(moves[:20]):
        play(g, (uci, T0 + 3 + i))
    assert g.ply() == 22 and not g.over
    assert not can_offer_draw(g, True)  # 2 >= 22 - 20: still the window
    play(g, (moves[20], T0 + 30))
    assert can_offer_draw(g, True)  # ply 23: the window is over
    assert offer_draw(g, True, T0 + 31)  # and the server agrees


def test_the_position_line_has_every_position_for_browsing():
    from lichessbot.local import LocalLichess
    with LocalLichess("lip_bottoken0123") as server:
        g = game()
        play(g, ("e2e4", T0), ("e7e5", T0 + 1), ("d1h5", T0 + 2), ("b8c6", T0 + 3), ("h5f7", T0 + 4))
        line = server.position_line(g, T0 + 5)
    assert line["ucis"] == ["e2e4", "e7e5", "d1h5", "b8c6", "h5f7"] and len(line["fens"]) == 6
    assert line["fens"][0].startswith("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w")
    assert line["fens"][-1] == g.board.fen() and line["checks"] == [None, None, None, None, None, "e8"]
    assert line["canOfferDraw"] == {"white": True, "black": True}
