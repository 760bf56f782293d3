"""The embedded lichess as a Board API script sees lila (berserk clients, no bot): challenge games wait for their
first move, challenges go offline after 20 s unseen unless a ``keepAliveStream`` holds them, rematches, the
opponent gone and the claims, a flag's grace and a late move, decline reasons, one board stream per client."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import berserk
import pytest
import requests

from lichessbot.local import LocalLichess, lila_rules, streams

BOT = "lip_bot"


def _person(server: LocalLichess, token: str) -> berserk.Client:
    return berserk.Client(berserk.TokenSession(token), base_url=server.url)


def _name(server: LocalLichess, token: str) -> str:
    requests.get(server.url + "/api/account", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    account = server.account_for_token(token)
    assert account is not None
    return account.username


def _game(server: LocalLichess, a: berserk.Client, b: str, limit: int = 300, inc: int = 3) -> str:
    """``a`` (white) challenges the account of token ``b``, who accepts."""
    ch = a.challenges.create(_name(server, b), False, clock_limit=limit, clock_increment=inc, color="white")
    _person(server, b).challenges.accept(ch["id"])
    return str(ch["id"])


def _collect(it: Any, out: list[dict[str, Any]], server: LocalLichess) -> None:
    for line in it:
        out.append(line)
        with server.changed:
            server.changed.notify_all()


def test_a_challenge_goes_offline_after_20_s_unseen_and_stays_listed_with_keep_alive():
    """api-challenge-username.yaml: real-time challenges expire after 20 s without keepAliveStream; with it, the
    challenge lives while the stream is open (lila pings it every 15 s) and goes after the client closes it."""
    with LocalLichess(BOT, keepalive=0.2) as server:
        server.challenge_unseen_s, server.challenge_ping_s = 0.6, 0.3
        a, b = _person(server, "lip_a"), _person(server, "lip_b")
        name = _name(server, "lip_b")
        plain = a.challenges.create(name, False, clock_limit=300, clock_increment=0)
        corres = a.challenges.create(name, False, days=3)
        with requests.post(f"{server.url}/api/challenge/{name}", headers={"Authorization": "Bearer lip_a"},
                           data={"clock.limit": 300, "clock.increment": 0, "keepAliveStream": "true"},
                           stream=True, timeout=5) as kept:
            lines = kept.iter_lines()  # held: a dropped generator closes the connection
            kept_id = json.loads(next(lines))["id"]
            time.sleep(1.5)
            mine = b.challenges.get_mine()
            assert {c["id"] for c in mine["in"]} == {corres["id"], kept_id}  # the plain one went offline
            assert server.challenges[plain["id"]].status == "offline"
        assert server.wait_for(lambda: server.challenges[kept_id].status == "offline", 3)  # closed: unseen
        assert [c["id"] for c in b.challenges.get_mine()["in"]] == [corres["id"]]  # correspondence stays
        b.challenges.accept(plain["id"])  # an offline challenge may still be accepted (lila ``active``)
        assert plain["id"] in server.games


def test_a_rematch_is_a_challenge_with_swapped_colours_and_the_old_game_names_it():
    with LocalLichess(BOT) as server:
        a = _person(server, "lip_a")
        gid = _game(server, a, "lip_b")
        a.board.resign_game(gid)  # aborted (no move yet): over all the same
        r = requests.post(f"{server.url}/local/game/{gid}/rematch", headers={"Authorization": "Bearer lip_b"},
                          timeout=5)
        assert r.status_code == 200
        offer = r.json()
        assert (offer["rematchOf"], offer["color"], offer["timeControl"]["limit"]) == (gid, "white", 300)
        events = a.board.stream_incoming_events()
        first = next(e for e in events if e["type"] == "challenge")
        assert first["challenge"]["id"] == offer["id"] and first["challenge"]["direction"] == "in"
        a.challenges.accept(offer["id"])
        new = server.games[offer["id"]]
        assert new.white.account.username == _name(server, "lip_b")  # colours swapped
        full = next(iter(a.board.stream_game_state(gid)))
        assert full["state"]["rematch"] == offer["id"]  # lila BotJsonView gameState ``rematch``
        again = requests.post(f"{server.url}/local/game/{gid}/rematch", headers={"Authorization": "Bearer lip_b"},
                              timeout=5)
        assert again.status_code == 400
        live = requests.post(f"{server.url}/local/game/{offer['id']}/rematch",
                             headers={"Authorization": "Bearer lip_b"}, timeout=5)
        assert live.status_code == 400  # not over


def test_claims_answer_400_until_the_opponent_is_long_gone_who_is_announced(monkeypatch: pytest.MonkeyPatch):
    """lila BotPlayer ``claimVictory``/``claimDraw``, RoundAsyncActor ``Tick``/``isLongGone`` (timeouts shortened
    here: lila waits 5 s before telling, and 40 s at least 10 before a claim)."""
    monkeypatch.setattr(lila_rules, "DISCONNECT_TIMEOUT_MS", 2600)
    monkeypatch.setattr(lila_rules, "RAGEQUIT_TIMEOUT_MS", 2600)
    monkeypatch.setattr(streams, "GONE_NOTICE_MS", 200)
    monkeypatch.setattr(streams, "GONE_TICK_S", 0.1)
    with LocalLichess(BOT) as server:
        a, b = _person(server, "lip_a"), _person(server, "lip_b")
        gid = _game(server, a, "lip_b")
        a.board.make_move(gid, "e2e4")
        b.board.make_move(gid, "e7e5")
        seen: list[dict[str, Any]] = []
        threading.Thread(target=_collect, args=(a.board.stream_game_state(gid), seen, server), daemon=True).start()
        assert server.wait_for(lambda: len(seen) >= 1, 5)
        a.board.make_move(gid, "g1f3")  # black to move; black never opened a stream: offline
        with pytest.raises(berserk.exceptions.ResponseError) as err:
            a.board.claim_victory(gid)
        assert err.value.status_code == 400 and "You cannot claim the win on this game" in str(err.value)
        assert server.wait_for(lambda: any(x.get("type") == "opponentGone" for x in seen), 5)
        gone = next(x for x in seen if x.get("type") == "opponentGone")
        assert gone["gone"] is True and gone["claimWinInSeconds"] == 2  # 2.6 s less the 0.2 s before telling
        g = server.games[gid]
        assert server.wait_for(lambda: lila_rules.long_gone(g, False, time.monotonic()), 5)
        a.board.claim_victory(gid)
        assert (g.status, g.winner) == ("timeout", "white")


def test_a_claim_on_ones_own_turn_changes_nothing():
    with LocalLichess(BOT) as server:
        a, b = _person(server, "lip_a"), _person(server, "lip_b")
        gid = _game(server, a, "lip_b")
        a.board.make_move(gid, "e2e4")
        b.board.make_move(gid, "e7e5")
        a.board.claim_victory(gid)  # white to move: lila ``mightClaimWin`` is false, 200 and nothing
        assert server.games[gid].status == "started"
        r = requests.post(f"{server.url}/api/board/game/{gid}/claim-draw", headers={"Authorization": "Bearer lip_a"},
                          timeout=5)
        assert r.status_code == 400 and r.json() == {"error": "You cannot claim draw on this game"}


@pytest.mark.slow
def test_a_move_inside_the_grace_is_played_and_a_late_one_ends_the_game_on_time():
    """scalachess Clock.outOfTime(withGrace): up to 2 s past zero; lila RoundAsyncActor BotPlay: a move after the
    grace ends the game ``outoftime`` and the POST answers 200."""
    with LocalLichess(BOT) as server:
        a, b = _person(server, "lip_a"), _person(server, "lip_b")
        gid = _game(server, a, "lip_b", limit=300, inc=3)  # 300 + 120 s: quota gain 100 cs, grace 2 s
        a.board.make_move(gid, "e2e4")
        b.board.make_move(gid, "e7e5")
        g = server.games[gid]
        with server.lock:
            g.wtime = 0  # white's clock hits zero now
            g.last_move_at = time.monotonic()
        time.sleep(0.5)
        a.board.make_move(gid, "g1f3")  # inside the grace: played
        assert g.status == "started" and g.ply() == 3
        with server.lock:
            server._tick = lambda now: None  # type: ignore[method-assign]  # nobody checks the flag meanwhile
            g.btime = 0
            g.last_move_at = time.monotonic() - 2.5
        b.board.make_move(gid, "b8c6")  # late: 200, and the game ends on time without the move
        assert (g.status, g.winner, g.ply()) == ("outoftime", "white", 3)


def test_a_decline_reason_lila_does_not_know_or_a_json_body_falls_back_to_generic():
    with LocalLichess(BOT) as server:
        a, b = _person(server, "lip_a"), _person(server, "lip_b")
        name = _name(server, "lip_b")
        first = a.challenges.create(name, False, clock_limit=300, clock_increment=0)
        b.challenges.decline(first["id"], reason="tooFast")  # berserk posts JSON: lila reads no form
        assert server.challenges[first["id"]].decline_reason == "generic"
        for reason, key in (("nonsense", "generic"), ("TOOFAST", "tooFast")):
            ch = a.challenges.create(name, False, clock_limit=300, clock_increment=0)
            r = requests.post(f"{server.url}/api/challenge/{ch['id']}/decline", data={"reason": reason},
                              headers={"Authorization": "Bearer lip_b"}, timeout=5)
            assert r.ok and server.challenges[ch["id"]].decline_reason == key


def test_a_variant_lichess_has_is_created_whatever_the_bot_plays():
    with LocalLichess(BOT) as server:
        a = _person(server, "lip_a")
        ch = a.challenges.create(server.bot.username, False, clock_limit=300, clock_increment=0, variant="atomic")
        assert ch["variant"]["key"] == "atomic" and ch["status"] == "created"
        assert ch["perf"]["name"] == "Atomic"  # lila PerfType: a variant's perf is named after it


def test_a_second_board_stream_of_a_player_ends_the_first():
    """lila GameStateStream: one stream per player and client (``uniqChan``)."""
    with LocalLichess(BOT, keepalive=0.2) as server:
        a = _person(server, "lip_a")
        gid = _game(server, a, "lip_b")
        first: list[dict[str, Any]] = []
        t = threading.Thread(target=_collect, args=(a.board.stream_game_state(gid), first, server), daemon=True)
        t.start()
        assert server.wait_for(lambda: len(first) == 1, 5)
        second = a.board.stream_game_state(gid)
        assert next(iter(second))["type"] == "gameFull"
        t.join(5)
        assert not t.is_alive()  # the older stream ended


def test_lilas_rate_limits_answer_429_and_a_flag_relaxes_them():
    """Challenges: 25 a minute per account; the event stream: 30 per 10 minutes (lila's Limiters)."""
    with LocalLichess(BOT) as server:
        name = _name(server, "lip_b")
        auth = {"Authorization": "Bearer lip_a"}
        codes = [requests.post(f"{server.url}/api/challenge/{name}", headers=auth, timeout=5,
                               data={"clock.limit": 300, "clock.increment": 0}).status_code for _ in range(26)]
        assert codes == [200] * 25 + [429]
        r = requests.post(f"{server.url}/api/challenge/{name}", headers=auth, timeout=5, data={"days": 3})
        assert r.status_code == 429 and r.json() == {"error": "Too many requests. Try again later."}
        streams = []
        for _ in range(31):
            with requests.get(server.url + "/api/stream/event", headers=auth, stream=True, timeout=5) as s:
                streams.append(s.status_code)
        assert streams == [200] * 30 + [429]
    with LocalLichess(BOT, rate_limits=False) as relaxed:
        name = _name(relaxed, "lip_b")
        assert all(requests.post(f"{relaxed.url}/api/challenge/{name}", headers={"Authorization": "Bearer lip_a"},
                                 data={"days": 3}, timeout=5).ok for _ in range(30))


def test_a_bot_over_its_games_against_bots_gets_lilas_429():
    with LocalLichess(BOT) as server:
        other = _name(server, "lip_other_bot")
        assert requests.post(server.url + "/api/bot/account/upgrade", headers={"Authorization": "Bearer lip_other_bot"},
                             timeout=5).ok
        limiter = server.limiters["bot_games"]
        for _ in range(limiter.credits):
            limiter.spend(server.bot.id, time.monotonic())
        r = requests.post(f"{server.url}/api/challenge/{other}", headers={"Authorization": f"Bearer {BOT}"},
                          data={"clock.limit": 300, "clock.increment": 0}, timeout=5)
        assert r.status_code == 429
        body = r.json()
        assert body["ratelimit"]["key"] == "bot.vsBot.day" and 86_000 < body["ratelimit"]["seconds"] <= 86_400
        assert body["error"].startswith("You played 100 games against other bots today")


def test_each_player_has_its_own_full_id_the_game_id_and_four_characters():
    """lila Game.scala ``fullIdOf``: the game's id and the player's 4-character id (``GamePlayerId``), one per player
    (lichess-org/api GameEventInfo ``fullId``: "rCRw1AuOvonq"); the same in ``/api/account/playing`` and the event
    stream's ``gameStart``."""
    with LocalLichess(BOT, rate_limits=False) as server:
        a, b = _person(server, "lip_a"), _person(server, "lip_b")
        gid = _game(server, a, "lip_b")
        fa, fb = (p.games.get_ongoing()[0]["fullId"] for p in (a, b))
        assert fa[:8] == fb[:8] == gid and len(fa) == len(fb) == 12, (fa, fb)
        assert fa != fb and fa[8:].isalnum() and fb[8:].isalnum()
        events = a.board.stream_incoming_events()
        start = next(events)
        assert start["type"] == "gameStart" and start["game"]["fullId"] == fa
        events.close()


def test_a_draw_offer_against_a_bare_king_is_an_insufficient_material_claim():
    """lila Drawer.scala ``yes``: a player who may offer a draw while the opponent cannot mate ends the game at once,
    drawn, status ``insufficientMaterialClaim`` (lichess-org/api GameStatusName; PGN Termination "Insufficient
    material", PgnDump); the side that can still mate only offers."""
    with LocalLichess(BOT, rate_limits=False) as server:
        a, b = _person(server, "lip_a"), _person(server, "lip_b")
        ch = a.challenges.create(_name(server, "lip_b"), False, clock_limit=300, clock_increment=3, color="white",
                                 position="4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")
        b.challenges.accept(ch["id"])
        gid = ch["id"]
        a.board.make_move(gid, "a1a2")
        b.board.make_move(gid, "e8d8")
        b.board.offer_draw(gid)  # black's opponent has a rook: an offer
        g = server.games[gid]
        assert g.status == "started" and g.black.offering_draw
        b.board.decline_draw(gid)  # withdrawn
        a.board.offer_draw(gid)  # white's opponent has a bare king: the claim
        assert (g.status, g.winner) == ("insufficientMaterialClaim", None)
        state = next(a.board.stream_game_state(gid))["state"]
        assert state["status"] == "insufficientMaterialClaim" and "winner" not in state
        pgn = requests.get(f"{server.url}/game/export/{gid}", timeout=5).text
        assert '[Termination "Insufficient material"]' in pgn and '[Result "1/2-1/2"]' in pgn


def test_nobody_can_take_back_against_a_bot_whose_preference_is_never_and_two_people_can():
    """lila Takebacker.scala ``IfAllowed``/``isAllowedByPrefs`` (both players' ``Pref.takeback``), PrefApi.scala
    ``setBot`` (a BOT account's is NEVER), PlayApi.scala ``takeback`` (``fuccess(setTakeback)``: 200 whatever the
    round then does). A person's proposal to the bot answers 200 and the bot never sees it; nor can the bot ask;
    two Board API accounts can."""
    with LocalLichess(BOT) as server:
        me, bot = _person(server, "lip_a"), _person(server, BOT)
        ch = me.challenges.create(server.bot.username, False, clock_limit=300, clock_increment=3, color="white")
        bot.bots.accept_challenge(ch["id"])
        gid = str(ch["id"])
        me.board.make_move(gid, "e2e4")
        bot.bots.make_move(gid, "e7e5")
        seen: list[dict[str, Any]] = []
        threading.Thread(target=_collect, args=(bot.bots.stream_game_state(gid), seen, server), daemon=True).start()
        assert server.wait_for(lambda: len(seen) >= 1, 5)
        me.board.offer_takeback(gid)  # berserk raises on anything but 2xx: lila answers 200 {"ok":true}
        asked = requests.post(f"{server.url}/api/bot/game/{gid}/takeback/yes", timeout=5,
                              headers={"Authorization": f"Bearer {BOT}"})
        assert asked.status_code == 200 and asked.json() == {"ok": True}
        me.board.offer_draw(gid)  # a change the bot does see, after the proposals
        assert server.wait_for(lambda: any(x.get("wdraw") for x in seen), 5)
        g = server.games[gid]
        assert not any(x.get("wtakeback") or x.get("btakeback") for x in seen)
        assert (g.ply(), g.white.proposing_takeback, g.black.proposing_takeback) == (2, False, False)

        a, b = _person(server, "lip_b"), _person(server, "lip_c")
        gid = _game(server, a, "lip_c")
        a.board.make_move(gid, "e2e4")
        b.board.make_move(gid, "e7e5")
        theirs: list[dict[str, Any]] = []
        threading.Thread(target=_collect, args=(b.board.stream_game_state(gid), theirs, server), daemon=True).start()
        assert server.wait_for(lambda: len(theirs) >= 1, 5)
        a.board.offer_takeback(gid)
        assert server.wait_for(lambda: any(x.get("wtakeback") for x in theirs), 5)
        b.board.accept_takeback(gid)
        assert server.wait_for(lambda: server.games[gid].ply() == 0, 5)
