"""The suite stands on its own: it reads nothing outside the repository but what tests/data/fetch.sh puts in
tests/data/nets, and the run's closing line names why each skipped test skipped."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO


def test_no_test_reads_a_folder_beside_the_repository():
    sources = [*(REPO / "tests").rglob("*.py"), *(REPO / "rust" / "core" / "tests").rglob("*.rs")]
    offenders = [str(p.relative_to(REPO)) for p in sources
                 if p.name != "test_standalone.py" and ("../shared" in (text := p.read_text()) or '"shared"' in text)]
    assert offenders == []


@pytest.mark.slow
def test_the_closing_line_counts_the_skips_by_reason(tmp_path):
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\n"
        "def test_a():\n    pytest.skip('maia nets not found')\n\n"
        "def test_b():\n    pytest.skip('maia nets not found')\n\n"
        "@pytest.mark.skipif(True, reason='no usable GPU')\ndef test_c():\n    pass\n\n"
        "def test_d():\n    pass\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
                          str(tmp_path / "test_skips.py")], cwd=REPO, capture_output=True, text=True, timeout=120)
    lines = run.stdout.splitlines()
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 tests skipped: 2 maia nets not found; 1 no usable GPU" in lines, lines
