#!/usr/bin/env bash
# Build lichessbot's abi3 wheel here and check that it installs and plays with no Rust toolchain:
#
#   scripts/check-wheel.sh [EXTRA]        EXTRA: cpu (default) or gpu
#
# 1. maturin build --release: the wheel into dist/ (this step needs cargo, as any build; maturin from the
#    PATH, else a throwaway environment with maturin in pyproject.toml's range);
# 2. a fresh virtual environment, then a PATH without any directory holding cargo or rustc (checked);
# 3. pip install --no-cache-dir "dist/lichessbot_nn-*.whl[EXTRA]" (the seconds and the environment's MB);
# 4. lichessbot uci through python-chess: a "go nodes 200" search from the start position -> bestmove;
# 5. lichessbot doctor --seconds 2 (versions, the onnxruntime package, providers, nps);
# 6. where the wheel has `lichessbot play --local`: it starts on a free port, and
#    scripts/board_game.py plays one game against it through the Board API with berserk.
#
# Everything but dist/ happens in a temporary directory, removed at the end. Exit status 0: every step passed.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
EXTRA=${1:-cpu}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/check-wheel.XXXXXX")
LOCAL_PID=
cleanup() {
    if [ -n "$LOCAL_PID" ]; then kill "$LOCAL_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "== 1. maturin build --release"
MATURIN=${MATURIN:-$(command -v maturin || true)}
if [ -z "$MATURIN" ]; then
    python3 -m venv "$WORK/build" && "$WORK/build/bin/pip" install -q "maturin>=1.5,<2"
    MATURIN=$WORK/build/bin/maturin
fi
rm -f dist/lichessbot_nn-*.whl
"$MATURIN" build --release --out dist
# the distribution is lichessbot-nn (pyproject.toml); a wheel's file name has it as lichessbot_nn
WHEEL=$(ls dist/lichessbot_nn-*-abi3-*.whl)
echo "wheel: $WHEEL ($(du -k "$WHEEL" | cut -f1) KB)"
python3 -m zipfile -l "$WHEEL" | grep -E "lichessbot/_core\.abi3\.so|lichessbot/data/default\.onnx" || {
    echo "the wheel lacks the extension module or the default network" >&2
    exit 1
}

echo "== 2. a fresh environment, no cargo on the PATH"
python3 -m venv "$WORK/venv"
NEW_PATH=$WORK/venv/bin
IFS=: read -r -a dirs <<< "$PATH"
for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -e "$d/cargo" ] && [ ! -e "$d/rustc" ] && NEW_PATH=$NEW_PATH:$d
done
export PATH=$NEW_PATH
unset CARGO_HOME RUSTUP_HOME
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
    echo "cargo or rustc is still on the PATH" >&2
    exit 1
fi
echo "PATH without cargo: $PATH"
cd "$WORK"  # not the clone: lichessbot is imported from the installed wheel only

echo "== 3. pip install --no-cache-dir \"$(basename "$WHEEL")[$EXTRA]\""
t=$SECONDS
pip install -q --no-cache-dir "$REPO/$WHEEL[$EXTRA]"
echo "installed in $((SECONDS - t)) s; the environment: $(du -sm "$WORK/venv" | cut -f1) MB"
python -c "import lichessbot, sys; assert '$REPO' not in lichessbot.__file__, lichessbot.__file__; print('lichessbot from', lichessbot.__file__)"

echo "== 4. lichessbot uci: go nodes 200"
python "$REPO/scripts/smoke_uci.py" 200

echo "== 5. lichessbot doctor"
lichessbot doctor --seconds 2

echo "== 6. lichessbot play --local and one game through the Board API"
if lichessbot play --help | grep -q -- "--local"; then
    PORT=$(python -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
    lichessbot play --local --port "$PORT" > "$WORK/local.log" 2>&1 &
    LOCAL_PID=$!
    for _ in $(seq 60); do
        python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/api/bot/online')" \
            2>/dev/null && break
        sleep 1
    done
    python "$REPO/scripts/board_game.py" "http://127.0.0.1:$PORT" --clock 180+2 || {
        tail -20 "$WORK/local.log" >&2
        exit 1
    }
    kill -INT "$LOCAL_PID" && wait "$LOCAL_PID" || true
    LOCAL_PID=
else
    echo "skipped: this lichessbot has no 'play --local' yet"
fi
echo "== the wheel installs and plays without cargo"
