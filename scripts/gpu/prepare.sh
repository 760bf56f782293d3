#!/usr/bin/env bash
# Stage, on this machine, what scripts/gpu/measure.sh needs on an NVIDIA GPU machine that reaches no package
# registry: the device tool's H200 (Python 3.12 with NVIDIA's CUDA 13 and cuDNN 9 wheels, the CPU-only
# onnxruntime, nvcc, meson and ninja; 64 MiB of files per call). docs/gpu.md, "Measuring with onnxruntime-gpu", says how
# the calls go.
#
# Usage (from the repository root, in the project's virtual environment, after pip install -e ".[gpu,test]"; with
# the CPU package, ORT=1.31.1 names the onnxruntime-gpu to stage):
#   scripts/gpu/prepare.sh [LC0_GIT_DIR]
#     LC0_GIT_DIR: a git dir of LeelaChessZero/lc0 (the search tool's fetch brings one) for lc0's CUDA backend
#                  beside ours; without it measure.sh skips lc0.
# Writes .gpu/ (ignored by git):
#   .gpu/base/    the project's dependencies the GPU machine lacks (cp312 wheels), the built search core, the
#                 maia-1900 network, lc0's source and the Debian packages of its abseil and zlib
#   .gpu/part-NN  onnxruntime-gpu's wheel, unpacked and recompressed with xz (204 MB for 1.31.1, 255 MB as a
#                 wheel), in pieces: the machine has only the CPU onnxruntime, and one call carries 64 MiB
#   .gpu/manifest the pieces and their checksum
# and prints the device calls: the same command every time, one piece carried per call, .gpu/base with the
# last. Takes about 6 minutes on 2 cores (xz).
set -euo pipefail
cd "$(dirname "$0")/../.."
LC0_GIT=${1:-}
LC0_COMMIT=${LC0_COMMIT:-909a40826db9e8b221d9209a487daba6ab57e3b7}  # the lc0 of shared/tools/build-lc0.sh
PIECE=${PIECE:-54m}   # a piece plus the tree (about 9 MB) stays under the 64 MiB a call carries
PY=${PYTHON:-python}
STAGE=.gpu
rm -rf "$STAGE" && mkdir -p "$STAGE/base/wheels" "$STAGE/base/nets" "$STAGE/dl"

version() { "$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$1"; }
ORT=${ORT:-$(version onnxruntime-gpu 2>/dev/null || true)}
[ -n "$ORT" ] || { echo "no onnxruntime-gpu in this environment: set ORT to the version to stage (e.g. ORT=1.31.1)" >&2; exit 1; }
download() {  # cp312 manylinux x86_64 wheels (or pure-Python ones), without their dependencies
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$1" "${@:2}"
}
# What lichessbot imports that the machine's image lacks (its pip list: docs/gpu.md); pinned to this venv's.
# pydantic-core is compiled (a cp312 wheel); the others are pure Python (a wheel, built here from an sdist
# where PyPI has no wheel, as for chess).
download "$STAGE/base/wheels" "pydantic-core==$(version pydantic-core)"
pure=()
for name in chess pydantic annotated-types typing-inspection structlog berserk ndjson deprecated starlette uvicorn \
            onnxconverter-common; do
  pure+=("$name==$(version "$name")")
done
"$PY" -m pip wheel -q --no-deps -w "$STAGE/base/wheels" "${pure[@]}"
download "$STAGE/dl" "onnxruntime-gpu==$ORT"

cp lichessbot/_core*.so "$STAGE/base/"   # abi3 (CPython >= 3.11): runs under the machine's 3.12
cp -L tests/data/nets/maia-1900.pb.gz "$STAGE/base/nets/" 2>/dev/null || echo "no maia-1900 (run tests/data/fetch.sh): the default network only"

if [ -n "$LC0_GIT" ]; then
  git --git-dir="$LC0_GIT" archive --prefix=lc0/ "$LC0_COMMIT" | gzip -9 > "$STAGE/base/lc0.tar.gz"
  # lc0 needs abseil (flat_hash_map) and zlib; its meson wraps would download them, the machine cannot.
  mkdir -p "$STAGE/base/debs"
  (cd "$STAGE/base/debs" && apt-get download -qq libabsl-dev "libabsl$(dpkg-query -W -f='${Version}' libabsl-dev | cut -d. -f1)" \
     zlib1g-dev zlib1g 2>/dev/null) || echo "Debian packages for lc0 not downloaded: lc0 is built only if the machine has abseil"
fi

whl=$(ls "$STAGE"/dl/onnxruntime_gpu-*.whl)
mkdir -p "$STAGE/dl/x" && (cd "$STAGE/dl/x" && "$PY" -m zipfile -e "../$(basename "$whl")" .)
tar -C "$STAGE/dl/x" -cf - . | xz -T0 -6 > "$STAGE/dl/ort.tar.xz"
split -b "$PIECE" -d "$STAGE/dl/ort.tar.xz" "$STAGE/part-"
parts=$(ls "$STAGE"/part-* | wc -l)
{
  echo "ort_wheel=$(basename "$whl")"
  echo "ort_sha256=$(sha256sum "$STAGE/dl/ort.tar.xz" | cut -d' ' -f1)"
  echo "parts=$parts"
  echo "commit=$(git rev-parse HEAD)"
} > "$STAGE/manifest"
rm -rf "$STAGE/dl"
echo "staged: .gpu/base $(du -sh "$STAGE/base" | cut -f1), onnxruntime-gpu $ORT in $parts pieces"
echo "device calls, back to back (the same command each time; the last piece's call measures ours, and one"
echo "more call with .gpu/base measures lc0):"
last=$(ls "$STAGE"/part-* | tail -1)
for p in "$STAGE"/part-*; do
  base=""; [ "$p" = "$last" ] && base=", \".gpu/base\""
  echo "  run(command=\"bash scripts/gpu/measure.sh\", carry=[\".gpu/manifest\", \"$p\"$base], timeout_s=600)"
done
[ -f "$STAGE/base/lc0.tar.gz" ] && \
  echo "  run(command=\"bash scripts/gpu/measure.sh\", carry=[\".gpu/manifest\", \".gpu/base\"], timeout_s=600)"
