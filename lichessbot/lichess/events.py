"""lichess's JSON parsed at the door: one frozen value per event and object the bot reads (users, accounts,
tokens and rate limits come from :mod:`lichessbot.lichess.users` and are named here too). Wire only:
imports nothing of the project outside :mod:`lichessbot.lichess` but :mod:`lichessbot.errors`.

Shapes from lila (lichess-org/lila): the event stream ``modules/api/src/main/EventStream.scala``
(``gameStart``/``gameFinish`` with the game's ``JsonView.ownerPreview`` and ``compat``; ``challenge``,
``challengeCanceled``, ``challengeDeclined`` with the challenge and, for ``challenge``, ``compat`` beside
it); challenges ``modules/challenge/src/main/JsonView.scala``; the game stream
``modules/bot/src/main/BotJsonView.scala`` (``gameFull``, ``gameState``, ``chatLine``, ``opponentGone``);
``/api/token/test`` and ``/api/bot/online`` from the lichess-org/api OpenAPI files.

lila's missing-key rules, applied here and nowhere else:

* keys written with ``.add(...)`` are left out when false or absent: ``wdraw``/``bdraw``,
  ``wtakeback``/``btakeback``, ``provisional``, ``online``, ``tosViolation``, ``disabled`` (absent:
  False); ``winner``, ``rematch``, ``rematchOf``, ``initialFen`` (challenge), ``declineReason(Key)``,
  ``tournamentId``, ``clock``, ``daysPerTurn``, ``title``, ``rating``, ``aiLevel``, ``secondsLeft``
  (absent: None);
* a challenge of an anonymous player or an open challenge has no ``challenger`` / ``destUser``;
* ``declineReasonKey`` is lowercase (lila ``Challenge.DeclineReason.key`` is ``toString.toLowerCase``):
  :attr:`Challenge.decline_reason_key` is read into :class:`~lichessbot.lichess.decline.DeclineReason`.

A line whose known keys have the wrong type raises :class:`MalformedEvent` (a ``ValueError``): the stream
logs it and skips it. Keys lila always sends but that are absent get a neutral value (``""``, 0), so a
future shape never stops the bot. The field readers are :mod:`lichessbot.lichess.reading`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lichessbot.lichess.decline import DeclineReason
from lichessbot.lichess.reading import (
    JSON,
    MalformedEvent,
    bool_,
    int_,
    key_,
    need,
    obj,
    opt_int,
    opt_str,
    status_,
    str_,
)
from lichessbot.lichess.users import (
    Account,
    Perf,
    RateLimit,
    TokenInfo,
    User,
    parse_account,
    parse_rate_limit,
    parse_token,
    parse_user,
)

__all__ = [
    "Account", "ChatLine", "Challenge", "ChallengeCanceled", "ChallengeDeclined", "ChallengeEvent", "ClockSetting",
    "Compat", "Connected", "DeclineReason", "GameEvent", "GameFinish", "GameFull", "GameInfo", "GamePlayer",
    "GameStart", "GameState", "MalformedEvent", "Opponent", "OpponentGone", "OtherEvent", "Perf", "RateLimit",
    "StreamEvent", "TimeControl", "TokenInfo", "User", "parse_account", "parse_challenge", "parse_event",
    "parse_game", "parse_game_event", "parse_rate_limit", "parse_token",
]

# challenges ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TimeControl:
    """``type`` clock (``limit`` and ``increment`` in seconds), correspondence (``days_per_turn``) or
    unlimited."""

    type: str
    limit: int = 0
    increment: int = 0
    days_per_turn: int | None = None


@dataclass(frozen=True)
class Compat:
    """Whether a bot (``bot``) or the Board API (``board``) may play the game (lila ``compatJson``)."""

    bot: bool
    board: bool


@dataclass(frozen=True)
class Challenge:
    """A challenge (lila challenge ``JsonView``). ``challenger``/``dest_user`` None: anonymous or open;
    ``decline_reason_key``: lichess's ``declineReasonKey`` read case-insensitively (None: not declined);
    ``compat`` from the event (None elsewhere)."""

    id: str
    status: str = "created"
    challenger: User | None = None
    dest_user: User | None = None
    variant: str = "standard"
    rated: bool = False
    speed: str = ""
    time_control: TimeControl = TimeControl("")
    color: str = "random"
    final_color: str = ""
    rematch_of: str | None = None
    direction: str | None = None
    initial_fen: str | None = None
    decline_reason: str | None = None
    decline_reason_key: DeclineReason | None = None
    compat: Compat | None = None

    @property
    def challenger_name(self) -> str:
        """The challenger's name ("" for an anonymous one)."""
        return self.challenger.name if self.challenger else ""

    @property
    def challenger_is_bot(self) -> bool:
        return self.challenger is not None and self.challenger.is_bot

    @property
    def realtime(self) -> bool:
        """A game with a clock (it needs a slot)."""
        return self.time_control.type == "clock"


def _time_control(d: JSON) -> TimeControl:
    return TimeControl(type=str_(d, "type"), limit=int_(d, "limit"), increment=int_(d, "increment"),
                       days_per_turn=opt_int(d, "daysPerTurn"))


def _compat(d: JSON) -> Compat | None:
    return Compat(bot=bool_(d, "bot"), board=bool_(d, "board")) if d else None


def parse_challenge(d: JSON, compat: Compat | None = None) -> Challenge:
    """A challenge object. Raises MalformedEvent (no ``id``, a key of the wrong type)."""
    cid = str_(d, "id")
    if not cid:
        raise MalformedEvent("a challenge without an id")
    return Challenge(
        id=cid, status=str_(d, "status", "created"), challenger=parse_user(obj(d, "challenger")),
        dest_user=parse_user(obj(d, "destUser")), variant=key_(d, "variant", "standard"), rated=bool_(d, "rated"),
        speed=str_(d, "speed"), time_control=_time_control(obj(d, "timeControl")), color=str_(d, "color", "random"),
        final_color=str_(d, "finalColor"), rematch_of=opt_str(d, "rematchOf"), direction=opt_str(d, "direction"),
        initial_fen=opt_str(d, "initialFen"), decline_reason=opt_str(d, "declineReason"),
        decline_reason_key=None if (key := opt_str(d, "declineReasonKey")) is None else DeclineReason.from_key(key),
        compat=compat)


# games ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Opponent:
    """The other side of a game as ``gameStart`` names it (no title: lila ``ownerPreview`` sends none)."""

    id: str | None
    username: str
    rating: int | None = None
    ai: int | None = None


@dataclass(frozen=True)
class GameInfo:
    """A game of ``gameStart``/``gameFinish`` and ``/api/account/playing`` (lila ``JsonView.ownerPreview``).
    ``seconds_left``: our clock in seconds (None without a clock)."""

    game_id: str
    color: str = "white"
    fen: str = ""
    is_my_turn: bool = False
    has_moved: bool = False
    opponent: Opponent = Opponent(None, "")
    rated: bool = False
    speed: str = ""
    source: str | None = None
    status: str = "started"
    variant: str = "standard"
    seconds_left: int | None = None
    tournament_id: str | None = None
    winner: str | None = None
    compat: Compat | None = None

    @property
    def correspondence(self) -> bool:
        """A game without a real-time clock."""
        return self.speed == "correspondence"


def parse_game(d: JSON) -> GameInfo:
    """A game object of the event stream or of ``/api/account/playing``. Raises MalformedEvent."""
    gid = str_(d, "gameId") or str_(d, "id")
    if not gid:
        raise MalformedEvent("a game without an id")
    opp = obj(d, "opponent")
    return GameInfo(
        game_id=gid, color=str_(d, "color", "white"), fen=str_(d, "fen"), is_my_turn=bool_(d, "isMyTurn"),
        has_moved=bool_(d, "hasMoved"),
        opponent=Opponent(opt_str(opp, "id"), str_(opp, "username") or str_(opp, "id"), opt_int(opp, "rating"),
                          opt_int(opp, "ai")),
        rated=bool_(d, "rated"), speed=str_(d, "speed"), source=opt_str(d, "source"), status=status_(d) or "started",
        variant=key_(d, "variant", "standard"), seconds_left=opt_int(d, "secondsLeft"),
        tournament_id=opt_str(d, "tournamentId"), winner=opt_str(d, "winner"), compat=_compat(obj(d, "compat")))


@dataclass(frozen=True)
class GamePlayer:
    """White or black of ``gameFull`` (lila ``BotJsonView.playerJson``): a user, or the AI (``ai_level``)."""

    id: str | None = None
    name: str | None = None
    title: str | None = None
    rating: int | None = None
    provisional: bool = False
    ai_level: int | None = None

    @property
    def is_bot(self) -> bool:
        return self.title == "BOT"

    @property
    def display(self) -> str:
        """The name, else the id, else ``AI level N``."""
        return self.name or self.id or f"AI level {self.ai_level}"


def _player(d: JSON) -> GamePlayer:
    return GamePlayer(id=opt_str(d, "id"), name=opt_str(d, "name"), title=opt_str(d, "title"),
                      rating=opt_int(d, "rating"), provisional=bool_(d, "provisional"),
                      ai_level=opt_int(d, "aiLevel"))


@dataclass(frozen=True)
class ClockSetting:
    """The clock a game is played with (``gameFull``'s ``clock``; scalachess's ``Clock.Config``): ``initial``
    and ``increment`` in milliseconds. The clock's running times are :class:`lichessbot.timeman.clock.Clock`."""

    initial: int
    increment: int


@dataclass(frozen=True)
class GameState:
    """``gameState`` (and ``gameFull.state``): ``moves`` in UCI, clocks in milliseconds, lichess's
    ``status`` name, the draw and takeback offers (absent: False), ``winner`` (absent: None)."""

    moves: str = ""
    wtime: int = 0
    btime: int = 0
    winc: int = 0
    binc: int = 0
    status: str = "started"
    wdraw: bool = False
    bdraw: bool = False
    wtakeback: bool = False
    btakeback: bool = False
    winner: str | None = None

    @property
    def running(self) -> bool:
        return self.status in ("created", "started")


def _state(d: JSON, where: str = "gameState") -> GameState:
    need(d, where, "moves", "wtime", "btime", "status")  # lichess-org/api GameStateEvent.yaml: required
    return GameState(moves=str_(d, "moves"), wtime=int_(d, "wtime"), btime=int_(d, "btime"), winc=int_(d, "winc"),
                     binc=int_(d, "binc"), status=status_(d) or "started", wdraw=bool_(d, "wdraw"),
                     bdraw=bool_(d, "bdraw"), wtakeback=bool_(d, "wtakeback"), btakeback=bool_(d, "btakeback"),
                     winner=opt_str(d, "winner"))


@dataclass(frozen=True)
class GameFull:
    """``gameFull``: the game's fixed facts and its ``state``. ``clock`` None: no real-time clock."""

    id: str
    state: GameState
    white: GamePlayer = GamePlayer()
    black: GamePlayer = GamePlayer()
    variant: str = "standard"
    speed: str = ""
    rated: bool = False
    initial_fen: str = "startpos"
    clock: ClockSetting | None = None
    days_per_turn: int | None = None
    tournament_id: str | None = None


@dataclass(frozen=True)
class ChatLine:
    """``chatLine``: ``room`` is "player" or "spectator"."""

    room: str
    username: str
    text: str


@dataclass(frozen=True)
class OpponentGone:
    """``opponentGone``: ``gone``, and the seconds until a claim is allowed (None when back)."""

    gone: bool
    claim_win_in_seconds: int | None = None


@dataclass(frozen=True)
class ChallengeEvent:
    """``challenge``: a challenge to us (or our own, ``direction`` out), with its ``compat``."""

    challenge: Challenge


@dataclass(frozen=True)
class ChallengeCanceled:
    challenge: Challenge


@dataclass(frozen=True)
class ChallengeDeclined:
    """``challengeDeclined``: lichess's answer to a challenge of ours (``decline_reason_key``)."""

    challenge: Challenge


@dataclass(frozen=True)
class GameStart:
    game: GameInfo


@dataclass(frozen=True)
class GameFinish:
    game: GameInfo


@dataclass(frozen=True)
class Connected:
    """Yielded after each (re)connection of a stream. ``opened_at``: monotonic seconds when the request was
    sent (nothing on the stream was computed by the server before it)."""

    reconnect: bool
    opened_at: float


@dataclass(frozen=True)
class OtherEvent:
    """An event type the bot does not read (logged at debug level)."""

    type: str


StreamEvent = ChallengeEvent | ChallengeCanceled | ChallengeDeclined | GameStart | GameFinish | OtherEvent
GameEvent = GameFull | GameState | ChatLine | OpponentGone | OtherEvent


def _type(d: Any) -> str:
    if not isinstance(d, Mapping) or not isinstance(d.get("type"), str):
        raise MalformedEvent("not an object with a type")
    return str(d["type"])


def parse_event(d: Any) -> StreamEvent:
    """One line of ``/api/stream/event``. Raises MalformedEvent."""
    kind = _type(d)
    if kind == "challenge":
        return ChallengeEvent(parse_challenge(obj(d, "challenge"), _compat(obj(d, "compat"))))
    if kind == "challengeCanceled":
        return ChallengeCanceled(parse_challenge(obj(d, "challenge")))
    if kind == "challengeDeclined":
        return ChallengeDeclined(parse_challenge(obj(d, "challenge")))
    if kind == "gameStart":
        return GameStart(parse_game(obj(d, "game")))
    if kind == "gameFinish":
        return GameFinish(parse_game(obj(d, "game")))
    return OtherEvent(kind)


def parse_game_event(d: Any) -> GameEvent:
    """One line of ``/api/bot/game/stream/{id}``. Raises MalformedEvent."""
    kind = _type(d)
    if kind == "gameFull":
        need(d, "gameFull", "id", "state", "white", "black")  # GameFullEvent.yaml: required, and what we read
        clock = obj(d, "clock")
        return GameFull(id=str_(d, "id"), state=_state(obj(d, "state"), "gameFull.state"),
                        white=_player(obj(d, "white")), black=_player(obj(d, "black")),
                        variant=key_(d, "variant", "standard"), speed=str_(d, "speed"),
                        rated=bool_(d, "rated"), initial_fen=str_(d, "initialFen", "startpos"),
                        clock=ClockSetting(int_(clock, "initial"), int_(clock, "increment")) if clock else None,
                        days_per_turn=opt_int(d, "daysPerTurn"), tournament_id=opt_str(d, "tournamentId"))
    if kind == "gameState":
        return _state(d)
    if kind == "chatLine":
        need(d, "chatLine", "room", "username", "text")
        return ChatLine(room=str_(d, "room"), username=str_(d, "username"), text=str_(d, "text"))
    if kind == "opponentGone":
        need(d, "opponentGone", "gone")
        return OpponentGone(gone=bool_(d, "gone"), claim_win_in_seconds=opt_int(d, "claimWinInSeconds"))
    return OtherEvent(kind)
