"""Challenges on the embedded lichess, as lila answers them (a mixin of
:class:`lichessbot.local.server.LocalLichess`):

* ``POST /api/challenge/{username}``: the form of lichess-org/api api-challenge-username.yaml (``rated``,
  ``clock.limit`` + ``clock.increment`` or ``days``, ``color``, ``variant``, ``fen``, ``keepAliveStream``); a bad
  field is a 400 with lila's form-error body (``{"<field>": [msg], "error": {"<field>": [msg]}}``, app/controllers
  Challenge.scala ``apiCreate`` -> ``doubleJsonFormError``), an unknown user a 400 ``No such user``; else 200 with
  the challenge, a ``challenge`` event to both accounts, and with ``keepAliveStream`` an NDJSON answer kept open
  until ``{"done": "accepted" | "declined" | "canceled"}``;
* ``POST /api/challenge/{id}/accept`` (the game starts: ``gameStart`` to both; its id is the challenge's),
  ``/decline`` (a form with a known ``reason`` key; ``challengeDeclined`` to the challenger), ``/cancel`` (by the
  challenger; a game already started with fewer than 2 plies is aborted: lila Challenge ``apiCancel``), and
  ``GET /api/challenge/{id}/show``."""

from __future__ import annotations

import queue
import random
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import chess

from lichessbot.local.http import END, Handler
from lichessbot.local.lila_rules import abortable, finish
from lichessbot.local.limits import RATE_LIMITED, Limiter, bot_games_refusal
from lichessbot.local.model import (
    CLOCK_LIMITS,
    DAYS,
    DECLINE_REASONS,
    FOREVER,
    MAX_INCREMENT,
    VARIANT_NAMES,
    Account,
    Challenge,
    Game,
    Seat,
    color_name,
    make_board,
    speed_of,
)
from lichessbot.local.views import challenge_json, compat

__all__ = ["ChallengeRoutes", "ChallengeSpec", "FormError", "check_fen", "decline_reason", "parse_challenge_form"]


def decline_reason(value: Any) -> str:
    """The key of a decline reason as lila reads it: a known key in any case, else ``generic`` (lila
    modules/challenge Challenge.scala ``DeclineReason.apply``: ``all.find(_.key == key.toLowerCase) | default``;
    a body that is not a form gives no reason)."""
    key = str(value or "").lower()
    return next((k for k in DECLINE_REASONS if k.lower() == key), "generic")


class FormError(ValueError):
    """A challenge form field lila refuses: ``field`` and the message."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message

    def body(self) -> dict[str, Any]:
        """lila's ``doubleJsonFormError`` body."""
        errors = {self.field: [self.message]}
        return {**errors, "error": errors}


@dataclass(frozen=True)
class ChallengeSpec:
    """A valid challenge form: seconds, days, the challenger's colour (``random`` too), the start position."""

    variant: str = "standard"
    rated: bool = False
    limit_s: float | None = 300
    increment_s: int = 0
    days: int | None = None
    color: str = "random"
    fen: str | None = None


def check_fen(fen: str, chess960: bool = False) -> str:
    """``fen`` if it is a position a game can start from (lila modules/setup/src/main/ValidFen.scala: readable,
    legal and playable), else ValueError saying why."""
    try:
        board = chess.Board(fen, chess960=chess960)
    except ValueError as err:
        raise ValueError(f"invalid FEN {fen!r}: {err}") from None
    status = board.status()
    if status != chess.STATUS_VALID:
        why = ", ".join((flag.name or "").lower().replace("_", " ") for flag in chess.Status if flag and flag in status)
        raise ValueError(f"impossible position {fen!r} ({why})")
    if board.is_game_over(claim_draw=False):
        raise ValueError(f"the game is already over in {fen!r}")
    return board.fen()


def _bool(form: dict[str, Any], key: str) -> bool:
    value = str(form.get(key, "false")).lower()
    if value not in ("true", "false", "1", "0"):
        raise FormError(key, "error.boolean")
    return value in ("true", "1")


def parse_challenge_form(form: dict[str, Any]) -> ChallengeSpec:
    """Read a challenge form (a form's strings, or JSON values as berserk sends them: null is absent). Raises
    FormError naming the field and the reason."""
    form = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in form.items() if v is not None}
    rated = _bool(form, "rated")
    color = str(form.get("color") or "random")
    if color not in ("random", "white", "black"):
        raise FormError("color", f"invalid color {color!r} (random, white or black)")
    variant = str(form.get("variant") or "standard")
    if variant not in VARIANT_NAMES:
        raise FormError("variant", f"unknown variant {variant!r} ({', '.join(VARIANT_NAMES)})")
    fen = form.get("fen") or None
    limit_s: float | None = None
    increment_s, days = 0, None
    if "clock.limit" in form or "clock.increment" in form:
        try:
            limit_s = float(form.get("clock.limit", ""))
            increment_s = int(form.get("clock.increment", ""))
        except ValueError:
            raise FormError("clock", "clock.limit and clock.increment must both be numbers of seconds") from None
        if limit_s not in CLOCK_LIMITS:
            raise FormError("clock.limit", f"invalid clock {limit_s:g} s (0, 15, 30, 45, 90 or a multiple of 60 "
                            "up to 10800)")
        if not 0 <= increment_s <= MAX_INCREMENT:
            raise FormError("clock.increment", f"invalid increment {increment_s} s (0 to {MAX_INCREMENT})")
        if limit_s + increment_s == 0:
            raise FormError("clock", "invalid clock 0+0")
        if "days" in form:
            raise FormError("days", "a clock and days per move cannot both be given")
    elif form.get("days"):
        try:
            days = int(form["days"])
        except ValueError:
            days = -1
        if days not in DAYS:
            raise FormError("days", f"invalid days {form['days']!r} ({', '.join(map(str, DAYS))})")
    if fen is not None:
        if variant == "standard":
            variant = "fromPosition"  # lila: a position turns a standard challenge into From Position
        try:
            fen = check_fen(str(fen), chess960=variant == "chess960")
        except ValueError as err:
            raise FormError("fen", str(err)) from None
    return ChallengeSpec(variant, rated, limit_s, increment_s, days, color, fen)


class ChallengeRoutes:
    """Challenge routes (the server's lock guards the state)."""

    url: str
    keepalive: float
    challenge_unseen_s: float
    challenge_ping_s: float
    rate_limits: bool
    limiters: dict[str, Limiter]
    lock: threading.RLock
    changed: threading.Condition
    games: dict[str, Game]
    challenges: dict[str, Challenge]
    _stopping: threading.Event
    if TYPE_CHECKING:
        def account_named(self, username: str) -> Account | None: ...
        def _new_id(self) -> str: ...
        def _event(self, account_id: str, obj: Any) -> None: ...
        def _challenge_event(self, ch: Challenge, account: Account) -> dict[str, Any]: ...
        def _game_started(self, g: Game) -> None: ...
        def _after_change(self, g: Game) -> None: ...
        def _broadcast_state(self, g: Game) -> None: ...

    def create_challenge(self, challenger: Account, dest: Account, spec: ChallengeSpec,
                         rematch_of: str | None = None) -> Challenge:
        """A new challenge, announced to both accounts (under the lock)."""
        with self.lock:
            fen = spec.fen
            if spec.variant == "chess960" and fen is None:
                fen = chess.Board.from_chess960_pos(random.randrange(960)).fen()
            final = spec.color if spec.color != "random" else random.choice(("white", "black"))
            ch = Challenge(id=self._new_id(), challenger=challenger, dest=dest, variant=spec.variant,
                           rated=spec.rated, limit_s=spec.limit_s, increment_s=spec.increment_s, days=spec.days,
                           color=spec.color, final_color=final, initial_fen=fen, rematch_of=rematch_of)
            self.challenges[ch.id] = ch
            self._event(dest.id, self._challenge_event(ch, dest))
            self._event(challenger.id, self._challenge_event(ch, challenger))
            return ch

    def _serve_create(self, h: Handler, me: Account, username: str, form: dict[str, Any]) -> None:
        dest = self.account_named(username)
        if dest is None:
            return h.reply(400, {"error": f"No such user: {username}"})
        if dest.id == me.id:
            return h.reply(400, {"error": "You cannot challenge yourself"})
        try:
            spec = parse_challenge_form(form)
        except FormError as err:
            return h.reply(400, err.body())
        refusal = self._over_limit(me, dest, creating=True)
        if refusal is not None:
            return h.reply(429, refusal)
        keep_alive = str(form.get("keepAliveStream", "false")).lower() in ("true", "1")
        watcher: queue.Queue[Any] = queue.Queue()
        with self.lock:
            ch = self.create_challenge(me, dest, spec)
            body = challenge_json(ch, self.url, "out")
            if keep_alive:
                ch.watchers.append(watcher)
                watcher.put(body)
        if not keep_alive:
            return h.reply(200, body)
        try:
            h.stream(watcher, self.keepalive, self._stopping)
        finally:  # the client closed it: the pings stop (lila ChallengeKeepAliveStream ``watchCompletion``)
            with self.lock:
                if watcher in ch.watchers:
                    ch.watchers.remove(watcher)
        return None

    def _over_limit(self, me: Account, other: Account, *, creating: bool) -> dict[str, Any] | None:
        """lila's 429 body when ``me`` is over a limit (:mod:`lichessbot.local.limits`) to create a challenge to
        ``other`` (``creating``; the credit is spent) or to accept its challenge, else None. Off without
        ``rate_limits``."""
        if not self.rate_limits:
            return None
        now = time.monotonic()
        with self.lock:
            games = self.limiters["bot_games"]
            if me.bot and other.bot and not games.allowed(me.id, now):
                return bot_games_refusal(games, me.id, now)
            if creating:
                minute, day = self.limiters["challenges_minute"], self.limiters["challenges_day"]
                if not (minute.allowed(me.id, now) and day.allowed(me.id, now)):
                    return dict(RATE_LIMITED)
                minute.spend(me.id, now)
                day.spend(me.id, now)
            return None

    def _sweep_challenges(self, now: float) -> None:
        """Under the lock, from the clock thread: an open ``keepAliveStream`` sees its challenge every
        :attr:`challenge_ping_s` (lila ChallengeKeepAliveStream ``api.ping``; an offline challenge comes back:
        ``setSeenAgain``); a real-time challenge still ``created`` and unseen for :attr:`challenge_unseen_s` goes
        ``offline`` (lila ChallengeApi ``sweep``, ``realTimeUnseenSince``): no longer listed nor sent again on an
        event stream; its challenger may still cancel it, its destination still accept it (lila ``active``)."""
        for ch in self.challenges.values():
            if ch.watchers and now - ch.pinged_at >= self.challenge_ping_s:
                ch.pinged_at = ch.seen_at = now
                if ch.status == "offline":
                    ch.status = "created"
            if ch.status == "created" and ch.limit_s is not None and now - ch.seen_at > self.challenge_unseen_s:
                ch.status = "offline"
                self.changed.notify_all()

    def _serve_rematch(self, h: Handler, me: Account | None, gid: str) -> None:
        """``POST /local/game/{id}/rematch`` (the page's rematch button; lila's is a round socket message, no API
        route): a player of a finished game offers its opponent a rematch, a challenge with ``rematchOf``, the same
        variant, start position, clock and mode, the colours swapped (lila ChallengeMaker ``makeRematch``); the
        opponent gets a ``challenge`` event and accepts or declines it as any challenge, and the old game's
        ``gameState`` then has ``rematch``: the new game's id. 200 with the challenge; 401 without a token; 404 not
        a player's game; 400 a game not over or one already rematched; a second offer answers the first."""
        if me is None:
            return h.reply(401, {"error": "No such token"})
        with self.lock:
            g = self.games.get(gid)
            white = None if g is None else g.color_of(me)
            if g is None or white is None:
                return h.reply(404, {"error": "No such game"})
            if not g.over or g.rematch is not None:
                return h.reply(400, {"error": "This game cannot be rematched"})
            pending = self.challenges.get(g.rematch_offer or "")
            if pending is not None and pending.status in ("created", "offline"):
                return h.reply(200, challenge_json(pending, self.url, "out"))
            spec = ChallengeSpec(variant=g.variant, rated=g.rated,
                                 limit_s=g.initial_ms / 1000 if g.has_clock else None,
                                 increment_s=g.increment_ms // 1000, days=g.days,
                                 color=color_name(not white),
                                 fen=None if g.initial_fen == "startpos" else g.initial_fen)
            ch = self.create_challenge(me, g.seat(not white).account, spec, rematch_of=g.id)
            g.rematch_offer = ch.id
            return h.reply(200, challenge_json(ch, self.url, "out"))

    def _close_challenge(self, ch: Challenge, status: str, reason: str | None = None) -> None:
        ch.status, ch.decline_reason = status, reason
        old = self.games.get(ch.rematch_of or "")
        if old is not None and old.rematch_offer == ch.id:
            old.rematch_offer = None
        for w in ch.watchers:
            w.put({"done": status})
            w.put(END)
        ch.watchers.clear()
        self.changed.notify_all()

    def _serve_answer(self, h: Handler, me: Account, cid: str, action: str, body: dict[str, Any]) -> None:
        """``accept``/``decline`` by the challenge's destination, ``cancel`` by its challenger."""
        with self.lock:
            ch = self.challenges.get(cid)
            if ch is None:
                return h.reply(404, {"error": "No such challenge"})
            if action == "cancel":
                return self._cancel(h, me, ch)
            if ch.dest.id != me.id or ch.status not in ("created", "offline"):  # lila Challenge ``active``
                return h.reply(404, {"error": "No such challenge"})
            if action == "accept":
                if me.bot and not compat(ch.speed)["bot"]:
                    return h.reply(400, {"error": "This game cannot be played with the Bot API."})
                refusal = self._over_limit(me, ch.challenger, creating=False)
                if refusal is not None:
                    return h.reply(429, refusal)
                g = self._start_game(ch)  # lila answers once the game exists (Challenge ``apiAccept``)
                old = self.games.get(ch.rematch_of or "")
                if old is not None:  # lila ChallengeApi ``accept``: ``NotifyRematch``; BotJsonView ``rematch``
                    old.rematch = g.id
                    self._broadcast_state(old)
                return h.reply(200, {"ok": True})
            self._close_challenge(ch, "declined", decline_reason(body.get("reason") if h.is_form else None))
            declined = challenge_json(ch, self.url, "out")
            self._event(ch.challenger.id, {"type": "challengeDeclined", "challenge": declined})
            return h.reply(200, {"ok": True})

    def _cancel(self, h: Handler, me: Account, ch: Challenge) -> None:
        if ch.challenger.id != me.id:
            return h.reply(404, {"error": "No such challenge"})
        if ch.status == "accepted":
            g = self.games.get(ch.id)
            if g is None or not abortable(g):
                return h.reply(400, {"error": "The game can no longer be aborted"})
            finish(g, "aborted", None, time.monotonic())
            self._broadcast_state(g)
            return h.reply(200, {"ok": True})
        if ch.status not in ("created", "offline"):
            return h.reply(404, {"error": "No such challenge"})
        self._close_challenge(ch, "canceled")
        for account in (ch.dest, ch.challenger):
            self._event(account.id, {"type": "challengeCanceled", "challenge": challenge_json(ch, self.url)})
        return h.reply(200, {"ok": True})

    def _serve_mine(self, h: Handler, me: Account) -> None:
        """``GET /api/challenge``: ``{"in": [...], "out": [...]}``, the challenges still ``created`` (an offline one
        is not listed: lila ChallengeRepo ``createdByDestId``, ``createdByChallengerId``)."""
        with self.lock:
            live = [ch for ch in self.challenges.values() if ch.status == "created"]
            h.reply(200, {"in": [challenge_json(ch, self.url, "in") for ch in live if ch.dest.id == me.id],
                          "out": [challenge_json(ch, self.url, "out") for ch in live if ch.challenger.id == me.id]})

    def _serve_show(self, h: Handler, me: Account, cid: str) -> None:
        with self.lock:
            ch = self.challenges.get(cid)
            if ch is None or me.id not in (ch.dest.id, ch.challenger.id):
                return h.reply(404, {"error": "No such challenge"})
            h.reply(200, challenge_json(ch, self.url, "in" if ch.dest.id == me.id else "out"))
            return None

    # games ---------------------------------------------------------------------------------------------
    def new_game(self, ch: Challenge) -> Game:
        """The game of accepted challenge ``ch`` (a hook: the test server makes its own kind)."""
        white_acc, black_acc = ((ch.challenger, ch.dest) if ch.final_color == "white" else (ch.dest, ch.challenger))
        fen = ch.initial_fen or "startpos"
        has_clock = ch.limit_s is not None
        initial = int((ch.limit_s or 0) * 1000)
        # scalachess Clock.Config ``initTime``: a clock without a base starts with its increment, at least 3 s
        start = ((initial or max(ch.increment_s * 1000, 3000)) if has_clock
                 else (ch.days or 0) * 86_400_000 or FOREVER)
        return Game(id=ch.id, white=Seat(white_acc), black=Seat(black_acc), board=make_board(ch.variant, fen),
                    initial_fen=fen, variant=ch.variant, rated=ch.rated,
                    speed=ch.speed if ch.limit_s is None else speed_of(ch.limit_s, ch.increment_s),
                    has_clock=has_clock, initial_ms=initial, increment_ms=ch.increment_s * 1000, days=ch.days,
                    wtime=start, btime=start)

    def _start_game(self, ch: Challenge) -> Game:
        """Accept ``ch``: its game starts (``gameStart`` to both players)."""
        with self.lock:
            g = self.new_game(ch)
            self.games[g.id] = g
            if g.white.account.bot and g.black.account.bot:  # a game between bots counts for both (BotLimit)
                for account in (g.white.account, g.black.account):
                    self.limiters["bot_games"].spend(account.id, time.monotonic())
            self._close_challenge(ch, "accepted")
            self._game_started(g)
            self._after_change(g)
            return g
