"""The online move sources in their order, each lookup within a budget taken from our clock.

The move pipeline (bot and UCI) asks, in this order: local book, :meth:`OnlineGame.book_move` (chessdb's
book, lichess's cloud evals, lichess's opening explorer: lichess-bot's order, lib/engine_wrapper.py
``get_online_move``), local tables, :meth:`OnlineGame.table_move` (lichess's or chessdb's tables),
search. A source never costs the game:

* **budget**: one lookup (all its sources, tries and waits) takes at most ``clock_share`` of our
  remaining clock, or the caller's ``budget`` if smaller, and each request at most ``timeout``;
* **min_time / max_time**: a source is not asked with less than ``min_time`` seconds on our clock, nor in
  games whose starting clock is longer than ``max_time`` (lichess-bot's meaning);
* **cache**: answers (moves and "no move here") are kept per position, failures never;
* **switch-off**: ``switch_off_after`` failed lookups in a row (timeouts, errors, unreadable answers,
  illegal moves) switch a source off for ``switch_off_time`` seconds, logged once; a 429 at once; a
  server that says it is busy in an ordinary answer (chessdb's ``rate limit exceeded``) costs that one
  lookup only (skipped: no switch-off, nothing cached);
* **daily budget**: cloud evals stop for the rest of lichess's day window after
  ``max_requests_per_day`` requests (:class:`~lichessbot.online.health.DailyBudget`);
* **token**: lichess's sources get the bot's token and take from its request budget only when their URL
  is lichess's own (:func:`~lichessbot.online.http.lichess_url`);
* **books stop**: after ``max_out_of_book_moves`` positions of a game where the books answered without a
  move (a failure does not count), and past
  ``max_depth`` full moves, the online books are not asked in that game (the tables still are).

Imports the config, python-chess and this room; nothing of the search or of lichess's client (the
bot's pacer comes in as a value).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Sequence

import chess
import structlog

from lichessbot.config.online import OnlineMovesConfig
from lichessbot.online.base import Busy, Source, WrongAnswer
from lichessbot.online.chessdb import ChessdbBook, ChessdbTablebase
from lichessbot.online.cloud import CloudAnalysis
from lichessbot.online.egtb import LichessTablebase
from lichessbot.online.explorer import OpeningExplorer
from lichessbot.online.health import AnswerCache, DailyBudget, SourceHealth
from lichessbot.online.http import MIN_REQUEST_S, Fetcher, NotAsked, Pacer, RateLimited, SourceFailure, lichess_url
from lichessbot.online.types import CLOUD, OnlineMove
from lichessbot.timeman import Clock

__all__ = ["OnlineGame", "OnlineMoves", "lookup_budget"]

log = structlog.get_logger("lichessbot.online")


def lookup_budget(config: OnlineMovesConfig, clock: Clock | None, budget: float | None = None) -> float:
    """Seconds one lookup may take in all: ``clock_share`` x our remaining clock, at most ``budget``
    (the caller's), at most ``timeout`` x (1 + ``max_retries``) x 4 sources without a clock (None:
    correspondence, unlimited, UCI without wtime/btime)."""
    limit = config.timeout * (1 + config.max_retries) * 4
    if clock is not None:
        limit = min(limit, config.clock_share * clock.seconds)
    if budget is not None:
        limit = min(limit, max(0.0, budget))
    return limit


class OnlineMoves:
    """The online sources of one bot (or one UCI engine): config, cache, switch-off state, HTTP.

    Shared by every game (thread-safe); make one :class:`OnlineGame` per game with :meth:`game`.

    Args:
        config: the ``online_moves`` section.
        token: the bot's lichess token (sent to lichess's servers only; never logged).
        pacer: the bot's request budget (:class:`lichessbot.lichess.pacing.Pacer`), or None.
        username: our account's name (the explorer's ``player`` source when ``player_name`` is empty).
        lichess: the server the bot plays on (config ``url``): besides lichess's own hosts, the only one
            whose sources get the token (``lichessbot play --local``, test servers).
        rng: random choices (cloud ``good``).
        clock: monotonic seconds (tests).
    """

    def __init__(self, config: OnlineMovesConfig, *, token: str | None = None, pacer: Pacer | None = None,
                 username: str = "", lichess: str | None = None, rng: random.Random | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.config = config
        self.username = username
        self.lichess = lichess
        self.skipped = 0  # lookups skipped because a server said it was busy (chessdb's rate limit)
        self.budgets = {CLOUD: DailyBudget(CLOUD, config.lichess_cloud_analysis.max_requests_per_day, clock)}
        self.rng = rng or random.Random()
        self._clock = clock
        self.fetcher = Fetcher(token=token, pacer=pacer, retries=config.max_retries, clock=clock)
        self.cache = AnswerCache()
        self.health = SourceHealth(config.switch_off_after, config.switch_off_time, clock)
        c = config
        books: list[tuple[Source, float, float]] = [
            (ChessdbBook(c.chessdb_book), c.chessdb_book.min_time, c.chessdb_book.max_time),
            (CloudAnalysis(c.lichess_cloud_analysis), c.lichess_cloud_analysis.min_time,
             c.lichess_cloud_analysis.max_time),
            (OpeningExplorer(c.lichess_opening_explorer), c.lichess_opening_explorer.min_time,
             c.lichess_opening_explorer.max_time),
        ]
        configs = [c.chessdb_book, c.lichess_cloud_analysis, c.lichess_opening_explorer]
        #: each online book's settings by source name (priority, only_without_book, allow_repetitions, trust_eval)
        self.book_config = {b[0].name: cfg for b, cfg in zip(books, configs)}
        # by priority, the highest first; equal priorities keep lichess-bot's order (sorted is stable)
        self.books = sorted([b for b, cfg in zip(books, configs) if cfg.enabled],
                            key=lambda b: -self.book_config[b[0].name].priority)
        egtb = c.online_egtb
        table: Source = LichessTablebase(egtb) if egtb.source == "lichess" else ChessdbTablebase(egtb)
        self.tables: list[tuple[Source, float, float]] = [(table, egtb.min_time, egtb.max_time)] if egtb.enabled else []

    @property
    def enabled(self) -> bool:
        """Any source is on."""
        return bool(self.books or self.tables)

    def game(self, game_id: str = "") -> OnlineGame:
        """The per-game state (out-of-book count) of a new game."""
        return OnlineGame(self, game_id)

    def close(self) -> None:
        """Stop the request workers. Never raises."""
        self.fetcher.close()

    def lookup(self, sources: Sequence[tuple[Source, float, float]], board: chess.Board, clock: Clock | None,
               budget: float | None, opponent: str = "") -> tuple[OnlineMove | None, bool]:
        """The first move of ``sources`` in order within the budget: (move or None, any source answered).
        ``opponent``: the game's opponent ("" unknown), for a source that asks about them (explorer ``anti``)."""
        deadline = self._clock() + lookup_budget(self.config, clock, budget)
        answered = False
        for source, min_time, max_time in sources:
            if clock is not None and clock.seconds < min_time:
                continue
            initial = None if clock is None else clock.initial_seconds
            if initial is not None and initial > max_time:
                continue
            if not self.health.available(source.name):
                continue
            left = deadline - self._clock()
            if left < MIN_REQUEST_S:
                break
            found, got = self._ask(source, board, min(deadline, self._clock() + self.config.timeout), opponent)
            answered = answered or got
            cfg = self.book_config.get(source.name)
            if found is not None and cfg is not None and found.move is not None:
                if not cfg.allow_repetitions and _repeats(board, found.move):
                    log.info("online move repeats a position: not played", source=source.name,
                             move=found.move.uci())
                    continue
                if getattr(cfg, "trust_eval", False):
                    found = dataclasses.replace(found, trusted=True)
            if found is not None:
                return found, True
        return None, answered

    def _ask(self, source: Source, board: chess.Board, deadline: float,
             opponent: str = "") -> tuple[OnlineMove | None, bool]:
        """One source: (its move or None, it answered). Failures are counted, never raised."""
        request = source.request(board, opponent if getattr(source, "wants_opponent", False) else self.username)
        if request is None:
            return None, False
        t0 = self._clock()
        budget = self.budgets.get(source.name)
        try:
            hit, parsed = self.cache.get(request.key)
            if not hit:
                if budget is not None and not budget.take():
                    return None, False
                trusted = source.lichess and lichess_url(request.url, self.lichess)
                answer = self.fetcher.get(request.url, request.params, deadline=deadline, lichess=trusted,
                                          endpoint=request.endpoint, ndjson=request.ndjson)
                parsed = source.parse(board, answer)
            move = source.choose(board, parsed, self.rng)
        except NotAsked:
            if budget is not None:
                budget.refund()
            return None, False
        except Busy as err:
            self.skipped += 1
            log.info("online lookup skipped", source=source.name, reason=err.reason)
            return None, False
        except RateLimited as err:
            self.health.failed(source.name, err.reason, rate_limited=True)
            return None, False
        except SourceFailure as err:
            self.health.failed(source.name, err.reason if not isinstance(err, WrongAnswer) else
                               f"wrong answer: {err.reason}")
            return None, False
        if not hit and answer.complete:
            self.cache.put(request.key, parsed)
        self.health.ok(source.name)
        log.debug("online answer", source=source.name, move=move.move.uci() if move and move.move else None,
                  cached=hit, ms=round(1000 * (self._clock() - t0)))
        return move, True


def _repeats(board: chess.Board, move: chess.Move) -> bool:
    """``move`` leads to a position already seen in ``board``'s game (BotLi ``allow_repetitions``)."""
    after = board.copy(stack=True)
    after.push(move)
    return after.is_repetition(2)


class OnlineGame:
    """The online sources for one game: :meth:`book_move`, then (after the local tables)
    :meth:`table_move`. Not shared between threads."""

    def __init__(self, online: OnlineMoves, game_id: str = ""):
        self.online = online
        self.game_id = game_id
        self.out_of_book = 0  # positions of this game where the online books had no move
        self.opponent = ""  # the opponent's name, once the game knows it (explorer anti)

    @property
    def books_done(self) -> bool:
        """The online books are no longer asked in this game (``max_out_of_book_moves`` reached)."""
        return self.out_of_book >= self.online.config.max_out_of_book_moves

    def book_move(self, board: chess.Board, clock: Clock | None, budget: float | None = None, *,
                  before_book: bool | None = None, book_priority: int = 0,
                  book_moves: int = 0) -> OnlineMove | None:
        """A move of the online books (by priority; equal: chessdb, cloud eval, explorer) for the side to move.

        Args:
            board: the position (its move stack is not needed; the full move number counts for max_depth).
            clock: our clock now (ms; its ``initial`` is the game's starting clock), None without one: every
                ``min_time`` passes and only ``timeout`` limits the requests.
            budget: the most seconds the caller allows (the lookup also keeps to ``clock_share``).
            before_book: True: only the books of a priority above ``book_priority`` (asked before the local
                book); False: only the others; None: all.
            book_moves: the local book's moves in this game so far (``only_without_book`` skips a source then).

        Returns:
            The move with its source and note, or None (nothing asked, no answer in time, no move).
        """
        cfg = self.online.config
        if not self.online.books or self.books_done:
            return None
        if cfg.max_depth is not None and board.ply() > cfg.max_depth * 2 - 1:
            return None
        conf = self.online.book_config
        books = [b for b in self.online.books
                 if (before_book is None or (conf[b[0].name].priority > book_priority) == before_book)
                 and not (book_moves and conf[b[0].name].only_without_book)]
        if not books:
            return None
        move, answered = self.online.lookup(books, board, clock, budget, self.opponent)
        if move is None and answered and not before_book:  # counted once a position
            self.out_of_book += 1
            if self.books_done:
                log.info("online books done for this game", game=self.game_id, positions_without_move=self.out_of_book)
        return move

    def table_move(self, board: chess.Board, clock: Clock | None, budget: float | None = None) -> OnlineMove | None:
        """The online tables' move (``move``), or the moves that keep their result (``search_moves``,
        ``suggest``), or None. Arguments as :meth:`book_move`."""
        if not self.online.tables:
            return None
        return self.online.lookup(self.online.tables, board, clock, budget)[0]
