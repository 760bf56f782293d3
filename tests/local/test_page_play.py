"""The page as a lichess player uses it, in Debian's chromium (skipped without it) against ``lichessbot play --local``
(one process and one browser for the module; the bot thinks about 1.5 s a move at 5+3, long enough to premove):
premove, offers and their answers, ½ inside lila's 20-ply window, the bot thinking, the move list (scrolled to
the last move after a reload and in a second tab, browsing by clicks and the arrow keys), the review graph, the
sounds and their mute, the setup form remembered, the favicon."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator

import pytest
import requests

from tests.browser import Browser
from tests.local.test_page import LocalProcess, click, click_at, drag, my_move

#: The bot: about 1.5 s a move at 5+3 (0.5 % of 300 s, no early stop), 1.2 s for its first, one takeback a game.
CONFIG = """\
challenge:
  concurrency: 2
  variants: [standard, chess960, fromPosition]
engine:
  network: {net}
timeman:
  max_move_share: 0.005
  first_moves_think: 1200
  smart_pruning: false
max_takebacks_accepted: 1
chat:
  eval_every: 1
"""

pytestmark = pytest.mark.slow

G = "window.localGame"


@pytest.fixture(scope="module")
def app(tmp_path_factory, tiny_net) -> Iterator[LocalProcess]:
    if Browser.find() is None:
        pytest.skip("chromium not installed")
    proc = LocalProcess(tmp_path_factory.mktemp("page"), tiny_net, config=CONFIG)
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def b(app, tmp_path_factory) -> Iterator[Browser]:
    exe = Browser.find()
    assert exe is not None
    with Browser(exe, str(tmp_path_factory.mktemp("profile")), 1200, 450) as browser:
        browser.open(app.url)
        assert browser.wait_for(f"{G} && {G}.token", 10)
        yield browser


def new_game(b: Browser, clock: str = "5+3", color: str = "white", fen: str = "") -> str:
    """End the page's game if one runs, and start one from the form; the new game's id."""
    if b.eval(f"!!({G}.gameId && {G}.state && ['created', 'started'].includes({G}.state.status))"):
        token, gid = b.eval(f"{G}.token"), b.eval(f"{G}.gameId")
        requests.post(f"{b.eval('location.origin')}/api/board/game/{gid}/abort", timeout=5,
                      headers={"Authorization": f"Bearer {token}"})
        requests.post(f"{b.eval('location.origin')}/api/board/game/{gid}/resign", timeout=5,
                      headers={"Authorization": f"Bearer {token}"})
        assert b.wait_for("!document.getElementById('result').hidden", 10)
    if b.eval(f"!!{G}.gameId"):
        click_at(b, "#again")
    old = b.eval(f"{G}.gameId")
    click_at(b, f'#tcs [data-tc="{clock}"]')
    click_at(b, f'#colors [data-color="{color}"]')
    b.eval(f"document.getElementById('fen').value = {fen!r}")
    click_at(b, "#play")
    assert b.wait_for(f"{G}.gameId && {G}.gameId !== {json.dumps(old)} && {G}.pos && {G}.color === {color!r}", 20), \
        b.eval("document.getElementById('setup-msg').textContent")
    b.eval("window.scrollTo(0, 0)")  # the whole board in sight (the form's button was scrolled to)
    return str(b.eval(f"{G}.gameId"))


def api_move(b: Browser, rng: random.Random) -> None:
    """Our move through the Board API with the page's token (a legal one from the page's destinations)."""
    dests = b.eval(f"{G}.pos.dests")
    frm = rng.choice(sorted(dests))
    to = rng.choice(sorted(dests[frm]))
    promo = "q" if to[1] in "18" and _is_pawn(b, frm) else ""
    r = requests.post(f"{b.eval('location.origin')}/api/board/game/{b.eval(f'{G}.gameId')}/move/{frm}{to}{promo}",
                      headers={"Authorization": f"Bearer {b.eval(f'{G}.token')}"}, timeout=5)
    assert r.ok, r.text


def _is_pawn(b: Browser, sq: str) -> bool:
    return bool(b.eval(f"(() => {{ const c = document.querySelector('[data-square={sq}] .piece');"
                       "return !!c && c.textContent.startsWith('\\u265F'); })()"))


MOVES_AT_END = ("(() => { const m = document.getElementById('moves'); return m.scrollHeight > m.clientHeight + 20"
                " && m.scrollTop + m.clientHeight >= m.scrollHeight - 2; })()")


def test_the_move_list_shows_the_last_move_after_a_reload_and_in_a_second_tab(b: Browser, app: LocalProcess):
    gid = new_game(b, "1+0", "white")
    rng = random.Random(7)
    for ply in range(0, 28, 2):
        assert b.wait_for(f"{G}.pos.sans.length === {ply} && {G}.pos.turn === 'white' || "
                          f"{G}.state.status !== 'started'", 15), f"no move at ply {ply}"
        if b.eval(f"{G}.state.status !== 'started'"):
            break
        api_move(b, rng)
    assert b.wait_for(f"{G}.pos.sans.length >= 20", 5)
    b.call("Page.reload")
    assert b.wait_for(f"{G} && {G}.gameId === '{gid}' && {G}.pos && {G}.pos.sans.length >= 20", 10)
    assert b.wait_for(MOVES_AT_END, 3), b.eval("[document.getElementById('moves').scrollTop, "
                                               "document.getElementById('moves').scrollHeight]")
    b.open(f"{app.url}/{gid}")  # a second tab (a tab of its own: a new guest, who watches the game)
    assert b.wait_for(f"{G} && {G}.pos && {G}.pos.sans.length >= 20", 10)
    assert b.wait_for(MOVES_AT_END, 3)
    b.open(app.url)  # a fresh tab for the next tests
    assert b.wait_for(f"{G} && {G}.token", 10)


def test_the_setup_form_keeps_its_choices_across_a_reload_and_the_page_has_its_own_favicon(b: Browser):
    if b.eval(f"!!{G}.gameId"):
        new_game(b, "1+0", "white")  # ends the one running
        click_at(b, "#resign")
        click_at(b, "#resign")
        assert b.wait_for("!document.getElementById('result').hidden", 10)
        click_at(b, "#again")
    click_at(b, '#tcs [data-tc="10+5"]')
    click_at(b, '#colors [data-color="black"]')
    b.eval("const v = document.getElementById('variant'); v.value = 'chess960'; v.dispatchEvent(new Event('change'))")
    b.call("Page.reload")
    assert b.wait_for(f"{G} && {G}.token", 10)
    assert b.eval("document.querySelector('#tcs .active').dataset.tc") == "10+5"
    assert b.eval("document.querySelector('#colors .active').dataset.color") == "black"
    assert b.eval("document.getElementById('variant').value") == "chess960"
    b.eval("const v = document.getElementById('variant'); v.value = 'standard'; v.dispatchEvent(new Event('change'))")
    # the icon is inline (no /favicon.ico request, no 404) and loads under the page's CSP
    icon = b.eval("(document.querySelector('link[rel=icon]') || {}).href || ''")
    assert icon.startswith("data:image/svg+xml,"), icon
    b.eval("window.__icon = null; const i = new Image(); i.onload = () => { window.__icon = i.width > 0; };"
           "i.onerror = () => { window.__icon = false; }; i.src = document.querySelector('link[rel=icon]').href;")
    assert b.wait_for("window.__icon !== null", 5) and b.eval("window.__icon") is True


def test_a_premove_is_shown_cancelled_by_a_click_or_a_right_click_and_played_when_the_bot_has_moved(b: Browser):
    new_game(b, "5+3", "white")
    my_move(b, 0, click, "e2", "e4")
    assert b.eval(f"{G}.pos.turn") == "black", "the bot moved before the premove could be made"
    click(b, "d2")
    click(b, "d4")  # the bot's turn: a premove
    assert b.eval(f"JSON.stringify({G}.premove)") == '{"from":"d2","to":"d4","promo":""}'
    assert b.eval("document.querySelector('[data-square=d4]').classList.contains('premove')")
    assert b.eval("document.getElementById('thinking').hidden") is False  # the bot is thinking
    assert "is thinking" in b.eval("document.getElementById('thinking').textContent")
    click(b, "h5")  # a click elsewhere cancels it
    assert b.eval(f"{G}.premove") is None
    assert not b.eval("document.querySelector('[data-square=d4]').classList.contains('premove')")
    drag(b, "d2", "d4")  # again, by a drag
    assert b.eval(f"{G}.premove && {G}.premove.to") == "d4"
    assert b.wait_for(f"{G}.pos.sans.length >= 3", 10), "the premove was not played"
    assert b.eval(f"{G}.pos.sans[2]") == "d4"
    assert b.eval(f"{G}.premove") is None
    assert b.eval("document.getElementById('thinking').hidden") is False  # the bot's turn again
    # a right-click cancels: the bot moves and the premove stays unplayed
    click(b, "b1")
    click(b, "c3")
    assert b.eval(f"{G}.premove && {G}.premove.to") == "c3"
    x, y = b.eval("(() => { const r = document.getElementById('board').getBoundingClientRect();"
                  "return [r.left + 5, r.top + 5]; })()")
    b.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="right", buttons=2, clickCount=1)
    b.call("Input.dispatchMouseEvent", type="mouseReleased", x=x, y=y, button="right", buttons=0, clickCount=1)
    assert b.eval(f"{G}.premove") is None
    assert b.wait_for(f"{G}.pos.sans.length === 4", 10)
    time.sleep(0.3)
    assert b.eval(f"{G}.pos.sans.length") == 4 and b.eval(f"{G}.pos.turn") == "white"
    assert b.eval("document.getElementById('thinking').hidden") is True  # our turn


def test_offers_get_their_answers_and_the_draw_button_waits_out_lilas_20_plies(b: Browser):
    new_game(b, "5+3", "white")
    my_move(b, 0, click, "e2", "e4")
    assert b.eval("document.getElementById('draw').hidden")  # abortable: no draw yet (lila: ply >= 2)
    my_move(b, 2, click, "g1", "f3")
    assert b.wait_for(f"{G}.pos.sans.length === 4 && {G}.pos.turn === 'white'", 15)
    assert b.eval("document.getElementById('draw').disabled") is False
    click_at(b, "#draw")
    assert b.wait_for("document.getElementById('answer').textContent === 'Draw offer sent'", 5)
    my_move(b, 4, click, "f1", "c4")
    assert b.wait_for("document.getElementById('answer').textContent === 'Draw offer declined'", 15), \
        b.eval("document.getElementById('answer').textContent")
    assert b.eval(f"{G}.lines.some(l => l.system && l.text === 'Draw offer declined')")  # in the chat too
    assert b.wait_for(f"{G}.pos.sans.length === 6 && {G}.pos.turn === 'white'", 15)
    assert b.eval("document.getElementById('draw').disabled") is True  # offered 2 plies ago: 20 plies to wait
    # takebacks: the bot accepts one (max_takebacks_accepted: 1), then declines
    click_at(b, "#takeback")
    assert b.wait_for("document.getElementById('answer').textContent === 'Takeback proposition accepted'", 10), \
        b.eval("document.getElementById('answer').textContent")
    assert b.eval(f"{G}.pos.sans.length") == 4
    click_at(b, "#takeback")
    assert b.wait_for("document.getElementById('answer').textContent === 'Takeback proposition declined'", 10), \
        b.eval("document.getElementById('answer').textContent")
    assert b.eval(f"{G}.pos.sans.length") == 4


def test_the_move_list_browses_by_clicks_and_keys_and_the_review_graphs_the_evals_with_sounds_and_mute(b: Browser):
    # Ra8+ (a check), the bot's king moves (it must), Bxh6 (a capture)
    new_game(b, "5+3", "white", "4k3/8/7p/8/8/8/8/R1B1K3 w - - 0 1")
    if b.eval(f"{G}.muted"):
        click_at(b, "#sound")
    b.eval(f"{G}.sounds.length = 0")
    my_move(b, 0, click, "a1", "a8")
    assert b.wait_for(f"{G}.sounds.includes('check')", 3), b.eval(f"{G}.sounds")
    my_move(b, 2, click, "c1", "h6")
    assert b.wait_for(f"{G}.sounds.includes('capture')", 3), b.eval(f"{G}.sounds")
    click_at(b, "#sound")  # mute: the bot's reply makes no sound, and a reload keeps it muted
    heard = b.eval(f"{G}.sounds.length")
    assert b.wait_for(f"{G}.pos.sans.length === 4", 15)
    assert b.eval(f"{G}.sounds.length") == heard
    # browsing during the game: the list's moves and the arrow keys
    click_at(b, '#moves [data-ply="1"]')
    assert b.eval(f"{G}.view") == 1
    assert b.eval("!!document.querySelector('[data-square=a8] .piece')")  # the rook on a8 after 1. Ra8+
    assert b.eval("!!document.querySelector('[data-square=c1] .piece')")  # the bishop not yet on h6
    b.call("Input.dispatchKeyEvent", type="keyDown", key="ArrowLeft", code="ArrowLeft", windowsVirtualKeyCode=37)
    assert b.eval(f"{G}.view") == 0 and b.eval("!!document.querySelector('[data-square=a1] .piece')")
    for _ in range(2):
        b.call("Input.dispatchKeyEvent", type="keyDown", key="ArrowRight", code="ArrowRight", windowsVirtualKeyCode=39)
    assert b.eval(f"{G}.view") == 2
    b.call("Input.dispatchKeyEvent", type="keyDown", key="End", code="End", windowsVirtualKeyCode=35)
    assert b.eval(f"{G}.view") is None  # the game now
    click_at(b, "#resign")
    click_at(b, "#resign")
    assert b.wait_for("!document.getElementById('result').hidden", 10)
    # the review: the bot's evals as points of the graph; a point's click shows its move
    assert b.wait_for("!document.getElementById('review').hidden", 5), "no review after the game"
    points = b.eval("[...document.querySelectorAll('#review .pt')].map(p => +p.dataset.ply)")
    assert points and all(p % 2 == 0 for p in points), points  # the bot's plies (black's)
    x, y = b.eval(f"(() => {{ const r = document.querySelector('#review .pt[data-ply=\"{points[0]}\"]')"
                  ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
    for kind in ("mousePressed", "mouseReleased"):
        b.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", buttons=1 if kind == "mousePressed"
               else 0, clickCount=1)
    assert b.eval(f"{G}.view") == points[0], b.eval(f"{G}.view")
    b.call("Page.reload")
    assert b.wait_for(f"{G} && {G}.token", 10)
    assert b.eval(f"{G}.muted") is True and b.eval("localStorage.getItem('lichessbot.sound')") == "off"
    click_at(b, "#sound")


def test_a_rematch_after_a_resignation_opens_the_new_game_with_the_colours_swapped(b: Browser, app: LocalProcess):
    gid = new_game(b, "5+3", "white")
    my_move(b, 0, click, "e2", "e4")
    assert b.wait_for(f"{G}.pos.sans.length === 2", 15)  # both moved: a resignation, not an abort
    click_at(b, "#resign")
    click_at(b, "#resign")
    assert b.wait_for("!document.getElementById('result').hidden", 10)
    assert b.eval(f"{G}.state.status") == "resign"
    assert b.eval("document.getElementById('rematch').hidden") is False
    # every text the offer's line shows, kept as it changes (the bot may accept before a poll could see it)
    b.eval("window.__rematch = []; new MutationObserver(() => window.__rematch.push("
           "document.getElementById('rematch-msg').textContent)).observe(document.getElementById('rematch-msg'),"
           "{childList: true, characterData: true, subtree: true})")
    click_at(b, "#rematch")
    assert b.wait_for(f"{G}.gameId !== {gid!r} && {G}.full && {G}.color === 'black'", 20), \
        (b.eval(f"{G}.gameId"), b.eval("document.getElementById('rematch-msg').textContent"))
    assert "Rematch offer sent" in b.eval("window.__rematch")
    new = b.eval(f"{G}.gameId")
    assert b.eval(f"{G}.full.black.id") == b.eval(f"{G}.username").lower()
    assert b.eval(f"{G}.full.white.title") == "BOT"
    # the old game names its rematch (lila gameState ``rematch``), and the new game's board is black's
    token = b.eval(f"{G}.token")
    with requests.get(f"{app.url}/api/board/game/stream/{gid}", headers={"Authorization": f"Bearer {token}"},
                      stream=True, timeout=5) as r:
        full = json.loads(next(line for line in r.iter_lines() if line))
    assert full["state"]["rematch"] == new
    assert b.eval(f"{G}.orientation") == "black"
    assert b.eval("document.getElementById('result').hidden") is True
