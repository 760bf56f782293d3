"""lila's rules of a game as the embedded lichess plays them (:mod:`lichessbot.local.lila_rules`): the clocks
start after both first moves and add the increment, a flag ends the game (a draw when the other side cannot mate),
a first move that never comes aborts the game, draw offers and takebacks, lila's messages for refused moves. Pure:
times are given."""

from __future__ import annotations

import chess
import pytest

from lichessbot.local.export import attach_eval, pgn
from lichessbot.local.lila_rules import (
    MoveError,
    apply_move,
    expiry,
    flag,
    flag_grace_ms,
    offer_draw,
    parse_move,
    remaining,
    takeback,
    takeback_allowed_by_prefs,
    time_for_first_move,
)
from lichessbot.local.model import Account, Game, Seat, make_board, speed_of

T0 = 1000.0


def game(fen: str = "startpos", initial: int = 60_000, inc: int = 2_000, speed: str = "bullet",
         variant: str = "standard", source: str = "friend", black: Account | None = None) -> Game:
    black = black or Account("lichessbot", title="BOT")
    g = Game(id="abcdefgh", white=Seat(Account("Alice")), black=Seat(black),
             board=make_board(variant, fen), initial_fen=fen, variant=variant, speed=speed, initial_ms=initial,
             increment_ms=inc, wtime=initial, btime=initial, started_at=T0, last_move_at=T0, source=source)
    return g


def play(g: Game, *moves: tuple[str, float]) -> None:
    for uci, at in moves:
        apply_move(g, parse_move(g, uci), at)


def test_the_clocks_start_after_both_first_moves_and_add_the_increment():
    g = game()
    play(g, ("e2e4", T0 + 5), ("e7e5", T0 + 9))
    assert (g.wtime, g.btime) == (60_000, 60_000)  # the first moves cost nothing and earn no increment
    assert remaining(g, True, T0 + 12) == 57_000  # white's clock runs from black's first move
    play(g, ("g1f3", T0 + 12))
    assert (g.wtime, g.btime) == (59_000, 60_000) and g.clocks == [60_000, 60_000, 59_000]
    assert remaining(g, False, T0 + 13.5) == 58_500


def test_a_flag_loses_after_lilas_grace_and_is_a_draw_when_the_other_side_cannot_mate():
    g = game()
    play(g, ("e2e4", T0), ("e7e5", T0 + 1))
    # 1+2: quota gain min(100, 140 * 2 / 5 + 15) = 71 cs, 4 gains after white's first move: 2.84 s, at most 2 s
    assert flag_grace_ms(g, True) == 2000
    assert not flag(g, T0 + 62.9)  # white's clock runs from black's first move; 0 at T0 + 61, then the grace
    assert flag(g, T0 + 63.1) and (g.status, g.winner, g.wtime) == ("outoftime", "black", 0)
    bare = game("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")  # black has a bare king: it cannot win on time
    play(bare, ("e2e3", T0), ("e8d8", T0 + 1))
    assert flag(bare, T0 + 70) and (bare.status, bare.winner) == ("outoftime", None)


def test_the_flag_grace_is_the_lag_quota_at_most_two_seconds():
    """scalachess LagTracker.init: 3 quota gains at the start, one more a move; Clock.outOfTime: at most 2 s."""
    g = game(initial=15_000, inc=0, speed="ultraBullet")  # gain min(100, 15 * 2 / 5 + 15) = 21 cs
    assert flag_grace_ms(g, True) == 630
    play(g, ("e2e4", T0), ("e7e5", T0 + 1))
    assert flag_grace_ms(g, True) == 840 and flag_grace_ms(g, False) == 840
    assert flag_grace_ms(game(initial=180_000, inc=2_000, speed="blitz"), True) == 2000


def test_a_move_inside_the_grace_carries_its_overdraft_so_the_grace_is_not_granted_again():
    """scalachess Clock ``step`` takes the move's time with no floor: a move 1 s past zero leaves -1 s, shown as
    0, and the next flag falls 1 s before the grace's end, not a full grace later."""
    g = game(initial=60_000, inc=0)  # 1+0: quota gain min(100, 60 * 2 / 5 + 15) = 39 cs
    play(g, ("e2e4", T0), ("e7e5", T0 + 1))
    assert flag_grace_ms(g, True) == 1560
    play(g, ("g1f3", T0 + 62))  # white's clock ran out at T0 + 61: played inside the grace
    assert remaining(g, True, T0 + 62) == 0 and g.wtime == -1_000 and g.clocks[-1] == 0
    play(g, ("b8c6", T0 + 63))
    due = T0 + 63 + (flag_grace_ms(g, True) - 1_000) / 1000  # 1.95 s of grace, 1 s of it already spent
    assert not flag(g, due - 0.05)
    assert flag(g, due + 0.05) and (g.status, g.winner) == ("outoftime", "black")


def test_a_challenge_game_never_expires_for_want_of_a_first_move():
    """lila Source.expirable: only lobby, arena, pool and swiss games."""
    g = game(speed="blitz")
    assert expiry(g, T0 + 100) is None
    assert expiry(game(speed="blitz", source="lobby"), T0 + 100) == 0.0


def test_a_correspondence_clock_runs_and_each_move_gives_the_days_again():
    g = game(initial=0, inc=0, speed="correspondence")
    g.has_clock, g.days, g.wtime, g.btime = False, 2, 2 * 86_400_000, 2 * 86_400_000
    assert remaining(g, True, T0 + 3600) == 2 * 86_400_000 - 3_600_000  # white's days run from the start
    play(g, ("e2e4", T0 + 3600))
    assert g.wtime == 2 * 86_400_000 and remaining(g, False, T0 + 3600 + 60) == 2 * 86_400_000 - 60_000
    assert flag(g, T0 + 3600 + 2 * 86_400 + 1) and (g.status, g.winner) == ("outoftime", "white")


def test_a_game_whose_first_move_never_comes_expires_after_lilas_time():
    g = game(speed="blitz", source="lobby")
    assert time_for_first_move(g) == 25 and expiry(g, T0 + 10) == 15
    play(g, ("e2e4", T0 + 20))
    assert expiry(g, T0 + 30) == 15  # black's time counts from white's move
    play(g, ("e7e5", T0 + 31))
    assert expiry(g, T0 + 40) is None  # both moved: the clocks run instead
    assert time_for_first_move(game(speed="bullet", variant="chess960",
                                    fen=chess.Board.from_chess960_pos(5).fen())) == 25  # 20 x 5/4


def test_refused_moves_carry_lilas_messages():
    g = game()
    for uci, text in (("e2e5", "Piece on e2 cannot move to e5"), ("e3e4", "No piece on e3"),
                      ("e7e5", "No piece on e7"), ("hello", "Invalid UCI: hello")):
        with pytest.raises(MoveError, match=text):
            parse_move(g, uci)


def test_draw_offers_stand_lapse_on_a_move_and_meet_into_a_draw():
    g = game()
    play(g, ("e2e4", T0), ("e7e5", T0 + 1))
    assert offer_draw(g, True, T0 + 2) and g.white.offering_draw
    assert not offer_draw(g, True, T0 + 2)  # one offer at a time
    play(g, ("g1f3", T0 + 3))
    assert g.white.offering_draw  # the offerer's move keeps its offer
    play(g, ("b8c6", T0 + 4))
    assert not g.white.offering_draw  # declined by moving
    assert not offer_draw(g, True, T0 + 5)  # again within 20 plies: ignored (lila)
    assert offer_draw(g, False, T0 + 5) and offer_draw(g, True, T0 + 6)
    assert (g.status, g.winner) == ("draw", None)


def test_takebacks_take_back_one_move_or_two():
    g = game(black=Account("Bob"))  # two people: a bot's preference is never
    play(g, ("e2e4", T0), ("e7e5", T0 + 1))
    assert takeback(g, True, True, T0 + 2) and g.white.proposing_takeback  # white proposes on its turn
    assert takeback(g, False, True, T0 + 3)  # black accepts: black's reply and white's move go
    assert g.ply() == 0 and g.clocks == []
    play(g, ("d2d4", T0 + 4))
    assert not takeback(g, True, True, T0 + 5)  # black has not moved: no proposal (lila bothPlayersHaveMoved)
    play(g, ("d7d5", T0 + 6), ("c2c4", T0 + 7))
    assert takeback(g, False, True, T0 + 8) and takeback(g, True, True, T0 + 9)
    assert g.ply() == 1 and g.board.turn == chess.BLACK  # black proposed on its turn: c4 and d5 go


def test_a_declined_takeback_holds_the_next_proposal_back():
    """lila RoundAsyncActor TakebackBoard: min(declines, 10)² × 10 s after the last decline."""
    g = game(black=Account("Bob"))  # two people: a bot's preference is never
    play(g, ("e2e4", T0), ("e7e5", T0 + 1))
    assert takeback(g, True, True, T0 + 2) and takeback(g, False, False, T0 + 3)  # declined
    assert g.ply() == 2 and not g.white.proposing_takeback
    assert not takeback(g, True, True, T0 + 12)  # 10 s after one decline
    assert takeback(g, True, True, T0 + 13.5) and takeback(g, False, False, T0 + 14)
    assert not takeback(g, True, True, T0 + 14 + 39) and takeback(g, True, True, T0 + 14 + 41)  # 40 s after two


def test_a_move_declines_the_opponents_takeback_proposal_and_the_movers_own_stands():
    """lila MovePlayer.scala ``postHumanOrBotPlay``: a move declines ``pov.opponent``'s proposal only."""
    g = game(black=Account("Bob"))  # two people: a bot's preference is never
    play(g, ("e2e4", T0), ("e7e5", T0 + 0.5), ("d2d4", T0 + 0.7))
    assert takeback(g, True, True, T0 + 1) and g.white.proposing_takeback  # white asks, black to move
    play(g, ("d7d5", T0 + 2))  # black moves instead of answering: white's proposal is declined
    assert not g.white.proposing_takeback
    assert takeback(g, True, True, T0 + 3) and g.white.proposing_takeback  # white asks on its own turn ...
    play(g, ("g1f3", T0 + 4))
    assert g.white.proposing_takeback  # ... and moves: its own proposal stands for black to answer


def test_a_takeback_needs_both_players_preferences_and_a_bots_is_never():
    """lila Takebacker.scala ``isAllowedByPrefs``: every player's ``Pref.takeback`` is ALWAYS, or CASUAL in a
    casual game; PrefApi.scala ``setBot``: a BOT account's is NEVER; Pref.scala ``default``: ALWAYS."""
    assert Account("lichessbot", title="BOT").takeback == "never" and Account("Bob").takeback == "always"
    with pytest.raises(ValueError, match="takeback preference 'sometimes'"):
        Account("Bob", takeback="sometimes")
    g = game()  # Alice against the bot
    play(g, ("e2e4", T0), ("e7e5", T0 + 1))
    assert not takeback_allowed_by_prefs(g)
    assert not takeback(g, True, True, T0 + 2) and not g.white.proposing_takeback  # the person cannot ask
    assert not takeback(g, False, True, T0 + 2) and not g.black.proposing_takeback  # nor can the bot
    for pref, rated, allowed in (("casual", False, True), ("casual", True, False), ("never", False, False),
                                 ("always", True, True)):
        g = game(black=Account("Bob", takeback=pref))
        g.rated = rated
        play(g, ("e2e4", T0), ("e7e5", T0 + 1))
        assert takeback_allowed_by_prefs(g) is allowed, (pref, rated)
        assert takeback(g, True, True, T0 + 2) is allowed and g.white.proposing_takeback is allowed, (pref, rated)
        assert takeback(g, False, True, T0 + 3) is allowed and g.ply() == (0 if allowed else 2), (pref, rated)


def test_the_mate_and_the_draws_lichess_sees_at_once():
    g = game("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    play(g, ("a1a8", T0))
    assert (g.status, g.winner) == ("mate", "white")
    rep = game()
    play(rep, *[(u, T0 + i) for i, u in enumerate(["g1f3", "g8f6", "f3g1", "f6g8"] * 2)])
    assert (rep.status, rep.winner) == ("draw", None)  # threefold repetition


def test_the_speed_of_a_clock_is_lichesss():
    assert [speed_of(*c) for c in ((15, 0), (60, 0), (180, 2), (300, 3), (900, 10), (1800, 20))] == \
        ["ultraBullet", "bullet", "blitz", "blitz", "rapid", "classical"]


def test_the_export_has_clocks_and_the_bots_evals_from_white_s_side():
    g = game(speed="bullet", inc=0)
    g.black = Seat(Account("lichessbot", title="BOT"))
    play(g, ("e2e4", T0), ("e7e5", T0 + 1), ("g1f3", T0 + 2), ("b8c6", T0 + 3))
    attach_eval(g, False, "eval -0.35 | W 26% D 33% L 41% | nodes 16 nps 1000 depth 2 | pv e5 Nf3")
    attach_eval(g, False, "mate -3 | nodes 16 nps 1000 depth 2 | pv Nc6 Bb5")  # the line's side: white's
    attach_eval(g, False, "book move Nc6")  # no eval in it
    text = pgn(g, "http://127.0.0.1:8080/abcdefgh")
    assert "1. e4 { [%clk 0:01:00] } 1... e5 { [%eval -0.35] [%clk 0:01:00] }" in text
    assert "2... Nc6 { [%eval #-3] [%clk 0:00:59] }" in text
    assert '[TimeControl "60+0"]' in text and '[BlackTitle "BOT"]' in text and '[Result "*"]' in text
