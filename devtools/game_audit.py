"""``python -m devtools.game_audit`` (developer-only, from a clone): where two engines lose their games, by
Stockfish's judgement of every move of a PGN (``lichessbot bench timeman --pgn``, ``lichessbot match``).

Each position of each game is evaluated once by Stockfish (``--depth``, one thread) and turned into the expected
score of the side to move by Stockfish's own WDL model (python-chess ``Score.wdl(model="sf", ply=...)``:
``wins + draws / 2``). A move's *loss* is the mover's expected score before it minus after it (a checkmate,
stalemate or other end of the game scores 1, 0.5 or 0 by the rules). Book moves (a comment holding "book", as
the bench writes them) are skipped.

Printed:

- per engine and phase (full moves 1-10, 11-25, 26-40, 41-60, 61+): the moves, the mean loss, and the moves that
  lost more than 0.1 and more than 0.25;
- the conversions: the games in which an engine's expected score reached ``--winning`` (0.85) at some move, and
  how those games ended for it (won, drawn, lost). Over a run the score follows the two engines' total losses,
  and a side that reaches won positions without winning them shows here first.

``--jsonl FILE`` keeps every move's row (engine, ply, full move, expected scores, loss); ``--summarize FILE``
prints the tables of such a file again without Stockfish.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import chess
import chess.engine
import chess.pgn

__all__ = ["PHASES", "add_arguments", "audit_game", "conversions", "format_tables", "phase_of", "run", "summarize"]

#: Phases by full move number (inclusive upper bounds; the last has none).
PHASES: tuple[tuple[str, int | None], ...] = (("1-10", 10), ("11-25", 25), ("26-40", 40), ("41-60", 60), ("61+", None))

Row = dict[str, Any]
#: White's expected score (0..1) of a position that is not over.
Evaluate = Callable[[chess.Board], float]


def phase_of(fullmove: int) -> str:
    """The :data:`PHASES` name of a full move number."""
    for name, hi in PHASES:
        if hi is None or fullmove <= hi:
            return name
    raise AssertionError("unreachable")


def _white_expectation(board: chess.Board, evaluate: Evaluate) -> float:
    outcome = board.outcome(claim_draw=False)
    if outcome is not None:
        return {True: 1.0, False: 0.0, None: 0.5}[outcome.winner]
    return evaluate(board)


def audit_game(game: chess.pgn.Game, evaluate: Evaluate, number: int = 0) -> list[Row]:
    """One row per engine move (book moves skipped): ``engine`` (the PGN's player name), ``ply`` (plies before
    the move), ``fullmove``, ``before``/``after`` (the mover's expected score), ``loss`` (before - after),
    ``game`` (``number``) and ``result`` (the game's, "1-0"...). ``evaluate`` is called once per position."""
    board = game.board()
    rows: list[Row] = []
    white_now = _white_expectation(board, evaluate)
    for node in game.mainline():
        mover = board.turn
        name = game.headers.get("White" if mover == chess.WHITE else "Black", "?")
        fullmove, ply = board.fullmove_number, board.ply()
        board.push(node.move)
        white_next = _white_expectation(board, evaluate)
        if "book" not in (node.comment or ""):
            before, after = (white_now, white_next) if mover == chess.WHITE else (1 - white_now, 1 - white_next)
            rows.append({"game": number, "engine": name, "ply": ply, "fullmove": fullmove, "before": round(before, 4),
                         "after": round(after, 4), "loss": round(before - after, 4),
                         "result": game.headers.get("Result", "*"), "white": mover == chess.WHITE})
        white_now = white_next
    return rows


def summarize(rows: Iterable[Row]) -> dict[tuple[str, str], dict[str, float]]:
    """Per (engine, phase), and (engine, "all"): moves, mean loss (losses below 0 count as 0: a move cannot gain
    by Stockfish's judgement beyond its noise), moves losing more than 0.1 and more than 0.25."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        loss = max(0.0, float(r["loss"]))
        acc[(r["engine"], phase_of(int(r["fullmove"])))].append(loss)
        acc[(r["engine"], "all")].append(loss)
    return {k: {"moves": len(v), "mean_loss": sum(v) / len(v), "over_0.1": sum(x > 0.1 for x in v),
                "over_0.25": sum(x > 0.25 for x in v)} for k, v in acc.items()}


def conversions(rows: Iterable[Row], winning: float = 0.85) -> dict[str, dict[str, int]]:
    """Per engine: of the games in which its expected score reached ``winning`` (in any position before a move,
    from its side), how many it won, drew and lost (``{"won": .., "drawn": .., "lost": ..}``)."""
    games: dict[Any, list[Row]] = defaultdict(list)
    for r in rows:
        games[r["game"]].append(r)
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"won": 0, "drawn": 0, "lost": 0})
    for moves in games.values():
        names = {r["engine"]: r["white"] for r in moves}
        for name, white in names.items():
            reached = any((r["before"] if r["engine"] == name else 1 - r["before"]) >= winning for r in moves)
            if not reached:
                continue
            result = moves[0]["result"]
            score = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
            score = score if white else 1 - score
            out[name]["won" if score == 1 else "lost" if score == 0 else "drawn"] += 1
    return dict(out)


def format_tables(rows: list[Row], winning: float = 0.85) -> str:
    """The two tables of the module docstring, as text."""
    s = summarize(rows)
    engines = sorted({e for e, _ in s})
    lines = ["  phase   engine          moves  mean loss  >0.1  >0.25"]
    for phase in [p for p, _ in PHASES] + ["all"]:
        for e in engines:
            v = s.get((e, phase))
            if v:
                lines.append(f"  {phase:7s} {e:14s} {v['moves']:6d}  {v['mean_loss']:9.4f} {v['over_0.1']:5d} "
                             f"{v['over_0.25']:6d}")
    games = len({r["game"] for r in rows})
    lines.append(f"  conversions (expected score reached {winning:g}), {games} games:")
    for e, c in sorted(conversions(rows, winning).items()):
        lines.append(f"  {e:14s} won {c['won']}, drawn {c['drawn']}, lost {c['lost']}")
    return "\n".join(lines)


def _games(paths: list[str], limit: int | None) -> Iterator[chess.pgn.Game]:
    n = 0
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            while (limit is None or n < limit) and (game := chess.pgn.read_game(fh)) is not None:
                n += 1
                yield game


def stockfish_evaluate(engine: chess.engine.SimpleEngine, depth: int) -> Evaluate:
    """White's expected score by Stockfish at ``depth`` with its WDL model."""
    def evaluate(board: chess.Board) -> float:
        score = engine.analyse(board, chess.engine.Limit(depth=depth))["score"].white()
        return score.wdl(model="sf", ply=board.ply()).expectation()
    return evaluate


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pgn", nargs="*", help="PGN files (bench timeman --pgn, lichessbot match)")
    parser.add_argument("--stockfish", default=shutil.which("stockfish") or "/usr/games/stockfish",
                        help="Stockfish binary (default: stockfish on PATH)")
    parser.add_argument("--depth", type=int, default=13, help="Stockfish depth per position (default 13)")
    parser.add_argument("--max-games", type=int, default=None, help="only the first N games")
    parser.add_argument("--winning", type=float, default=0.85, help="expected score of a won position (0.85)")
    parser.add_argument("--jsonl", help="write every move's row to this file")
    parser.add_argument("--summarize", nargs="+", metavar="JSONL", help="print the tables of --jsonl files")


def run(args: argparse.Namespace) -> int:
    if args.summarize:
        kept = [json.loads(line) for path in args.summarize for line in open(path, encoding="utf-8")]
        print(format_tables(kept, args.winning))
        return 0
    if not args.pgn:
        print("game_audit: give PGN files or --summarize", file=sys.stderr)
        return 2
    try:
        engine = chess.engine.SimpleEngine.popen_uci(args.stockfish)
    except (OSError, chess.engine.EngineError) as err:
        print(f"game_audit: cannot start Stockfish {args.stockfish!r}: {err}", file=sys.stderr)
        return 2
    rows: list[Row] = []
    try:
        engine.configure({"Threads": 1})
        evaluate = stockfish_evaluate(engine, args.depth)
        out = open(args.jsonl, "w", encoding="utf-8") if args.jsonl else None
        for i, game in enumerate(_games(args.pgn, args.max_games), 1):
            game_rows = audit_game(game, evaluate, i)
            rows.extend(game_rows)
            if out is not None:
                out.writelines(json.dumps(r) + "\n" for r in game_rows)
                out.flush()
        if out is not None:
            out.close()
    finally:
        engine.quit()
    print(format_tables(rows, args.winning))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.game_audit", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
