"""The UCI state machine of ``lichessbot uci`` (docs/uci.md): commands, options, ``go`` and its output.

Commands: uci, isready, ucinewgame, position, go, stop, ponderhit, quit, setoption, debug. ``go``
returns at once; the move comes from the move pipeline the bot uses (:mod:`lichessbot.thinker`: book,
tables, search, strength level, time manager), a search runs in its own thread, and a ``bestmove`` always
follows. Bad input (an illegal move, a bad FEN, an unknown option, a malformed ``go``) gives ``info string
error ...`` and the engine keeps running. The network is loaded at the first ``isready`` or search, so
``uci`` answers at once and a book or tablebase move needs none; a network that does not load is never
replaced by another (``go`` answers an error and ``bestmove 0000``). Info lines follow lc0 (lc0
src/chess/uciloop.cc, src/search/classic/search.cc), one per root move with MultiPV; ``go``'s parameters
and the move request they make live in :mod:`lichessbot.uci.output`.
"""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import chess
from pydantic import ValidationError

from lichessbot import __version__
from lichessbot.book import Book, open_book_file
from lichessbot.config import EngineConfig, SearchParams, TimemanConfig
from lichessbot.engine.evaluator import Evaluator
from lichessbot.engine.network import Network
from lichessbot.engine.triton import TritonEvaluator
from lichessbot.errors import LichessbotError
from lichessbot.online import OnlineGame, OnlineMoves
from lichessbot.search import Searcher, SearchStats
from lichessbot.strength import LevelPlayer, table_from_config, table_mismatch, uci_level
from lichessbot.strength.levels import StrengthTable
from lichessbot.tablebase import Tablebases, split_path
from lichessbot.thinker import Decision, MovePipeline, Thinking, move_sources, wiring
from lichessbot.timeman import Budget
from lichessbot.uci.options import HASH_ENTRIES_PER_MB, OPTIONS
from lichessbot.uci.output import (
    MOVETIME_OVERHEAD_MS,
    Go,
    budget_lines,
    decision_lines,
    info_lines,
    parse_go,
    parse_position,
    request_of,
    searchmoves_of,
)

__all__ = ["NoEngine", "UciEngine"]


class NoEngine(LichessbotError, RuntimeError):
    """The network of WeightsFile does not load (the reason was written as an ``info string error``)."""


class UciEngine:
    """The UCI state machine. ``handle(line)`` runs one command; False means quit."""

    def __init__(self, out: IO[str] | None = None, config: EngineConfig | None = None,
                 timeman_config: TimemanConfig | None = None) -> None:
        self._out = out if out is not None else sys.stdout
        self._out_lock = threading.Lock()
        self.engine = config or EngineConfig()
        self.params = self.engine.search
        self.timeman_config = timeman_config or TimemanConfig()
        self.flags: dict[str, Any] = {
                      "ponder": False, "show_wdl": False, "chess960": False, "verbose": False, "seed": 0,
                      "own_book": False, "book_file": "", "multipv": 1,
                      "movetime_overhead": MOVETIME_OVERHEAD_MS,
                      "syzygy_path": "", "limit_strength": False, "uci_elo": 1500,
                      "strength_table": "default", "strength_preset": "none"}
        self._book: Book | None = None  # of BookFile
        self._tablebases: Tablebases | None = None  # of SyzygyPath
        self.board = chess.Board()
        self._evaluator: Evaluator | TritonEvaluator | None = None
        self._searcher: Searcher | None = None
        self._net: Network | None = None  # the loaded network of engine.network
        self._cache_temperature = self.params.policy_temperature  # of the priors in the evaluator's NN cache
        #: The session's move pipeline (the bot's); its searcher is built at the first search.
        self.pipeline = MovePipeline(self._search_engine, wiring.timeman_of(self.timeman_config))
        self._thinking: Thinking | None = None  # the move being searched, its bestmove still to come
        self._waiter: threading.Thread | None = None  # writes that bestmove
        self._pending_go: Go | None = None  # a ``go ponder`` waiting for its ponderhit
        self._pondered: tuple[chess.Board, Searcher | None] = (self.board, None)  # its position and searcher
        self._to_close: list[Searcher] = []  # searchers replaced during a search, closed once it ends
        self._strength: LevelPlayer | None = None  # of the strength options, built at go
        self._strength_table: StrengthTable | None = None  # of StrengthTable, read at first use
        self._notes: list[str] = []  # what the strength options say, written before the next search
        self._online: OnlineGame | None = None  # this game's online sources (use_online), new at ucinewgame

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
        self._online = online.game("uci") if online.enabled else None

    def _cmd_ucinewgame(self, args: list[str]) -> None:
        self._stop_and_wait()
        if self._online is not None:
            self._online = self._online.online.game("uci")
        if self._searcher is not None:
            self._searcher.new_game()
        if self._evaluator is not None:
            self._evaluator.clear_cache()
        self.pipeline.timeman = wiring.timeman_of(self.timeman_config)

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
        value = opt.parse(raw)
        self._set(opt.target, value)

    def _set(self, target: str, value: Any) -> None:
        room, key = target.split(".", 1)
        if room == "uci":
            self.flags[key] = value
            if key == "seed":
                self.params = SearchParams.model_validate({**self.params.model_dump(), "seed": value or None})
                self._drop_searcher()
            if key == "hash_mb":  # Hash (MB) sizes the NN cache, as GUIs send it to every engine
                self._set("engine.nn_cache_size", value * HASH_ENTRIES_PER_MB)
            if key == "chess960":
                self.board.chess960 = value
            if key == "book_file":  # a bad file is reported now, not at go (BookError is a ValueError)
                self._book = open_book_file(value, random.Random(self.flags["seed"] or None))
            if key in ("limit_strength", "uci_elo", "strength_table", "strength_preset", "seed"):
                self._strength = None
                self._notes.clear()
            if key == "strength_table":  # a bad table is reported now (StrengthError is a ValueError)
                self._strength_table = table_from_config(value, "StrengthTable")
            if key == "syzygy_path":  # a bad path is reported now (TablebaseError is a ValueError)
                paths = split_path(value)
                self._tablebases = Tablebases(paths, key="SyzygyPath") if paths else None
                self._drop_searcher()
            return
        try:
            if room == "search":  # a search parameter only: the network session stays (PolicyTemperature too)
                self.params = SearchParams.model_validate({**self.params.model_dump(), key: value})
                self._drop_searcher()
            elif room == "engine":
                data = self.engine.model_dump()
                data[key] = value
                self.engine = EngineConfig.model_validate(data)
                self._drop_searcher()
                self._evaluator = None
                if key in ("network", "input_format"):
                    self._net = None
                if key == "network" and value != "default" and not Path(value).exists():
                    self.error(f"WeightsFile {value}: no such file; go will not search until a network loads")
            elif room == "timeman":
                self.timeman_config = TimemanConfig.model_validate({**self.timeman_config.model_dump(), key: value})
                self.pipeline.timeman = wiring.timeman_of(self.timeman_config)
        except ValidationError as err:
            raise ValueError(err.errors()[0]["msg"]) from None

    def _drop_searcher(self) -> None:
        """Let go of the searcher (the next search builds one with the new settings). Never during a search:
        ``setoption`` while searching applies to the next search, and the old searcher (its tree and network
        thread) is closed once the search under way has written its bestmove."""
        searcher, self._searcher = self._searcher, None
        if searcher is None:
            return
        if (self._waiter is not None and self._waiter.is_alive()) or self.pipeline.pondering:
            self._to_close.append(searcher)
        else:
            searcher.close()

    def load_network(self) -> Network:
        """The network of WeightsFile (``engine.network``), loaded once per setting.

        Raises:
            LichessbotError, OSError, ValueError: the file is missing or is not a network (the reason in
                the message; see lichessbot.engine.network.load_network).
        """
        if self._net is None:
            self._net = wiring.network_of(self.engine)
        return self._net

    def _ensure_engine(self) -> bool:
        """Load the network and build the searcher if needed; False (after an ``info string error`` line
        naming the network and the reason) if it fails. A network that failed to load is never replaced
        by another one: every ``isready`` and ``go`` tries it again and reports the error again."""
        if self._searcher is not None:
            return True
        try:
            if self._evaluator is None:
                net = self.load_network()
                self._evaluator = wiring.evaluator_of(self.engine, net)
                self.send(f"info string loaded network {net.name} on {self._evaluator.provider}")
                if isinstance(self._evaluator, Evaluator) and self._evaluator.gpu_warning:
                    self.send(f"info string WARNING: {self._evaluator.gpu_warning}")
            elif self._cache_temperature != self.params.policy_temperature:
                self._evaluator.clear_cache()  # the NN cache holds priors made at the old PolicyTemperature
            self._cache_temperature = self.params.policy_temperature
            self._searcher = wiring.searcher_of(self._evaluator, self.params, tablebases=self._tablebases)
        except Exception as err:  # noqa: BLE001 - reported, and the engine keeps running
            self.error(f"cannot load network {self.engine.network!r}: {err}")
            return False
        return True

    def _search_engine(self) -> Searcher:
        """The pipeline's searcher: built with the network at the first search.

        Raises:
            NoEngine: the network does not load (``info string error`` already written).
        """
        if not self._ensure_engine():
            raise NoEngine(f"cannot load network {self.engine.network!r}")
        assert self._searcher is not None
        return self._searcher

    def _cmd_position(self, args: list[str]) -> None:
        self.board = parse_position(args, chess960=self.flags["chess960"])

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
            searchmoves_of(go, board)
        except ValueError as err:  # reported; every move is searched
            self.error(f"{err}; searching all moves")
            go.searchmoves = []
        self.pipeline.sources = move_sources(book=self._book if self.flags["own_book"] else None,
                                             tablebases=self._tablebases, online=self._online)
        if not go.ponder:
            self._decide(board, go)
            return
        self.pipeline.strength = self._strength_player()
        try:  # the search of the expected position, until ponderhit or stop (no book, no tables)
            self.pipeline.ponder(board, nodes=go.nodes, on_info=self._info)
        except NoEngine:  # no search on a network other than the one asked for
            self.send("bestmove 0000")
            return
        self._pondered = (board, self._searcher)
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
        self.pipeline.strength = self._strength_player()
        try:
            thinking = self.pipeline.begin(board, request_of(go, board, self.flags["movetime_overhead"]),
                                           on_info=self._info, on_search=self._on_search)
        except NoEngine:  # no search on a network other than the one asked for
            self.send("bestmove 0000")
            return
        except Exception as err:  # noqa: BLE001 - the search did not start: a bestmove must still come
            self.error(f"go: the search did not start: {err}")
            self.send(f"bestmove {next(iter(board.legal_moves)).uci()}")
            return
        self._follow(thinking, board, self._pondered[1] if thinking.ponderhit else self._searcher)

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
        """The :class:`~lichessbot.strength.LevelPlayer` of UCI_LimitStrength, UCI_Elo, StrengthTable and
        StrengthPreset (docs/strength.md), built when one of them changed; what it says (its level, a table
        calibrated for another network) is written before the next search."""
        if self._strength is None:
            f = self.flags
            if f["limit_strength"] and self._strength_table is None:
                self._strength_table = table_from_config(f["strength_table"], "StrengthTable")
            if f["limit_strength"] and self._strength_table is not None:
                mismatch = table_mismatch(self._strength_table, self.engine.network)
                if mismatch:
                    self._notes.append(f"info string warning: {mismatch}")
            level = uci_level(f["limit_strength"], f["uci_elo"], f["strength_preset"], self._strength_table)
            self._strength = LevelPlayer(level, seed=f["seed"] or None)
            if level is not None:
                self._notes.append(f"info string strength {level.describe()}")
            elif f["limit_strength"] and self._strength_table is not None:
                self._notes.append(f"info string strength: UCI_Elo {f['uci_elo']} is above the table's top level "
                                   f"{self._strength_table.max_elo}; full strength")
        return self._strength

    def _cmd_stop(self, args: list[str]) -> None:
        if self._pending_go is not None:  # ``go ponder`` without a ponderhit: the ponder search's move
            self._pending_go = None
            pondered = self.pipeline.stop_ponder()
            if pondered is not None:
                self._finish(pondered, *self._pondered)
        if self._thinking is not None:
            self._thinking.stop()
        if self._waiter is not None:
            self._waiter.join()
        self._thinking = None
        to_close, self._to_close = self._to_close, []
        for searcher in to_close:
            searcher.close()

    def _cmd_quit(self, args: list[str]) -> bool:
        self._stop_and_wait()
        self._drop_searcher()
        return False

    def _stop_and_wait(self) -> None:
        self._cmd_stop([])

    # -- search output ------------------------------------------------------------------------------
    def _info(self, s: SearchStats) -> None:
        k = self.flags["multipv"]
        searcher = self._searcher
        pvs = searcher.root_pvs(k) if k > 1 and searcher is not None else None  # the search thread calls this
        for line in info_lines(s, show_wdl=self.flags["show_wdl"], multipv=k, pvs=pvs):
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
        verbose = searcher.verbose_stats() if self.flags["verbose"] and d.source == "search" and searcher else []
        for line in decision_lines(d, show_wdl=self.flags["show_wdl"], verbose=verbose):
            self.send(line)
