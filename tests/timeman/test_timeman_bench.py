"""The timeman bench's bookkeeping: stop kinds from info strings, time controls, clock charging."""

from __future__ import annotations

import chess
import chess.engine
import pytest

from lichessbot.diagnostics.bench_timeman import BenchError, classify, parse_tc, play_game


def test_stop_reasons_are_classified():
    assert classify("early-stop at 0.61 s of 1.20 s (e2e4: best Q +0.100, prior 0.95)") == "early"
    assert classify("smart-pruning at 0.41 s of 1.20 s") == "early"
    assert classify("immediate: one legal move at 0.00 s") == "early"
    assert classify("late-stop at 1.50 s of max 2.40 s (stable again)") == "extended"
    assert classify("target at 1.21 s of 1.20 s") == "normal"
    assert classify(None) == "normal"


def test_time_controls_parse():
    assert parse_tc("60+0") == (60.0, 0.0)
    assert parse_tc("180") == (180.0, 0.0)
    assert parse_tc("120+1.5") == (120.0, 1.5)
    with pytest.raises(BenchError, match="base\\+inc"):
        parse_tc("fast")


class FirstMove:
    """A stand-in engine that plays its first legal move at once and says why."""

    class protocol:  # noqa: N801 - mimics SimpleEngine.protocol
        @staticmethod
        def send_line(line: str) -> None:
            pass

    def play(self, board, limit, **kw):
        return chess.engine.PlayResult(next(iter(board.legal_moves)), None, info={"string": "target at 0.00 s"})


def test_latency_is_charged_to_our_clock_and_can_flag():
    g = play_game(FirstMove(), FirstMove(), True, base=0.01, inc=0.0, latency=0.02, sf_nodes=None)
    assert g.lost_on_time and g.score == 0.0 and g.result == "0-1"
    assert g.move_times[0] >= 0.02


def test_a_finished_game_reports_the_clock_share_and_kinds():
    g = play_game(FirstMove(), FirstMove(), False, base=100.0, inc=1.0, latency=0.0, sf_nodes=None)
    assert not g.lost_on_time and g.result in ("1-0", "0-1", "1/2-1/2")
    assert g.kinds and set(g.kinds) == {"normal"}
    assert 0.0 <= g.clock_share < 0.05
