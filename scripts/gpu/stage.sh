#!/usr/bin/env bash
# Stage, on this machine, the Python packages lichessbot imports that a GPU host with PyTorch lacks (docs/gpu.md,
# "One run with PyTorch"): cp312 wheels into .gpu/wheels (ignored by git; about 25 MB, onnx the largest), for
# scripts/gpu/check.sh. The host is known to have PyTorch, numpy, protobuf and the CPU onnxruntime;
# onnx and PyYAML are staged in case it lacks them.
# Usage (repository root, in the project's virtual environment): scripts/gpu/stage.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python}
DEST=.gpu/wheels
rm -rf "$DEST" && mkdir -p "$DEST"
version() { "$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$1"; }
# pydantic-core, onnx and PyYAML are compiled: their cp312 manylinux wheels; the others are pure Python (built
# here where PyPI has only an sdist, as for chess).
timeout 300 "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$DEST" "pydantic-core==$(version pydantic-core)" "onnx==$(version onnx)" "pyyaml==$(version pyyaml)"
pure=()
for name in chess pydantic annotated-types typing-inspection structlog berserk ndjson deprecated starlette uvicorn \
            onnxconverter-common platformdirs; do
  v=$(version "$name" 2>/dev/null) && pure+=("$name==$v")
done
timeout 300 "$PY" -m pip wheel -q --no-deps -w "$DEST" "${pure[@]}"
du -sh "$DEST"
