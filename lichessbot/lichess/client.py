"""The calls the bot makes to lichess, answered as typed values (:mod:`lichessbot.lichess.events`). Wire only:
imports no config and decides nothing. The requests themselves (token, timeouts, retries, pacing, 429
pauses) go through the account's :class:`~lichessbot.lichess.session.BotSession`.

Every failure is a :class:`LichessError` with the HTTP status and, when lichess's error body has one, its
``ratelimit`` (key and seconds: lila ``JsonLimited``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import berserk
import requests
import structlog
from berserk.formats import FormatHandler
from berserk.session import Requestor
from berserk.utils import noop

from lichessbot import __version__
from lichessbot.lichess.arenas import Arena, parse_arena, parse_arena_page
from lichessbot.lichess.events import (
    Account,
    Challenge,
    DeclineReason,
    GameInfo,
    MalformedEvent,
    RateLimit,
    parse_account,
    parse_challenge,
    parse_game,
    parse_rate_limit,
    parse_token,
)
from lichessbot.lichess.keepalive import KeptChallenge
from lichessbot.lichess.pacing import RequestDropped
from lichessbot.lichess.session import (
    BotSession,
    ChallengeLimited,
    ClientSettings,
    LichessError,
    OverLimit,
    endpoint_key,
    retry_after,
)
from lichessbot.lichess.users import parse_opponent_limit

__all__ = ["PLAYING_MAX", "BotSession", "ChallengeLimited", "ClientSettings", "LichessClient", "LichessError",
           "endpoint_key", "iter_lines"]

log = structlog.get_logger("lichessbot.lichess")
T = TypeVar("T")

#: Seconds a takeback answer may wait for its turn before it is stale (ours: an opponent moves within about that).
TAKEBACK_FRESH_S = 0.5

#: The most games ``/api/account/playing`` lists (lila app/controllers/Account.scala ``doNowPlaying``:
#: ``nb`` at most 50).
PLAYING_MAX = 50


class _Raw(FormatHandler[requests.Response]):
    """berserk format handler that hands back the open response of a stream (the caller reads lines)."""

    def __init__(self) -> None:
        super().__init__(mime_type="application/x-ndjson")

    def handle(self, response: requests.Response, is_stream: bool,
               converter: Callable[[requests.Response], requests.Response] = noop) -> requests.Response:
        return response


def _short(err: Exception) -> str:
    """A one-line description of a berserk/requests error (status and lichess's message, no headers; for a
    server not reached, the session's message: the URL, the cause and what to check)."""
    if isinstance(err, berserk.exceptions.ResponseError):
        cause = err.cause
        detail = cause.get("error") if isinstance(cause, dict) else None
        return f"HTTP {err.status_code}" + (f": {detail}" if detail else "")
    inner = getattr(err, "error", err)
    if isinstance(inner, requests.ConnectionError | requests.Timeout) and str(inner).startswith("cannot reach "):
        return str(inner)
    return type(inner).__name__


def _body(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _error(what: str, response: requests.Response, body: Any) -> LichessError:
    """The error of a failed answer: status, lichess's ``error`` text (a JSON body; an HTML 429 page gives
    the status alone) and its ``ratelimit``."""
    detail = body.get("error") if isinstance(body, dict) else None
    detail = detail if isinstance(detail, str) else None
    limit = parse_opponent_limit(body, time.time()) if response.status_code == 400 else parse_rate_limit(body)
    return LichessError(f"{what}: HTTP {response.status_code}" + (f": {detail}" if detail else ""),
                        response.status_code, limit)


def _parsed(what: str, items: list[Any], parse: Callable[[Any], T]) -> list[T]:
    """Each item parsed; a malformed one is logged and skipped."""
    out = []
    for item in items:
        try:
            out.append(parse(item))
        except MalformedEvent as err:
            log.warning("malformed line skipped", endpoint=what, error=str(err))
    return out


class LichessClient:
    """The calls the bot makes. Every failure is a :class:`LichessError` with the HTTP status."""

    def __init__(self, token: str, url: str = "https://lichess.org", settings: ClientSettings | None = None,
                 stop: threading.Event | None = None):
        if not token:
            raise LichessError("no API token: set LICHESS_BOT_TOKEN or `token` in the config")
        self.url = url.rstrip("/")
        self.settings = settings or ClientSettings()
        self.session = BotSession(token, self.settings, stop)
        self.api = berserk.Client(session=self.session, base_url=self.url)
        self._streams = Requestor(self.session, self.url, default_fmt=_Raw())

    def _call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except berserk.exceptions.ResponseError as err:
            raise LichessError(f"{what}: {_short(err)}", err.status_code, parse_rate_limit(err.cause)) from None
        except (berserk.exceptions.ApiError, requests.RequestException, RequestDropped) as err:
            raise LichessError(f"{what}: {_short(err)}") from None

    def _request(self, what: str, method: str, path: str, **kwargs: Any) -> Any:
        """``method path`` (form data in ``data=``); the JSON body of a success (None if it has none).
        Any status >= 400 raises :class:`LichessError`."""
        try:
            response = self.session.request(method, self.url + path, **kwargs)
        except (requests.RequestException, RequestDropped) as err:
            raise LichessError(f"{what}: {_short(err)}") from None
        with response:
            body = _body(response)
            if response.status_code >= 400:
                raise _error(what, response, body)
            return body

    def _post(self, what: str, path: str, *, deadline: float | None = None, **kwargs: Any) -> None:
        self._request(what, "POST", path, deadline=deadline, **kwargs)

    def _answer(self, what: str, path: str, **kwargs: Any) -> None:
        """A challenge answer: a 429 is not retried (a retry would hold every other answer for minutes);
        the caller reads it from the error (status, ``rate_limit``)."""
        self._request(what, "POST", path, retry_429=False, **kwargs)

    # account -----------------------------------------------------------------------------------
    def account(self) -> Account:
        """``/api/account``: id, username, title ("BOT" for bot accounts), perfs."""
        raw = self._call("reading the account", self.api.account.get)
        try:
            return parse_account(raw)
        except MalformedEvent as err:
            raise LichessError(f"reading the account: {err}") from None

    def token_scopes(self) -> tuple[str, ...] | None:
        """``POST /api/token/test`` for our token: its scopes (e.g. ``bot:play``), or None when lichess does
        not know it. The token goes in the body (as the API spec asks), never in a message. The first call the
        bot makes: a server not reached raises :class:`LichessError` naming the URL, the cause and what to
        check within ``settings.first_contact`` seconds."""
        token = self.session.headers["Authorization"].removeprefix("Bearer ")
        body = self._request("testing the token", "POST", "/api/token/test", data=token,
                             headers={"Content-Type": "text/plain"}, budget=self.settings.first_contact)
        entry = body.get(token) if isinstance(body, dict) else None
        try:
            info = parse_token(entry) if isinstance(entry, dict) else None
        except MalformedEvent as err:
            raise LichessError(f"testing the token: {err}") from None
        return None if info is None else info.scopes

    def identify(self, username: str) -> None:
        """Name the bot in the User-Agent of every request: ``lichessbot/<version> user:<name>`` (lichess asks
        API clients to say who runs them: https://lichess.org/page/api-tips)."""
        self.session.headers["User-Agent"] = f"lichessbot/{__version__} user:{username}"

    def upgrade_to_bot(self) -> None:
        self._call("upgrading to a BOT account", self.api.account.upgrade_to_bot)

    def ongoing_games(self) -> list[GameInfo]:
        """``/api/account/playing?nb=50``: the games in progress, the most urgent first, at most
        :data:`PLAYING_MAX` (lila app/controllers/Account.scala ``doNowPlaying``: ``nb`` at most 50; sorted
        by lila's ``Pov.priority``: games on our move first). A full answer may leave games out."""
        return _parsed("GET /api/account/playing",
                       self._call("listing ongoing games", self.api.games.get_ongoing, PLAYING_MAX), parse_game)

    def game_over(self, game_id: str) -> bool:
        """Whether game ``game_id`` is over, from its export (``GET /game/export/{id}`` as JSON, lichess-org/api
        games-exportOneGame: ``status`` ``created`` or ``started`` while it runs). Raises :class:`LichessError`
        (a 404: no such game)."""
        body = self._request(f"reading game {game_id}", "GET", f"/game/export/{game_id}",
                             params={"moves": "false", "clocks": "false", "evals": "false", "opening": "false"},
                             headers={"Accept": "application/json"})
        status = body.get("status") if isinstance(body, dict) else None
        if not isinstance(status, str):
            raise LichessError(f"reading game {game_id}: no status in the answer")
        return status not in ("created", "started")

    # challenges --------------------------------------------------------------------------------
    def accept_challenge(self, challenge_id: str) -> None:
        """Accept. Raises :class:`LichessError`: a 429 with ``rate_limit`` (key ``bot.vsBot.day``: our
        daily bot games) or a 400 with ``rate_limit`` (the opponent's daily bot games, lila BotLimit), not
        retried."""
        self._answer(f"accepting challenge {challenge_id}", f"/api/challenge/{challenge_id}/accept")

    def decline_challenge(self, challenge_id: str, reason: DeclineReason) -> None:
        """Decline with lichess's ``reason`` (its key), sent as a form (the API spec's request body;
        berserk 0.14 sends JSON)."""
        self._answer(f"declining challenge {challenge_id}", f"/api/challenge/{challenge_id}/decline",
                     data={"reason": reason.value})

    def _ndjson(self, what: str, path: str, params: dict[str, Any]) -> list[Any]:
        """``GET path`` answered with NDJSON, read as a stream (lichess streams such lists slowly, e.g. online
        bots at 50 users a second): its objects (an unreadable line is logged and skipped)."""
        try:
            response = self.session.request("GET", self.url + path, params=params, stream=True)
        except (requests.RequestException, RequestDropped) as err:
            raise LichessError(f"{what}: {_short(err)}") from None
        with response:
            if response.status_code >= 400:
                raise _error(what, response, _body(response))
            lines = []
            for line in response.iter_lines(decode_unicode=True):
                if line and line.strip():
                    try:
                        lines.append(json.loads(line))
                    except ValueError:
                        log.warning("malformed line skipped", endpoint=f"GET {path}")
            return lines

    def online_bots(self, nb: int = 512) -> list[Account]:
        """``GET /api/bot/online?nb=``: the bots online now (NDJSON of users with ``perfs``); ``nb`` at most
        512 (lila's maximum for this endpoint; not checked against lila's source here). lichess streams them
        at 50 users a second (API spec), so the answer is read as a stream: ten seconds of it never hold the
        other requests, which go one at a time."""
        return _parsed("GET /api/bot/online", self._ndjson("listing online bots", "/api/bot/online", {"nb": nb}),
                       parse_account)

    # arenas ------------------------------------------------------------------------------------
    def join_arena(self, tournament_id: str, team: str | None = None, password: str | None = None) -> None:
        """``POST /api/tournament/{id}/join`` (lichess-org/api api-tournament-id-join.yaml), a form with
        ``team`` for a team battle and ``password`` for a private arena; no ``pairMeAsap`` (lila pairs a bot
        whose event stream is open). A 400 (bots not allowed, not a team member, a wrong password,
        finished...) raises :class:`LichessError` with lila's reason; a 429 (lila's 30 joins per 10 minutes)
        is retried once its pause is over."""
        form = {k: v for k, v in (("team", team), ("password", password)) if v}
        self._post(f"joining arena {tournament_id}", f"/api/tournament/{tournament_id}/join", data=form)

    def withdraw_arena(self, tournament_id: str) -> None:
        """``POST /api/tournament/{id}/withdraw`` (api-tournament-id-withdraw.yaml): leave a future arena,
        pause a started one (no more pairings)."""
        self._post(f"withdrawing from arena {tournament_id}", f"/api/tournament/{tournament_id}/withdraw")

    def arena(self, tournament_id: str) -> Arena:
        """``GET /api/tournament/{id}`` (lila JsonView: the only answer that says ``botsAllowed``)."""
        body = self._request(f"reading arena {tournament_id}", "GET", f"/api/tournament/{tournament_id}")
        if not isinstance(body, dict):
            raise LichessError(f"reading arena {tournament_id}: not an arena")
        try:
            return parse_arena_page(body, int(time.time() * 1000))
        except MalformedEvent as err:
            raise LichessError(f"reading arena {tournament_id}: {err}") from None

    def team_arenas(self, team_id: str, status: str = "started", nb: int = 50) -> list[Arena]:
        """``GET /api/team/{teamId}/arena?status=&max=`` (api-team-teamId-arena.yaml): the team's arenas in
        that state (``created``, ``started``, ``finished``), last starting first."""
        return _parsed(f"GET /api/team/{team_id}/arena",
                       self._ndjson(f"listing arenas of team {team_id}", f"/api/team/{team_id}/arena",
                                    {"status": status, "max": nb}), parse_arena)

    def create_challenge(self, username: str, form: dict[str, str], cost: int = 1) -> Challenge:
        """``POST /api/challenge/{username}`` with the spec's form; returns the challenge.

        ``cost``: the credits lila charges for it in its challenge windows (app/controllers/Challenge.scala
        ``apiCreate``: 1 to a bot, 5 to a human, 0 to someone who follows us): a challenge that would pass
        25 credits a minute or 200 a day (:mod:`lichessbot.lichess.limits`) is not sent
        (:class:`ChallengeLimited` with the seconds until it fits). A 429 is not retried (it is a limit, not
        a hiccup): :class:`ChallengeLimited` with lichess's wait. Other failures: :class:`LichessError` with
        the status and lichess's error text.
        """
        what = f"challenging {username}"
        try:
            response = self.session.request("POST", f"{self.url}/api/challenge/{username}", data=form,
                                            retry_429=False, cost=cost, over_limit="refuse")
        except OverLimit as err:
            raise ChallengeLimited(f"{what}: {err}", err.seconds) from None
        except (requests.RequestException, RequestDropped) as err:
            raise LichessError(f"{what}: {_short(err)}") from None
        with response:
            body = _body(response)
            if response.status_code == 429:
                refused = _error(what, response, body)
                limit: RateLimit | None = refused.rate_limit
                seconds = limit.seconds if limit is not None else retry_after(response)
                raise ChallengeLimited(str(refused), seconds, limit)
            if response.status_code >= 400 or not isinstance(body, dict):
                raise _error(what, response, body)
            inner = body.get("challenge")
            try:
                return parse_challenge(inner if isinstance(inner, dict) else body)
            except MalformedEvent as err:
                raise LichessError(f"{what}: {err}", response.status_code) from None

    def create_kept_challenge(self, username: str, form: dict[str, str], cost: int = 1,
                              hold_s: float = 60.0) -> KeptChallenge:
        """:meth:`create_challenge` with ``keepAliveStream=true``: the challenge and its open stream, which brings
        lila's verdict as soon as lila has it (:mod:`lichessbot.lichess.keepalive`). ``hold_s``: the longest the
        stream may stay silent (seconds; lila sends nothing between the challenge and its verdict). Raises as
        :meth:`create_challenge`."""
        what = f"challenging {username}"
        try:
            response = self.session.request("POST", f"{self.url}/api/challenge/{username}",
                                            data={**form, "keepAliveStream": "true"}, retry_429=False, cost=cost,
                                            over_limit="refuse", stream=True,
                                            timeout=(self.settings.timeout, hold_s))
        except OverLimit as err:
            raise ChallengeLimited(f"{what}: {err}", err.seconds) from None
        except (requests.RequestException, RequestDropped) as err:
            raise LichessError(f"{what}: {_short(err)}") from None
        if response.status_code >= 400:
            with response:
                body = _body(response)
                refused = _error(what, response, body)
                if response.status_code == 429:
                    limit = refused.rate_limit
                    raise ChallengeLimited(str(refused), limit.seconds if limit else retry_after(response), limit)
                raise refused
        lines = response.iter_lines()
        try:
            first = next((x for x in lines if x and x.strip()), None)
            body = json.loads(first) if first else None
            inner = body.get("challenge") if isinstance(body, dict) else None
            challenge = parse_challenge(inner if isinstance(inner, dict) else body)  # type: ignore[arg-type]
        except (requests.RequestException, ValueError, AttributeError) as err:
            response.close()
            raise LichessError(f"{what}: the challenge could not be read ({type(err).__name__})") from None
        return KeptChallenge(challenge, response, lines)

    def cancel_challenge(self, challenge_id: str) -> None:
        """``POST /api/challenge/{id}/cancel``: withdraw a challenge of ours."""
        self._post(f"canceling challenge {challenge_id}", f"/api/challenge/{challenge_id}/cancel")

    # games -------------------------------------------------------------------------------------
    def make_move(self, game_id: str, uci: str, offering_draw: bool = False, deadline: float | None = None) -> None:
        """POST the move (``?offeringDraw=true`` to offer a draw with it, or to accept the opponent's).

        ``deadline`` (monotonic seconds): retries and 429 pauses wait no longer than this; the read
        timeout is ``ClientSettings.move_timeout``. Raises :class:`LichessError`.
        """
        params = {"offeringDraw": "true"} if offering_draw else None
        self._post(f"posting move {uci}", f"/api/bot/game/{game_id}/move/{uci}", params=params, deadline=deadline)

    def answer_takeback(self, game_id: str, accept: bool) -> None:
        """``POST /api/bot/game/{id}/takeback/{yes|no}``: answer the opponent's takeback offer. Never retried, and
        never sent late (a 429 pause, a wait for a token or for its turn longer than :data:`TAKEBACK_FRESH_S`: the
        answer is dropped): a ``yes`` that reaches lila after the offer is gone (the opponent moved meanwhile)
        proposes a takeback of ours (lila round ``Takebacker.yes``), so a lost answer is for the next game
        state to give again."""
        self._post("answering a takeback", f"/api/bot/game/{game_id}/takeback/{'yes' if accept else 'no'}",
                   retries=0, retry_429=False, fresh_for=TAKEBACK_FRESH_S)

    def post_chat(self, game_id: str, room: str, text: str) -> None:
        """Post ``text`` to ``room`` ("player" or "spectator"). A line the request budget cannot afford
        is dropped (:class:`LichessError` with status None)."""
        self._post("posting chat", f"/api/bot/game/{game_id}/chat", data={"room": room, "text": text})

    def abort_game(self, game_id: str) -> None:
        self._post("aborting", f"/api/bot/game/{game_id}/abort")

    def resign_game(self, game_id: str) -> None:
        self._post("resigning", f"/api/bot/game/{game_id}/resign")

    def claim_victory(self, game_id: str) -> None:
        """``/claim-victory`` (opponent gone); lila answers 400 when it is not (yet) allowed."""
        self._post("claiming victory", f"/api/bot/game/{game_id}/claim-victory")

    def claim_draw(self, game_id: str) -> None:
        """``/claim-draw``: a draw when the opponent has left the game for a while (API spec)."""
        self._post("claiming a draw", f"/api/bot/game/{game_id}/claim-draw")

    # streams -----------------------------------------------------------------------------------
    def _open(self, what: str, path: str) -> requests.Response:
        # berserk's Requestor.get is typed for any format; ours (_Raw) hands back the open response
        return cast(requests.Response, self._call(what, self._streams.get, path, stream=True))

    def open_event_stream(self) -> requests.Response:
        """The open ``/api/stream/event`` response (read it with ``iter_lines``; close it when done)."""
        return self._open("opening the event stream", "/api/stream/event")

    def open_game_stream(self, game_id: str) -> requests.Response:
        """The open ``/api/bot/game/stream/{id}`` response."""
        return self._open(f"opening the stream of game {game_id}", f"/api/bot/game/stream/{game_id}")

    def close(self) -> None:
        """Close the HTTP session; a call waiting to retry (in another thread) gives up at once."""
        self.session.stop.set()
        self.session.close()


def iter_lines(response: requests.Response) -> Iterator[bytes]:
    """The raw lines of an open stream, keepalive (empty) lines included."""
    yield from response.iter_lines()
