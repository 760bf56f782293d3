"""The UCI state machine of ``lichessbot uci`` (docs/uci.md): commands, options, ``go`` and its output.

Commands: uci, isready, ucinewgame, position, go, stop, ponderhit, quit, setoption, debug. ``go``
returns at once; the search runs in its own thread and a ``bestmove`` always follows. Bad input (an
illegal move, a bad FEN, an unknown option, a malformed ``go``) gives ``info string error ...`` and
the engine keeps running. The network is loaded at the first ``isready`` or ``go``, so ``uci``
answers at once; a network that does not load is never replaced by another (``go`` answers an error
and ``bestmove 0000``). Info lines follow lc0 (lc0 src/chess/uciloop.cc, src/search/classic/search.cc),
one per root move with MultiPV; ``go``'s parameters and stoppers live in :mod:`lichessbot.uci.output`.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import chess
from pydantic import ValidationError

from lichessbot import __version__, wiring
from lichessbot.book import Book, open_book_file
from lichessbot.config import EngineConfig, SearchParams, TimemanConfig
from lichessbot.engine.evaluator import Evaluator
from lichessbot.engine.network import Network
from lichessbot.engine.triton import TritonEvaluator
from lichessbot.errors import LichessbotError
from lichessbot.play.logs import configure_logging
from lichessbot.search import Limits, Searcher, SearchHandle, SearchResult, SearchStats
from lichessbot.strength import LevelPlayer, table_from_config, table_mismatch, uci_level
from lichessbot.strength.levels import StrengthTable
from lichessbot.tablebase import Tablebases, split_path
from lichessbot.timeman import TimeManager
from lichessbot.uci.options import HASH_ENTRIES_PER_MB, OPTIONS
from lichessbot.uci.output import MIN_SEARCH_MS, MOVETIME_OVERHEAD_MS, Go, info_lines, make_stopper, parse_go

__all__ = ["UciEngine", "add_arguments", "run"]


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
        self._timeman: TimeManager | None = None
        self._handle: SearchHandle | None = None
        self._waiter: threading.Thread | None = None
        self._pending_go: Go | None = None
        self._net: Network | None = None  # the loaded network of engine.network
        self._strength: LevelPlayer | None = None  # of the strength options, built at go
        self._strength_table: StrengthTable | None = None  # of StrengthTable, read at first use

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

    def _cmd_ucinewgame(self, args: list[str]) -> None:
        self._stop_and_wait()
        if self._searcher is not None:
            self._searcher.new_game()
        if self._evaluator is not None:
            self._evaluator.clear_cache()
        self._timeman = None

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
            if key == "strength_table":  # a bad table is reported now (StrengthError is a ValueError)
                self._strength_table = table_from_config(value, "StrengthTable")
            if key == "syzygy_path":  # a bad path is reported now (TablebaseError is a ValueError)
                paths = split_path(value)
                self._tablebases = Tablebases(paths, key="SyzygyPath") if paths else None
                self._drop_searcher()
            return
        try:
            if room == "search":
                self.params = SearchParams.model_validate({**self.params.model_dump(), key: value})
                self._drop_searcher()
                if key == "policy_temperature":
                    self._evaluator = None
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
                self._timeman = None
        except ValidationError as err:
            raise ValueError(err.errors()[0]["msg"]) from None

    def _drop_searcher(self) -> None:
        """Close the searcher (its tree and network thread go; the next ``go`` builds one with the new
        settings). Never during a search: ``setoption`` while searching applies to the next search."""
        searcher, self._searcher = self._searcher, None
        if searcher is not None:
            if self._handle is not None and self._waiter is not None and self._waiter.is_alive():
                threading.Thread(target=_close_after, args=(self._waiter, searcher), name="lichessbot-uci-close",
                                 daemon=True).start()
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
                self._evaluator = wiring.evaluator_of(self.engine, net,
                                                      policy_temperature=self.params.policy_temperature)
                self.send(f"info string loaded network {net.name} on {self._evaluator.provider}")
            self._searcher = wiring.searcher_of(self._evaluator, self.params, tablebases=self._tablebases)
        except Exception as err:  # noqa: BLE001 - reported, and the engine keeps running
            self.error(f"cannot load network {self.engine.network!r}: {err}")
            return False
        return True

    def _cmd_position(self, args: list[str]) -> None:
        if not args:
            raise ValueError("expected: position startpos|fen <fen> [moves ...]")
        moves_at = args.index("moves") if "moves" in args else len(args)
        if args[0] == "startpos":
            board = chess.Board(chess960=self.flags["chess960"])
        elif args[0] == "fen":
            fen = " ".join(args[1:moves_at])
            try:
                board = chess.Board(fen, chess960=self.flags["chess960"])
            except ValueError as err:
                raise ValueError(f"bad FEN {fen!r}: {err}") from None
            if not board.is_valid():
                raise ValueError(f"bad FEN {fen!r}: {board.status()!r}")
        else:
            raise ValueError(f"expected startpos or fen, got {args[0]!r}")
        for uci in args[moves_at + 1:]:
            try:
                board.push(board.parse_uci(uci))
            except ValueError:
                raise ValueError(f"illegal move {uci!r} in {board.fen()}") from None
        self.board = board

    def _cmd_go(self, args: list[str]) -> None:
        go = parse_go(args, self.error)
        self._stop_and_wait()
        board = self.board.copy()
        if not any(board.generate_legal_moves()):
            self.error("no legal moves in this position")
            self.send("bestmove 0000")
            return
        if self._book is not None and self.flags["own_book"] and not go.ponder:
            found = self._book.find(board, "chess960" if board.chess960 else "standard")
            if found is not None:  # a book move is played at once, without searching
                self.send(f"info string book {found}")
                self.send(f"bestmove {found.move.uci()}")
                return
        if self._tablebases is not None and not go.ponder:
            tb_move = self._tablebases.root_move(board)
            if tb_move is not None:  # the tables' move at once, without searching (docs/tablebases.md)
                score = tb_move.score.uci()
                if self.flags["show_wdl"]:
                    score += " wdl {} {} {}".format(*tb_move.score.permille)
                self.send(f"info depth 1 seldepth 1 time 0 nodes 1 score {score} nps 0 tbhits 1 "
                          f"pv {tb_move.move.uci()}")
                self.send(f"info string {tb_move.describe()}")
                self.send(f"bestmove {tb_move.move.uci()}")
                return
        if not self._ensure_engine():  # no search on a network other than the one asked for
            self.send("bestmove 0000")
            return
        if self._timeman is None:
            self._timeman = wiring.timeman_of(self.timeman_config)
        if go.ponder:
            stopper, limits = None, Limits(nodes=go.nodes, infinite=True)
            self._pending_go = go
        else:
            stopper, limits = make_stopper(self._timeman, go, board, self.flags["movetime_overhead"])
            budget = getattr(stopper, "budget", None)
            if budget is not None:
                self.send(f"info string timeman {budget.describe()}")
                if budget.hard_max * 1000 < MIN_SEARCH_MS:
                    self.send(f"info string warning: {budget.hard_max * 1000:.0f} ms is too little time to search; "
                              "the move comes from the first batch (a longer movetime or clock, or a smaller "
                              "MoveOverhead, helps)")
        player = self._strength_player()
        if not go.ponder:
            limits = player.limits(limits)
        searcher = self._searcher
        assert searcher is not None  # _ensure_engine built it
        handle = searcher.start(board, limits, stopper=stopper, on_info=self._info, ponder=go.ponder)
        self._handle = handle
        self._waiter = threading.Thread(target=self._finish, args=(handle, board, searcher, player), daemon=True)
        self._waiter.start()

    def _strength_player(self) -> LevelPlayer:
        """The :class:`~lichessbot.strength.LevelPlayer` of UCI_LimitStrength, UCI_Elo, StrengthTable and
        StrengthPreset (docs/strength.md), built when one of them changed; says its level once."""
        if self._strength is None:
            f = self.flags
            if f["limit_strength"] and self._strength_table is None:
                self._strength_table = table_from_config(f["strength_table"], "StrengthTable")
            if f["limit_strength"] and self._strength_table is not None:
                mismatch = table_mismatch(self._strength_table, self.engine.network)
                if mismatch:
                    self.send(f"info string warning: {mismatch}")
            level = uci_level(f["limit_strength"], f["uci_elo"], f["strength_preset"], self._strength_table)
            self._strength = LevelPlayer(level, seed=f["seed"] or None)
            if level is not None:
                self.send(f"info string strength {level.describe()}")
            elif f["limit_strength"] and self._strength_table is not None:
                self.send(f"info string strength: UCI_Elo {f['uci_elo']} is above the table's top level "
                          f"{self._strength_table.max_elo}; full strength")
        return self._strength

    def _cmd_ponderhit(self, args: list[str]) -> None:
        if self._handle is None or self._pending_go is None:
            return
        go, self._pending_go = self._pending_go, None
        go.ponder = False
        stopper, limits = make_stopper(self._timeman, go, self.board, self.flags["movetime_overhead"])
        self._handle.ponderhit(stopper, self._strength_player().limits(limits))

    def _cmd_stop(self, args: list[str]) -> None:
        self._pending_go = None
        if self._handle is not None:
            self._handle.stop()
            if self._waiter is not None:
                self._waiter.join()

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

    def _finish(self, handle: SearchHandle, board: chess.Board, searcher: Searcher, player: Any = None) -> None:
        try:
            result: SearchResult = handle.wait()
            if player is not None:
                result = player.choose(result)
        except Exception as err:  # noqa: BLE001 - a bestmove must still come
            self.error(f"search failed: {err}")
            self.send(f"bestmove {next(iter(board.legal_moves)).uci()}")
            return
        if self.flags["verbose"]:
            for line in searcher.verbose_stats():
                self.send(f"info string {line}")
        if self._timeman is not None:
            try:
                self._timeman.move_done(result)
            except Exception as err:  # noqa: BLE001
                self.error(f"time manager: {err}")
        if result.stop_reason:
            self.send(f"info string stop: {result.stop_reason}")
        move = result.best_move.uci()
        ponder = f" ponder {result.ponder_move.uci()}" if result.ponder_move is not None else ""
        self.send(f"bestmove {move}{ponder}")


def _close_after(waiter: threading.Thread, searcher: Searcher) -> None:
    """Close ``searcher`` once the search ``waiter`` waits for has written its bestmove."""
    waiter.join()
    searcher.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", default=None,
                        help="the network (WeightsFile): 'default', a .onnx or an lc0 .pb.gz; loaded at start, "
                        "and a network that does not load ends the command with status 2")
    parser.add_argument("--backend", default=None, choices=("auto", "tensorrt", "cuda", "cpu"),
                        help="where the network runs (Backend; default: auto, the best available)")
    parser.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"),
                        help="lowest level of the log lines written on stderr (default: warning)")


def run(args: argparse.Namespace) -> int:
    """Speak UCI on stdin/stdout until ``quit`` or end of input. Logs go to stderr (``--log-level``).

    Raises:
        LichessbotError: ``--network`` does not load (before anything is written on stdout; exit status 2).
    """
    configure_logging(level=getattr(args, "log_level", None) or "warning")
    engine = UciEngine()
    if getattr(args, "network", None):
        engine._set("engine.network", args.network)
    if getattr(args, "backend", None):
        engine._set("engine.backend", args.backend)
    if getattr(args, "network", None):
        try:
            engine.load_network()
        except Exception as err:  # noqa: BLE001 - any reason the file is not a network: fatal here
            raise LichessbotError(f"--network {args.network}: the network does not load: {err}") from None
    for line in sys.stdin:
        if not engine.handle(line):
            break
    else:
        engine.handle("quit")
    return 0
