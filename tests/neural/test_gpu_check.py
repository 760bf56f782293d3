"""scripts/gpu/check.sh --dry: the one-run GPU check end to end on the CPU (every step but the GPU's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_the_gpu_check_runs_end_to_end_in_its_dry_mode(tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable, "TOTAL": "240", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(["bash", "scripts/gpu/check.sh", "--dry", str(out)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    log = (out / "check.log").read_text() if (out / "check.log").exists() else ""
    assert proc.returncode == 0, proc.stdout[-3000:] + log[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failed"] == [] and summary["skipped"] == []
    assert summary["env"]["dry"] and summary["env"]["onnxruntime"] and "torch" in summary["env"]
    assert set(summary["nets"]["nets"]) == {"15x192", "20x256"}
    for net in ("default", "15x192", "20x256"):
        correct = summary[f"correct-{net}"]["precisions"]
        assert correct["fp32"]["ok"] and correct["fp16"]["ok"] and correct["fp32"]["max_logit_delta"] == 0.0
        assert correct["fp16"]["max_logit_delta"] > 0  # the fp16 copy ran, not the fp32 network again
        evals = summary[f"evals-{net}"]["precisions"]
        assert all(v > 0 for p in ("fp32", "fp16") for v in evals[p]["evals_per_s"].values())
        search = summary[f"search-{net}"]["precisions"]["fp32"]
        assert search["one_game_nps"] > 0 and sum(search["calls_eight_games"].values()) > 0
    assert not list(out.rglob("*.pb.gz"))  # the generated networks stay out of what comes back
