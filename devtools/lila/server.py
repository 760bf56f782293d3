"""The test server: the embedded lichess (:class:`lichessbot.local.LocalLichess`, lila's Bot API on 127.0.0.1 with
real clocks) with the bot's opponents played by the server and every test-only switch.

* ``challenge(...)``: a challenge from a server-played opponent (:mod:`devtools.lila.players`: a function of the
  board returning a move, RESIGN, OFFER_DRAW or None), played ``opponent_delay`` s after each of the bot's moves;
  ``start_game``, ``rematch``, ``cancel_challenge``, ``say``, ``opponent_gone``, ``propose_takeback``;
* only the server's token is known (another gets a 401); ``title=None``: an account not yet BOT;
* faults (:mod:`devtools.lila.faults`): quota, injected answers, stalled moves, latency; streams dropped
  (``drop_event_streams``, ``drop_game_streams``, ``blackout``, ``drop_rate``: a share of all pushes),
  ``cancel_on_accept`` (a challenger who cancels the moment the bot accepts), ``skip_game_finish``, raw lines
  (``push_event_raw``, ``push_game_raw``), ``duplicate_states``, ``castling_as_rook``, ``chat_status``/``chat_delay``,
  ``ignore_claims``, ``answer_delay``; ``no_start_after``: a game without both first moves after that many seconds
  ends ``noStart`` (the product's first-move expiry is off here);
* matchmaking's online bots (:mod:`devtools.lila.matchmaking`), arenas, broadcasts and lila's bot-vs-bot limit.

Bookkeeping the tests read: ``answers`` (challenge id -> ("accept", None) | ("decline", reason)),
``answer_attempts``, ``canceled``, ``requests``, ``event_connections``, the peaks of games at once."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import chess

from devtools.lila.arenas import ArenaRoutes
from devtools.lila.botlimit import BotLimitRoutes
from devtools.lila.broadcast import BroadcastRoutes
from devtools.lila.faults import FaultRoutes
from devtools.lila.game import FakeChallenge, FakeGame
from devtools.lila.matchmaking import MatchmakingRoutes
from devtools.lila.players import OFFER_DRAW, RESIGN, Opponent, random_mover
from devtools.lila.routes import TestRoutes
from lichessbot.local import LocalLichess
from lichessbot.local.http import DROP
from lichessbot.local.lila_rules import apply_move, expiry, finish, flag
from lichessbot.local.model import Account, Challenge, Game
from lichessbot.local.views import challenge_json, game_info

__all__ = ["FakeGame", "FakeLichess"]

FOREVER = 2_147_483_647


class FakeLichess(TestRoutes, FaultRoutes, MatchmakingRoutes, BroadcastRoutes, ArenaRoutes, BotLimitRoutes,
                  LocalLichess):
    """Start with ``with FakeLichess(...) as server:``; ``server.url`` is the base URL."""

    games: dict[str, Any]  # its games are FakeGame

    def __init__(self, token: str = "lip_TESTTOKEN0123456789", username: str = "TestBot", title: str | None = "BOT",
                 keepalive: float = 0.2, opponent_delay: float | Callable[[], float] = 0.02,
                 quota: tuple[float, float] | None = None, no_start_after: float | None = None):
        # the bot's takeback preference "always": its opponents here propose takebacks to test how the bot answers
        # them (on lichess a bot's operator may set it; lila's default for a BOT account is never, PrefApi.setBot)
        super().__init__(token, username, keepalive=keepalive, any_token=False, rate_limits=False,
                         bot_takeback="always")
        self.token = token
        self.bot.title = title
        self.opponent_delay = opponent_delay
        self.no_start_after = no_start_after
        self.lose_takeback_answers = 0  # the next takeback answers are handled, their answers lost
        self.drop_rate = 0.0            # share of pushes (game and event streams) that cut the stream instead
        self.streams_dropped = 0
        self.cancel_on_accept: set[str] = set()  # these challengers cancel the moment the bot accepts
        self._rng = random.Random(0)
        self.first_move_s: float | None = None  # a test's first-move time of arena games (None: lila's table)
        self.answers: dict[str, tuple[str, str | None]] = {}
        self.answer_attempts: Counter[str] = Counter()
        self.canceled: set[str] = set()
        self.event_connections = 0
        self.chat_status = 200
        self.chat_delay = 0.0
        self.duplicate_states = False
        self.castling_as_rook = False
        self.skip_game_finish = 0
        self.ignore_claims = 0              # the next claims are answered 200 without effect (as lila may)
        self.answer_delay = 0.0             # seconds a challenge answer takes
        self.answering = 0                  # challenge answers in progress
        #: the most real-time games at once against the bot: in all, against bots, with one opponent
        self.peak_games = self.peak_bot_games = self.peak_games_per_user = 0
        self._ids = 0
        self._init_faults(quota)
        self._init_matchmaking()
        self._init_bot_limit()
        self._init_broadcast()
        self._init_arenas()
        self._threads.append(threading.Thread(target=self._pair_arenas, daemon=True))

    # the account ---------------------------------------------------------------------------------------
    @property
    def username(self) -> str:
        return self.bot.username

    @property
    def title(self) -> str | None:
        return self.bot.title

    @title.setter
    def title(self, value: str | None) -> None:
        self.bot.title = value

    @property
    def event_subscribers(self) -> list[Any]:
        """The bot's open event streams."""
        return self.event_streams.get(self.bot.id, [])

    def _connected(self, account: Account) -> None:
        if account.id == self.bot.id:
            self.event_connections += 1

    # challenges and games ------------------------------------------------------------------------------
    def _new_id(self) -> str:
        with self.lock:
            self._ids += 1
            return f"g{self._ids:07d}"

    def player(self, name: str, title: str | None = None, rating: int = 1500) -> Account:
        """A server-played account (a new one for each challenge: a game keeps the rating it started with)."""
        with self.lock:
            account = Account(name, title=title, rating=rating)
            self.accounts[account.id] = account
            return account

    def challenge(self, *, challenger: str = "alice", title: str | None = None, rating: int = 1500,
                  variant: str = "standard", rated: bool = False, limit: float | None = 60, increment: int = 0,
                  days: int | None = None, speed: str | None = None, bot_color: str = "white", fen: str | None = None,
                  tournament: str | None = None, opponent: Opponent | None = None,
                  rematch_of: str | None = None, announce: bool = True) -> str:
        """Send a challenge event; on accept the game starts with the server playing ``opponent``.

        ``limit`` None: correspondence with ``days`` per move (None: unlimited). chess960 without ``fen``
        gets a start position; fromPosition needs ``fen``. ``announce`` False: no challenge event (a game lila
        pairs itself, as an arena pairing: :meth:`start_game`)."""
        with self.lock:
            cid = self._new_id()
            if variant == "standard" and fen is not None:
                variant = "fromPosition"
            if variant == "chess960" and fen is None:
                fen = chess.Board.from_chess960_pos(self._ids * 37 % 960).fen()
            theirs = "black" if bot_color == "white" else "white"
            ch = FakeChallenge(id=cid, challenger=self.player(challenger, title, rating), dest=self.bot,
                               variant=variant, rated=rated, limit_s=limit, increment_s=increment,
                               days=days if limit is None else None, color=theirs, final_color=theirs,
                               initial_fen=fen if variant in ("chess960", "fromPosition", "crazyhouse") else None,
                               rematch_of=rematch_of, opponent=opponent or random_mover(self._ids),
                               speed_override=speed, tournament=tournament)
            self.challenges[cid] = ch
            if announce:
                self._event(self.bot.id, self._challenge_event(ch, self.bot))
            return cid

    def rematch(self, game_id: str, opponent: Opponent | None = None) -> str:
        """The opponent of finished game ``game_id`` offers a rematch: a challenge with ``rematchOf``, the
        same game with the colors swapped (lila: the rematch of a game with a bot is a challenge)."""
        with self.lock:
            g = self.games[game_id]
            return self.challenge(
                challenger=g.opponent_name, title="BOT" if g.opponent_bot else None, variant=g.variant,
                rated=g.rated, limit=g.initial_ms / 1000 if g.has_clock else None, increment=g.increment_ms // 1000,
                days=g.days, bot_color="black" if g.bot_color == "white" else "white", opponent=opponent,
                rematch_of=game_id)

    def cancel_challenge(self, cid: str) -> None:
        """The challenger cancels: a ``challengeCanceled`` event; accepting it afterwards gets a 404."""
        with self.lock:
            ch = self.challenges[cid]
            self.canceled.add(cid)
            self._close_challenge(ch, "canceled")
            self._event(self.bot.id, {"type": "challengeCanceled", "challenge": self._challenge_json(ch)})

    def _challenge_json(self, ch: Challenge) -> dict[str, Any]:
        return challenge_json(ch, self.url)

    def start_game(self, **challenge: Any) -> str:
        """A game that starts without a challenge to answer (a tournament pairing, an old acceptance)."""
        with self.lock:
            cid = self.challenge(announce=False, **challenge)
            self.answers[cid] = ("accept", None)
            self._start_game(self.challenges[cid])
            return cid

    def new_game(self, ch: Challenge) -> Game:
        assert isinstance(ch, FakeChallenge)
        base = super().new_game(ch)
        fields = {f: getattr(base, f) for f in Game.__dataclass_fields__}
        fields.update(speed=ch.speed, tournament=ch.tournament, source="arena" if ch.tournament else "friend")
        if not base.has_clock:  # lila BotJsonView: a correspondence game's wtime/btime are its days per turn
            fields["wtime"] = fields["btime"] = (ch.days or 0) * 86_400_000 or FOREVER
        return FakeGame(**fields, opponent=ch.opponent, bot_id=self.bot.id)

    def _start_game(self, ch: Challenge) -> Game:
        with self.lock:
            g = super()._start_game(ch)
            assert isinstance(g, FakeGame)
            if g.opponent_bot:
                self._count_bot_game()
            if g.has_clock:
                live = [x for x in self.games.values() if isinstance(x, FakeGame) and not x.over and x.has_clock]
                names = Counter(x.opponent_name.lower() for x in live)
                self.peak_games = max(self.peak_games, len(live))
                self.peak_bot_games = max(self.peak_bot_games, sum(x.opponent_bot for x in live))
                self.peak_games_per_user = max(self.peak_games_per_user, max(names.values()))
            return g

    def blackout(self, game_id: str, seconds: float) -> None:
        """The game's next push is lost (its streams are cut instead) and the answers to reconnections
        arrive only ``seconds`` after they were made (a slow network). Callable under the server lock."""
        with self.lock:
            g = self.games[game_id]
            g.blackout_until = time.monotonic() + seconds
            g.blackout_push = True

    def _game_info(self, g: FakeGame) -> dict[str, Any]:
        return game_info(g, g.bot_white, time.monotonic())

    def _first_move_expired(self, g: Game, now: float) -> bool:
        if self.first_move_s is None:
            return expiry(g, now) == 0.0
        return g.has_clock and g.ply() < 2 and now >= g.last_move_at + self.first_move_s

    def _finish(self, g: Game, status: str, winner: str | None) -> None:
        with self.lock:
            finish(g, status, winner, time.monotonic())
            self._broadcast_state(g)

    # the server-played opponent ------------------------------------------------------------------------
    def _after_change(self, g: Game) -> None:
        self._maybe_opponent(g)

    def _maybe_opponent(self, g: Any, delay: float | None = None) -> None:
        if g.over or g.bot_turn():
            return
        ply = g.ply()

        def play() -> None:
            d = self.opponent_delay if delay is None else delay
            time.sleep(d() if callable(d) else d)  # the opponent thinks (outside the server lock)
            with self.lock:
                if g.over or g.ply() != ply:
                    return
                move = g.opponent(g.board.copy())
                if move == RESIGN:
                    self._finish(g, "resign", g.bot_color)
                elif move == OFFER_DRAW:
                    g.opp_draw_offer = True
                    self._game_push(g, self._state(g, time.monotonic()))
                    self._maybe_opponent(g)
                elif move is not None:
                    apply_move(g, move, time.monotonic())
                    self._broadcast_state(g)
                    self._after_change(g)
        threading.Thread(target=play, daemon=True).start()

    def say(self, game_id: str, text: str, room: str = "player", username: str | None = None) -> None:
        g = self.games[game_id]
        self.post_chat(g, Account(username or g.opponent_name), room, text)

    def opponent_gone(self, game_id: str, claim_in: int = 0) -> None:
        """``opponentGone`` with ``claimWinInSeconds``: claims are allowed after that many seconds."""
        g = self.games[game_id]
        with self.lock:
            g.claim_at = time.monotonic() + claim_in
        self._game_push(g, {"type": "opponentGone", "gone": True, "claimWinInSeconds": claim_in})

    def propose_takeback(self, game_id: str) -> None:
        """The opponent offers a takeback of its last move (sent at once in a ``gameState``)."""
        with self.lock:
            g = self.games[game_id]
            g.opp_takeback = True
            self._game_push(g, self._state(g, time.monotonic()))

    # the clocks and lila's first-move expiry -----------------------------------------------------------------
    def _tick(self, now: float) -> None:
        """lila's clocks, and its first-move expiry where lila has one: only games of an expirable source (lobby,
        arena, pool, swiss: lila ``Source.expirable``; here the arena games) end ``noStart`` when a side misses
        its first move (round ``RoundGame.timeForFirstMove``, tournament column), the other side winning, and
        the non-mover is withdrawn from its arena (tournament ``TournamentApi.withdrawNonMover``). A friend game
        (a challenge's) never expires: a bot must abort it itself. ``no_start_after`` (a test's switch) ends any
        game without both first moves after that many seconds."""
        with self.lock:
            for g in list(self.games.values()):
                if g.over:
                    continue
                if self.no_start_after is not None and g.ply() < 2 and now - g.started_at > self.no_start_after:
                    self._finish(g, "noStart", None)
                elif g.tournament is not None and self._first_move_expired(g, now):
                    mover_white = g.board.turn == chess.WHITE
                    self._finish(g, "noStart", "black" if mover_white else "white")
                    if isinstance(g, FakeGame) and mover_white == g.bot_white:
                        self.withdraw_non_mover(g.tournament)
                elif flag(g, now):
                    self._broadcast_state(g)

    # streams -------------------------------------------------------------------------------------------
    def _game_push(self, g: Game, obj: Any, kinds: tuple[str, ...] = ("bot", "board", "page")) -> None:
        with self.lock:
            if isinstance(g, FakeGame) and g.blackout_push and obj is not DROP:
                g.blackout_push = False
                obj = DROP
            elif self.drop_rate and obj is not DROP and "bot" in kinds and self._rng.random() < self.drop_rate:
                self.streams_dropped += 1  # the game's streams are cut instead of this push
                obj = DROP
            super()._game_push(g, obj, kinds)
            if self.duplicate_states and isinstance(obj, dict) and obj.get("type") == "gameState":
                super()._game_push(g, obj, kinds)

    def _finished(self, g: Game) -> None:
        if self.skip_game_finish > 0:
            self.skip_game_finish -= 1
            return
        super()._finished(g)

    def _stream_opened(self, g: Game, kind: str) -> float:
        if isinstance(g, FakeGame):
            g.stream_connections += 1
            return g.blackout_until - time.monotonic()
        return 0.0

    def _state(self, g: Game, now: float) -> dict[str, Any]:
        st = super()._state(g, now)
        if self.castling_as_rook:
            st["moves"] = self._rook_castling(g)
        return st

    @staticmethod
    def _rook_castling(g: Game) -> str:
        moves, b = [], g.board.root()
        for m in g.board.move_stack:
            u = m.uci()
            if not b.chess960 and b.is_castling(m):
                u = chess.square_name(m.from_square) + chess.square_name(
                    chess.H1 if m.to_square == chess.G1 else chess.A1 if m.to_square == chess.C1 else
                    chess.H8 if m.to_square == chess.G8 else chess.A8)
            b.push(m)
            moves.append(u)
        return " ".join(moves)

    def push_event_raw(self, line: bytes) -> None:
        self._event(self.bot.id, line)

    def push_game_raw(self, game_id: str, line: bytes) -> None:
        self._game_push(self.games[game_id], line)

    def push_game(self, game_id: str, obj: dict[str, Any]) -> None:
        self._game_push(self.games[game_id], obj)

    def drop_event_streams(self) -> None:
        self._event(self.bot.id, DROP)

    def _event(self, account_id: str, obj: Any) -> None:
        """``drop_rate``: each event to the bot cuts its event stream instead, that often (lila sends the pending
        challenges and the ongoing games again when the stream is opened again; a lost ``gameFinish`` is for the
        playing list to tell)."""
        if self.drop_rate and obj is not DROP and account_id == self.bot.id and self._rng.random() < self.drop_rate:
            self.streams_dropped += 1
            obj = DROP
        super()._event(account_id, obj)

    def drop_game_streams(self, game_id: str) -> None:
        self._game_push(self.games[game_id], DROP)
