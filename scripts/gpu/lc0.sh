#!/usr/bin/env bash
# Build lc0 (plain CUDA backend, sm_90) on the GPU machine from .gpu/base and measure it on the networks
# measure.sh measured ours on: backendbench (the network alone, per batch) and nps from the start position.
# Called by scripts/gpu/measure.sh with its work folder. A yardstick only: nothing of lc0 enters the project.
set -euo pipefail
W=$1
DEPS=$W/lc0-deps
mkdir -p "$DEPS"
for deb in .gpu/base/debs/*.deb; do [ -f "$deb" ] && dpkg -x "$deb" "$DEPS"; done
# Debian's libz.so points at /lib/...; point it at the unpacked copy (pkg-config's paths get the sysroot prefix)
[ -e "$DEPS/lib/x86_64-linux-gnu" ] && ln -sf "$(ls "$DEPS"/lib/x86_64-linux-gnu/libz.so.1.* | head -1)" \
  "$DEPS/usr/lib/x86_64-linux-gnu/libz.so"
rm -rf "$W/lc0" && tar -xzf .gpu/base/lc0.tar.gz -C "$W"
export PKG_CONFIG_PATH=$DEPS/usr/lib/x86_64-linux-gnu/pkgconfig:$DEPS/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$DEPS
export LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu:${LIBRARY_PATH:-}
export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu:$DEPS/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
CUDA=${CUDA_HOME:-/usr/local/cuda}
PY=${PYTHON:-python3}
export PATH=$(dirname "$("$PY" -c 'import sys; print(sys.executable)')"):$PATH   # meson and ninja of its venv
MESON=("$PY" -m mesonbuild.mesonmain)
cd "$W/lc0"
"${MESON[@]}" setup build --buildtype=release --wrap-mode=nodownload -Dgtest=false -Dblas=false -Donnx=false \
  -Dopencl=false -Dcudnn=false -Dplain_cuda=true -Dcc_cuda=90 \
  -Dcudnn_include="$CUDA/include" -Dcudnn_libdirs="$CUDA/lib64"
ninja -C build -j"$(nproc)" lc0
LC0=$W/lc0/build/lc0
cd - >/dev/null
for net in lichessbot/data/default.onnx tests/data/nets/maia-1900.pb.gz; do
  [ -f "$net" ] || continue
  case "$net" in *.onnx) echo "lc0 reads .pb.gz weights; $net is ONNX: skipped"; continue;; esac
  for backend in cuda cuda-fp16; do   # lc0's plain CUDA backend in fp32 and fp16 (src/neural/backends/cuda)
    for b in 8 64 256 1024; do          # some of our batch buckets
      echo "== lc0 $backend on $net: backendbench, batch $b"
      "$LC0" backendbench --weights="$net" --backend="$backend" --batches=50 --start-batch-size="$b" \
        --max-batch-size="$b" 2>&1 | tail -n 3
    done
    echo "== lc0 $backend on $net: nps from the start position, 5 s"
    printf 'uci\nsetoption name WeightsFile value %s\nsetoption name Backend value %s\nisready\nposition startpos\ngo movetime 5000\n' \
      "$net" "$backend" | timeout 30 "$LC0" 2>&1 | grep -E "^info depth" | tail -n 1
  done
done
