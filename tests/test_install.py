"""The install: a bare install (neither the cpu nor the gpu extra) says in one line which extra a command
needs, commands that need no network run without onnxruntime, and doctor names the onnxruntime package."""

from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
import sys

import pytest

from lichessbot.cli import NO_ONNXRUNTIME, main
from lichessbot.diagnostics.doctor import package_line
from lichessbot.errors import NetworkError
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from tests.conftest import REPO

#: Runs ``lichessbot`` commands in an interpreter where ``import onnxruntime`` fails as it does in a bare
#: install (ModuleNotFoundError, name "onnxruntime"); prints each command's exit status and stderr.
BARE = """
import contextlib, io, json, sys
sys.modules["onnxruntime"] = None
from lichessbot.cli import main
out = {}
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    out[" ".join(argv)] = [status, err.getvalue()]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_bare_install_names_the_extra_in_one_line_and_runs_what_needs_no_network():
    commands = [["uci"], ["doctor"], ["eval", "--startpos"], ["bench", "nn"],
                ["check-config", str(REPO / "config.yml.example")]]
    proc = subprocess.run([sys.executable, "-c", BARE, json.dumps(commands)], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout)
    for command in ("uci", "doctor", "eval --startpos", "bench nn"):
        status, err = results[command]
        assert status == 2 and err == f"lichessbot: {NO_ONNXRUNTIME}\n", (command, err)
    assert 'pip install "lichessbot-nn[cpu]"' in NO_ONNXRUNTIME and '"lichessbot-nn[gpu]"' in NO_ONNXRUNTIME
    assert results[f"check-config {REPO / 'config.yml.example'}"][0] == 0


def test_doctor_says_which_onnxruntime_package_is_installed(tiny_net, capsys):
    installed = {d: v for d in ("onnxruntime-gpu", "onnxruntime") if (v := _version(d))}
    line = package_line(installed)
    main(["doctor", "--network", str(tiny_net), "--backend", "cpu", "--seconds", "0.1"])
    assert f"\nonnxruntime package: {line}\n" in capsys.readouterr().out
    assert len(installed) == 1, f"one onnxruntime package in the test environment, not {installed}"
    ((dist, version),) = installed.items()
    assert line.startswith(f"{dist} {version} (the {'GPU' if dist.endswith('-gpu') else 'CPU'} build")
    assert package_line({"onnxruntime": "1.32.0"}) == "onnxruntime 1.32.0 (the CPU build, lichessbot-nn[cpu])"
    assert package_line({"onnxruntime-gpu": "1.31.1"}) == "onnxruntime-gpu 1.31.1 (the GPU build, lichessbot-nn[gpu])"
    assert "both, which break each other" in package_line({"onnxruntime-gpu": "1.31.1", "onnxruntime": "1.32.0"})
    assert package_line({}).startswith("neither onnxruntime nor onnxruntime-gpu")


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def test_fp16_without_the_converter_names_the_gpu_extra(tiny_net, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxconverter_common", None)  # as on a CPU install: not installed
    with pytest.raises(NetworkError, match=r'needs onnxconverter-common.*pip install "lichessbot-nn\[gpu\]"'):
        Evaluator(load_network(str(tiny_net)), backend="cpu", threads=1, cache_size=0, precision="fp16")
