#!/usr/bin/env bash
# Put the Maia networks the two Maia tests need into tests/data/nets (not in the repository: GPL weights of
# CSSLab/maia-chess, 1.3 MB each, and lc0's ONNX export of them). Everything else the tests use is committed.
#
#   tests/data/fetch.sh [DIR]
#
# DIR (or $LICHESSBOT_MAIA_DIR, or ../shared/nets beside the repository) holding maia-1100/1900 .pb.gz and
# .onnx: they are linked. Otherwise the .pb.gz files are downloaded from the maia-chess v1.0 release and
# checked against their sha256; the .onnx files are made with `lc0 leela2onnx` when lc0 is on the PATH.
# Without the .onnx files tests/neural/test_convert.py's leela2onnx comparison skips; without any, both Maia tests do.
#
# Optional and offline-safe: when the release cannot be reached (no network, a proxy, a timeout) it says so
# and exits 0, and the tests that need the nets skip with the reason. A download that arrives with the wrong
# sha256 is an error (exit 1). $LICHESSBOT_MAIA_URL replaces the release's address (a mirror).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p nets
SRC=${1:-${LICHESSBOT_MAIA_DIR:-../../../shared/nets}}
RELEASE=${LICHESSBOT_MAIA_URL:-https://github.com/CSSLab/maia-chess/releases/download/v1.0}
declare -A SHA256=(
    [maia-1100.pb.gz]=e1cf1cd0c96b8a4fa6a275f4b9fd54ed1ffebf9fe44641b9fceded310e9619c4
    [maia-1900.pb.gz]=e2f565f42d7cd9f122557e6dc4eb84e5bbaedceda1d404dc485d3611c7c97a12
)
for net in maia-1100 maia-1900; do
    for ext in pb.gz onnx; do
        f=$net.$ext
        if [ -e "nets/$f" ]; then
            continue
        elif [ -f "$SRC/$f" ]; then
            ln -s "$(cd "$SRC" && pwd)/$f" "nets/$f"
            echo "linked tests/data/nets/$f -> $SRC/$f"
        elif [ "$ext" = pb.gz ]; then
            # --connect-timeout/--max-time: an unreachable network answers in seconds, never hangs the check
            curl -fsSL --connect-timeout 10 --max-time 120 -o "nets/$f.part" "$RELEASE/$f" || {
                rm -f "nets/$f.part"
                echo "tests/data/fetch.sh: cannot download $RELEASE/$f (offline?): the tests that need the Maia nets will skip" >&2
                exit 0
            }
            echo "${SHA256[$f]}  nets/$f.part" | sha256sum -c --quiet - || { rm -f "nets/$f.part"; exit 1; }
            mv "nets/$f.part" "nets/$f"
            echo "downloaded tests/data/nets/$f"
        elif command -v lc0 >/dev/null; then
            lc0 leela2onnx --input="nets/$net.pb.gz" --output="nets/$f" >/dev/null
            echo "made tests/data/nets/$f with lc0 leela2onnx"
        else
            echo "tests/data/nets/$f: no lc0 on the PATH to make it (the leela2onnx comparison will skip)"
        fi
    done
done
