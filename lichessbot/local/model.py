"""The embedded lichess's values: accounts, challenges and games (a board, two seats, clocks in milliseconds,
chat), with the constants of lila they follow. No I/O, no locks: :class:`lichessbot.local.server.LocalLichess`
holds them under its lock. Imports python-chess only."""

from __future__ import annotations

import queue
import secrets
import string
import time
from dataclasses import dataclass, field
from typing import Any

import chess
import chess.variant

__all__ = ["CHALLENGE_PING_S", "CHALLENGE_UNSEEN_S", "CLOCK_LIMITS", "DAYS", "DECLINE_REASONS", "EXPIRABLE_SOURCES",
           "FOREVER", "MAX_INCREMENT", "STATUS_IDS", "VARIANT_NAMES", "Account", "ChatLine", "Challenge", "Game",
           "Seat", "Subscriber", "color_name", "make_board", "player_id", "speed_of"]

#: ``wtime``/``btime`` of a game without a clock (lila BotJsonView: ``millisRemaining`` of no clock, Int.MaxValue).
FOREVER = 2_147_483_647
#: Game status names and ids (scalachess ``Status``; lichess-org/api doc/specs/schemas/GameStatusId.yaml).
STATUS_IDS = {"created": 10, "started": 20, "aborted": 25, "mate": 30, "resign": 31, "stalemate": 32, "timeout": 33,
              "draw": 34, "outoftime": 35, "cheat": 36, "noStart": 37, "unknownFinish": 38,
              "insufficientMaterialClaim": 39, "variantEnd": 60}
#: ``clock.limit`` values a challenge may have, seconds (lichess-org/api api-challenge-username.yaml: "0, 15, 30,
#: 45, 60, 90, and any multiple of 60 up to 10800").
CLOCK_LIMITS = frozenset({0, 15, 30, 45, 90} | {60 * m for m in range(1, 181)})
#: The largest ``clock.increment``, seconds (lila modules/setup/src/main/Config.scala ``validateIncrement``).
MAX_INCREMENT = 180
#: Seconds a real-time challenge may go unseen before it goes ``offline`` (lila ChallengeApi ``sweep``:
#: ``realTimeUnseenSince(now - 20 s)``; lichess-org/api api-challenge-username.yaml: "Challenges for realtime games
#: (not correspondence) expire after 20s if not accepted"), and how often an open ``keepAliveStream`` sees it
#: (lila ChallengeKeepAliveStream: ``api.ping`` every 15 s).
CHALLENGE_UNSEEN_S, CHALLENGE_PING_S = 20.0, 15.0
#: The game sources whose games expire when a first move never comes (lila modules/core/src/main/game/misc.scala
#: ``Source.expirable``: lobby, arena, pool and swiss; a challenge's game, source ``friend``, never does).
EXPIRABLE_SOURCES = frozenset({"lobby", "arena", "pool", "swiss"})
#: ``days`` per move a correspondence challenge may have (api-challenge-username.yaml).
DAYS = (1, 2, 3, 5, 7, 10, 14)
#: lichess's variants (keys) and their names (scalachess ``Variant.name``; lichess-org/api schemas/VariantKey.yaml):
#: a challenge may name any of them, whether or not the bot plays it (it declines with reason ``variant``).
VARIANT_NAMES = {"standard": "Standard", "chess960": "Chess960", "fromPosition": "From Position",
                 "crazyhouse": "Crazyhouse", "antichess": "Antichess", "atomic": "Atomic", "horde": "Horde",
                 "kingOfTheHill": "King of the Hill", "racingKings": "Racing Kings", "threeCheck": "Three-check"}
#: python-chess's names of the other variants (chess.variant.find_variant).
_PYCHESS = {"antichess": "antichess", "atomic": "atomic", "horde": "horde", "kingOfTheHill": "kingofthehill",
            "racingKings": "racingkings", "threeCheck": "3check", "crazyhouse": "crazyhouse"}
#: lichess's decline reasons, key -> the English text lila sends (modules/challenge/src/main/DeclineReason.scala;
#: the texts: translation/source/challenge.xml ``challengeDecline*``).
DECLINE_REASONS = {
    "generic": "I'm not accepting challenges at the moment.",
    "later": "This is not the right time for me, please ask again later.",
    "tooFast": "This time control is too fast for me, please challenge again with a slower game.",
    "tooSlow": "This time control is too slow for me, please challenge again with a faster game.",
    "timeControl": "I'm not accepting challenges with this time control.",
    "rated": "Please send me a rated challenge instead.",
    "casual": "Please send me a casual challenge instead.",
    "standard": "I'm not accepting variant challenges right now.",
    "variant": "I'm not willing to play this variant right now.",
    "noBot": "I'm not accepting challenges from bots.",
    "onlyBot": "I'm only accepting challenges from bots.",
}


def speed_of(limit_s: float, increment_s: float) -> str:
    """lichess's speed of a clock: estimated seconds ``limit + 40 * increment`` below 30 ultraBullet, 180 bullet,
    480 blitz, 1500 rapid, 21600 classical (scalachess ``Speed``; lichess.org/faq#time-controls)."""
    est = limit_s + 40 * increment_s
    return ("ultraBullet" if est < 30 else "bullet" if est < 180 else "blitz" if est < 480 else "rapid" if est < 1500
            else "classical" if est < 21600 else "correspondence")


def make_board(variant: str, fen: str) -> chess.Board:
    """The board of a new game: ``fen`` or ``"startpos"``; chess960 keeps king-takes-rook castling (as lichess's
    UCI of chess960 games). Raises ValueError for a FEN python-chess cannot read."""
    if variant in _PYCHESS:
        cls = chess.variant.find_variant(_PYCHESS[variant])
        return cls() if fen == "startpos" else cls(fen)
    return chess.Board(chess.STARTING_FEN if fen == "startpos" else fen, chess960=variant == "chess960")


def color_name(white: bool) -> str:
    return "white" if white else "black"


#: lila modules/pref/src/main/Pref.scala ``Takeback``: NEVER, CASUAL (in casual games only), ALWAYS.
TAKEBACK_PREFS = ("never", "casual", "always")


@dataclass
class Account:
    """A user of the server: the bot (title ``BOT``), a Board API user (any token) or the page's guest
    (``web``: it plays on the page as on lichess's site, so every speed the bot accepts). ``takeback``: its
    takeback preference, one of :data:`TAKEBACK_PREFS`; empty: lila's for its kind, "never" for a BOT account
    (lila modules/pref/src/main/PrefApi.scala ``setBot``, run by app/controllers/PlayApi.scala at
    ``bot/account/upgrade``), "always" for anyone else (lila modules/pref/src/main/Pref.scala ``default``)."""

    username: str
    title: str | None = None
    rating: int = 1500
    provisional: bool = False
    web: bool = False
    takeback: str = ""

    def __post_init__(self) -> None:
        if not self.takeback:
            self.takeback = "never" if self.bot else "always"
        if self.takeback not in TAKEBACK_PREFS:
            raise ValueError(f"takeback preference {self.takeback!r}: one of {', '.join(TAKEBACK_PREFS)}")

    @property
    def id(self) -> str:
        return self.username.lower()

    @property
    def bot(self) -> bool:
        return self.title == "BOT"

    def light(self) -> dict[str, Any]:
        """``{"id", "name", "title"?, "rating"}``: a player as lila's challenge and game JSON write it."""
        d: dict[str, Any] = {"id": self.id, "name": self.username, "rating": self.rating}
        if self.title:
            d["title"] = self.title
        if self.provisional:
            d["provisional"] = True
        return d


@dataclass
class ChatLine:
    """One chat line: ``room`` "player" or "spectator"."""

    room: str
    username: str
    text: str


@dataclass
class Challenge:
    """A challenge from ``challenger`` to ``dest`` (the game gets its id). ``limit_s`` None: correspondence
    (``days``) or unlimited; ``final_color``: the challenger's colour, drawn at creation when ``color`` is random
    (lila modules/challenge/src/main/Challenge.scala ``make``)."""

    id: str
    challenger: Account
    dest: Account
    variant: str = "standard"
    rated: bool = False
    limit_s: float | None = 300
    increment_s: int = 0
    days: int | None = None
    color: str = "random"
    final_color: str = "white"
    initial_fen: str | None = None
    status: str = "created"
    decline_reason: str | None = None
    rematch_of: str | None = None
    #: the last ``time.monotonic()`` second someone showed interest (its creation, a ``keepAliveStream`` ping):
    #: a real-time challenge unseen for :data:`CHALLENGE_UNSEEN_S` goes ``offline`` (lila ChallengeApi ``sweep``)
    seen_at: float = field(default_factory=time.monotonic)
    #: the last ``keepAliveStream`` ping (lila ChallengeKeepAliveStream: every 15 s while the stream is open)
    pinged_at: float = field(default_factory=time.monotonic)
    #: queues of the creators' ``keepAliveStream`` answers, told ``{"done": status}`` at the end
    watchers: list[queue.Queue[Any]] = field(default_factory=list)

    @property
    def speed(self) -> str:
        return "correspondence" if self.limit_s is None else speed_of(self.limit_s, self.increment_s)


def player_id() -> str:
    """A player's id in a game: 4 random letters and digits (lila modules/core/src/main/id.scala ``GamePlayerId``,
    modules/game/src/main/IdGenerator.scala ``player``). The game's id and it make the player's ``fullId``, its
    own (lila modules/game/src/main/Game.scala ``fullIdOf``)."""
    return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(4))


@dataclass
class Seat:
    """A player's side of a game: the account, its id in the game (:func:`player_id`) and its standing offers.
    ``draw_offers``: the plies at which it offered a draw (lila ``Game.metadata.drawOffers``)."""

    account: Account
    offering_draw: bool = False
    proposing_takeback: bool = False
    draw_offers: list[int] = field(default_factory=list)
    id: str = field(default_factory=player_id)


@dataclass
class Subscriber:
    """An open game stream: ``kind`` "bot" (Bot API), "board" (Board API) or "page" (the page's own stream,
    which also gets positions and the spectator room); ``white`` the colour it plays, None for a watcher."""

    queue: queue.Queue[Any]
    kind: str
    white: bool | None
    agent: str = ""  # the client's User-Agent (lila keys a player's one stream by it)


@dataclass
class Game:
    """One game. Clocks are milliseconds: ``wtime``/``btime`` as of ``last_move_at`` (a ``time.monotonic()``
    second); ``clocks[i]`` the mover's time after ply ``i`` (the PGN's ``[%clk]``); ``evals[i]`` the eval the bot
    announced for its ply ``i`` in the spectator room (``[%eval]`` text, white's point of view)."""

    id: str
    white: Seat
    black: Seat
    board: chess.Board
    initial_fen: str = "startpos"
    variant: str = "standard"
    rated: bool = False
    speed: str = "blitz"
    has_clock: bool = True
    initial_ms: int = 300_000
    increment_ms: int = 0
    days: int | None = None
    source: str = "friend"
    tournament: str | None = None
    wtime: int = 0
    btime: int = 0
    status: str = "started"
    winner: str | None = None
    created_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    started_at: float = field(default_factory=time.monotonic)
    last_move_at: float = field(default_factory=time.monotonic)
    clocks: list[int] = field(default_factory=list)
    evals: dict[int, str] = field(default_factory=dict)
    lines: list[ChatLine] = field(default_factory=list)
    subscribers: list[Subscriber] = field(default_factory=list)
    claim_at: float | None = None  # opponentGone: claims allowed from then on (monotonic seconds)
    finish_sent: bool = False
    #: the id of the rematch once accepted (lila BotJsonView ``gameState.rematch``), and the challenge offered
    rematch: str | None = None
    rematch_offer: str | None = None
    #: takebacks declined in this game and when the last was (lila RoundAsyncActor ``TakebackBoard``)
    takebacks_declined: int = 0
    takeback_declined_at: float | None = None
    #: per colour (white first): since when it has had no open stream of this game (None: connected), and the
    #: last ``opponentGone`` its opponent was told (None, or ``(gone, claimWinInSeconds)``)
    offline_since: list[float | None] = field(default_factory=lambda: [time.monotonic(), time.monotonic()])
    gone_told: list[tuple[bool, int] | None] = field(default_factory=lambda: [None, None])
    gone_checked_at: float = 0.0

    @property
    def over(self) -> bool:
        return self.status not in ("created", "started")

    def ply(self) -> int:
        return len(self.board.move_stack)

    def seat(self, white: bool) -> Seat:
        return self.white if white else self.black

    def color_of(self, account: Account) -> bool | None:
        """True (white), False (black) or None: ``account`` does not play here."""
        if self.white.account.id == account.id:
            return True
        if self.black.account.id == account.id:
            return False
        return None

    def players(self) -> tuple[Account, Account]:
        return self.white.account, self.black.account

    def start_board(self) -> chess.Board:
        """A new board at the game's start (``board.root()`` forgets a crazyhouse pocket)."""
        return make_board(self.variant, self.initial_fen)

    def sans(self) -> list[str]:
        """The moves in SAN."""
        board, out = self.start_board(), []
        for move in self.board.move_stack:
            out.append(board.san(move))
            board.push(move)
        return out
