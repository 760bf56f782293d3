"""People play the bot through lichess's Board API on the embedded lichess, with berserk, as on lichess: the real
bot (the real engine on the tiny net) on one side, and games played to their end: a mate, a draw by agreement, a
loss on time, a resignation, an abort; takebacks answered by ``max_takebacks_accepted``; a reconnection that
rejoins; the bot's PGN with clocks and evals, and the server's export."""

from __future__ import annotations

import io
import re
import time

import chess.pgn
import pytest
import requests
from berserk.exceptions import ResponseError

from tests.local.conftest import local_bot, wait_file

#: White mates in one: Ra8#.
MATE_IN_ONE = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"


def _challenge(client, **kw) -> str:
    kw.setdefault("clock_limit", 300)
    kw.setdefault("clock_increment", 3)
    kw.setdefault("color", "white")
    return client.challenges.create("lichessbot", rated=False, **kw)["id"]


def _started(run, gid: str) -> None:
    assert run.server.wait_for(lambda: gid in run.server.games, 15), "the bot did not accept"


def test_a_person_mates_the_bot(local):
    me = local.person()
    gid = _challenge(me, position=MATE_IN_ONE)
    _started(local, gid)
    me.board.make_move(gid, "a1a8")
    local.wait_over(gid)
    g = local.server.games[gid]
    assert (g.status, g.winner, g.variant) == ("mate", "white", "fromPosition")
    lines = list(me.board.stream_game_state(gid))  # a finished game's stream: its gameFull, then it ends
    assert [x["type"] for x in lines] == ["gameFull"]
    assert lines[0]["state"]["status"] == "mate" and lines[0]["state"]["winner"] == "white"
    assert local.server.wait_for(lambda: not local.service.games, 10)  # the bot heard the end: its slot is free


def test_a_draw_offer_is_accepted_as_the_bots_config_says(tmp_path, tiny_net):
    accept_any = {"draw_or_resign": {"offer_draw_enabled": True, "offer_draw_score": 100000, "offer_draw_moves": 1}}
    with local_bot(tmp_path, tiny_net, accept_any) as run:
        me = run.person()
        gid = _challenge(me)
        _started(run, gid)
        me.board.make_move(gid, "e2e4")
        run.turn(gid, True)
        me.board.offer_draw(gid)  # on our turn: the offer stands through our move, and the bot answers with its own
        assert run.server.games[gid].white.offering_draw
        me.board.make_move(gid, "d2d4")
        run.wait_over(gid)
        g = run.server.games[gid]
        assert (g.status, g.winner) == ("draw", None)


@pytest.mark.slow
def test_the_person_loses_on_time_while_nobody_is_connected(local):
    guest = requests.post(local.server.url + "/local/session", timeout=5).json()["token"]
    me = local.person(guest)  # the page's guest: it may play bullet (a Board API token may not, as on lichess)
    gid = _challenge(me, clock_limit=0, clock_increment=1)  # 0+1: 3 s each (scalachess initTime)
    _started(local, gid)
    g = local.server.games[gid]
    assert g.wtime == 3000 and g.speed == "bullet"
    me.board.make_move(gid, "e2e4")
    local.turn(gid, True)
    started = time.monotonic()
    local.wait_over(gid, 10)  # no stream of ours is open: the server's clock ends the game
    assert (g.status, g.winner) == ("outoftime", "black")
    assert 2.5 < time.monotonic() - started < 5 and g.wtime == 0


def test_a_resignation_ends_the_game_and_both_pgns_have_clocks_and_evals(local):
    me = local.person()
    gid = _challenge(me, color="black")
    _started(local, gid)
    for uci in ("e7e6", "d7d5", "g8f6"):
        local.turn(gid, False)
        me.board.make_move(gid, uci)
    local.turn(gid, False)
    assert local.server.wait_for(lambda: len(local.server.games[gid].evals) >= 3, 10), "no eval lines came"
    me.board.resign_game(gid)
    local.wait_over(gid)
    g = local.server.games[gid]
    assert (g.status, g.winner) == ("resign", "white")
    saved = wait_file(local.pgn_dir, f"*{gid}.pgn")
    game = chess.pgn.read_game(saved.open(encoding="utf-8"))
    nodes = list(game.mainline())
    assert len(nodes) == 7 and all(n.clock() is not None for n in nodes)
    assert all(n.eval() is not None for n in nodes[0::2])  # every move of the bot (white) was searched
    export = requests.get(f"{local.server.url}/game/export/{gid}", timeout=5)
    assert export.headers["Content-Type"].startswith("application/x-chess-pgn")
    exported = chess.pgn.read_game(io.StringIO(export.text))
    assert exported.headers["Result"] == "1-0" and exported.headers["White"] == "lichessbot"
    moves = list(exported.mainline())
    assert [n.move for n in moves] == [n.move for n in nodes]
    assert all(n.clock() is not None for n in moves) and sum(n.eval() is not None for n in moves) >= 3


@pytest.mark.parametrize("action", ["draw", "resign"])
def test_a_board_command_is_answered_once_the_game_has_it(local, monkeypatch, action):
    """lila answers a Board API command after the round applied it: a client that reads the game after the 200 sees
    its offer or its resignation (the draw test failed now and then when the answer came first). The change is
    slowed here so that an answer sent before it would be read first."""
    import lichessbot.local.actions as actions

    name = "offer_draw" if action == "draw" else "finish"
    slow = getattr(actions, name)

    def slowed(*args, **kw):
        time.sleep(0.3)
        return slow(*args, **kw)
    me = local.person()
    gid = _challenge(me)
    _started(local, gid)
    me.board.make_move(gid, "e2e4")
    local.turn(gid, True)
    monkeypatch.setattr(actions, name, slowed)
    g = local.server.games[gid]
    if action == "draw":
        me.board.offer_draw(gid)
        assert g.white.offering_draw
    else:
        me.board.resign_game(gid)
        assert (g.over, g.status, g.winner) == (True, "resign", "black")


def test_a_game_never_begun_is_aborted(local):
    me = local.person()
    gid = _challenge(me)
    _started(local, gid)
    me.board.abort_game(gid)
    local.wait_over(gid)
    assert local.server.games[gid].status == "aborted"
    with pytest.raises(ResponseError) as err:
        me.board.abort_game(gid)
    assert err.value.status_code == 400


def test_an_illegal_move_is_a_400_and_changes_nothing(local):
    me = local.person()
    gid = _challenge(me)
    _started(local, gid)
    me.board.make_move(gid, "e2e4")
    local.turn(gid, True)
    g = local.server.games[gid]
    before = (g.board.fen(), g.wtime, g.btime, list(g.clocks))
    for uci, text in (("e4e6", "Piece on e4 cannot move to e6"), ("e3e4", "No piece on e3"),
                      ("zz", "Invalid UCI: zz")):
        with pytest.raises(ResponseError) as err:
            me.board.make_move(gid, uci)
        assert err.value.status_code == 400 and text in str(err.value)
    assert (g.board.fen(), g.wtime, g.btime, list(g.clocks)) == before
    # the bot's token on the Board API, a person's on the Bot API, a stranger on the game
    r = requests.post(f"{local.server.url}/api/board/game/{gid}/move/d2d4", timeout=5,
                      headers={"Authorization": "Bearer lip_localbottoken0123"})
    assert r.status_code == 400 and r.json() == {"error": "This API endpoint is not for Bot accounts."}
    r = requests.post(f"{local.server.url}/api/bot/game/{gid}/move/d2d4", timeout=5,
                      headers={"Authorization": "Bearer lip_person"})
    assert r.status_code == 400 and "Bot account" in r.json()["error"]
    with pytest.raises(ResponseError) as err:
        local.person("lip_stranger").board.make_move(gid, "d2d4")
    assert err.value.status_code == 404 and "Not your game" in str(err.value)


@pytest.mark.parametrize(("form", "field", "message"), [
    ({"position": "8/8/8/8/8/8/8/8 w - - 0 1"}, "fen", "impossible position"),
    ({"position": "not a fen"}, "fen", "invalid FEN"),
    ({"clock_limit": 7}, "clock.limit", "invalid clock 7 s"),
    ({"clock_increment": 181}, "clock.increment", "invalid increment 181 s"),
    ({"clock_limit": 0, "clock_increment": 0}, "clock", "invalid clock 0+0"),
])
def test_a_bad_challenge_is_refused_as_lila_refuses_it(local, form, field, message):
    me = local.person()
    with pytest.raises(ResponseError) as err:
        _challenge(me, **form)
    assert err.value.status_code == 400
    body = err.value.response.json()
    assert field in body and body["error"][field] == body[field] and message in body[field][0]
    assert not local.server.challenges


def test_an_unknown_user_and_oneself_cannot_be_challenged(local):
    me = local.person()
    for name, text in (("nobody", "No such user: nobody"), ("Player1", "cannot challenge yourself")):
        with pytest.raises(ResponseError) as err:
            me.challenges.create(name, rated=False, clock_limit=60, clock_increment=0)
        assert err.value.status_code == 400 and text in str(err.value)


def test_a_reconnection_rejoins_the_game(local):
    me = local.person()
    gid = _challenge(me)
    _started(local, gid)
    me.board.make_move(gid, "e2e4")
    local.turn(gid, True)
    playing = requests.get(f"{local.server.url}/api/account/playing", headers={"Authorization": "Bearer lip_person"},
                           timeout=5).json()["nowPlaying"]
    assert [p["gameId"] for p in playing] == [gid] and playing[0]["isMyTurn"] and playing[0]["color"] == "white"
    events = me.board.stream_incoming_events()
    assert next(events)["type"] == "gameStart"  # the event stream sends the game in progress again
    full = next(me.board.stream_game_state(gid))
    assert full["type"] == "gameFull" and full["state"]["moves"].startswith("e2e4 ")
    assert full["white"]["name"] == "Player1" and full["black"]["title"] == "BOT"


def test_takebacks_are_answered_by_max_takebacks_accepted(tmp_path, tiny_net):
    with local_bot(tmp_path, tiny_net, {"max_takebacks_accepted": 1}) as run:
        run.server.bot.takeback = "always"  # lila's bot is "never" (no takeback at all); play --local's is this
        me = run.person()
        gid = _challenge(me)
        _started(run, gid)
        me.board.make_move(gid, "e2e4")
        run.turn(gid, True)
        g = run.server.games[gid]
        assert g.ply() == 2
        requests.post(f"{run.server.url}/api/board/game/{gid}/takeback/yes", timeout=5,
                      headers={"Authorization": "Bearer lip_person"})
        assert run.server.wait_for(lambda: g.ply() == 0, 10), "the first takeback was not accepted"
        me.board.make_move(gid, "d2d4")
        run.turn(gid, True)
        requests.post(f"{run.server.url}/api/board/game/{gid}/takeback/yes", timeout=5,
                      headers={"Authorization": "Bearer lip_person"})
        assert run.server.wait_for(lambda: not g.white.proposing_takeback, 10)  # declined: the limit is reached
        assert g.ply() == 2 and g.board.move_stack[0].uci() == "d2d4"


def test_several_people_play_at_once_up_to_the_bots_concurrency(local):
    ids = [_challenge(local.person(f"lip_person{i}")) for i in range(3)]
    assert local.server.wait_for(lambda: sum(i in local.server.games for i in ids) == 2, 15)
    waiting = [i for i in ids if i not in local.server.games]
    assert len(waiting) == 1 and local.server.challenges[waiting[0]].status == "created"  # queued for a slot
    bots = requests.get(f"{local.server.url}/api/bot/online", timeout=5).text.splitlines()
    assert [re.search(r'"username": "(\w+)"', b).group(1) for b in bots] == ["lichessbot"]


@pytest.mark.slow
def test_a_variant_the_bot_does_not_play_is_created_and_declined_with_reason_variant(local):
    """lila creates the challenge whatever the variant; the bot answers it (its config's variants)."""
    me = local.person()
    ch = me.challenges.create(local.server.bot.username, False, clock_limit=300, clock_increment=3, variant="atomic")
    assert ch["status"] == "created"
    assert local.server.wait_for(lambda: local.server.challenges[ch["id"]].status == "declined", 10)
    assert local.server.challenges[ch["id"]].decline_reason == "variant"
