"""The page where a person plays the bot, served by the embedded lichess (a mixin of
:class:`lichessbot.local.server.LocalLichess`):

* ``GET /`` (and ``GET /{gameId}``, a game's lichess-style URL): one self-contained HTML page (``page.html`` with
  ``page.css`` and the script's parts, :data:`PAGE_SCRIPTS`, inlined; no outside resource; its icon an inline
  SVG) under a Content-Security-Policy (:func:`page_csp`: only its own inline style and script run, by a nonce
  new at every load, as lila's pages: lila modules/web/src/main/ContentSecurityPolicy.scala; no frame may show
  it). The page is a Board API client;
* ``GET /favicon.ico``: the same icon, :data:`ICON_SVG`, for a browser or tool that asks for it anyway;
* ``POST /local/session``: the page's guest account and its token (a tab keeps it in ``sessionStorage``, so a
  reload is the same player and rejoins its game). A guest plays on the page as on lichess's site: every speed
  the bot accepts, bullet too;
* ``GET /local/game/{id}/stream``: the page's stream of a game: the Board API's lines (``gameFull``,
  ``gameState``, ``chatLine``, both rooms, as lichess shows the spectator room to watchers) and after each state a
  ``position`` line with what lichess's site sends its board so the page needs no chess rules: the FEN, the
  last move, the king in check, the legal destinations by square (``dests``), the moves in SAN, the clocks after
  each move, the bot's evals, the seconds left for a first move, whether each side may offer a draw
  (:func:`can_offer_draw`), and for browsing every position's FEN, move and king in check (``fens``, ``ucis``,
  ``checks``); it stays open after the game for the goodbyes;
  With the operator's ``show_thinking`` a ``thinking`` line (:func:`thinking_line`) follows each eval line the bot
  posts in the spectator room, to the players too during the game: the only place the server learns the bot's
  eval, depth and nps, as a watcher on lichess would (the bot's live status page is another server);
* ``GET /game/export/{id}``: the game's PGN (lichess's export, ``[%clk]`` and ``[%eval]``)."""

from __future__ import annotations

import json
import re
import secrets
import threading
import urllib.parse
from importlib import resources
from typing import TYPE_CHECKING, Any

import chess

from lichessbot import __version__
from lichessbot.local.export import pgn
from lichessbot.local.http import Handler
from lichessbot.local.lila_rules import DRAW_OFFER_PLIES, abortable, clock_running, drawable, expiry
from lichessbot.local.model import Account, Game, color_name

__all__ = ["ICON_SVG", "PAGE_SCRIPTS", "PageRoutes", "can_offer_draw", "page_csp", "page_html", "thinking_line"]

#: The page's script, in parts that share one closure (page.html wraps them in one function and calls ``start``):
#: the game and its server, the players, buttons and chat, the board and premove, the move list and review, the
#: sounds.
PAGE_SCRIPTS = ("page.js", "page-panel.js", "page-board.js", "page-moves.js", "page-sound.js")


#: The figures of the bot's eval line (lichessbot.bot.chat.lines ``eval_line``: ``eval +0.35 | W 41% D 33% L 26% |
#: nodes 1.2k (reused 300) nps 850 depth 6/14 | pv Nf3 d5``; ``mate +3 | ...``): the score from white's side, the
#: search's nodes per second and depth/seldepth, as written.
_FIGURES = {"eval": re.compile(r"(?:^|\| )((?:eval|mate) [+-]?\d+(?:\.\d+)?)(?: |$)"),
            "nps": re.compile(r"\bnps (\S+)"), "depth": re.compile(r"\bdepth (\S+)")}


def thinking_line(text: str) -> dict[str, Any] | None:
    """The page's ``thinking`` line for the bot's spectator-room line ``text`` (its last search): ``{"type":
    "thinking", "eval": "eval +0.35", "depth": "6/14", "nps": "850"}`` with the figures the line has, or None when
    it has none (a greeting, a book move)."""
    found = {key: m.group(1) for key, rx in _FIGURES.items() if (m := rx.search(text))}
    return {"type": "thinking", **found} if found else None


#: The page's icon (a knight drawn in white on lichess's green), inline in the page and the answer to ``/favicon.ico``
#: (lichess.org serves its icon there, lila ``public/favicon.ico``; a browser may ask for it whatever the page
#: says).
ICON_SVG = ("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><rect width='16' height='16' rx='3' "
            "fill='#629924'/><text x='8' y='13' font-size='13' text-anchor='middle' fill='white'>\u265e</text></svg>")


def page_csp(nonce: str) -> str:
    """The page's Content-Security-Policy: its own inline ``<style>`` and ``<script>`` (``nonce``), requests to its
    own origin only (the API, the streams, the PGN), no plugin, no ``<base>``, no frame around it (the
    ``frame-ancestors`` of CSP level 2, with ``X-Frame-Options: DENY`` for older browsers)."""
    return (f"default-src 'self'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src 'self' data:; "
            "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")


def page_html(settings: dict[str, Any], nonce: str) -> bytes:
    """The page with its CSS and JavaScript inlined under ``nonce`` (:func:`page_csp`) and ``settings`` (the
    bot's name, the status page's URL, the defaults of the form) as ``window.LOCAL``."""
    files = resources.files("lichessbot.local")
    icon = "data:image/svg+xml," + urllib.parse.quote(ICON_SVG, safe=" '=/:")
    html = (files / "page.html").read_text(encoding="utf-8").replace("/*NONCE*/", nonce).replace("/*ICON*/", icon)
    css = (files / "page.css").read_text(encoding="utf-8")
    js = "\n".join((files / name).read_text(encoding="utf-8") for name in PAGE_SCRIPTS)
    blob = json.dumps(settings).replace("</", "<\\/")
    return (html.replace("/*CSS*/", css).replace("/*SETTINGS*/", f"window.LOCAL = {blob};")
            .replace("/*JS*/", js).encode("utf-8"))


class PageRoutes:
    """The page's routes (the server's lock guards the state)."""

    lock: threading.RLock
    games: dict[str, Game]
    bot: Account
    url: str
    show_thinking: bool
    #: more settings for the page (the command adds the status page's URL and the form's defaults)
    page_extra: dict[str, Any]
    if TYPE_CHECKING:
        def register(self, token: str, web: bool = False) -> Account: ...
        def account_for_token(self, token: str) -> Account | None: ...
        def _serve_game(self, h: Handler, g: Game, kind: str, white: bool | None) -> None: ...

    def page_settings(self) -> dict[str, Any]:
        """What the page is told at load: the bot's name, the version, and :attr:`page_extra`."""
        return {"bot": self.bot.username, "version": __version__, **self.page_extra}

    def _serve_page(self, h: Handler) -> None:
        nonce = secrets.token_urlsafe(18)
        h.reply_html(200, page_html(self.page_settings(), nonce), page_csp(nonce))

    def _serve_icon(self, h: Handler) -> None:
        """``GET /favicon.ico``: :data:`ICON_SVG` (``image/svg+xml``; cached for a day)."""
        h.send(200, ICON_SVG.encode("utf-8"), "image/svg+xml", {"Cache-Control": "max-age=86400"})

    def _serve_session(self, h: Handler, body: dict[str, Any]) -> None:
        """A guest account for the page: the token it sends back (when the server knows it or it is new to it),
        else a new one."""
        token = str(body.get("token") or "")
        with self.lock:
            account = self.account_for_token(token) if token else None
            if account is None or account.bot:
                token = "lip_" + secrets.token_urlsafe(18)
                account = self.register(token, web=True)
            account.web = True
        h.reply(200, {"token": token, "username": account.username})

    def _serve_page_stream(self, h: Handler, me: Account | None, gid: str) -> None:
        with self.lock:
            g = self.games.get(gid)
        if g is None:
            return h.reply(404, {"error": "No such game"})
        self._serve_game(h, g, "page", None if me is None else g.color_of(me))
        return None

    def _serve_export(self, h: Handler, gid: str) -> None:
        """The PGN, or with ``Accept: application/json`` the game's JSON (lila app/controllers/Game.scala
        ``exportOne``; lichess-org/api games-exportOneGame: ``id``, ``rated``, ``variant``, ``speed``, ``status``
        by name, ``winner`` when there is one)."""
        with self.lock:
            g = self.games.get(gid)
            text = None if g is None else pgn(g, f"{self.url}/{gid}")
            summary: dict[str, Any] = {} if g is None else {
                "id": g.id, "rated": g.rated, "variant": g.variant, "speed": g.speed, "perf": g.speed,
                "status": g.status, "source": g.source, "moves": " ".join(m.uci() for m in g.board.move_stack),
                **({"winner": g.winner} if g.winner else {})}
        if text is None:
            return h.reply(404, {"error": "No such game"})
        if "application/json" in h.headers.get("Accept", ""):
            return h.reply(200, summary)
        h.send(200, text.encode("utf-8"), "application/x-chess-pgn; charset=utf-8",
               {"Content-Disposition": f'attachment; filename="lichessbot_{gid}.pgn"'})
        return None

    def position_line(self, g: Game, now: float, evals: bool = True) -> dict[str, Any]:
        """The ``position`` line of the page's stream (see the module's docstring; ``evals`` False: without the
        bot's evals, for a player during the game). Milliseconds."""
        board = g.board
        dests: dict[str, list[str]] = {}
        if not g.over:
            for move in board.legal_moves:
                if move.drop is None:
                    targets = dests.setdefault(chess.square_name(move.from_square), [])
                    to = chess.square_name(move.to_square)
                    if to not in targets:
                        targets.append(to)
        history = g.start_board()
        sans: list[str] = []
        ucis: list[str] = []
        fens = [history.fen()]
        checks: list[str | None] = [_checked(history)]
        for move in board.move_stack:
            sans.append(history.san(move))
            ucis.append(move.uci())
            history.push(move)
            fens.append(history.fen())
            checks.append(_checked(history))
        king = board.king(board.turn) if board.is_check() else None
        left = expiry(g, now)
        return {"type": "position", "fen": board.fen(), "turn": color_name(board.turn),
                "lastMove": board.peek().uci() if board.move_stack else None,
                "check": None if king is None else chess.square_name(king), "dests": dests, "sans": sans,
                "clocks": list(g.clocks), "evals": {str(k): v for k, v in g.evals.items()} if evals else {},
                "clockRunning": clock_running(g), "abortable": abortable(g), "drawable": drawable(g),
                "expiresIn": None if left is None else int(left * 1000), "bot": self.bot.username,
                "fens": fens, "ucis": ucis, "checks": checks,
                "canOfferDraw": {color_name(w): can_offer_draw(g, w) for w in (True, False)}}


def _checked(board: chess.Board) -> str | None:
    """The square of the king in check in ``board``, or None."""
    king = board.king(board.turn) if board.is_check() else None
    return None if king is None else chess.square_name(king)


def can_offer_draw(g: Game, white: bool) -> bool:
    """Whether ``white`` (False: black) may offer a draw now, so the page greys out its ½ otherwise (lila
    modules/game/src/main/GameExt.scala ``playerCanOfferDraw``: the game started and playable, at least 2 plies,
    not offering already, no offer of its own in the last 20 plies (``playerHasOfferedDrawRecently``:
    :data:`~lichessbot.local.lila_rules.DRAW_OFFER_PLIES`); accepting the opponent's offer is always possible)."""
    seat = g.seat(white)
    return (drawable(g) and g.ply() >= 2 and not seat.offering_draw
            and not any(p >= g.ply() - DRAW_OFFER_PLIES for p in seat.draw_offers))
