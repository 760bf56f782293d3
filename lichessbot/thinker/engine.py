"""The engine of the process, built once from :class:`~lichessbot.thinker.settings.ThinkerSettings`: the network
and what runs it, the book, the tablebases, the strength table and the online sources; the bot's games and
``lichessbot uci``'s session each get a :class:`~lichessbot.thinker.game_thinker.GameThinker` from it.

The network is loaded once (by :mod:`lichessbot.thinker.wiring`); with ``shared`` (the bot) one
:class:`~lichessbot.neural.service.EvalService` merges every game's batches into one network call, else (UCI)
the one search runs on the evaluator itself. :meth:`Engine.configure` takes new settings (UCI's
``setoption``) and rebuilds only what they change: the network only when its own settings change (a search
parameter keeps the onnxruntime session), the book and the tables when theirs do; searchers built before a
change are rebuilt by their game thinkers (:attr:`Engine.generation`).
"""

from __future__ import annotations

import random
import threading

import structlog

from lichessbot.book import Book
from lichessbot.config import BookConfig, BotConfig, SearchParams, TimemanConfig
from lichessbot.gaviota import gaviota_tables
from lichessbot.neural.network import Network
from lichessbot.neural.runner import NetworkRunner
from lichessbot.neural.service import EvalService
from lichessbot.online import OnlineGame, OnlineMoves
from lichessbot.search import Searcher
from lichessbot.strength import table_from_config, table_mismatch
from lichessbot.strength.levels import StrengthTable
from lichessbot.tablebase import Tablebases
from lichessbot.thinker import wiring
from lichessbot.thinker.game_thinker import GameThinker
from lichessbot.thinker.settings import ThinkerSettings
from lichessbot.thinker.sources import MoveSource, move_sources
from lichessbot.timeman import TimeManager

__all__ = ["NETWORK_FIELDS", "Engine"]

log = structlog.get_logger("lichessbot.neural")

#: The settings of ``engine`` that the network's runner is built with (a change builds a new one); the others
#: (search parameters, strength, ponder) keep it.
NETWORK_FIELDS = ("network", "backend", "triton_url", "triton_model", "input_format", "threads", "nn_cache_size",
                  "precision", "device", "compact_input")


def _book(settings: ThinkerSettings) -> Book | None:
    """The book of ``settings`` (None: disabled or no file). Raises BookError naming a bad file."""
    return Book.from_config(settings.book, random.Random(settings.book_seed))


def _tables(settings: ThinkerSettings) -> Tablebases | None:
    """The tables of ``settings`` (None: no directory). Raises TablebaseError naming the setting."""
    tc = settings.tablebases
    if not tc.syzygy:
        return None
    return Tablebases(list(tc.syzygy), max_pieces=tc.max_pieces, root_probe=tc.root_probe,
                      search_probe=tc.search_probe, key=settings.names.tablebases)


def _strength_table(settings: ThinkerSettings) -> StrengthTable | None:
    """The strength table, read when a level may be played. Raises StrengthError naming the setting."""
    if not settings.plays_levels:
        return None
    return table_from_config(settings.engine.strength.table, settings.names.strength_table)


class Engine:
    """The engine of the process (thread-safe for the games; :meth:`configure` from one thread at a time).

    Args:
        settings: how moves are chosen; a :class:`~lichessbot.config.BotConfig` is read by
            :meth:`ThinkerSettings.of_config` (with ``nodes``: a cap on nodes per move).
        shared: put one evaluation service between the evaluator and every game's searcher (the bot).
        lazy: load the network at the first search (UCI answers ``uci`` at once, and a book or tablebase
            move needs no network); else now, so that a bad network stops the bot at its start.

    Raises:
        lichessbot.neural.network.NetworkError: the network cannot be loaded (not ``lazy``).
        lichessbot.book.BookError: a book file is missing or corrupt.
        lichessbot.tablebase.TablebaseError: a tablebase directory is missing or holds no tables.
        lichessbot.strength.StrengthError: the strength table cannot be read.
    """

    def __init__(self, settings: ThinkerSettings | BotConfig, *, nodes: int | None = None, shared: bool = True,
                 lazy: bool = False) -> None:
        if isinstance(settings, BotConfig):
            settings = ThinkerSettings.of_config(settings, nodes=nodes)
        self.settings = settings
        self.shared = shared
        self._lock = threading.Lock()  # guards the runner's lazy construction
        #: The loaded network, its evaluator and (``shared``) the evaluation service; None until loaded.
        self.network: Network | None = None
        self.evaluator: NetworkRunner | None = None
        self.service: EvalService | None = None
        #: Bumped when the settings change what a searcher is built with (search parameters, tables, network):
        #: a game thinker rebuilds a searcher of an older generation.
        self.generation = 0
        self._cache_temperature = settings.engine.search.policy_temperature  # of the priors in the NN cache
        if not lazy:
            self._load()
        self.book = _book(settings)
        self._books: dict[str, Book | None] = {}  # the books of games' own settings (game_overrides), by settings
        #: The Syzygy tables (root probe here, search probes in the core), or None.
        self.tablebases = _tables(settings)
        #: The Gaviota tables at the root (``tablebases.gaviota``), or None.
        self.gaviota = gaviota_tables(settings.tablebases.gaviota)
        #: The strength table of engine.strength (docs/strength.md), read when a level may be played.
        self.strength_table = _strength_table(settings)
        self._warn_mismatch()
        #: The online sources (docs/online.md), set by :meth:`use_online`; None: none.
        self.online: OnlineMoves | None = None
        self._retired_services: list[EvalService] = []
        if shared and not lazy:
            # Made last, so that a bad book, table or tablebase path leaves no worker thread behind.
            self.service = EvalService(self._evaluator())
        self._counts_lock = threading.Lock()
        self.ponders = 0      # ponder searches started (all games); guarded by _counts_lock
        self.ponder_hits = 0  # of which the opponent played the expected move; guarded by _counts_lock

    @property
    def name(self) -> str:
        """The network's name (its setting until it is loaded)."""
        return self.network.name if self.network is not None else self.settings.engine.network

    # the network -------------------------------------------------------------------------------
    def load_network(self) -> Network:
        """The network of ``engine.network``, loaded once per setting.

        Raises:
            lichessbot.neural.network.NetworkError: the file is missing or is not a network (the reason in the
                message, which starts with the path).
        """
        with self._lock:
            if self.network is None:
                self.network = wiring.network_of(self.settings.engine)
            return self.network

    def _load(self) -> NetworkRunner:
        network = self.load_network()
        with self._lock:
            if self.evaluator is None:
                self.evaluator = wiring.evaluator_of(self.settings.engine, network)
                self._cache_temperature = self.settings.engine.search.policy_temperature
            return self.evaluator

    def _evaluator(self) -> NetworkRunner:
        evaluator = self.evaluator
        assert evaluator is not None, "the network is loaded"
        return evaluator

    def runner(self) -> NetworkRunner:
        """What runs the network for a searcher: the evaluation service (``shared``) or the evaluator, loaded on
        first use. An NN cache filled at another policy temperature is cleared first (it holds priors).

        Raises:
            lichessbot.neural.network.NetworkError, OSError, ValueError, RuntimeError: the network does not
                load (the reason in the message); it is tried again at the next call, never replaced.
        """
        loaded = self.evaluator is not None
        evaluator = self._load()
        temperature = self.settings.engine.search.policy_temperature
        if loaded and self._cache_temperature != temperature:
            evaluator.clear_cache()  # the NN cache holds priors made at the old PolicyTemperature
            self._cache_temperature = temperature
        if not self.shared:
            return evaluator
        with self._lock:
            if self.service is None:
                self.service = EvalService(evaluator)
            return self.service

    def clear_cache(self) -> None:
        """Forget the evaluations (UCI ``ucinewgame``); nothing when the network is not loaded."""
        if self.evaluator is not None:
            self.evaluator.clear_cache()

    # what a game is built with -----------------------------------------------------------------
    def searcher(self, game_id: str | None = None, search: SearchParams | None = None) -> Searcher:
        """A new searcher (its own tree) over :meth:`runner` with the search parameters, probing the tables inside
        the search (lc0's rule, docs/tablebases.md); ``game_id`` names it to an evaluation service. Close it
        with :meth:`~lichessbot.search.Searcher.close`. ``search``: one game's own parameters (``game_overrides``),
        None: the settings'. Raises what :meth:`runner` raises."""
        return wiring.searcher_of(self.runner(), search or self.settings.engine.search, game=game_id or "",
                                  tablebases=self.tablebases)

    def timeman(self, game_id: str | None = None, config: TimemanConfig | None = None) -> TimeManager:
        """A time manager for one game (it keeps state between moves); ``game_id`` goes on its log lines;
        ``config``: the game's own (``game_overrides``), None: the settings'."""
        return wiring.timeman_of(config or self.settings.timeman, game_id)

    def move_sources(self, online: OnlineGame | None = None, book: BookConfig | None = None,
                     book_moves: int = 0) -> tuple[MoveSource, ...]:
        """The sources a game asks before searching, in order: the book, ``online``'s books (one game's online
        sources), the tables, ``online``'s tables (docs/online.md). ``book``: the game's own book settings
        (``game_overrides``; its files opened once and kept), None: the settings'. ``book_moves``: the book's
        moves in the game so far (book.max_moves, online_moves' only_without_book).

        Raises:
            lichessbot.book.BookError: the game's own book names a missing or corrupt file.
        """
        return move_sources(book=self._book_of(book), tablebases=self.tablebases, online=online,
                            gaviota=self.gaviota, book_config=book or self.settings.book, book_moves=book_moves)

    def _book_of(self, config: BookConfig | None) -> Book | None:
        if config is None or config == self.settings.book:
            return self.book
        key = config.model_dump_json()
        with self._lock:
            if key not in self._books:
                self._books[key] = Book.from_config(config, random.Random(self.settings.book_seed))
            return self._books[key]

    def use_online(self, online: OnlineMoves | None) -> None:
        """Ask ``online`` (built by the bot service with its token, pacer and account, or by ``lichessbot uci
        --config``; closed by its maker) in the games started from now on; None or one with no source on: none."""
        self.online = online if online is not None and online.enabled else None

    # settings ----------------------------------------------------------------------------------
    def configure(self, settings: ThinkerSettings) -> None:
        """Use ``settings`` from now on (a search under way keeps what it started with). What they change is
        rebuilt: the book, the tables and the strength table now (an error leaves every setting as it was), the
        network's runner at the next search when one of :data:`NETWORK_FIELDS` changed, the searchers of the
        game thinkers at their next search when the search parameters, the tables or the runner changed.

        Raises:
            lichessbot.book.BookError, lichessbot.tablebase.TablebaseError, lichessbot.strength.StrengthError:
                a file of the new settings cannot be read.
        """
        old = self.settings
        if settings == old:
            return
        book = _book(settings) if (settings.book, settings.book_seed) != (old.book, old.book_seed) else self.book
        tables = _tables(settings) if settings.tablebases != old.tablebases else self.tablebases
        gaviota = (gaviota_tables(settings.tablebases.gaviota) if settings.tablebases.gaviota != old.tablebases.gaviota
                   else self.gaviota)
        same_strength = (settings.engine.strength, settings.names) == (old.engine.strength, old.names)
        table = self.strength_table if same_strength else _strength_table(settings)
        network = any(getattr(settings.engine, f) != getattr(old.engine, f) for f in NETWORK_FIELDS)
        with self._lock:
            if network:
                if self.service is not None:
                    self._retired_services.append(self.service)  # closed with the engine: searches may use it
                self.evaluator = self.service = None
                if (settings.engine.network, settings.engine.input_format) != (old.engine.network,
                                                                                old.engine.input_format):
                    self.network = None
            if network or settings.tablebases != old.tablebases or settings.engine.search != old.engine.search:
                self.generation += 1
            self.settings, self.book, self.tablebases, self.strength_table = settings, book, tables, table
            self.gaviota = gaviota

    def _warn_mismatch(self) -> None:
        if self.strength_table is not None:
            mismatch = table_mismatch(self.strength_table, self.settings.engine.network)
            if mismatch:
                log.warning("strength table", problem=mismatch)

    # counts and the end ------------------------------------------------------------------------
    def count_ponder(self, hit: bool) -> None:
        """Count a ponder search started (``hit`` False) or one the opponent's move confirmed (True)."""
        with self._counts_lock:
            if hit:
                self.ponder_hits += 1
            else:
                self.ponders += 1

    def new_game(self, game_id: str | None = None, *, online_name: str | None = None,
                 eager: bool = True) -> GameThinker:
        """A thinker for one game: its own search tree and time manager; ``game_id`` goes on its log lines
        (:class:`~lichessbot.thinker.game_thinker.GameThinker`)."""
        return GameThinker(self, game_id, online_name=online_name, eager=eager)

    def close(self) -> None:
        """Stop the evaluation service's worker threads (every game's thinker must be closed first)."""
        for service in [*self._retired_services, self.service]:
            if service is not None:
                service.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
