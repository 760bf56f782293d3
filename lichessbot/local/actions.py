"""A player's requests on its game, for the Bot API (``/api/bot/game/...``) and the Board API
(``/api/board/game/...``), as lila answers them (app/controllers/PlayApi.scala, modules/bot/src/main/BotPlayer.scala;
a mixin of :class:`lichessbot.local.server.LocalLichess`):

* the stream (``GET .../stream/{id}``), ``move/{uci}`` (``offeringDraw``), ``chat`` (a form: ``room``, ``text``;
  ``GET`` its player room), ``abort``, ``resign``, ``draw/{yes|no}``, ``takeback/{yes|no}``, ``claim-victory``,
  ``claim-draw``, ``berserk``;
* a BOT account on the Board API, or another on the Bot API: 400; an unknown game 404 ``No such game``, a game
  of others 404 ``Not your game``; a game its API may not play (UltraBullet for bots; bullet, and blitz outside
  challenges, for the Board API) 400. The page's guests play on the page as on lichess's site, every speed;
* a refused move (not UCI, not your turn, illegal) is a 400 with lila's message and changes nothing; draw and
  takeback answers are 200 whatever they change (lila's)."""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Any

from lichessbot.local.export import attach_eval
from lichessbot.local.http import Handler
from lichessbot.local.lila_rules import (
    MoveError,
    abortable,
    apply_move,
    decline_draw,
    drawable,
    finish,
    flag,
    force_resignable,
    long_gone,
    offer_draw,
    out_of_time,
    parse_move,
    takeback,
)
from lichessbot.local.model import Account, ChatLine, Game, color_name
from lichessbot.local.page import thinking_line
from lichessbot.local.streams import chat_json
from lichessbot.local.views import compat

__all__ = ["GameRoutes", "NOT_BOT", "NOT_BOARD"]

#: lila's answers to an account on the wrong API (PlayApi.scala ``WithPovAsBot``, LilaController
#: ``notForBotAccounts``).
NOT_BOT = ("This endpoint can only be used with a Bot account. See "
           "https://lichess.org/api#operation/botAccountUpgrade")
NOT_BOARD = "This API endpoint is not for Bot accounts."
#: Longest chat line, UTF-16 code units (lila modules/bot/src/main/BotForm.scala ``maxLength = 140``).
MAX_CHAT = 140
#: A link in a bot's line: lila drops the line silently (modules/chat/src/main/ChatApi.scala ``hasLinks``).
_LINK = re.compile(r"https?://|\b[\w-]+\.(?:com|org|edu)\b", re.IGNORECASE)


class GameRoutes:
    """Game routes (the server's lock guards the state)."""

    lock: threading.RLock
    changed: threading.Condition
    games: dict[str, Game]
    show_thinking: bool
    if TYPE_CHECKING:
        def _broadcast_state(self, g: Game) -> None: ...
        def _game_push(self, g: Game, obj: Any, kinds: tuple[str, ...] = ...) -> None: ...
        def _serve_game(self, h: Handler, g: Game, kind: str, white: bool | None) -> None: ...
        def _page_push(self, g: Game, to_watchers: Any, to_players: Any) -> None: ...
        def _after_change(self, g: Game) -> None: ...

    def _pov(self, h: Handler, me: Account, api: str, gid: str) -> tuple[Game, bool] | None:
        """The game ``gid`` and ``me``'s colour in it, or None after answering why not."""
        if api == "bot" and not me.bot:
            h.reply(400, {"error": NOT_BOT})
            return None
        if api == "board" and me.bot:
            h.reply(400, {"error": NOT_BOARD})
            return None
        with self.lock:
            g = self.games.get(gid)
        if g is None:
            h.reply(404, {"error": "No such game"})
            return None
        white = g.color_of(me)
        if white is None:
            h.reply(404, {"error": "Not your game"})
            return None
        ok = compat(g.speed, g.source)
        if api == "bot" and not ok["bot"]:
            h.reply(400, {"error": "This game cannot be played with the Bot API."})
            return None
        if api == "board" and not ok["board"] and not me.web:
            h.reply(400, {"error": "This game cannot be played with the Board API."})
            return None
        return g, white

    def _serve_game_api(self, h: Handler, me: Account, api: str, method: str, rest: list[str],
                        query: dict[str, list[str]], body: dict[str, Any]) -> None:
        """``rest``: the path after ``/api/{api}/game/``."""
        if rest[:1] == ["stream"] and len(rest) == 2 and method == "GET":
            pov = self._pov(h, me, api, rest[1])
            if pov is not None:
                self._serve_game(h, pov[0], api, pov[1])
            return None
        if len(rest) < 2:
            return h.reply(404, {"error": "No such command"})
        pov = self._pov(h, me, api, rest[0])
        if pov is None:
            return None
        g, white = pov
        action, arg = rest[1], rest[2] if len(rest) > 2 else None
        if action == "chat":
            if method == "GET":
                with self.lock:  # lila modules/chat/src/main/JsonView.scala ``boardApi``
                    return h.reply(200, [{"text": x.text, "user": x.username} for x in g.lines if x.room == "player"])
            return self._chat(h, me, g, white, body)
        if method != "POST":
            return h.reply(404, {"error": "No such command"})
        with self.lock:
            if action == "move" and arg is not None:
                return self._move(h, g, white, arg, query)
            return self._command(h, g, white, action, arg)

    def _move(self, h: Handler, g: Game, white: bool, uci: str, query: dict[str, list[str]]) -> None:
        if not re.match(r"^(?:[a-h][1-8][a-h][1-8][qrbnk]?|[PNBRQ]@[a-h][1-8])$", uci):
            return self._refuse_move(h, g, uci, f"Invalid UCI: {uci}")
        if g.over or g.board.turn != white:
            return self._refuse_move(h, g, uci, "Not your turn, or game already over")
        if out_of_time(g, time.monotonic()):
            # lila RoundAsyncActor ``BotPlay``: a move that comes after the flag's grace ends the game on time
            # (``finisher.outOfTime``) and the POST succeeds
            flag(g, time.monotonic())
            h.reply(200, {"ok": True})
            return self._changed(g)
        try:
            move = parse_move(g, uci)
        except MoveError as err:
            return self._refuse_move(h, g, uci, str(err))
        offering = (query.get("offeringDraw") or [""])[0].lower()
        now = time.monotonic()
        self._accepted_move(g, uci, offering == "true")
        if offering == "false":
            decline_draw(g, white)
        elif offering == "true" and offer_draw(g, white, now) and g.over:
            # an offer meeting the opponent's is a draw, agreed before the move (lila BotPlayer: the Draw message
            # reaches the round first; the move then finds the game over and is dropped).
            h.reply(200, {"ok": True})
            return self._changed(g)
        apply_move(g, move, now)
        h.reply(200, {"ok": True})
        return self._changed(g)

    def _refuse_move(self, h: Handler, g: Game, uci: str, message: str) -> None:
        """A refused move: 400 with lila's message (a hook: the test server records refusals)."""
        h.reply(400, {"error": message})

    def _accepted_move(self, g: Game, uci: str, offering_draw: bool) -> None:
        """A move about to be played (a hook: the test server records the bot's posts)."""

    def _changed(self, g: Game) -> None:
        self._broadcast_state(g)
        self._after_change(g)

    def _command(self, h: Handler, g: Game, white: bool, action: str, arg: str | None) -> None:
        now = time.monotonic()
        if action == "abort":
            if not abortable(g):
                return h.reply(400, {"error": "This game can no longer be aborted"})
            finish(g, "aborted", None, now)
            h.reply(200, {"ok": True})
            return self._changed(g)
        if action == "resign":
            if g.over:
                return h.reply(400, {"error": "This game cannot be resigned"})
            if abortable(g):  # lila BotPlayer.resign: an abortable game is aborted
                finish(g, "aborted", None, now)
            else:
                finish(g, "resign", color_name(not white), now)
            h.reply(200, {"ok": True})
            return self._changed(g)
        if action in ("draw", "takeback") and arg is not None:
            yes = arg.lower() in ("yes", "true", "1", "y")
            changed = (offer_draw(g, white, now) if yes else decline_draw(g, white)) if action == "draw" \
                else takeback(g, white, yes, now)
            h.reply(200, {"ok": True})  # after the change, as lila answers once the round has it
            if changed:
                self._changed(g)
            return None
        if action in ("claim-victory", "claim-draw"):
            return self._claim(h, g, white, action, now)
        if action == "berserk":
            return h.reply(400, {"error": "Cannot berserk"})
        return h.reply(404, {"error": "No such command"})

    def _claim(self, h: Handler, g: Game, white: bool, action: str, now: float) -> None:
        """``claim-victory`` and ``claim-draw`` (lila modules/bot/src/main/BotPlayer.scala ``claimVictory``,
        ``claimDraw``; the round's ``ResignForce``, ``DrawForce``): where no claim can be made (the game over or
        not yet resignable, without a clock, or on the claimer's own turn) 200 and nothing changes; else, when the
        opponent is long gone (:func:`~lichessbot.local.lila_rules.long_gone`), the game ends ``timeout``: won by the
        claimer (a draw when it cannot mate: ``opponentHasInsufficientMaterial``) or drawn; else 400 "You cannot
        claim the win on this game" / "You cannot claim draw on this game"."""
        victory = action == "claim-victory"
        if (not force_resignable(g) or g.board.turn == white) if victory else not drawable(g):
            return h.reply(200, {"ok": True})
        if g.board.turn == white or not g.has_clock or not long_gone(g, not white, now):
            return h.reply(400, {"error": "You cannot claim the win on this game" if victory
                                 else "You cannot claim draw on this game"})
        mate_possible = not g.board.has_insufficient_material(white)
        finish(g, "timeout", color_name(white) if victory and mate_possible else None, now)
        h.reply(200, {"ok": True})
        return self._changed(g)

    def _chat(self, h: Handler, me: Account, g: Game, white: bool, body: dict[str, Any]) -> None:
        room, text = str(body.get("room", "")), str(body.get("text", ""))
        if room not in ("player", "spectator"):
            return h.reply(400, {"room": ["error.required"], "error": {"room": ["error.required"]}})
        if not text.strip() or len(text.encode("utf-16-le")) // 2 > MAX_CHAT:
            why = "error.required" if not text.strip() else f"error.maxLength {MAX_CHAT}"
            return h.reply(400, {"text": [why], "error": {"text": [why]}})
        with self.lock:
            if not (me.bot and _LINK.search(text)):  # lila drops a bot's link silently
                self.post_chat(g, me, room, text)
            h.reply(200, {"ok": True})
            return None

    def post_chat(self, g: Game, me: Account, room: str, text: str) -> None:
        """Add a line to ``g``'s ``room`` and send it (the spectator room reaches bots and the page only)."""
        with self.lock:
            g.lines.append(ChatLine(room, me.username, text))
            if me.bot and room == "spectator":
                attach_eval(g, g.color_of(me) is True, text)
                thinking = thinking_line(text) if self.show_thinking and not g.over else None
                if thinking is not None:  # the operator lets the players see the bot's figures
                    self._page_push(g, thinking, thinking)
            line = chat_json(g.lines[-1])
            if room == "player":
                self._game_push(g, line)
            else:  # the spectator room: bots and watchers (lila GameStateStream), the players' pages after the game
                self._game_push(g, line, ("bot",))
                self._page_push(g, line, line if g.over else None)
