"""Ten scripted bot games against the test server, for diffing a refactor's behaviour: what lichess saw (posts,
chat, requests, the result) and the game's log lines, with timings and nps masked.

    python -m tests.capture.bot_games before.json   # then change the code, run again, diff the two files

Nine games use the stand-in engine (no network), one the real engine on a tiny net (1 thread, 24 nodes a
move, seed 3). Not a test: a developer's tool (it takes about 15 s).
"""

from __future__ import annotations

import io
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lichessbot.config import parse_config
from lichessbot.logs import configure_logging
from lichessbot.thinker.engine import Engine
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine, mate_or_random, resign_after, scripted, staller
from tests.tinynet import build_tiny_onnx

VOLATILE = {"timestamp", "time_s", "claim_in_s", "path", "seconds", "elapsed", "took_s", "error", "func_name", "nps",
            "bank_used_ms", "hard_max", "target", "time_ms"}
out: dict[str, Any] = {}


def run(name: str, config: dict[str, Any], play: Callable[[FakeLichess, BotRun], str], engine: Any = None,
        **server_kw: Any) -> None:
    """Play game ``name`` (``play`` starts it and returns its id) and keep what it left in :data:`out`."""
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="debug")
    with FakeLichess(token="lip_capture", **server_kw) as server:
        with BotRun(server, engine or StandInEngine(), config) as bot:
            gid = play(server, bot)
            g = server.games[gid]
            server.wait_for(lambda: g.over, 20)
            time.sleep(0.5)
    lines = []
    for line in buf.getvalue().splitlines():
        d = json.loads(line)
        event = d.get("event", "")
        if "game_id" not in d or event in ("game finished", "challenge") or "stream" in event:
            continue  # the game's own lines: the service's and the reader thread's come in any order
        lines.append({k: v for k, v in d.items() if k not in VOLATILE})
    out[name] = {"status": g.status, "winner": g.winner, "posts": g.posts, "rejected": g.rejected_posts,
                 "chat": sorted((r, re.sub(r"nps [0-9.]+k?", "nps N", t)) for r, t in g.chat),
                 "takebacks": g.takebacks,
                 "requests": sorted(p.replace(gid, "GID") for _, p, _ in server.requests
                                    if "/bot/game/" in p and "stream" not in p),
                 "log": lines}


def simple(**kw: Any) -> Callable[[FakeLichess, BotRun], str]:
    def play(server: FakeLichess, bot: BotRun) -> str:
        return bot.play(**kw).id
    return play


def takeback(server: FakeLichess, bot: BotRun) -> str:
    gid = server.challenge(opponent=resign_after(12), limit=120, increment=1)
    server.wait_for(lambda: gid in server.games, 10)
    g = server.games[gid]
    server.wait_for(lambda: g.ply() >= 4 and g.ply() % 2 == 1, 10)
    server.propose_takeback(gid)
    server.wait_for(lambda: not g.opp_takeback or g.over, 10)
    return gid


def chat_gone(server: FakeLichess, bot: BotRun) -> str:
    cid = server.challenge(opponent=scripted(["e7e5"]), challenger="carol")
    server.wait_for(lambda: cid in server.games and server.games[cid].ply() == 3, 10)
    server.say(cid, "!eval")
    server.say(cid, "!name", room="spectator", username="watcher")
    for text in ("!help", "!wait", "hello"):
        server.say(cid, text)
    server.wait_for(lambda: len(server.games[cid].chat) >= 7, 10)
    server.opponent_gone(cid, claim_in=0)
    return cid


def main(path: str) -> None:
    chat = {"chat": {"eval_room": "spectator", "eval_every": 1, "command_interval": 0}}  # every command answered
    run("mate", chat, simple(fen="8/8/8/6r1/5q2/6k1/8/7K w - - 0 1", opponent=mate_or_random(), limit=60,
                             increment=1))
    run("resign_after", chat, simple(opponent=resign_after(14), limit=60, increment=1))
    run("black", {}, simple(bot_color="black", opponent=resign_after(11), limit=60))
    run("offer_draw", {"draw_or_resign": {"offer_draw_enabled": True, "offer_draw_score": 100_000,
                                          "offer_draw_moves": 2}}, simple(opponent=resign_after(7)))
    run("resign", {"draw_or_resign": {"resign_enabled": True, "resign_score": 100_000, "resign_moves": 2}},
        simple(opponent=resign_after(40)))
    run("abort", {"abort_time": 1}, simple(opponent=staller()))
    run("corr", {}, simple(limit=None, days=3, opponent=resign_after(8)))
    run("takeback", {"max_takebacks_accepted": 1}, takeback, opponent_delay=0.3)
    run("chat_gone", chat, chat_gone)
    with tempfile.TemporaryDirectory() as tmp:
        net = build_tiny_onnx(Path(tmp) / "tiny.onnx", seed=3)
        cfg = parse_config({"engine": {"network": str(net), "backend": "cpu", "threads": 1,
                                       "search": {"minibatch_size": 8, "seed": 3}}})
        with Engine(cfg, nodes=24) as eng:
            run("real_engine", chat, simple(opponent=resign_after(14), limit=60, increment=1), engine=eng)
    Path(path).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print({k: (v["status"], len(v["posts"]), len(v["log"])) for k, v in out.items()})


if __name__ == "__main__":
    main(sys.argv[1])
