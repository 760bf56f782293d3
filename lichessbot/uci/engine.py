"""The UCI protocol of ``lichessbot uci`` (docs/uci.md) over the bot's thinker: commands in, lines out.

Commands: uci, isready, ucinewgame, position, go, stop, ponderhit, quit, setoption, debug. The moves are
chosen where the bot chooses them (:mod:`lichessbot.thinker`: one :class:`~lichessbot.thinker.engine.Engine`
built from typed settings, and this session's :class:`~lichessbot.thinker.game_thinker.GameThinker` with its move
pipeline: book, tables, search, strength level, time manager); this module turns the protocol into those
settings and requests, and their outcome into lines. ``go`` returns at once; a search runs in its own
thread, and a ``bestmove`` always follows. Bad input (an illegal move, a bad FEN, an unknown option, a
malformed ``go``) gives ``info string error ...`` and the engine keeps running. The network is loaded at the
first ``isready`` or search, so ``uci`` answers at once and a book or tablebase move needs none; a network
that does not load is never replaced by another (``go`` answers an error and ``bestmove 0000``). Info lines
follow lc0 (lc0 src/chess/uciloop.cc, src/search/classic/search.cc), one per root move with MultiPV; ``go``'s
parameters and the move request they make live in :mod:`lichessbot.uci.input`, the lines written in
:mod:`lichessbot.uci.output`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

import chess
from pydantic import ValidationError

from lichessbot import __version__
from lichessbot.book import open_book_file
from lichessbot.config import EngineConfig, SearchParams, TimemanConfig
from lichessbot.errors import LichessbotError
from lichessbot.neural.network import Network
from lichessbot.online import OnlineMoves
from lichessbot.search import Searcher, SearchStats
from lichessbot.strength import LevelPlayer, table_from_config, table_mismatch
from lichessbot.thinker import Decision, Thinking
from lichessbot.thinker.engine import Engine
from lichessbot.thinker.settings import UCI_NAMES, ThinkerSettings
from lichessbot.timeman import Budget
from lichessbot.uci.input import UCI_MOVE_OVERHEAD_MS, Go, GuiClocks, parse_go, parse_position, request_of
from lichessbot.uci.input import searchmoves_of as check_searchmoves
from lichessbot.uci.options import HASH_ENTRIES_PER_MB, OPTIONS, UciSettings, thinker_settings
from lichessbot.uci.output import budget_lines, decision_lines, info_lines

__all__ = ["NoEngine", "UciEngine"]

#: The ``uci.`` options whose change makes a new strength level (its words are written at the next search).
_STRENGTH = ("limit_strength", "uci_elo", "strength_table", "strength_preset", "seed")


class NoEngine(LichessbotError, RuntimeError):
    """The network of WeightsFile does not load (the reason was written as an ``info string error``)."""


class UciEngine:
    """The UCI session. ``handle(line)`` runs one command; False means quit."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self._out = out if out is not None else sys.stdout
        self._out_lock = threading.Lock()
        #: The ``uci.`` options; the others are in :attr:`settings`, the thinker's.
        self.options = UciSettings()
        # MoveOverhead: a GUI on the same machine, not lichess's wire (UCI_MOVE_OVERHEAD_MS)
        self.settings = thinker_settings(self.options, ThinkerSettings(
            names=UCI_NAMES, timeman=TimemanConfig(move_overhead=UCI_MOVE_OVERHEAD_MS)))
        #: The engine (the network loads at the first isready or search) and this session's thinker.
        self.engine = Engine(self.settings, shared=False, lazy=True)
        self.thinker = self.engine.new_game(None, online_name="uci", eager=False)
        self.thinker.pipeline.searcher = self._search_engine  # reports the network's loading
        self.board = chess.Board()
        self._thinking: Thinking | None = None  # the move being searched, its bestmove still to come
        self._waiter: threading.Thread | None = None  # writes that bestmove
        self._pending_go: Go | None = None  # a ``go ponder`` waiting for its ponderhit
        self._pondered: tuple[chess.Board, Searcher | None] = (self.board, None)  # its position and searcher
        self._strength: LevelPlayer | None = None  # of the strength options, built at go
        self._clocks = GuiClocks()  # this game's move overhead, learned from the GUI's clocks (new at ucinewgame)
        self._notes: list[str] = []  # what the strength options say, written before the next search

    # -- output -------------------------------------------------------------------------------------
    def send(self, line: str) -> None:
        with self._out_lock:
            self._out.write(line + "\n")
            self._out.flush()

    def error(self, message: str) -> None:
        self.send(f"info string error {message}")

    # -- dispatch -----------------------------------------------------------------------------------
    def handle(self, line: str) -> bool:
        tokens = line.strip().split()
        if not tokens:
            return True
        cmd, args = tokens[0], tokens[1:]
        handler: Callable[[list[str]], bool | None] | None = getattr(self, f"_cmd_{cmd}", None)
        if handler is None:
            self.error(f"unknown command {cmd!r}")
            return True
        try:
            return handler(args) is not False
        except Exception as err:  # noqa: BLE001 - the engine must keep running
            self.error(f"{cmd}: {err}")
            return True

    def _cmd_uci(self, args: list[str]) -> None:
        self.send(f"id name lichessbot {__version__}")
        self.send("id author the lichessbot authors")
        for opt in OPTIONS:
            self.send(opt.declaration())
        self.send("uciok")

    def _cmd_debug(self, args: list[str]) -> None:
        pass

    def _cmd_isready(self, args: list[str]) -> None:
        self._ensure_engine()
        self.send("readyok")

    def use_online(self, online: OnlineMoves) -> None:
        """Ask ``online`` (``lichessbot uci --config``'s ``online_moves``) between the local book and tables
        and after the tables (docs/online.md); a new game of it at each ``ucinewgame``. The caller closes it."""
        self.engine.use_online(online)

    def _cmd_ucinewgame(self, args: list[str]) -> None:
        self._stop_and_wait()
        self.thinker.new_game()
        self._clocks = GuiClocks()

    # -- options ------------------------------------------------------------------------------------
    def _cmd_setoption(self, args: list[str]) -> None:
        text = " ".join(args)
        if not text.lower().startswith("name "):
            raise ValueError("expected: setoption name <id> [value <x>]")
        rest = text[5:]
        low = rest.lower()
        if " value " in low:
            k = low.index(" value ")
            name, raw = rest[:k].strip(), rest[k + 7:].strip()
        else:
            name, raw = rest.strip(), ""
        opt = next((o for o in OPTIONS if o.name.lower() == name.lower()), None)
        if opt is None:
            raise ValueError(f"unknown option {name!r}")
        self.apply(opt.target, opt.parse(raw))

    def apply(self, target: str, value: Any) -> None:
        """Set the option of ``target`` (``room.key``: :class:`~lichessbot.uci.options.UciOption`) to ``value``.
        The engine rebuilds only what the new settings change (:meth:`Engine.configure`); a file that cannot
        be read (BookFile, SyzygyPath, StrengthTable) raises ValueError and changes nothing.

        Raises:
            ValueError: the value does not fit the setting (the reason in the message).
        """
        room, key = target.split(".", 1)
        options, settings = self.options, self.settings
        try:
            if room == "uci":
                options = replace(options, **{key: value})
                if key == "hash_mb":  # Hash (MB) sizes the NN cache, as GUIs send it to every engine
                    settings = self._with(settings, "engine", "nn_cache_size", value * HASH_ENTRIES_PER_MB)
                if key == "book_file":  # a bad file is reported now, not at go (BookError is a ValueError)
                    book = open_book_file(value)
                    if book is not None:
                        book.close()
                if key == "strength_table":  # a bad table is reported now (StrengthError is a ValueError)
                    table_from_config(value, UCI_NAMES.strength_table)
            else:
                settings = self._with(settings, room, key, value)
        except ValidationError as err:
            raise ValueError(err.errors()[0]["msg"]) from None
        settings = thinker_settings(options, settings)
        if (options, settings) == (self.options, self.settings):
            return  # GUIs send every option before each game: nothing to rebuild
        self.engine.configure(settings)  # BookError, TablebaseError, StrengthError: nothing changed
        if any(getattr(options, f) != getattr(self.options, f) for f in _STRENGTH) or (
                settings.engine.strength != self.settings.engine.strength):
            self._strength = None
            self._notes.clear()
        self.options, self.settings = options, settings
        self.board.chess960 = options.chess960
        if key == "network" and value != "default" and not Path(value).exists():
            self.error(f"WeightsFile {value}: no such file; go will not search until a network loads")

    @staticmethod
    def _with(settings: ThinkerSettings, room: str, key: str, value: Any) -> ThinkerSettings:
        """``settings`` with ``key`` of ``room`` (engine, search, timeman) set to ``value``, checked."""
        if room == "timeman":
            return replace(settings, timeman=TimemanConfig.model_validate({**settings.timeman.model_dump(),
                                                                           key: value}))
        engine = settings.engine
        if room == "search":  # a search parameter only: the network session stays (PolicyTemperature too)
            search = SearchParams.model_validate({**engine.search.model_dump(), key: value})
            return replace(settings, engine=engine.model_copy(update={"search": search}))
        return replace(settings, engine=EngineConfig.model_validate({**engine.model_dump(), key: value}))

    # -- the network --------------------------------------------------------------------------------
    def load_network(self) -> Network:
        """The network of WeightsFile (``engine.network``), loaded once per setting.

        Raises:
            LichessbotError, OSError, ValueError: the file is missing or is not a network (the reason in
                the message; see lichessbot.neural.network.load_network).
        """
        return self.engine.load_network()

    def _ensure_engine(self) -> bool:
        """Load the network and build the searcher if needed; False (after an ``info string error`` line
        naming the network and the reason) if it fails. A network that failed to load is never replaced
        by another one: every ``isready`` and ``go`` tries it again and reports the error again."""
        before = self.engine.evaluator
        try:
            self.thinker.searcher()
        except Exception as err:  # noqa: BLE001 - reported, and the engine keeps running
            self.error(f"cannot load network {self.settings.engine.network!r}: {err}")
            return False
        evaluator = self.engine.evaluator
        if evaluator is not before and evaluator is not None and self.engine.network is not None:
            info = evaluator.info
            self.send(f"info string loaded network {self.engine.network.name} on {info.provider}")
            if info.warning:
                self.send(f"info string WARNING: {info.warning}")
        return True

    def _search_engine(self) -> Searcher:
        """The pipeline's searcher: built with the network at the first search.

        Raises:
            NoEngine: the network does not load (``info string error`` already written).
        """
        if not self._ensure_engine():
            raise NoEngine(f"cannot load network {self.settings.engine.network!r}")
        searcher = self.thinker.current_searcher
        assert searcher is not None
        return searcher

    def _cmd_position(self, args: list[str]) -> None:
        self.board = parse_position(args, chess960=self.options.chess960)

    # -- go -----------------------------------------------------------------------------------------
    def _cmd_go(self, args: list[str]) -> None:
        go = parse_go(args, self.error)
        self._stop_and_wait()
        board = self.board.copy()
        if not any(board.generate_legal_moves()):
            self.error("no legal moves in this position")
            self.send("bestmove 0000")
            return
        try:
            check_searchmoves(go, board)
        except ValueError as err:  # reported; every move is searched
            self.error(f"{err}; searching all moves")
            go.searchmoves = []
        self.thinker.refresh()  # the sources and the time manager of the settings now
        if not go.ponder:
            self._decide(board, go)
            return
        pipeline = self.thinker.pipeline
        pipeline.strength = self._strength_player()
        try:  # the search of the expected position, until ponderhit or stop (no book, no tables)
            pipeline.ponder(board, on_info=self._info)
        except NoEngine:  # no search on a network other than the one asked for
            self.send("bestmove 0000")
            return
        self._pondered = (board, self.thinker.current_searcher)
        self._pending_go = go
        self._write_notes()

    def _cmd_ponderhit(self, args: list[str]) -> None:
        if self._pending_go is None:
            return
        go, self._pending_go = self._pending_go, None
        go.ponder = False
        self._decide(self.board.copy(), go)

    def _decide(self, board: chess.Board, go: Go) -> None:
        """The move of ``go`` in ``board`` through the move pipeline (at a ponderhit: the ponder search goes on
        unless a book or tablebase move answers), written at once or when its search ends."""
        pipeline = self.thinker.pipeline
        pipeline.strength = self._strength_player()
        try:
            clock = self._clocks.clock(go, board, self.settings.timeman.move_overhead)
            thinking = pipeline.begin(board, request_of(go, board, self.options.movetime_overhead, clock),
                                      on_info=self._info, on_search=self._on_search)
        except NoEngine:  # no search on a network other than the one asked for
            self.send("bestmove 0000")
            return
        except Exception as err:  # noqa: BLE001 - the search did not start: a bestmove must still come
            self.error(f"go: the search did not start: {err}")
            self.send(f"bestmove {next(iter(board.legal_moves)).uci()}")
            return
        self._follow(thinking, board, self._pondered[1] if thinking.ponderhit else self.thinker.current_searcher)

    def _follow(self, thinking: Thinking, board: chess.Board, searcher: Searcher | None) -> None:
        """Write the move of ``thinking``: a book or tablebase move at once, a search's from a thread."""
        if not thinking.searching:
            self._report(thinking.wait(), searcher)
            return
        self._thinking = thinking
        self._waiter = threading.Thread(target=self._finish, args=(thinking, board, searcher), daemon=True)
        self._waiter.start()

    def _on_search(self, budget: Budget | None) -> None:
        """Before a search: the time manager's budget (and a warning when it is too short to search), then
        what the strength options say."""
        for line in budget_lines(budget):
            self.send(line)
        self._write_notes()

    def _write_notes(self) -> None:
        notes, self._notes = self._notes, []
        for line in notes:
            self.send(line)

    def _strength_player(self) -> LevelPlayer:
        """The session's level of UCI_LimitStrength, UCI_Elo, StrengthTable and StrengthPreset (docs/strength.md:
        the thinker's, from its settings), made when one of them changed; what it says (its level, a table
        calibrated for another network) is written before the next search."""
        if self._strength is None:
            o, table = self.options, self.engine.strength_table
            if o.limit_strength and table is not None:
                mismatch = table_mismatch(table, self.settings.engine.network)
                if mismatch:
                    self._notes.append(f"info string warning: {mismatch}")
            self._strength = player = self.thinker.level_player(None, False)
            if player.level is not None:
                self._notes.append(f"info string strength {player.level.describe()}")
            elif o.limit_strength and table is not None:
                self._notes.append(f"info string strength: UCI_Elo {o.uci_elo} is above the table's top level "
                                   f"{table.max_elo}; full strength")
        return self._strength

    def _cmd_stop(self, args: list[str]) -> None:
        if self._pending_go is not None:  # ``go ponder`` without a ponderhit: the ponder search's move
            self._pending_go = None
            pondered = self.thinker.pipeline.stop_ponder()
            if pondered is not None:
                self._finish(pondered, *self._pondered)
        if self._thinking is not None:
            self._thinking.stop()
        if self._waiter is not None:
            self._waiter.join()
        self._thinking = None
        self.thinker.settle()  # searchers the options replaced during the search are closed now

    def _cmd_quit(self, args: list[str]) -> bool:
        self._stop_and_wait()
        self.thinker.close()
        return False

    def _stop_and_wait(self) -> None:
        self._cmd_stop([])

    # -- search output ------------------------------------------------------------------------------
    def _info(self, s: SearchStats) -> None:
        k = self.options.multipv
        searcher = self.thinker.current_searcher
        pvs = searcher.root_pvs(k) if k > 1 and searcher is not None else None  # the search thread calls this
        for line in info_lines(s, show_wdl=self.options.show_wdl, multipv=k, pvs=pvs):
            self.send(line)

    def _finish(self, thinking: Thinking, board: chess.Board, searcher: Searcher | None) -> None:
        try:
            decision = thinking.wait()
        except Exception as err:  # noqa: BLE001 - a bestmove must still come
            self.error(f"search failed: {err}")
            self.send(f"bestmove {next(iter(board.legal_moves)).uci()}")
            return
        self._report(decision, searcher)

    def _report(self, d: Decision, searcher: Searcher | None) -> None:
        """The lines of a decision (:func:`~lichessbot.uci.output.decision_lines`), ``bestmove`` last."""
        self._clocks.played(d.time)
        verbose = searcher.verbose_stats() if self.options.verbose and d.source == "search" and searcher else []
        for line in decision_lines(d, show_wdl=self.options.show_wdl, verbose=verbose):
            self.send(line)
