"""The status page: the real server on 127.0.0.1 (a free port), real HTTP requests, a whole game against
the test server, and a real browser (Debian's chromium; skipped when absent)."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import chess
import pytest

from lichessbot.config import parse_config
from lichessbot.status import GameSnapshot, LiveSearch, PlyEval, SearchLine, StatusHub
from lichessbot.status.server import StatusServer
from tests.browser import Browser
from tests.fake_lichess import BotRun, FakeLichess, StandInEngine, mate_or_random, resign_after

TOKEN = "lip_Secret0Token1ForStatusTests"
MATED_IN_ONE = "8/8/8/6r1/5q2/6k1/8/7K w - - 0 1"


def _get(url: str, timeout: float = 5) -> tuple[int, str, str]:
    """(status, content type, body) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read().decode()


def _snapshot(**kw) -> GameSnapshot:
    moves = ("e2e4", "e7e5", "g1f3")
    live = LiveSearch(ply=3, pondering=False, done=False, elapsed=1.5, nodes=1234, nps=820.0, depth=5.2, seldepth=9,
                      cp=31, mate=None, wdl=(0.35, 0.5, 0.15),
                      lines=(SearchLine("b8c6", 900, 0.41, 0.052, 0.5, ("b8c6", "f1b5", "a7a6")),
                             SearchLine("g8f6", 300, 0.22, 0.031, 0.48, ("g8f6",))))
    base = dict(game_id="abcd1234", url="https://lichess.org/abcd1234", white="alice", black="lichessbot",
                white_rating=1500, black_rating=2000, our_color="black", speed="blitz", rated=True,
                moves=moves, wtime=170_000, btime=175_500, winc=2000, binc=2000, clock_at=time.time(),
                clock_running=True, evals=(PlyEval(1, -20, None, "search"),), live=live)
    base.update(kw)
    return GameSnapshot(**base)


@pytest.fixture
def page():
    hub = StatusHub()
    hub.publish_service({"username": "lichessbot", "engine": "tiny", "games_running": 1})
    with StatusServer(hub, "127.0.0.1", 0) as server:
        yield hub, server


def test_the_server_listens_on_127_0_0_1_and_a_free_port_by_default(page):
    _, server = page
    assert server.url.startswith("http://127.0.0.1:") and server.port > 0
    assert parse_config({}).status.enabled is False and parse_config({}).status.host == "127.0.0.1"


def test_status_and_game_json_carry_the_overview_moves_clocks_and_live_search(page):
    hub, server = page
    hub.publish_game(_snapshot())
    code, ctype, body = _get(server.url + "/api/status")
    st = json.loads(body)
    assert code == 200 and ctype.startswith("application/json")
    assert st["service"]["username"] == "lichessbot" and st["service"]["uptime_s"] >= 0
    assert [g["id"] for g in st["games"]] == ["abcd1234"] and st["games"][0]["result"] == "*"
    assert [g["id"] for g in json.loads(_get(server.url + "/api/games")[2])] == ["abcd1234"]
    g = json.loads(_get(server.url + "/api/games/abcd1234")[2])
    assert g["san"] == ["e4", "e5", "Nf3"] and g["turn"] == "black"
    assert g["clock"]["btime_ms"] == 175_500 and g["clock"]["running"] is True
    assert g["live"]["lines"][0]["pv_san"] == ["Nc6", "Bb5", "a6"] and g["live"]["lines"][0]["visits"] == 900
    assert g["board_svg"].startswith("<svg") and "evalgraph" in g["eval_svg"]
    assert _get(server.url + "/api/games/nope")[0] == 404


def test_board_eval_and_post_game_svgs(page):
    hub, server = page
    hub.publish_game(_snapshot(status="mate", winner="black", over=True, clock_running=False,
                               white="<script>x</script>"))
    for name in ("board", "eval", "summary"):
        code, ctype, body = _get(f"{server.url}/api/games/abcd1234/{name}.svg")
        assert code == 200 and ctype.startswith("image/svg+xml") and body.startswith("<svg")
    summary = _get(server.url + "/api/games/abcd1234/summary.svg")[2]
    assert "0-1 (mate)" in summary and "&lt;script&gt;" in summary and "<script>" not in summary


def test_the_event_stream_sends_status_and_game_and_again_on_a_change(page):
    hub, server = page
    hub.publish_game(_snapshot())
    events: list[tuple[str, dict]] = []
    with urllib.request.urlopen(server.url + "/api/events?game=abcd1234", timeout=5) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        kind = None
        threading.Timer(0.3, lambda: hub.publish_game(_snapshot(moves=("e2e4", "e7e5", "g1f3", "b8c6")))).start()
        while len(events) < 4:
            line = r.readline().decode().strip()
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                events.append((kind, json.loads(line[6:])))
    assert [k for k, _ in events] == ["status", "game", "status", "game"]
    assert events[3][1]["san"][-1] == "Nc6"


def test_finished_games_beyond_the_limit_are_dropped_oldest_first():
    hub = StatusHub(keep_finished=2)
    for i in range(4):
        hub.publish_game(_snapshot(game_id=f"g{i}", over=True))
    hub.publish_game(_snapshot(game_id="running"))
    assert [g.game_id for g in hub.games()] == ["g2", "g3", "running"]


def test_a_whole_game_is_published_and_the_page_shows_no_token():
    with FakeLichess(token=TOKEN) as server:
        with BotRun(server, StandInEngine(), {"status": {"enabled": True, "port": 0}}) as bot:
            game = bot.play(fen=MATED_IN_ONE, opponent=mate_or_random(), limit=60, increment=1)
            url = bot.service.status_server.url
            assert server.wait_for(lambda: (s := bot.service.status.game(game.id)) is not None and s.over, 10)
            st = _get(url + "/api/status")[2]
            g = json.loads(_get(f"{url}/api/games/{game.id}")[2])
            texts = [st, json.dumps(g), _get(f"{url}/api/games/{game.id}/summary.svg")[2], _get(url + "/")[2]]
        assert bot.service.status_server._thread is not None and not bot.service.status_server._thread.is_alive()
    overview = json.loads(st)
    assert overview["service"]["engine"] == "stand-in" and overview["games"][0]["status"] == "mate"
    assert overview["challenges"]["accepted"] == 1 and overview["challenges"]["recent"][0]["challenger"] == "alice"
    assert overview["service"]["requests"]["dropped"] == 0 and overview["service"]["requests"]["paused"] == {}
    assert overview["service"]["results_today"] == {"win": 0, "draw": 0, "loss": 1}  # mated
    assert g["moves"][0] == "h1g1" and g["our_color"] == "white" and g["evals"][0]["cp"] == 12
    assert g["clock"]["winc_ms"] == 1000
    assert all(TOKEN not in t for t in texts)


def test_the_eval_graph_is_saved_as_svg_next_to_the_pgn(tmp_path):
    with FakeLichess(token=TOKEN) as server:
        with BotRun(server, StandInEngine(), {"pgn_directory": str(tmp_path)}) as bot:
            bot.play(fen=MATED_IN_ONE, opponent=mate_or_random(), limit=60, increment=1)
            assert server.wait_for(lambda: list(tmp_path.glob("*.svg")), 10)
    pgn, svg = next(tmp_path.glob("*.pgn")), next(tmp_path.glob("*.svg"))
    assert svg.stem == pgn.stem and 'class="evalgraph"' in svg.read_text() and "<polyline" in svg.read_text()


def test_the_engine_thinker_publishes_its_live_search(tmp_path):
    from lichessbot.thinker.engine import Engine
    from tests.tinynet import build_tiny_onnx

    net = build_tiny_onnx(tmp_path / "tiny.onnx", seed=3)
    cfg = parse_config({"engine": {"network": str(net), "backend": "cpu", "threads": 1,
                                   "search": {"minibatch_size": 8}}})
    with Engine(cfg, nodes=64) as engine:
        thinker = engine.new_game("g1")
        seen: list[LiveSearch] = []
        thinker.on_live = seen.append
        board = chess.Board()
        board.push_uci("e2e4")
        decision = thinker.think(board, None)
        thinker.close()
    assert seen and seen[-1].done and not seen[0].done and seen[-1].ply == 1
    assert seen[-1].lines[0].move == decision.move.uci() and seen[-1].nodes >= 64
    assert sum(line.visits for line in seen[-1].lines) > 0


CHROMIUM = Browser.find()


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
@pytest.mark.slow
def test_a_real_browser_renders_the_game_view_and_follows_the_event_stream(page, tmp_path):
    hub, server = page
    hub.publish_game(_snapshot(clock_at=time.time() - 60))  # lichess's clocks read a minute ago
    with Browser(CHROMIUM, str(tmp_path / "profile")) as browser:
        browser.open(server.url + "/games/abcd1234")
        assert browser.wait_for("document.querySelector('#search tbody tr') !== null")
        text = browser.eval("document.body.innerText")
        assert "alice vs lichessbot" in text and "1. e4 e5 2. Nf3" in text
        assert "Nc6\t900\t41.0\t0.052\t50.0\tNc6 Bb5 a6" in text      # the live search table, SAN
        assert browser.eval("document.querySelector('#board svg') !== null")
        assert browser.eval("document.querySelector('#graph svg.evalgraph polyline') !== null")
        assert browser.eval("document.getElementById('clock-top').textContent") == "2:50"   # white, not running
        assert browser.eval("document.getElementById('clock-bottom').classList.contains('run')")  # ours, black
        ours = browser.eval("document.getElementById('clock-bottom').textContent")
        assert ours[:3] in ("1:5", "1:4")  # 2:55.5, less the minute since lichess sent it
        # a new move arrives by the event stream, without a reload
        hub.publish_game(_snapshot(moves=("e2e4", "e7e5", "g1f3", "b8c6"), live=LiveSearch(
            ply=4, pondering=False, done=True, elapsed=0.1, nodes=10, nps=100.0, depth=1.0, seldepth=2, cp=5,
            mate=None, wdl=(0.3, 0.5, 0.2), lines=(SearchLine("f1b5", 10, 0.3, 0.01, 0.5, ("f1b5",)),))))
        assert browser.wait_for("document.getElementById('moves').textContent.endsWith('Nf3 Nc6')")
        assert browser.wait_for("document.querySelector('#search tbody td').textContent === 'Bb5'")
        browser.screenshot(str(tmp_path / "game.png"))
        assert (tmp_path / "game.png").stat().st_size > 10_000
        browser.open(server.url + "/")
        assert browser.wait_for("document.querySelector('#games tbody a') !== null")
        assert browser.eval("document.querySelector('#games tbody a').getAttribute('href')") == "/games/abcd1234"
        assert "lichessbot" in browser.eval("document.getElementById('service').innerText")


@pytest.mark.slow
def test_a_stalled_or_closed_browser_never_slows_the_games(tmp_path):
    """Event streams nobody reads (and one closed at once) while the bot plays a whole game: the game
    runs as usual, and a reader coming late gets the latest state, not a backlog."""
    import socket

    with FakeLichess(token=TOKEN) as server:
        with BotRun(server, StandInEngine(), {"status": {"enabled": True, "port": 0}}) as bot:
            port = bot.service.status_server.port
            request = b"GET /api/events?game=g0000001 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            stalled = []
            for _ in range(4):
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.sendall(request)
                stalled.append(s)
            closed = socket.create_connection(("127.0.0.1", port), timeout=5)
            closed.sendall(request)
            closed.close()
            t0 = time.monotonic()
            game = bot.play(opponent=resign_after(60), limit=60, increment=0, timeout=60)
            took = time.monotonic() - t0
            assert server.wait_for(lambda: (s := bot.service.status.game(game.id)) is not None and s.over, 10)
            with urllib.request.urlopen(f"{bot.service.status_server.url}/api/events?game={game.id}", timeout=5) as r:
                lines = [r.readline().decode() for _ in range(6)]
            first_game = json.loads(next(x for x in lines[lines.index("event: game\n"):] if x.startswith("data: "))[6:])
            for s in stalled:
                s.close()
    plies = len(game.board.move_stack)
    assert game.status == "resign" and plies >= 60 and took < 10  # about 2 s here
    assert first_game["over"] and len(first_game["moves"]) == plies


@pytest.fixture(scope="module")
def real_engine(tmp_path_factory):
    from lichessbot.thinker.engine import Engine
    from tests.tinynet import build_tiny_onnx

    net = build_tiny_onnx(tmp_path_factory.mktemp("net") / "tiny.onnx", seed=3)
    cfg = parse_config({"engine": {"network": str(net), "backend": "cpu", "threads": 1,
                                   "search": {"minibatch_size": 8}}})
    with Engine(cfg) as engine:
        yield engine


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")
@pytest.mark.slow
def test_a_real_browser_follows_a_game_the_bot_plays(real_engine, tmp_path):
    """The page while the bot (the real engine, tiny net) plays the test server: the board, the live
    search and the graph appear and update; the screenshot is kept (``LICHESSBOT_TEST_ARTIFACTS``)."""
    import os
    from pathlib import Path

    artifacts = Path(os.environ.get("LICHESSBOT_TEST_ARTIFACTS") or tmp_path)
    artifacts.mkdir(parents=True, exist_ok=True)
    with FakeLichess(token=TOKEN) as server:
        with BotRun(server, real_engine, {"status": {"enabled": True, "port": 0}}) as bot:
            gid = server.challenge(limit=30, increment=0, bot_color="white")
            url = bot.service.status_server.url
            assert server.wait_for(lambda: bot.service.status.game(gid) is not None, 10)
            with Browser(CHROMIUM, str(tmp_path / "profile")) as browser:
                browser.open(f"{url}/games/{gid}")
                assert browser.wait_for("document.querySelector('#board svg') !== null")
                assert browser.wait_for("document.querySelector('#search tbody tr') !== null", 20)
                head = browser.eval("document.getElementById('search-head').textContent")
                moves = browser.eval("document.getElementById('moves').textContent")
                assert browser.wait_for(f"document.getElementById('search-head').textContent !== {json.dumps(head)}")
                assert browser.wait_for(f"document.getElementById('moves').textContent !== {json.dumps(moves)}", 20)
                assert browser.wait_for("document.querySelector('#graph svg.evalgraph circle') !== null", 20)
                assert "nodes" in browser.eval("document.getElementById('search-head').textContent")
                html = browser.eval("document.documentElement.outerHTML")
                browser.screenshot(str(artifacts / "status-game.png"))
    assert TOKEN not in html
    assert (artifacts / "status-game.png").stat().st_size > 10_000


def test_the_session_lists_its_429_pauses_for_the_page():
    from lichessbot.lichess.client import BotSession, ClientSettings

    session = BotSession(TOKEN, ClientSettings())
    assert session.pauses() == {}
    session._pause("all requests but moves", 30.0)  # what a 429 does
    pauses = session.pauses()
    assert list(pauses) == ["all requests but moves"] and 29 < pauses["all requests but moves"] <= 30
    session.close()
