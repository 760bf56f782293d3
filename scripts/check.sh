#!/usr/bin/env bash
# Every check of lichessbot, in one command, from a clone after the README's install
# (pip install -e ".[cpu,test]", or ".[gpu,test]"), in the virtual environment that install made:
#
#   scripts/check.sh [PYTEST ARGS...]
#
# 1. tests/data/fetch.sh: the Maia networks of two tests (optional and offline-safe: without a network it
#    says so, and those tests skip with the reason);
# 2. the style checks: cargo fmt --check, cargo clippy -D warnings (the Rust core), ruff, mypy;
# 3. the Rust core's tests (cargo test);
# 4. the whole Python suite (python -m pytest, slow tests included; PYTEST ARGS are added to it).
#
# Stops at the first failing step, names it and exits with its status. Everyday work wants the fast tier
# only: python -m pytest -m "not slow" (README, "Tests").
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
MANIFEST=rust/Cargo.toml
start=$SECONDS

step() {  # step NAME COMMAND...: run it, say how long it took, stop the check when it fails
    local name=$1 t=$SECONDS status=0
    shift
    echo "== $name" >&2
    "$@" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "== FAILED: $name (exit status $status, after $((SECONDS - t)) s)" >&2
        exit "$status"
    fi
    echo "== $name: ok ($((SECONDS - t)) s)" >&2
}

command -v cargo >/dev/null || {
    echo "scripts/check.sh: cargo is not on the PATH: the Rust checks need a Rust toolchain (https://rustup.rs)" >&2
    exit 1
}
"$PYTHON" -c "import lichessbot._core, pytest, ruff, mypy" 2>/dev/null || {
    echo "scripts/check.sh: $PYTHON lacks lichessbot or the test tools: pip install -e \".[cpu,test]\" first" >&2
    exit 1
}

step "Maia networks (tests/data/fetch.sh)" tests/data/fetch.sh
step "cargo fmt --check" cargo fmt --manifest-path "$MANIFEST" --all --check
step "cargo clippy -D warnings" cargo clippy -q --manifest-path "$MANIFEST" --workspace --all-targets -- -D warnings
step "ruff" "$PYTHON" -m ruff check
step "mypy" "$PYTHON" -m mypy
step "cargo test (the Rust core)" cargo test -q --manifest-path "$MANIFEST" -p lichessbot-core
step "pytest (the whole suite)" "$PYTHON" -m pytest -q "$@"
echo "== every check passed ($((SECONDS - start)) s)" >&2
