"""``lichessbot play --local`` end to end, as a person runs it: the command (a real process, the bot's real engine on
the tiny net), a person playing in chromium by real mouse clicks and drags on the page (Debian's chromium over the
DevTools protocol; skipped without it), and a script playing at the same time through the Board API with berserk.
Both games are saved as PGN with clocks and the bot's evals, and the page's export has them too.

The page's screenshot goes to ``$LICHESSBOT_TEST_ARTIFACTS/local-board.png`` (a temporary folder without it). The
README's picture: ``LICHESSBOT_TEST_ARTIFACTS=docs/images LICHESSBOT_PAGE_NET=default`` (the embedded network
instead of the tiny test net, so the bot's moves are its real ones)."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import berserk
import chess.pgn
import pytest
import requests

from tests.browser import Browser

#: A config file: local mode's challenge rules spelled out (a file's rules apply as written), and a bot that
#: thinks briefly (the tiny net is fast; a move's share of the clock is small).
CONFIG = """\
challenge:
  concurrency: 2
  variants: [standard, chess960, fromPosition]
engine:
  network: {net}
timeman:
  max_move_share: 0.002
  first_moves_think: 150
chat:
  eval_every: 1
"""


class LocalProcess:
    """``lichessbot play --local --port 0 --config ...`` in a process; ``url``, ``pgn_dir``, ``status`` from its
    start-up line."""

    def __init__(self, tmp: Path, net: Path | str, *extra: str, config: str = CONFIG) -> None:
        cfg = tmp / "local.yml"
        cfg.write_text(config.format(net=net), encoding="utf-8")
        env = dict(os.environ, XDG_DATA_HOME=str(tmp / "data"))
        self.proc = subprocess.Popen([sys.executable, "-m", "lichessbot.cli", "play", "--local", "--port", "0",
                                      "--config", str(cfg), *extra], stdout=subprocess.PIPE,
                                     stderr=open(tmp / "stderr.log", "w"), text=True, env=env)  # noqa: SIM115
        self.line = self.proc.stdout.readline()
        m = re.search(r"at (http://\S+) .*games saved in (.+); live status (http://\S+);", self.line)
        assert m, f"no start-up line: {self.line!r}; {(tmp / 'stderr.log').read_text()}"
        self.url, self.pgn_dir, self.status = m.group(1), Path(m.group(2)), m.group(3)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)  # once: no new games
        time.sleep(0.5)
        self.proc.send_signal(signal.SIGINT)  # twice: exit now
        return self.proc.wait(20)


def _center(b: Browser, sq: str) -> tuple[float, float]:
    r = b.eval(f"(() => {{ const r = document.querySelector('[data-square={sq}]').getBoundingClientRect();"
               "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
    return r[0], r[1]


def _mouse(b: Browser, kind: str, x: float, y: float) -> None:
    b.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", buttons=1 if kind != "mouseReleased"
           else 0, clickCount=1)


def click(b: Browser, sq: str) -> None:
    x, y = _center(b, sq)
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        _mouse(b, kind, x, y)


def click_at(b: Browser, selector: str) -> None:
    """A real click in the middle of ``selector``'s element, scrolled into view, once it stands still (a smooth
    scroll under way, as the page's after "New game", would move it away from the click)."""
    where = (f"(() => {{ const e = document.querySelector({selector!r}); e.scrollIntoView({{block: 'nearest'}});"
             "const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
    x, y = b.eval(where)
    for _ in range(40):
        time.sleep(0.05)
        now = b.eval(where)
        if now == [x, y]:
            break
        x, y = now
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        _mouse(b, kind, x, y)


def drag(b: Browser, frm: str, to: str) -> None:
    (x0, y0), (x1, y1) = _center(b, frm), _center(b, to)
    _mouse(b, "mouseMoved", x0, y0)
    _mouse(b, "mousePressed", x0, y0)
    for i in range(1, 9):
        _mouse(b, "mouseMoved", x0 + (x1 - x0) * i / 8, y0 + (y1 - y0) * i / 8)
    _mouse(b, "mouseReleased", x1, y1)


def my_move(b: Browser, plies: int, how, frm: str, to: str) -> None:
    """Wait for our turn at ``plies`` plies, play ``frm``-``to`` by ``how`` (click twice, or drag)."""
    assert b.wait_for(f"window.localGame.pos && window.localGame.pos.sans.length === {plies}"
                      " && window.localGame.pos.turn === window.localGame.color", 20), f"not our turn at ply {plies}"
    if how is click:
        click(b, frm)
        click(b, to)
    else:
        drag(b, frm, to)
    assert b.wait_for(f"window.localGame.pos.sans.length > {plies}", 10), f"{frm}{to} was not played"


def _script_game(url: str, result: dict) -> None:
    """A person's script on the Board API: four moves as black, then it resigns."""
    try:
        me = person_at(url, "lip_script")
        gid = me.challenges.create("lichessbot", rated=False, clock_limit=300, clock_increment=3,
                                   color="black")["id"]
        for event in me.board.stream_incoming_events():  # as lichess tells a challenger: gameStart
            if event["type"] == "gameStart" and event["game"]["gameId"] == gid:
                break
        played = 0
        for event in me.board.stream_game_state(gid):
            state = event.get("state", event)
            moves = state.get("moves", "").split() if event["type"] in ("gameFull", "gameState") else None
            if moves is None or len(moves) % 2 == 0:
                continue
            if played == 4:
                me.board.resign_game(gid)
                break
            board = chess.Board()
            for m in moves:
                board.push_uci(m)
            me.board.make_move(gid, sorted(board.legal_moves, key=chess.Move.uci)[0].uci())
            played += 1
        result["id"] = gid
    except Exception as err:  # noqa: BLE001 - reported by the test
        result["error"] = err


def person_at(url: str, token: str) -> berserk.Client:
    return berserk.Client(berserk.TokenSession(token), base_url=url)


def _eventually_ok(url: str, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2).ok:
                return True
        except requests.RequestException:
            time.sleep(0.1)
    return False


def _pgn(path: Path) -> list[chess.pgn.ChildNode]:
    return list(chess.pgn.read_game(io.StringIO(path.read_text(encoding="utf-8"))).mainline())


@pytest.mark.slow
def test_a_person_plays_the_bot_by_clicks_while_a_script_plays_it_with_berserk(tmp_path, tiny_net):
    exe = Browser.find()
    if exe is None:
        pytest.skip("chromium not installed")
    net = os.environ.get("LICHESSBOT_PAGE_NET") or tiny_net
    app = LocalProcess(tmp_path, net, "--clock", "3+2", "--color", "white")
    script: dict = {}
    try:
        assert _eventually_ok(app.status + "/api/status")  # the live status page is served
        with Browser(exe, str(tmp_path / "profile"), 1360, 880) as b:
            b.open(app.url)
            assert b.wait_for("window.localGame && window.localGame.token", 10)
            assert b.eval("document.getElementById('status-link').href").startswith(app.status)
            assert b.eval("document.querySelector('#tcs .active').dataset.tc") == "3+2"  # --clock's default
            click_at(b, "#play")
            helper = threading.Thread(target=_script_game, args=(app.url, script))
            helper.start()  # the script's game runs at the same time (the bot plays two at once)
            assert b.wait_for("window.localGame.pos && window.localGame.color === 'white'", 20), "no game started"
            gid = b.eval("window.localGame.gameId")
            my_move(b, 0, click, "e2", "e4")
            my_move(b, 2, drag, "g1", "f3")
            my_move(b, 4, click, "f1", "c4")
            b.eval("document.getElementById('chat-input').value = 'Good luck!'")
            b.eval("document.getElementById('chat-form').requestSubmit()")
            assert b.wait_for("window.localGame.lines.some(l => l.text === 'Good luck!')", 5)
            assert b.wait_for("window.localGame.pos.sans.length === 6", 20)
            b.call("Page.reload")  # a reload rejoins the game
            assert b.wait_for(f"window.localGame && window.localGame.gameId === '{gid}' && window.localGame.pos"
                              " && window.localGame.pos.sans.length === 6", 10), "the reload did not rejoin"
            assert b.eval("getComputedStyle(document.getElementById('setup')).display") == "none"
            my_move(b, 6, click, "b1", "c3")
            assert b.wait_for("window.localGame.pos.sans.length === 8", 20)
            time.sleep(0.3)
            shots = Path(os.environ.get("LICHESSBOT_TEST_ARTIFACTS") or tmp_path)
            shots.mkdir(parents=True, exist_ok=True)
            b.screenshot(str(shots / "local-board.png"))
            click_at(b, "#resign")
            click_at(b, "#resign")  # a second click confirms
            assert b.wait_for("!document.getElementById('result').hidden", 10), "no result shown"
            assert b.eval("document.getElementById('score').textContent") == "0-1"
            assert "White resigned" in b.eval("document.getElementById('reason').textContent")
            href = b.eval("document.getElementById('pgn').href")
            assert href.endswith(f"/game/export/{gid}")
            exported = _pgn_text(requests.get(href, timeout=5).text)
            assert len(exported) == 8 and all(n.clock() is not None for n in exported)
            assert b.wait_for("window.localGame.lines.some(l => l.room === 'spectator')", 5)  # shown after the game
            # a second game: a position, a promotion chosen on the page, the board flipped
            click_at(b, "#again")
            b.eval("document.getElementById('fen').value = '8/1P5k/8/8/8/8/P7/K7 w - - 0 1'")
            click_at(b, "#play")
            assert b.wait_for(f"window.localGame.gameId && window.localGame.gameId !== '{gid}' && "
                              "window.localGame.pos && window.localGame.pos.turn === 'white'", 20)
            click(b, "b7")
            click(b, "b8")
            assert b.wait_for("!document.getElementById('promotion').hidden", 5), "no promotion choice"
            click_at(b, "#promotion [data-role=n]")
            assert b.wait_for("window.localGame.pos.sans[0] === 'b8=N'", 10)
            click_at(b, "#flip")
            assert b.eval("window.localGame.orientation") == "black"
            assert b.eval("document.querySelector('#board .sq').dataset.square") == "h1"
        helper.join(60)
        assert "error" not in script, script.get("error")
    finally:
        rc = app.stop()
    assert rc == 0
    mine = _pgn(next(app.pgn_dir.glob(f"*{gid}.pgn")))
    theirs = _pgn(next(app.pgn_dir.glob(f"*{script['id']}.pgn")))
    for moves, bot_plies in ((mine, mine[1::2]), (theirs, theirs[0::2])):
        assert all(n.clock() is not None for n in moves)
        assert all(n.eval() is not None for n in bot_plies)  # every move of the bot has its eval


def _pgn_text(text: str) -> list[chess.pgn.ChildNode]:
    return list(chess.pgn.read_game(io.StringIO(text)).mainline())
