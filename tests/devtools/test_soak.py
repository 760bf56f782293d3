"""The soak (``python -m devtools.soak``) runs end to end (a short soak: 2 games at 5+0) and reports its figures."""

from __future__ import annotations

import pytest

from devtools.soak import main


@pytest.mark.slow
def test_the_soak_bench_plays_its_games_and_reports_the_figures(capsys):
    rc = main(["--games", "2", "--tc", "5+0", "--max-seconds", "60"])
    out = capsys.readouterr().out
    assert "engine: fake" in out and "requests deferred" in out and "429s answered" in out
    assert "bot time losses 0; bot faults 0; illegal posts 0; slots freed True" in out, out
    assert rc == 0 and out.rstrip().endswith("OK")


@pytest.mark.slow
def test_the_soak_loses_nothing_across_a_restart_with_latency_and_keeps_the_records(capsys):
    rc = main(["--games", "2", "--tc", "10+0,12+0", "--restart", "4", "--latency", "20,60",
               "--bot-games", "1", "--max-seconds", "50"])
    out = capsys.readouterr().out
    assert "bot time losses 0; bot faults 0; illegal posts 0" in out, out
    assert "restarts 1; games against bots in the records at the end 1 (expected 1)" in out, out
    assert rc == 0 and out.rstrip().endswith("OK"), out
