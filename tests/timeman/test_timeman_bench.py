"""``lichessbot bench timeman``'s bookkeeping: each move's time from the match's clocks, the phases, the score
with its interval, the losses on time, and the record file it can summarize again."""

from __future__ import annotations

import json

import chess
import chess.pgn
import pytest

from lichessbot.diagnostics.bench_timeman import (
    OURS,
    THEIRS,
    BenchError,
    GameTimes,
    format_summary,
    game_times,
    record_of,
    summarize,
)
from lichessbot.match import GameRecord, TimeControl

BULLET = TimeControl(10.0, 0.1)


def _record(first_white: bool, spent: list[float], *, book: int = 2, result: str = "1-0", fault: str | None = None,
            loser: str | None = None, tc: TimeControl = BULLET) -> GameRecord:
    """A finished game as the match records it: ``book`` book moves, then engine moves costing ``spent`` s each
    (white, black, white, ...), each with the [%clk] the match writes (clock - spent + inc)."""
    board = chess.Board()
    game = chess.pgn.Game()
    node: chess.pgn.GameNode = game
    clocks = {chess.WHITE: tc.base, chess.BLACK: tc.base}
    for _ in range(book):
        move = next(iter(board.legal_moves))
        board.push(move)
        node = node.add_variation(move, comment="book")
    for t in spent:
        move = next(iter(board.legal_moves))
        mover = board.turn
        clocks[mover] = clocks[mover] - t + tc.inc
        board.push(move)
        node = node.add_variation(move)
        node.set_clock(clocks[mover])
    reason = "checkmate"
    if fault == "time" and loser is not None:
        reason = f"{'white' if (loser == OURS) == first_white else 'black'} lost on time"
    return GameRecord(1, first_white, result, "normal" if fault is None else "time forfeit", reason, loser, fault,
                      len(spent), game)


def test_each_move_costs_its_clock_difference_plus_the_increment():
    g = game_times(_record(True, [0.5, 0.25, 0.125, 1.0]), TimeControl(10.0, 0.1))
    # two book plies: the engines start at full move 2 (white), 2 (black), 3, 3
    assert g.moves == [(2, OURS, 0.5), (2, THEIRS, 0.25), (3, OURS, 0.125), (3, THEIRS, 1.0)]
    assert g.ours_white and g.score == 1.0
    swapped = game_times(_record(False, [0.5, 0.25]), TimeControl(10.0, 0.1))
    assert [who for _m, who, _t in swapped.moves] == [THEIRS, OURS] and swapped.score == 0.0


def test_the_phases_compare_our_mean_time_with_lc0s_on_the_same_games():
    tc = TimeControl(60.0, 0.6)
    # 60 plies from full move 2: full moves 2..31; ours 0.4 s a move, lc0 0.5 s
    g = game_times(_record(True, [0.4, 0.5] * 30, tc=tc), tc)
    late = GameTimes(tc="60+0.6", ours_white=True, score=0.5, result="1/2-1/2", termination="normal", reason="",
                     fault=None, loser=None, moves=[(45, OURS, 0.2), (45, THEIRS, 0.1)])
    (s,) = summarize([g, late])
    ours, lc0, n_ours, n_lc0 = s.phase_means["moves 1-10"]
    assert (ours, lc0, n_ours, n_lc0) == (pytest.approx(0.4), pytest.approx(0.5), 9, 9)  # full moves 2..10
    assert s.phase_means["moves 11-40"][2:] == (21, 21)
    assert s.phase_means["moves 41+"] == (pytest.approx(0.2), pytest.approx(0.1), 1, 1)
    assert (s.games, s.wins, s.draws, s.losses) == (2, 1, 1, 0) and s.score == 0.75
    text = format_summary(s)
    assert "moves 1-10" in text and "0.80" in text  # the ratio ours/lc0


def test_time_losses_are_counted_by_engine_and_the_score_has_its_interval():
    lost = game_times(_record(True, [0.3, 0.3], result="0-1", fault="time", loser=OURS), TimeControl(10.0, 0.1))
    won = game_times(_record(False, [0.3, 0.3], result="0-1", fault="time", loser=THEIRS), TimeControl(10.0, 0.1))
    (s,) = summarize([lost, won, won])
    assert s.time_losses == {OURS: 1, THEIRS: 2} and s.faults == {OURS: 0, THEIRS: 0}
    lo, hi = s.score_interval()
    assert 0.0 <= lo < s.score < hi <= 1.0
    assert "losses on time: lichessbot 1, lc0 2" in format_summary(s)
    # a flag drawn because the opponent cannot mate (FIDE 6.9) is still a flag
    drawn = game_times(_record(False, [0.3, 0.3], result="1/2-1/2", fault="time"), TimeControl(10.0, 0.1))
    drawn.reason, drawn.termination = "white lost on time, but the opponent cannot mate", "time forfeit"
    (s2,) = summarize([lost, drawn])
    assert s2.time_losses == {OURS: 1, THEIRS: 0} and s2.flags == {OURS: 1, THEIRS: 1}
    assert "(flags, the drawn ones too: lichessbot 1, lc0 1)" in format_summary(s2)


def test_the_record_file_is_read_back_and_a_bad_one_is_refused(tmp_path, capsys):
    from lichessbot.cli import main

    g = game_times(_record(True, [0.5, 0.25]), TimeControl(10.0, 0.1))
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(vars(g)) + "\n")
    assert record_of(json.loads(path.read_text())) == g
    assert main(["bench", "timeman", "--summarize", str(path)]) == 0
    assert "== 10+0.1: 1 games" in capsys.readouterr().out
    (tmp_path / "bad.jsonl").write_text("not json\n")
    assert main(["bench", "timeman", "--summarize", str(tmp_path / "bad.jsonl")]) == 2
    assert "bad.jsonl: not a bench timeman record" in capsys.readouterr().err


def test_a_missing_lc0_is_refused_before_any_game(tmp_path, capsys):
    from lichessbot.cli import main

    assert main(["bench", "timeman", "--lc0", str(tmp_path / "nothing"), "--network", "x.onnx"]) == 2
    assert "--lc0" in capsys.readouterr().err
    assert issubclass(BenchError, RuntimeError)
