#!/usr/bin/env bash
# GPU figures in ONE run on a host with PyTorch for CUDA and no package registry (docs/gpu.md, "One run with
# PyTorch"): driver, GPU, versions and providers, GPU-vs-CPU correctness on 256 positions, evals/s at batch
# 1/64/256/1024 in fp32 and fp16, nps of 10 s searches of 1 and 8 games with the call-size histogram, on the
# default network and on 15x192 and 20x256 lc0 networks of random weights generated there. Each step is one
# process under `timeout`; the whole run stays under 8 minutes (TOTAL seconds). JSON files go into the folder
# given as $1 (else $OUT, else /tmp/lichessbot-check), with summary.json last.
#
# Usage: scripts/gpu/check.sh [--dry] [OUTDIR]
#   --dry: no GPU (this machine): every step on the CPU, onnxruntime standing in for the GPU runner, short
#          measurements: the path end to end, no figure.
# Inputs, all in the working tree (well under 64 MiB): the code; the built search core lichessbot/_core.abi3.so
# (abi3: the one built here runs under the host's Python 3.12; it is git-ignored, so a device run carries it,
# or this script builds it with maturin when it is missing and maturin is there); .gpu/wheels, the Python
# packages the host lacks (scripts/gpu/stage.sh stages them; installed with --no-index into a scratch folder).
set -uo pipefail
cd "$(dirname "$0")/../.."
DRY=0
if [ "${1:-}" = "--dry" ]; then DRY=1; shift; fi
OUTDIR=${1:-${OUT:-/tmp/lichessbot-check}}
mkdir -p "$OUTDIR"
PY=${PYTHON:-python3}
TOTAL=${TOTAL:-470}
NETS=$(mktemp -d /tmp/lichessbot-nets.XXXX)  # the generated networks (70 MB) stay out of the output folder
trap 'rm -rf "$NETS"' EXIT
START=$(date +%s)
export PYTHONUNBUFFERED=1
log() { echo "[check $(( $(date +%s) - START ))s] $*" | tee -a "$OUTDIR/check.log"; }
left() { echo $(( TOTAL - ($(date +%s) - START) )); }
# step NAME SECONDS ARGS...: one check.py step under timeout, never past the run's TOTAL
step() {
  local name=$1 budget=$2; shift 2
  local remaining; remaining=$(left)
  [ "$remaining" -lt "$budget" ] && budget=$remaining
  if [ "$budget" -le 5 ]; then log "$name: skipped, the run's $TOTAL s are spent"; echo "$name skipped" >> "$OUTDIR/skipped.txt"; return; fi
  log "$name (at most ${budget}s)"
  timeout -k 5 "$budget" "$PY" scripts/gpu/check.py "$@" --out "$OUTDIR" --nets "$NETS" $([ $DRY = 1 ] && echo --dry) \
    >> "$OUTDIR/check.log" 2>&1
  local rc=$?
  [ $rc -ne 0 ] && { log "$name: exit $rc (timeout is 124)"; echo "$name exit $rc" >> "$OUTDIR/failed.txt"; }
}

# The search core: carried (git-ignored), else built here when the tools are there.
if ! ls lichessbot/_core*.so >/dev/null 2>&1; then
  if command -v maturin >/dev/null 2>&1; then
    log "building the search core with maturin"
    timeout 300 maturin develop --release >> "$OUTDIR/check.log" 2>&1 || log "maturin failed"
  else
    log "lichessbot/_core.abi3.so is missing: carry it (it is git-ignored) or install maturin"; exit 2
  fi
fi
# The Python packages the host lacks, from .gpu/wheels (when carried), without an index.
export PYTHONPATH=$PWD:${PYTHONPATH:-}
if [ -d .gpu/wheels ] && ls .gpu/wheels/*.whl >/dev/null 2>&1; then
  SITE=$(mktemp -d /tmp/lichessbot-site.XXXX)
  timeout 120 "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .gpu/wheels/*.whl \
    >> "$OUTDIR/check.log" 2>&1 || log "installing .gpu/wheels failed"
  export PYTHONPATH=$PWD:$SITE
fi
if ! timeout 60 "$PY" -c "import chess, pydantic, structlog, onnx, yaml, onnxruntime" 2>>"$OUTDIR/check.log"; then
  log "lichessbot's dependencies do not import: run scripts/gpu/stage.sh here and carry .gpu/wheels"; exit 2
fi

step env 30 env
step nets 60 nets
for net in default 15x192 20x256; do
  step "correct $net" 40 correct --net "$net"
  step "evals $net" 40 evals --net "$net"
  step "search $net" 50 search --net "$net"
done
timeout 30 "$PY" - "$OUTDIR" <<'EOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
summary = {p.stem: json.loads(p.read_text()) for p in sorted(out.glob("*.json")) if p.name != "summary.json"}
for name in ("failed.txt", "skipped.txt"):
    f = out / name
    summary[name.split(".")[0]] = f.read_text().splitlines() if f.exists() else []
(out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
print("summary.json:", ", ".join(summary))
EOF
log "done in $(( $(date +%s) - START ))s"
[ -s "$OUTDIR/failed.txt" ] && exit 1
exit 0
