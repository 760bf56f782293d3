#!/usr/bin/env bash
# On the GPU machine (see scripts/gpu/prepare.sh and docs/gpu.md, "Measuring with onnxruntime-gpu"): gather the pieces of
# onnxruntime-gpu carried by each call in /tmp; once all are there (and .gpu/base), install and measure,
# writing every output under $OUT (the device tool brings it back):
#   doctor.txt            lichessbot doctor (auto), and with --backend tensorrt
#   bench-default.txt/.json  lichessbot bench gpu on the default network: start-up, first move, evals/s per
#                         batch, nps of 1 and 8 games, stop latency, fp32/tf32/fp16 side by side, the check vs
#                         the CPU, shapes sent that the warm-up had not planned
#   bench-maia1900.txt/.json  the same on maia-1900 (fp32, fp16)
#   pytest.txt            the GPU tests (tests/neural/test_gpu_tools.py's GPU test among them) and the emulated host's
# and, in the call after that one (the same command, with .gpu/base again):
#   lc0.txt               lc0's plain CUDA backend (fp32 and fp16) on maia-1900: backendbench and nps
# The same command every call; a call that still lacks pieces says how many it has and exits 0. Sized for
# the device tool's 10 minutes a call and 15 a session.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lichessbot-out}; mkdir -p "$OUT"
W=/tmp/lichessbot-gpu; mkdir -p "$W/parts"
cp .gpu/part-* "$W/parts/" 2>/dev/null
# shellcheck disable=SC1091
. .gpu/manifest
have=$(ls "$W/parts" | wc -l)
if [ "$have" -lt "$parts" ] || [ ! -d .gpu/base ]; then
  echo "have $have of $parts pieces of onnxruntime-gpu: make the next call (.gpu/base with the last)"; exit 0
fi
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
if [ ! -d "$W/site/onnxruntime" ]; then
  cat "$W"/parts/part-* > "$W/ort.tar.xz"
  echo "$ort_sha256  $W/ort.tar.xz" | sha256sum -c - || { echo "onnxruntime-gpu's pieces are corrupt"; exit 1; }
  mkdir -p "$W/site" && tar -xJf "$W/ort.tar.xz" -C "$W/site" && rm "$W/ort.tar.xz"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$W/site" \
    .gpu/base/wheels/*.whl || exit 1
fi
cp .gpu/base/_core*.so lichessbot/
mkdir -p tests/data/nets && cp --remove-destination .gpu/base/nets/* tests/data/nets/ 2>/dev/null
export PYTHONPATH=$W/site:$PWD
# CUDA 13's and cuDNN 9's libraries from the image's NVIDIA wheels (preload_dlls looks beside onnxruntime only)
NV=$("$PY" -c "import nvidia, os; print(':'.join(os.path.join(r, d) for p in nvidia.__path__ for r, ds, _ in os.walk(p) for d in ds if d == 'lib'))")
export LD_LIBRARY_PATH=$NV:${LD_LIBRARY_PATH:-}
LB=("$PY" -m lichessbot)
if [ -f "$W/ours.done" ] && [ -f .gpu/base/lc0.tar.gz ]; then   # the call after ours: lc0 on the same networks
  timeout 540 bash scripts/gpu/lc0.sh "$W" > "$OUT/lc0.txt" 2>&1 || echo "lc0: stopped (status $?)" >> "$OUT/lc0.txt"
  tail -n 40 "$OUT/lc0.txt"
  exit 0
fi
{
  date -u; nvidia-smi; cat /proc/driver/nvidia/version
  echo "image onnxruntime beside ours: $("$PY" -m pip list 2>/dev/null | grep -i onnxruntime | tr '\n' ' ')"
  echo "\$ lichessbot doctor --seconds 5"; "${LB[@]}" doctor --seconds 5
  echo "\$ lichessbot doctor --backend tensorrt --seconds 2"; "${LB[@]}" doctor --backend tensorrt --seconds 2
} > "$OUT/doctor.txt" 2>&1
grep -E "^GPU|provider started|WARNING" "$OUT/doctor.txt" | head -4
bench() {  # $1: output name, then bench gpu's flags; JSON kept, the human table printed from it
  local name=$1; shift
  echo "\$ lichessbot bench gpu $* --json" > "$OUT/$name.txt"
  "${LB[@]}" bench gpu "$@" --json > "$OUT/$name.json" 2>> "$OUT/$name.txt"
  "$PY" -c "import json, sys; from lichessbot.diagnostics.bench_gpu import _print; _print(json.load(open(sys.argv[1])))" \
    "$OUT/$name.json" >> "$OUT/$name.txt" 2>&1
  tail -n 30 "$OUT/$name.txt"
}
bench bench-default --precisions fp32,tf32,fp16 --games 8 --seconds 0.5 --search-seconds 3
[ -f tests/data/nets/maia-1900.pb.gz ] && bench bench-maia1900 --network tests/data/nets/maia-1900.pb.gz \
  --precisions fp32,fp16 --games 8 --seconds 0.5 --search-seconds 3 --batches 8,64,256,1024
"$PY" -m pytest -q -p no:cacheprovider -o addopts="" tests/neural/test_gpu_tools.py tests/neural/test_gpu_host.py \
  tests/neural/test_gpu_race.py > "$OUT/pytest.txt" 2>&1
tail -n 5 "$OUT/pytest.txt"
touch "$W/ours.done"
[ -f .gpu/base/lc0.tar.gz ] && echo "next: the same call once more runs lc0 (with .gpu/base)"
