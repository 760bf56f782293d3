"""Takebacks as lila reads them (issue 40, point 4): ``takeback/yes`` without a pending offer of the opponent is
our own proposal (round Takebacker.yes), so a proposal of ours lichess shows is withdrawn at once and an answer
is never retried; offers in arena games are declined; the count accepted in a game survives a restart."""

from __future__ import annotations

import chess

from lichessbot.bot.games.takeback import TakebackLedger, Takebacks
from lichessbot.lichess.client import ClientSettings, LichessClient
from lichessbot.lichess.events import GameState


def _state(moves: str = "e2e4 e7e5", **offers: bool) -> GameState:
    return GameState(moves=moves, wtime=60_000, btime=60_000, status="started", **offers)


def test_a_proposal_of_ours_lichess_shows_is_withdrawn_once():
    tb = Takebacks(3)
    assert tb.answer(_state(wtakeback=True), chess.WHITE) is False  # ours (white): "no" withdraws it
    assert tb.answer(_state(wtakeback=True), chess.WHITE) is None   # once a position
    assert tb.answer(_state(btakeback=True), chess.WHITE) is True   # the opponent's: answered


def test_an_offer_that_stays_across_the_proposers_move_is_answered_once():
    """lila declines only the opponent's proposal with a move (round MovePlayer ``postHumanOrBotPlay``): an offer
    made by the side to move stays up after its move until our answer arrives, and it is the same offer (the arena
    test saw "no" posted twice). A new offer, after a state without one, is answered."""
    tb = Takebacks(3)
    assert tb.answer(_state("e2e4 e7e5 g1f3", btakeback=True), chess.WHITE) is True
    assert tb.answer(_state("e2e4 e7e5 g1f3 b8c6", btakeback=True), chess.WHITE) is None  # black moved: the same
    assert tb.answer(_state("e2e4 e7e5 g1f3 b8c6"), chess.WHITE) is None  # answered: gone
    assert tb.answer(_state("e2e4 e7e5 g1f3 b8c6", btakeback=True), chess.WHITE) is True  # a new one


def test_offers_in_arena_games_are_declined():
    tb = Takebacks(5)
    tb.no_takebacks = True
    assert tb.answer(_state(btakeback=True), chess.WHITE) is False


def test_the_count_accepted_in_a_game_survives_a_restart(tmp_path):
    path = str(tmp_path / "takebacks.json")
    tb = Takebacks(1, "game0001")
    assert tb.answer(_state(btakeback=True), chess.WHITE) is True
    assert tb.posted(True, ok=True) is True  # counted: the shell adds it to the ledger
    TakebackLedger(path).add("game0001")
    again = Takebacks(1, "game0001", TakebackLedger(path).count("game0001"))  # the bot restarted mid-game
    assert again.accepted == 1
    assert again.answer(_state("e2e4 e7e5 g1f3 b8c6", btakeback=True), chess.WHITE) is False  # limit reached
    assert again.posted(False, ok=True) is False  # a no is not counted
    TakebackLedger(path).forget("game0001")
    assert TakebackLedger(path).count("game0001") == 0
    (tmp_path / "broken.json").write_text("{not json")
    assert TakebackLedger(str(tmp_path / "broken.json")).count("other") == 0


def test_a_takeback_answer_is_never_retried(server):
    """A yes that reached lila but whose answer was lost would, sent again, propose a takeback of ours."""
    client = LichessClient(server.token, server.url, ClientSettings(retries=3, backoff=0.01))
    cid = server.challenge()
    client.accept_challenge(cid)
    assert server.wait_for(lambda: cid in server.games, 5)
    server.fail_next("action", 503)
    try:
        client.answer_takeback(cid, True)
    except Exception:  # noqa: BLE001 - the 503 is the answer here
        pass
    assert sum(1 for _, p, _ in server.requests if p.endswith("/takeback/yes")) == 1


def test_a_takeback_answer_that_would_be_sent_late_is_dropped(server):
    """A takeback answer that would wait out a 429 pause is given up: sent late, after the opponent moved, lila would
    read a yes as a proposal of ours (found by the soak: answers waiting out a pause of the game actions)."""
    from lichessbot.lichess.client import LichessError
    from lichessbot.lichess.limits import OTHER

    client = LichessClient(server.token, server.url, ClientSettings(retries=3, backoff=0.01))
    cid = server.challenge()
    client.accept_challenge(cid)
    assert server.wait_for(lambda: cid in server.games, 5)
    client.session._pause(OTHER, 5.0)  # the game actions' class, paused by a 429
    try:
        client.answer_takeback(cid, True)
    except LichessError as err:
        assert "dropped" in str(err) or err.status is None
    else:
        raise AssertionError("the answer went late")
    assert not any(p.endswith("/takeback/yes") for _, p, _ in server.requests)
