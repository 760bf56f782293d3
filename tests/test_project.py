"""The project's one test command and its release: CI runs exactly the README's install and test command,
the Maia download is offline-safe, and the release workflow builds every platform's wheel and the sdist."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess

import yaml

from tests.conftest import REPO

INSTALL = 'pip install -e ".[cpu,test]"'
CHECK = "scripts/check.sh"


def _commands(path: str) -> list[str]:
    """The lines of a shell script that are not comments or blank."""
    lines = (REPO / path).read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_ci_installs_as_the_readme_says_and_runs_exactly_its_test_command():
    readme = (REPO / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert INSTALL in quick and f"\n{CHECK}" in quick and 'python -m pytest -m "not slow"' in quick
    ci = _commands(".ci/run")
    assert INSTALL in ci and ci[-1] == CHECK
    assert os.access(REPO / CHECK, os.X_OK) and os.access(REPO / ".ci/run", os.X_OK)


def test_the_check_runs_every_style_check_the_rust_tests_and_the_whole_suite():
    steps = "\n".join(line for line in _commands(CHECK) if line.startswith("step "))
    for needle in ("tests/data/fetch.sh", "cargo fmt", "--check", "cargo clippy", "-D warnings", "-m ruff check",
                   "-m mypy", "cargo test", "-m pytest"):
        assert needle in steps, needle
    assert "not slow" not in steps  # the whole suite: the fast tier is for everyday work only


def test_ruff_and_mypy_strict_cover_the_package_the_tools_the_scripts_and_training():
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]
    roots = ("lichessbot", "devtools", "scripts", "training")
    assert config["mypy"]["strict"] is True and set(roots) <= set(config["mypy"]["files"])
    assert {f"{r}/**/*.py" for r in roots} <= set(config["ruff"]["include"])
    lenient = [o for o in config["mypy"].get("overrides", []) if o.get("ignore_errors")]
    assert all(m.startswith("tests") for o in lenient for m in o["module"])  # only the test tree is not checked


def test_the_maia_download_is_offline_safe(tmp_path):
    shutil.copy(REPO / "tests/data/fetch.sh", tmp_path / "fetch.sh")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there: as unreachable as a machine offline
    env = {**os.environ, "LICHESSBOT_MAIA_DIR": str(tmp_path / "none"),
           "LICHESSBOT_MAIA_URL": f"http://127.0.0.1:{port}/maia"}
    proc = subprocess.run(["bash", str(tmp_path / "fetch.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"cannot download http://127.0.0.1:{port}/maia/maia-1100.pb.gz" in proc.stderr
    assert "the tests that need the Maia nets will skip" in proc.stderr
    assert list((tmp_path / "nets").iterdir()) == []  # no partial file left behind


def test_the_release_workflow_builds_abi3_wheels_for_every_platform_and_the_sdist():
    flow = yaml.safe_load((REPO / ".github/workflows/release.yml").read_text())
    jobs = flow["jobs"]
    targets = {(p["os"], p["target"]) for p in jobs["wheels"]["strategy"]["matrix"]["platform"]}
    assert targets == {("linux", "x86_64"), ("linux", "aarch64"), ("macos", "x86_64"), ("macos", "aarch64"),
                       ("windows", "x64")}
    build = [s for s in jobs["wheels"]["steps"] if str(s.get("uses", "")).startswith("PyO3/maturin-action@")]
    assert build and "--release" in build[0]["with"]["args"]
    smoke = [s for s in jobs["wheels"]["steps"] if "smoke_uci.py" in s.get("run", "")]
    assert smoke and "[cpu]" in smoke[0]["run"]  # each wheel is installed and searches before a release
    assert any(s.get("with", {}).get("command") == "sdist" for s in jobs["sdist"]["steps"])
    assert set(jobs["release"]["needs"]) == {"wheels", "sdist"}
    # abi3: one wheel per platform for every CPython >= 3.11
    cargo = (REPO / "rust/py/Cargo.toml").read_text()
    assert re.search(r'pyo3 = \{[^}]*"abi3-py311"', cargo)
