"""``python -m devtools.soak`` (developer-only, from a clone): a soak of the bot service against the test server on
127.0.0.1 (:mod:`devtools.lila`: the embedded lichess with fault injection).

N concurrent games (default 8 at 1+0; ``--tc 60+0,120+1`` gives the clocks in turn) with the server as
strict as lichess: an account request quota (assumed ``--quota 10,30``: 10 requests/s refilled, 30 at
once), injected 429s (lila's JSON body with ``ratelimit.seconds`` 5, no Retry-After, one every 4 s) on
every endpoint class in turn (moves, chat, the playing list, game actions, challenge answers, the
account), dropped event and game streams, missed ``gameFinish`` events, ``--latency MIN,MAX`` ms added
to every answer, and with ``--restart SECONDS`` a restart of the bot in the middle (a first signal, 2 s
later a second one: the service exits without resigning; then a new service with a new client on the
same state directory must find the games and finish them). ``--bot-games N``: N of the games are bots'
challenges, and the records file must count exactly N games against bots at the end (the count survives
the restart, no game counted twice). The bot's real service, game, chat and client code runs; the
*engine is a fast fake* (a random legal move after thinking ``clock/50``, at most 0.5 s), since 8
searches on 2 cores would measure the CPU, not the bot. The opponents are random movers thinking 0.3-1.2
s a move that resign after 160 plies. The soak stops by itself after ``--max-seconds`` (default 240).

With ``--matchmaking`` the bot also challenges ``--bots`` online bots of the server while it plays
(default 10, of different ratings and habits: accept, decline with a reason, never answer, accept
sometimes; see :mod:`devtools.soak_matchmaking`), takes challenges and rematch offers from humans
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
import contextlib
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from devtools import soak_matchmaking as bench_matchmaking
from devtools.lila import (
    BotRun,
    FakeEngine,
    FakeLichess,
    random_mover,
    resign_after,
)
from devtools.soak_lila import report, soak_lila
from devtools.soak_matchmaking import Figures
from lichessbot.errors import LichessbotError
from lichessbot.lichess.client import ClientSettings

__all__ = ["add_arguments", "main", "run", "soak"]


#: Every endpoint class the soak answers with 429s in turn (devtools.lila.faults.request_kind).
KINDS_429 = ("move", "chat", "playing", "action", "challenge", "account")
#: ``ratelimit.seconds`` of the injected 429s (lila's JSON body; an HTML 429's one-minute pause is pinned by
#: tests/lichess/test_lichess_client.py): one every 4 s with a minute each would pause every request but moves
#: for the whole soak.
LIMIT_SECONDS = 5
#: Plies after which an opponent resigns: a game with an increment as long as a random mover's thought
#: (2+1) would never end on time (ours; about 2 minutes of play).
OPPONENT_RESIGNS = 160
#: Seconds between the first signal of a restart and the second (the grace ``docker stop`` gives; ours).
RESTART_GRACE = 2.0


def _records(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def soak(games: int = 8, base: int = 60, inc: int = 0, quota: tuple[float, float] = (10.0, 30.0),
         max_seconds: float = 240.0, seed: int = 1, matchmaking: bool = False,
         daily_limit: int | None = None, bots: int = 10, *, tcs: list[tuple[int, int]] | None = None,
         latency: tuple[float, float] | None = None, restart_at: float | None = None,
         bot_games: int = 0) -> Figures:
    """Run the soak; returns the figures (see the module docstring). ``tcs``: the clocks (base, increment
    in seconds) given to the games in turn (default ``[(base, inc)]``); ``latency``: seconds the server adds
    to every answer (min, max); ``restart_at``: seconds into the soak when the bot is restarted (a first
    signal, ``RESTART_GRACE`` s later a second one, then a new service with a new client on the same state
    directory); ``bot_games``: that many of the games are challenges from bots (counted in the records)."""
    rng = random.Random(seed)
    tcs = tcs or [(base, inc)]
    settings = ClientSettings(timeout=5.0, move_timeout=3.0, stream_read_timeout=3.0, backoff=0.2, max_backoff=2.0)
    config: dict[str, Any] = {"challenge": {"concurrency": games}, "playing_check_period": 5, "abort_time": 30,
                              "chat": {"eval_every": 5}}
    started = time.monotonic()
    state = tempfile.TemporaryDirectory(prefix="lichessbot-soak-")
    config["state_directory"] = state.name
    if matchmaking:
        config.update(bench_matchmaking.config(games, base, inc, state.name))
    with state, FakeLichess(keepalive=1.0, opponent_delay=lambda: rng.uniform(0.3, 1.2), quota=quota) as server, \
            contextlib.ExitStack() as stack:
        server.skip_game_finish = 2
        server.latency = latency
        server.limit_seconds = LIMIT_SECONDS
        if matchmaking:
            bench_matchmaking.start(server, bots, rng, daily_limit)
        bot = stack.enter_context(BotRun(server, FakeEngine(), config, settings=settings))
        ids = []
        for i in range(max(1, games // 2) if matchmaking else games):
            b, n = tcs[i % len(tcs)]
            ids.append(server.challenge(challenger=f"player{i}", limit=b, increment=n,  # short clocks count as bullet
                                        speed="bullet" if b + 40 * n < 180 else None,
                                        title="BOT" if i < bot_games else None,
                                        bot_color=("white", "black")[i % 2],
                                        opponent=resign_after(OPPONENT_RESIGNS, random_mover(seed * 100 + i))))
        received: list[str] = []
        restarts = 0
        n_429, next_429, next_game_drop, next_event_drop, next_incoming = 0, 3.0, 5.0, 12.0, 15.0
        while time.monotonic() - started < max_seconds:
            done = all(i in server.games and server.games[i].over for i in ids) and not matchmaking
            if done or (time.monotonic() - started > 20 and not server.games):
                break
            t = time.monotonic() - started
            if restart_at is not None and t >= restart_at and not restarts:
                restarts += 1
                bot.service.stop()  # SIGTERM: no new games, the running ones play on
                time.sleep(RESTART_GRACE)
                bot.service.quit()  # the second signal (or the kill): exit, no resignation
                bot.join(30)
                bot.client.close()
                bot = stack.enter_context(BotRun(server, FakeEngine(), config, settings=settings))  # a new process
            if t >= next_429:
                server.fail_next(KINDS_429[n_429 % len(KINDS_429)], 429)
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
        records = _records(Path(state.name) / "matchmaking_state.json")
        bot_error = None if bot.error is None else f"{type(bot.error).__name__}: {bot.error}"
        figures: Figures = {
            "games": games, "tc": ", ".join(f"{b}+{n}" for b, n in tcs), "finished": finished,
            "seconds": round(time.monotonic() - started, 1),
            "results": Counter(), "time_losses": 0, "faults": 0, "illegal_posts": 0,
            "slots_freed": busy == 0 and threads == 0, "busy_at_end": busy, "held_at_end": held,
            "requests_deferred": session.pacer.deferred,
            "requests_dropped": session.pacer.dropped + (chat.dropped if chat else 0),
            "chat_dropped_in_429_pause": session.dropped_in_pause,
            "deferred_in_429_pause": session.deferred_in_pause,
            "rate_limited_429": sum(server.rate_limited.values()), "rate_limited_by_kind": dict(server.rate_limited),
            "moves_posted_in_pause": session.posted_in_pause,
            "requests": len(server.requests), "moves": 0, "restarts": restarts, "bot_error": bot_error,
            "bot_games_expected": bot_games if not matchmaking else None,
            "bot_games_recorded": len(records.get("bot_games", {})),
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
            # a game not finished, aborted, or resigned by the bot (the fake engine never resigns by score): lost
            # to a fault, e.g. a restart that resigns
            resigned = g.status == "resign" and lost
            figures["faults"] += int(not g.over or g.status in ("aborted", "noStart") or resigned)
            figures["illegal_posts"] += sum(1 for _, _, st in g.rejected_posts if st == 400)
            figures["moves"] += len(g.posts)
    return figures


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lila", action="store_true",
                        help="the long soak (devtools/soak_lila.py): --games games in all (100), "
                             "--concurrency at once (8), lila's rules, faults and limits at once")
    parser.add_argument("--concurrency", type=int, default=8, help="with --lila: games at once (default 8)")
    parser.add_argument("--drop", type=float, default=0.01,
                        help="with --lila: share of stream pushes that cut the stream instead (default 0.01)")
    parser.add_argument("--games", type=int, default=8,
                        help="concurrent games (default 8); with --lila: games in all (default 100)")
    parser.add_argument("--tc", default="60+0",
                        help="time controls BASE+INC in seconds, comma-separated, given to the games in turn "
                             "(default 60+0)")
    parser.add_argument("--latency", default=None,
                        help="MIN,MAX milliseconds the server adds to every answer (e.g. 50,150; default none)")
    parser.add_argument("--restart", type=float, default=None, metavar="SECONDS",
                        help="restart the bot this many seconds in: a first signal (no new games), "
                             f"{RESTART_GRACE:g} s later a second one (exit, no resignation), then a new service "
                             "with a new client on the same state directory")
    parser.add_argument("--bot-games", type=int, default=0,
                        help="this many of the games are challenges from bots: the records must count them "
                             "(default 0)")
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
    if args.lila:

        games = args.games if args.games != 8 else 100
        print(f"soak --lila: {games} games, {args.concurrency} at once, bullet to rapid, against the test server "
              f"answering as lila; {100 * args.drop:g} % of stream pushes cut; engine: fake (random legal move)")
        return 0 if report(soak_lila(games, args.concurrency, args.seed, args.max_seconds, args.drop)) else 1
    try:
        tcs = [(int(b), int(n)) for b, n in (tc.split("+") for tc in args.tc.split(","))]
        rate, burst = (float(x) for x in args.quota.split(","))
        latency = None if args.latency is None else tuple(float(x) / 1000 for x in args.latency.split(","))
    except ValueError:
        raise LichessbotError(f"--tc {args.tc!r} / --quota {args.quota!r} / --latency {args.latency!r}: expected "
                              "BASE+INC[,BASE+INC...], RATE,BURST and MIN,MAX") from None
    if latency is not None and len(latency) != 2:
        raise LichessbotError(f"--latency {args.latency!r}: expected MIN,MAX in milliseconds")
    if not 1 <= args.bots <= len(bench_matchmaking.ROSTER):
        raise LichessbotError(f"--bots {args.bots}: 1 to {len(bench_matchmaking.ROSTER)}")
    base, inc = tcs[0]
    restart = f"at {args.restart:g} s" if args.restart is not None else "none"
    print(f"soak: {args.games} games at {', '.join(f'{b}+{n}' for b, n in tcs)} against the test server on "
          f"127.0.0.1; quota {rate:g}/s burst {burst:g}; latency {args.latency or 'none'} ms; restart "
          f"{restart}; bot games {args.bot_games}; "
          "engine: fake (random legal move after clock/50, <= 0.5 s); opponents: random, 0.3-1.2 s a move")
    f = soak(args.games, base, inc, (rate, burst), args.max_seconds, args.seed, args.matchmaking, args.daily_limit,
             args.bots, tcs=tcs, latency=latency, restart_at=args.restart,
             bot_games=args.bot_games)
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
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(f["rate_limited_by_kind"].items()))
    print(f"429s answered {f['rate_limited_429']} ({kinds}); "
          f"moves posted during a 429 pause (at their deadline) {f['moves_posted_in_pause']}")
    expected = f["bot_games_expected"]
    if f["bot_error"]:
        print(f"the bot stopped with an error: {f['bot_error']}")
    print(f"restarts {f['restarts']}; games against bots in the records at the end {f['bot_games_recorded']} "
          f"(expected {expected if expected is not None else 'any'})")
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
    ok = ok and not f["bot_error"] and not (mm or {}).get("breaches")
    ok = ok and (expected is None or f["bot_games_recorded"] == expected)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m devtools.soak [flags]`` from a clone (a developer tool: not shipped in the package)."""
    parser = argparse.ArgumentParser(prog="python -m devtools.soak", description=__doc__.splitlines()[0])
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except LichessbotError as err:
        print(f"soak: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
