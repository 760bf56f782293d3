"""``lichessbot uci`` learns what each move costs its clock beyond the search from the GUI's clocks (the bot's
rule on lichess), charges the larger of that and MoveOverhead, and starts again at ``ucinewgame``."""

from __future__ import annotations

import io
import re
import time

import chess
import pytest

from lichessbot.uci import UciEngine


def _wait(out: io.StringIO, start: int, timeout: float = 20.0) -> list[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lines = out.getvalue().splitlines()[start:]
        if any(line.startswith("bestmove") for line in lines):
            return lines
        time.sleep(0.005)
    raise AssertionError("no bestmove")


def _overheads(eng: UciEngine, out: io.StringIO, moves: int, lag_s: float) -> list[int]:
    """Play ``moves`` of white with 20+0.1 clocks, the GUI charging each move its time plus ``lag_s``; the
    overhead each budget line charged (ms)."""
    board, wtime, charged = chess.Board(), 20_000, []
    for _ in range(moves):
        start = len(out.getvalue().splitlines())
        eng.handle("position startpos moves " + " ".join(m.uci() for m in board.move_stack))
        t = time.monotonic()
        eng.handle(f"go wtime {wtime} btime 20000 winc 100 binc 100")
        lines = _wait(out, start)
        wtime = int(wtime - (time.monotonic() - t + lag_s) * 1000 + 100)
        budget = next(line for line in lines if line.startswith("info string timeman"))
        charged.append(int(re.search(r"overhead (\d+) ms", budget).group(1)))
        board.push_uci(lines[-1].split()[1])
        board.push(next(iter(board.legal_moves)))  # the opponent's reply
    return charged


@pytest.mark.slow
def test_the_engine_learns_the_gui_overhead_and_charges_at_least_move_overhead(tiny_net):
    out = io.StringIO()
    eng = UciEngine(out=out)
    eng.handle(f"setoption name WeightsFile value {tiny_net}")
    eng.handle("setoption name MinibatchSize value 8")
    charged = _overheads(eng, out, 5, lag_s=0.15)
    assert charged[0] == 10  # MoveOverhead's default until a move is measured
    assert 150 <= charged[-1] <= 1000  # the GUI's 150 ms and our own latency around the search
    eng.handle("ucinewgame")
    eng.handle("setoption name MoveOverhead value 400")
    again = _overheads(eng, out, 3, lag_s=0.0)
    assert again[0] == 400 and min(again) >= 400  # a new game starts afresh; MoveOverhead is the least charged
    eng.handle("quit")
