"""``python -m devtools.soak --lila`` (developer-only, from a clone): the long soak, the bot against the test
server answering as lila does (:mod:`devtools.lila`), everything at once.

``--games`` games (100) at most ``--concurrency`` (8) at once, bullet to rapid (1+0, 2+1, 3+0, 3+2, 8+0, in
turn), humans and bots: challenges to the bot from humans and bots while it has room, our own challenges to the
server's online bots (matchmaking, with lila's keepAliveStream; some bots accept just before our challenge
expires, while the ``gameStart`` lags a second behind the keep-alive stream), and an arena the bot is in (the
operator leaves it and joins it again in the middle: lila's pause after the withdrawal). While they play:
takebacks offered at random by the opponents (``max_takebacks_accepted`` 2; lila's rules: 200 whatever
happens, a ``yes`` without an offer is a proposal of ours), challengers who cancel at the moment the bot accepts
(lila answers the acceptance with a 404), lila's 429s (its JSON body) on every endpoint class in turn (moves,
chat, game actions, challenge creations, challenge answers, the playing list, the account), and ``--drop``
(1 %) of all pushes on the game and event streams cut the stream instead.

The engine is the soak's fast fake (a random legal move after clock/50, at most 0.5 s: the bot's service, games,
chat and client are real, the CPU is not measured); the opponents think 0.2-0.8 s a move and resign after 40 to
120 plies.

The figures: games played and their results; games aborted or lost by the bot's fault (lost on time, aborted,
noStart, resigned: the fake never resigns, the opponents resign); illegal posts (moves lila refused, takeback
proposals of ours, chat lines refused); slots held at the end; PGN files written against the games the bot
played; requests, 429s by class, streams cut. Exit 0 when there is no fault, no illegal post, every slot is free
and every PGN is written.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from devtools.lila import BotRun, FakeEngine, FakeLichess, random_mover, resign_after
from devtools.lila.matchmaking import ACCEPT
from devtools.soak_matchmaking import Figures
from lichessbot.lichess.client import ClientSettings

__all__ = ["KINDS", "TCS", "soak_lila"]

#: The clocks in turn (seconds): bullet, bullet, blitz, blitz, rapid (lila ``Speed``: limit + 40 x increment).
TCS = [(60, 0), (120, 1), (180, 0), (180, 2), (480, 0)]
#: Every endpoint class of lila answered with 429s in turn (devtools.lila.faults.request_kind).
KINDS = ("move", "chat", "action", "challenge", "answer", "playing", "account")


def _opponent(rng: random.Random, n: int) -> Any:
    return resign_after(rng.randrange(40, 121), random_mover(1000 + n))


def _late(_challenge: dict[str, Any]) -> str:
    """A bot that accepts 2.5 s after it got the challenge (ours expire after 3 s)."""
    time.sleep(2.5)
    return ACCEPT


def soak_lila(games: int = 100, concurrency: int = 8, seed: int = 1, max_seconds: float = 1500.0,
              drop: float = 0.01, engine: Any = None) -> Figures:
    """Run the soak (see the module docstring); returns its figures. ``engine``: the bot's engine (default the
    soak's fake)."""
    rng = random.Random(seed)
    started = time.monotonic()
    state = tempfile.TemporaryDirectory(prefix="lichessbot-soak40-")
    pgn_dir = Path(state.name) / "pgn"
    config: dict[str, Any] = {
        "state_directory": state.name, "pgn_directory": str(pgn_dir), "abort_time": 30,
        "playing_check_period": 5, "max_takebacks_accepted": 2, "chat": {"eval_every": 5},
        "challenge": {"concurrency": concurrency, "accept_bot": True, "max_simultaneous_games_per_user": 2,
                      "time_controls": ["bullet", "blitz", "rapid"], "queue_wait": 30},
        "matchmaking": {"allow_matchmaking": True, "allow_during_games": True, "challenge_timeout": 0,
                        "min_wait": 5, "challenge_expiry": 3, "challenge_initial_time": [60, 180],
                        "challenge_increment": [0, 2], "challenge_mode": "casual", "challenge_variant": "standard",
                        "decline_file": "matchmaking.json", "decline_hours": 0.01},
        "tournaments": {"max_arena_games": 1, "check_period": 3},
    }
    settings = ClientSettings(timeout=5.0, move_timeout=3.0, stream_read_timeout=3.0, backoff=0.2, max_backoff=2.0)
    with state, FakeLichess(keepalive=1.0, opponent_delay=lambda: rng.uniform(0.2, 0.8)) as server:
        server.limit_seconds = 3  # lila's JsonLimited body, a few seconds
        server.drop_rate = drop
        server._rng = random.Random(seed)
        server.answer_after, server.game_start_lag = 0.4, 1.0
        for name, rating in (("Accepts", 1900), ("Thinks", 2100)):
            server.add_bot(name, rating, player=lambda: _opponent(rng, rng.randrange(10_000)))
        # accepts just before our challenge expires (3 s), its gameStart a second late: only the keep-alive
        # stream's verdict keeps the bot from canceling (and lila from aborting the game)
        server.add_bot("Late", 2000, policy=_late, player=lambda: _opponent(rng, rng.randrange(10_000)))
        arena = server.add_arena(games=10_000, limit=60, increment=1, opponent=_opponent(rng, 0))
        config["tournaments"]["join"] = [arena]
        bot = BotRun(server, engine or FakeEngine(), config, settings=settings)
        n_in = n_429 = takebacks = canceled_at_accept = 0
        next_429, next_in, next_tb = 3.0, 0.5, 4.0
        arena_left = arena_back = False
        with bot:
            while time.monotonic() - started < max_seconds:
                t = time.monotonic() - started
                n_games = len(server.games)
                if n_games >= games:
                    break
                live = [g for g in server.games.values() if not g.over]
                if t >= next_in and len(live) < concurrency:
                    tc = TCS[n_in % len(TCS)]
                    is_bot = n_in % 3 == 1
                    cid = server.challenge(challenger=f"{'bot' if is_bot else 'player'}{n_in}",
                                           title="BOT" if is_bot else None, limit=tc[0], increment=tc[1],
                                           bot_color=("white", "black")[n_in % 2], opponent=_opponent(rng, n_in))
                    if n_in % 10 == 7:  # this challenger cancels at the moment the bot accepts
                        server.cancel_on_accept.add(cid)
                        canceled_at_accept += 1
                    n_in += 1
                    next_in = t + 1.0
                if t >= next_429:
                    server.fail_next(KINDS[n_429 % len(KINDS)], 429)
                    n_429, next_429 = n_429 + 1, t + 4.0
                if t >= next_tb:
                    playing = [g for g in live if g.tournament is None and g.ply() >= 4 and not g.bot_turn()]
                    if playing:
                        server.propose_takeback(rng.choice(playing).id)
                        takebacks += 1
                    next_tb = t + rng.uniform(3.0, 8.0)
                if not arena_left and n_games >= games // 3:
                    bot.service.commands.run(f"leave {arena}", "terminal")
                    arena_left = True
                elif arena_left and not arena_back and n_games >= games // 2:
                    bot.service.commands.run(f"join {arena}", "terminal")
                    arena_back = True
                time.sleep(0.2)
            # the games wanted were started: no new ones; the running ones are played out
            bot.service.commands.run("matchmaking off", "terminal")
            bot.service.commands.run(f"leave {arena}", "terminal")
            bot.service.commands.run("quit", "terminal")
            server.wait_for(lambda: all(g.over for g in server.games.values()), 300)
            bot.join(60)
        ids = list(server.games)
        figures: Figures = {
            "games": len(ids), "seconds": round(time.monotonic() - started, 1), "results": Counter(),
            "speeds": Counter(), "kinds": Counter(), "faults": 0, "fault_games": [], "illegal_posts": 0,
            "takebacks_offered": takebacks, "takebacks_accepted": 0, "takeback_proposals_of_ours": 0,
            "canceled_at_acceptance": canceled_at_accept, "games_aborted_by_our_cancel": server.aborted_by_cancel,
            "challenges_kept_alive": server.kept_alive, "rate_limited_by_kind": dict(server.rate_limited),
            "streams_dropped": server.streams_dropped, "requests": len(server.requests),
            "arena_calls": Counter(a for _, a, _ in server.arena_calls), "pause_refusals": server.pause_refusals,
            "slots_freed": bot.service.busy() == 0 and not bot.service.games,
            "pgn_written": 0, "pgn_expected": 0, "bot_error": None if bot.error is None else repr(bot.error)}
        pgn = "".join(p.read_text(encoding="utf-8") for p in pgn_dir.glob("*.pgn")) if pgn_dir.exists() else ""
        for gid in ids:
            g = server.games[gid]
            lost = g.winner is not None and g.winner != g.bot_color
            figures["results"][f"{g.status}{' lost' if lost else ' won' if g.winner else ''}"] += 1
            figures["speeds"][g.speed] += 1
            figures["kinds"]["arena" if g.tournament else "bot" if g.opponent_bot else "human"] += 1
            fault = (not g.over or g.status in ("aborted", "noStart") or (lost and g.status in ("outoftime", "resign")))
            if fault:
                figures["faults"] += 1
                figures["fault_games"].append(f"{gid} {g.status} ply {g.ply()}")
            figures["illegal_posts"] += sum(1 for _, _, st in g.rejected_posts if st == 400) + g.bot_proposals
            figures["takebacks_accepted"] += g.takebacks
            figures["takeback_proposals_of_ours"] += g.bot_proposals
            if g.over and g.ply() > 0:
                figures["pgn_expected"] += 1
                figures["pgn_written"] += f"/{gid}\"]" in pgn
        figures["illegal_posts"] += sum(1 for m, p, st in server.requests if p.endswith("/chat") and st == 400)
    return figures


def report(f: Figures) -> bool:
    """Print the figures; True when the soak holds (no fault, no illegal post, slots free, every PGN)."""
    def line(d: Any) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "none"
    print(f"games {f['games']} in {f['seconds']} s; speeds: {line(f['speeds'])}; opponents: {line(f['kinds'])}")
    print(f"results: {line(f['results'])}")
    print(f"games aborted or lost by the bot's fault {f['faults']} {f['fault_games']}; illegal posts "
          f"{f['illegal_posts']} (takeback proposals of ours {f['takeback_proposals_of_ours']}); slots freed "
          f"{f['slots_freed']}; PGN written {f['pgn_written']} of {f['pgn_expected']}")
    print(f"takebacks offered {f['takebacks_offered']}, accepted {f['takebacks_accepted']}; challengers who canceled "
          f"at the acceptance {f['canceled_at_acceptance']}; games lila aborted for a cancel of ours "
          f"{f['games_aborted_by_our_cancel']}; our challenges kept alive {f['challenges_kept_alive']}")
    print(f"429s by class: {line(f['rate_limited_by_kind'])}; streams cut {f['streams_dropped']}; requests "
          f"{f['requests']}; arena calls: {line(f['arena_calls'])}; joins refused for lila's pause "
          f"{f['pause_refusals']}")
    if f["bot_error"]:
        print(f"the bot stopped with an error: {f['bot_error']}")
    ok = (f["faults"] == 0 and f["illegal_posts"] == 0 and f["slots_freed"] and not f["bot_error"]
          and f["pgn_written"] == f["pgn_expected"] and f["games_aborted_by_our_cancel"] == 0)
    print("OK" if ok else "FAILED")
    return ok
