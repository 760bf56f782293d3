"""``lichessbot bench bot``: a soak of the bot service against the fake lichess server on 127.0.0.1.

N concurrent bullet games (default 8 at 1+0) with the server as strict as lichess: an account request
quota (assumed ``--quota 10,30``: 10 requests/s refilled, 30 at once; lichess publishes no numbers),
injected 429s (HTML, no Retry-After) on moves, chat, challenge answers and game actions, dropped event
and game streams, and missed ``gameFinish`` events. The bot's real service, game, chat and client code
runs; the *engine is a fast fake* (a random legal move after thinking ``clock/50``, at most 0.5 s), since
8 searches on 2 cores would measure the CPU, not the bot. The opponents are random movers thinking
0.3-1.2 s a move. The soak stops by itself after ``--max-seconds`` (default 240).

With ``--matchmaking`` the bot also challenges ``--bots`` online bots of the server while it plays
(default 10, of different ratings and habits: accept, decline with a reason, never answer, accept
sometimes; see :mod:`lichessbot.play.bench_matchmaking`), takes challenges and rematch offers from humans
and bots every 30 s under the challenge rules (a slot kept for humans, one game per opponent), with
lichess's daily limit set to ``--daily-limit`` challenges (a JSON 429 pausing matchmaking 30 s); half of
``--games`` human games start it. It runs the whole ``--max-seconds``, then stops the bot (Ctrl-C once) and
waits for its games to end. Also reported: challenges sent (created, accepted, declined by reason,
canceled, refused with 429), challenges received and our answers, games played, and the peaks of games
at once against the limits (a breach fails the soak).

Reported: results, games the bot lost on time or by a fault (not finished, aborted, noStart), illegal
posts (moves the server refused as illegal or out of turn), whether every slot was freed, requests
deferred and dropped by the pacer, 429s answered. Exit status 0 when there are no time losses, faults or
illegal posts and every slot is free; else 1.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import Counter
from typing import Any

import chess

from lichessbot.errors import LichessbotError
from lichessbot.fakelichess import FakeLichess, random_mover
from lichessbot.lichess.client import ClientSettings
from lichessbot.play import bench_matchmaking
from lichessbot.play.bench_matchmaking import Figures
from lichessbot.play.botrun import BotRun, StandInThinker, stand_in_decision
from lichessbot.play.thinker import Decision

__all__ = ["add_arguments", "run", "soak"]


class _FakeEngineThinker(StandInThinker):
    """Random legal move after ``clock.time / 50`` ms (at most 0.5 s; 0.1 s without a clock), roughly what a
    bullet engine spends (:class:`~lichessbot.fakelichess.StandInThinker` otherwise)."""

    def think(self, board: chess.Board, clock: Any, *, first_moves_unclocked: bool = False,
              time_left_s: float | None = None) -> Decision:
        spend = 0.1 if clock is None else min(0.5, max(0.01, clock.time / 50_000))
        time.sleep(spend)
        move = self.rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
        return stand_in_decision(move, cp=0, nodes=1, nps=1.0, depth=1.0, seconds=spend, reason="fake engine")


class _FakeEngine:
    name = "fake-random"

    def __init__(self) -> None:
        self._n = 0

    def new_game(self, game_id: str | None = None) -> _FakeEngineThinker:
        self._n += 1
        return _FakeEngineThinker(self._n)


def soak(games: int = 8, base: int = 60, inc: int = 0, quota: tuple[float, float] = (10.0, 30.0),
         max_seconds: float = 240.0, seed: int = 1, matchmaking: bool = False,
         daily_limit: int | None = None, bots: int = 10) -> Figures:
    """Run the soak; returns the figures (see the module docstring)."""
    rng = random.Random(seed)
    settings = ClientSettings(timeout=5.0, move_timeout=3.0, stream_read_timeout=3.0, backoff=0.2, max_backoff=2.0)
    config = {"challenge": {"concurrency": games}, "playing_check_period": 5, "abort_time": 30,
              "chat": {"eval_every": 5}}
    started = time.monotonic()
    state = tempfile.TemporaryDirectory(prefix="lichessbot-soak-")
    if matchmaking:
        config.update(bench_matchmaking.config(games, base, inc, state.name))
    with state, FakeLichess(keepalive=1.0, opponent_delay=lambda: rng.uniform(0.3, 1.2), quota=quota) as server:
        server.skip_game_finish = 2
        if matchmaking:
            bench_matchmaking.start(server, bots, rng, daily_limit)
        with BotRun(server, _FakeEngine(), config, settings=settings) as bot:
            ids = [server.challenge(challenger=f"player{i}", limit=base, increment=inc, speed="bullet",
                                    bot_color=("white", "black")[i % 2], opponent=random_mover(seed * 100 + i))
                   for i in range(max(1, games // 2) if matchmaking else games)]
            received: list[str] = []
            kinds = ["move", "chat", "playing", "action", "move", "chat"]
            n_429, next_429, next_game_drop, next_event_drop, next_incoming = 0, 3.0, 5.0, 12.0, 15.0
            while time.monotonic() - started < max_seconds:
                done = all(i in server.games and server.games[i].over for i in ids) and not matchmaking
                if done or (time.monotonic() - started > 20 and not server.games):
                    break
                t = time.monotonic() - started
                if t >= next_429:
                    server.fail_next(kinds[n_429 % len(kinds)], 429)
                    n_429 += 1
                    next_429 += 4.0
                if t >= next_game_drop:
                    live = [g for g in ids if g in server.games and not server.games[g].over]
                    if live:
                        server.drop_game_streams(rng.choice(live))
                    next_game_drop += 6.0
                if t >= next_event_drop:
                    server.drop_event_streams()
                    next_event_drop += 20.0
                if matchmaking and t >= next_incoming:
                    received.append(bench_matchmaking.incoming(server, len(received), base, inc, rng))
                    next_incoming += 30.0
                time.sleep(0.2)
            if matchmaking:
                bot.service.stop()  # Ctrl-C once: no new challenges, the running games are played out
                server.wait_for(lambda: all(g.over for g in server.games.values()), 120)
                ids = list(server.games)
            finished = all(i in server.games and server.games[i].over for i in ids)
            slots_deadline = time.monotonic() + 15
            while time.monotonic() < slots_deadline and (bot.service.busy() or bot.service.games):
                time.sleep(0.2)
            busy, threads = bot.service.busy(), len(bot.service.games)
            adm = bot.service.admission
            held = {"running": sorted(adm.running), "pending": sorted(adm.pending)}
            session, chat = bot.client.session, bot.service.chat
            figures: Figures = {
                "games": games, "tc": f"{base}+{inc}", "finished": finished,
                "seconds": round(time.monotonic() - started, 1),
                "results": Counter(), "time_losses": 0, "faults": 0, "illegal_posts": 0,
                "slots_freed": busy == 0 and threads == 0, "busy_at_end": busy, "held_at_end": held,
                "requests_deferred": session.pacer.deferred,
                "requests_dropped": session.pacer.dropped + (chat.dropped if chat else 0),
                "chat_dropped_in_429_pause": session.dropped_in_pause,
                "deferred_in_429_pause": session.deferred_in_pause,
                "rate_limited_429": sum(server.rate_limited.values()), "moves_posted_in_pause": session.posted_in_pause,
                "requests": len(server.requests), "moves": 0,
            }
            if bot.service.matchmaker is not None:
                figures["matchmaking"] = bench_matchmaking.figures(server, bot.service, received)
            for gid in ids:
                g = server.games.get(gid)
                if g is None:
                    figures["faults"] += 1
                    figures["results"]["never started"] += 1
                    continue
                lost = g.winner is not None and g.winner != g.bot_color
                figures["results"][f"{g.status}{' lost' if lost else ' won' if g.winner else ''}"] += 1
                if g.status == "outoftime" and lost:
                    figures["time_losses"] += 1
                    figures.setdefault("time_loss_games", []).append(f"{gid} ply {g.ply()}")
                figures["faults"] += int(not g.over or g.status in ("aborted", "noStart"))
                figures["illegal_posts"] += sum(1 for _, _, st in g.rejected_posts if st == 400)
                figures["moves"] += len(g.posts)
    return figures


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games", type=int, default=8, help="concurrent games (default 8)")
    parser.add_argument("--tc", default="60+0", help="bullet time control BASE+INC in seconds (default 60+0)")
    parser.add_argument("--quota", default="10,30",
                        help="the server's account quota RATE,BURST (requests/s, requests; default 10,30, assumed)")
    parser.add_argument("--max-seconds", type=float, default=240.0, help="stop the soak after this long (default 240)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--matchmaking", action="store_true",
                        help="the bot also challenges the server's online bots while it plays")
    parser.add_argument("--daily-limit", type=int, default=None,
                        help="with --matchmaking: challenges lichess allows before its daily-limit 429 (default none)")
    parser.add_argument("--bots", type=int, default=10,
                        help=f"with --matchmaking: online bots on the server (1 to {len(bench_matchmaking.ROSTER)}, "
                             "default 10)")


def run(args: argparse.Namespace) -> int:
    try:
        base, inc = (int(x) for x in args.tc.split("+"))
        rate, burst = (float(x) for x in args.quota.split(","))
    except ValueError:
        raise LichessbotError(f"--tc {args.tc!r} / --quota {args.quota!r}: expected BASE+INC and RATE,BURST") from None
    if not 1 <= args.bots <= len(bench_matchmaking.ROSTER):
        raise LichessbotError(f"--bots {args.bots}: 1 to {len(bench_matchmaking.ROSTER)}")
    print(f"soak: {args.games} games at {base}+{inc} against the fake lichess on 127.0.0.1; quota {rate:g}/s burst "
          f"{burst:g}; engine: fake (random legal move after clock/50, <= 0.5 s); opponents: random, 0.3-1.2 s a move")
    f = soak(args.games, base, inc, (rate, burst), args.max_seconds, args.seed, args.matchmaking, args.daily_limit,
             args.bots)
    print(f"finished: {f['finished']} in {f['seconds']} s; moves posted {f['moves']}; requests {f['requests']}")
    print("results: " + ", ".join(f"{k} {v}" for k, v in sorted(f["results"].items())))
    print(f"bot time losses {f['time_losses']}; bot faults {f['faults']}; illegal posts {f['illegal_posts']}; "
          f"slots freed {f['slots_freed']} (busy at end {f['busy_at_end']})")
    if not f["slots_freed"]:
        print(f"slots held at the end: {f['held_at_end']}")
    if f.get("time_loss_games"):
        print("lost on time: " + ", ".join(f["time_loss_games"]))
    print(f"requests deferred {f['requests_deferred']}, dropped {f['requests_dropped']} (request budget short); chat "
          f"lines dropped while chat was paused by a 429: {f['chat_dropped_in_429_pause']}; calls that waited out a "
          f"429 pause: {f['deferred_in_429_pause']}")
    print(f"429s answered {f['rate_limited_429']}; moves posted during a 429 pause (at their deadline) "
          f"{f['moves_posted_in_pause']}")
    mm = f.get("matchmaking")
    if mm is not None:
        def line(d: Figures) -> str:
            return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"
        print(f"games played {mm['played']['games']}: {line(mm['played'])}; games against bots counted today "
              f"{mm['bot_games_counted_today']}")
        print(f"challenges sent: {line(mm['sent'])}; declined by reason: {line(mm['declined_by_reason'])}; "
              f"settings drawn: {line(mm['settings_drawn'])}")
        print(f"challenges received: {sum(mm['received'].values())}: {line(mm['received'])}")
        print(f"most games at once: {line(mm['peaks'])} (limits: {line(mm['limits'])}); concurrency breach: "
              f"{', '.join(mm['breaches']) or 'none'}")
    ok = f["time_losses"] == 0 and f["faults"] == 0 and f["illegal_posts"] == 0 and f["slots_freed"] and f["finished"]
    ok = ok and not (mm or {}).get("breaches")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1
