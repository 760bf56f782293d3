"""``lichessbot uci``: the UCI protocol over the same engine, search and time manager (docs/uci.md).

Commands: uci, isready, ucinewgame, position, go, stop, ponderhit, quit, setoption, debug. ``go``
returns at once; the search runs in its own thread and a ``bestmove`` always follows. Bad input (an
illegal move, a bad FEN, an unknown option, a malformed ``go``) gives ``info string error ...`` and
the engine keeps running. The network is loaded at the first ``isready`` or ``go``, so ``uci``
answers at once. Info lines follow lc0 (lc0 src/chess/uciloop.cc, src/search/classic/search.cc).
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import chess
from pydantic import ValidationError

from lichessbot import __version__
from lichessbot.config import EngineConfig, SearchParams, TimemanConfig
from lichessbot.search import Limits, SearchHandle, SearchResult, SearchStats, Searcher, Stopper
from lichessbot.uci_options import ENGINE_FIELDS, OPTIONS, UciOption

__all__ = ["OPTIONS", "UciEngine", "UciOption", "add_arguments", "run"]


@dataclass
class _Go:
    wtime: int | None = None
    btime: int | None = None
    winc: int = 0
    binc: int = 0
    movestogo: int | None = None
    movetime: int | None = None
    nodes: int | None = None
    infinite: bool = False
    ponder: bool = False


_GO_INT = {"wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate"}
_GO_WORDS = _GO_INT | {"infinite", "ponder", "searchmoves"}


def _make_stopper(timeman: Any, go: _Go, board: chess.Board, overhead_ms: int) -> tuple[Stopper | None, Limits]:
    """The stopper and limits of a ``go``: clocks and movetime go to the time manager (lichessbot.timeman,
    docs/timeman.md); ``nodes`` and ``infinite`` are hard limits."""
    limits = Limits(nodes=go.nodes, infinite=go.infinite)
    ours = go.wtime if board.turn == chess.WHITE else go.btime
    inc = go.winc if board.turn == chess.WHITE else go.binc
    movetime = go.movetime / 1000.0 if go.movetime is not None else None
    if go.infinite or (ours is None and movetime is None):
        return None, limits
    from lichessbot.timeman import Clock

    clock = None
    if ours is not None:
        opp = go.btime if board.turn == chess.WHITE else go.wtime
        clock = Clock(time=max(0, ours), inc=max(0, inc), movestogo=go.movestogo, opp_time=opp)
    return timeman.stopper(clock, board, movetime), limits


class UciEngine:
    """The UCI state machine. ``handle(line)`` runs one command; False means quit."""

    def __init__(self, out: IO[str] | None = None, config: EngineConfig | None = None,
                 timeman_config: TimemanConfig | None = None) -> None:
        self._out = out if out is not None else sys.stdout
        self._out_lock = threading.Lock()
        self.engine = config or EngineConfig()
        self.params = self.engine.search
        self.timeman_config = timeman_config or TimemanConfig()
        self.flags = {"ponder": False, "show_wdl": False, "chess960": False, "verbose": False, "seed": 0,
                      "own_book": False, "book_file": "", "syzygy_path": ""}
        self._book = None  # lichessbot.book.Book of BookFile
        self._tablebases = None  # lichessbot.tablebase.Tablebases of SyzygyPath
        self.board = chess.Board()
        self._evaluator = None
        self._searcher: Searcher | None = None
        self._timeman = None
        self._handle: SearchHandle | None = None
        self._waiter: threading.Thread | None = None
        self._pending_go: _Go | None = None

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
                self._searcher = None
            if key == "chess960":
                self.board.chess960 = value
            if key == "book_file":  # a bad file is reported now, not at go (BookError is a ValueError)
                import random

                from lichessbot.book import open_book_file

                self._book = open_book_file(value, random.Random(self.flags["seed"] or None))
            if key == "syzygy_path":  # a bad path is reported now (TablebaseError is a ValueError)
                from lichessbot.tablebase import Tablebases, split_path

                paths = split_path(value)
                self._tablebases = Tablebases(paths, key="SyzygyPath") if paths else None
                self._searcher = None
            return
        try:
            if room == "search":
                self.params = SearchParams.model_validate({**self.params.model_dump(), key: value})
                self._searcher = None
                if key == "policy_temperature":
                    self._evaluator = None
            elif room == "engine":
                data = self.engine.model_dump()
                data[key] = value
                self.engine = EngineConfig.model_validate(data)
                self._evaluator = self._searcher = None
            elif room == "timeman":
                self.timeman_config = TimemanConfig.model_validate({**self.timeman_config.model_dump(), key: value})
                self._timeman = None
        except ValidationError as err:
            raise ValueError(err.errors()[0]["msg"]) from None

    def _ensure_engine(self) -> bool:
        """Load the network and build the searcher if needed; False (after an error line) if it fails."""
        if self._searcher is not None:
            return True
        try:
            if self._evaluator is None:
                from lichessbot.engine.evaluator import Evaluator
                from lichessbot.engine.network import load_network

                net = load_network(self.engine.network, self.engine.input_format)
                self._evaluator = Evaluator(net, backend=self.engine.backend, threads=self.engine.threads,
                                            cache_size=self.engine.nn_cache_size,
                                            policy_temperature=self.params.policy_temperature)
                self.send(f"info string loaded network {net.name} on {self._evaluator.provider}")
            tb = self._tablebases.core if self._tablebases is not None else None
            self._searcher = Searcher(self._evaluator, self.params, tablebases=tb)
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

    def _parse_go(self, args: list[str]) -> _Go:
        go = _Go()
        i = 0
        while i < len(args):
            tok = args[i]
            if tok in ("infinite", "ponder"):
                setattr(go, tok, True)
            elif tok == "searchmoves":
                self.error("go searchmoves is not supported; searching all moves")
                while i + 1 < len(args) and args[i + 1] not in _GO_WORDS:
                    i += 1
            elif tok in _GO_INT:
                if i + 1 >= len(args) or not args[i + 1].lstrip("-").isdigit():
                    self.error(f"go {tok} needs an integer")
                    if i + 1 < len(args) and args[i + 1] not in _GO_WORDS:
                        i += 1
                else:
                    i += 1
                    if tok in ("depth", "mate"):
                        self.error(f"go {tok} is not supported; ignored")
                    else:
                        setattr(go, tok, int(args[i]))
            else:
                self.error(f"unknown go parameter {tok!r}")
                if i + 1 < len(args) and args[i + 1] not in _GO_WORDS:
                    i += 1
            i += 1
        if go.nodes is not None and go.nodes < 1:
            self.error("go nodes must be >= 1; using 1")
            go.nodes = 1
        return go

    def _cmd_go(self, args: list[str]) -> None:
        go = self._parse_go(args)
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
            found = self._tablebases.root_move(board)
            if found is not None:  # the tables' move at once, without searching (docs/tablebases.md)
                score = f"mate {found.mate}" if found.mate is not None else f"cp {found.cp}"
                if self.flags["show_wdl"]:
                    score += " wdl " + " ".join(str(round(1000 * x)) for x in found.wdl_triple)
                self.send(f"info depth 1 seldepth 1 time 0 nodes 1 score {score} nps 0 tbhits 1 "
                          f"pv {found.move.uci()}")
                self.send(f"info string {found.describe()}")
                self.send(f"bestmove {found.move.uci()}")
                return
        if not self._ensure_engine():
            self.send(f"bestmove {next(iter(board.legal_moves)).uci()}")
            return
        if self._timeman is None:
            self._timeman = self._new_timeman()
        if go.ponder:
            stopper, limits = None, Limits(nodes=go.nodes, infinite=True)
            self._pending_go = go
        else:
            stopper, limits = _make_stopper(self._timeman, go, board, self.timeman_config.move_overhead)
            if getattr(stopper, "budget", None) is not None:
                self.send(f"info string timeman {stopper.budget.describe()}")
        searcher = self._searcher
        handle = searcher.start(board, limits, stopper=stopper, on_info=self._info, ponder=go.ponder)
        self._handle = handle
        self._waiter = threading.Thread(target=self._finish, args=(handle, board, searcher), daemon=True)
        self._waiter.start()

    def _new_timeman(self) -> Any:
        from lichessbot.timeman import TimeManager

        return TimeManager(self.timeman_config)

    def _cmd_ponderhit(self, args: list[str]) -> None:
        if self._handle is None or self._pending_go is None:
            return
        go, self._pending_go = self._pending_go, None
        go.ponder = False
        stopper, limits = _make_stopper(self._timeman, go, self.board, self.timeman_config.move_overhead)
        self._handle.ponderhit(stopper, limits)

    def _cmd_stop(self, args: list[str]) -> None:
        self._pending_go = None
        if self._handle is not None:
            self._handle.stop()
            if self._waiter is not None:
                self._waiter.join()

    def _cmd_quit(self, args: list[str]) -> bool:
        self._stop_and_wait()
        if self._searcher is not None:
            self._searcher.close()
        return False

    def _stop_and_wait(self) -> None:
        self._cmd_stop([])

    # -- search output ------------------------------------------------------------------------------
    def _info(self, s: SearchStats) -> None:
        parts = [f"info depth {max(1, int(s.depth))} seldepth {s.seldepth} time {int(s.elapsed * 1000)}",
                 f"nodes {s.nodes}"]
        parts.append(f"score mate {s.mate}" if s.mate is not None else f"score cp {s.cp}")
        if self.flags["show_wdl"]:
            w, d, l_ = (round(1000 * x) for x in s.wdl)
            d = 1000 - w - l_
            parts.append(f"wdl {w} {d} {l_}")
        parts.append(f"nps {int(s.nps)} tbhits {s.tbhits}")
        if s.pv:
            parts.append("pv " + " ".join(m.uci() for m in s.pv))
        self.send(" ".join(parts))

    def _finish(self, handle: SearchHandle, board: chess.Board, searcher: Searcher) -> None:
        try:
            result: SearchResult = handle.wait()
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", default=None, help="network: 'default', a .onnx or a .pb.gz (WeightsFile)")
    parser.add_argument("--backend", default=None, choices=("auto", "tensorrt", "cuda", "cpu"))


def run(args: argparse.Namespace) -> int:
    """Speak UCI on stdin/stdout until ``quit`` or end of input. Logs go to stderr."""
    import structlog

    structlog.configure(logger_factory=lambda *a: structlog.PrintLogger(sys.stderr))
    engine = UciEngine()
    if getattr(args, "network", None):
        engine._set("engine.network", args.network)
    if getattr(args, "backend", None):
        engine._set("engine.backend", args.backend)
    for line in sys.stdin:
        if not engine.handle(line):
            break
    else:
        engine.handle("quit")
    return 0
