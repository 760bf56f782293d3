#!/bin/sh
# Build the lichessbot images without a Docker engine: buildah from Debian's packages, vfs storage, chroot
# isolation (what these machines allow), layers cached between builds. docs/docker.md has the measured times.
#
#   scripts/build-image.sh cpu            # -> localhost/lichessbot:cpu
#   scripts/build-image.sh gpu            # -> localhost/lichessbot:gpu
#   scripts/build-image.sh --pin          # print the registry's current digest of the base (needs skopeo)
#
# BASE=...: the base image (default: the Dockerfile's pinned one; when the registry cannot be reached and
# localhost/debian:bookworm-slim exists, that stand-in, made by scripts/make-base-image.sh).
# Needs: apt-get install buildah podman (Debian 12); run as root, from anywhere in the repository.
set -eu
cd "$(dirname "$0")/.."
driver=${STORAGE_DRIVER:-vfs}
buildah() { command buildah --storage-driver "$driver" ${STORAGE_ROOT:+--root "$STORAGE_ROOT"} "$@"; }

if [ "${1:-}" = "--pin" ]; then
    ref=$(sed -n 's/^ARG BASE=\([^@]*\)@.*/\1/p' Dockerfile)
    digest=$(skopeo inspect --format '{{.Digest}}' "docker://$ref")
    echo "ARG BASE=$ref@$digest"
    exit 0
fi

FLAVOUR=${1:-cpu}
case "$FLAVOUR" in cpu|gpu) ;; *) echo "usage: $0 cpu|gpu|--pin" >&2; exit 2 ;; esac
if [ -z "${BASE:-}" ]; then
    if ! curl -s -o /dev/null --max-time 5 https://registry-1.docker.io/v2/ \
            && buildah images -q localhost/debian:bookworm-slim >/dev/null 2>&1; then
        BASE=localhost/debian:bookworm-slim
        echo "registry unreachable: building on the stand-in $BASE" >&2
    fi
fi

start=$(date +%s)
# --format docker: the OCI format has no HEALTHCHECK
buildah build --format docker --isolation chroot --layers \
    --build-arg FLAVOUR="$FLAVOUR" ${BASE:+--build-arg BASE="$BASE"} \
    -t "localhost/lichessbot:$FLAVOUR" .
echo "built localhost/lichessbot:$FLAVOUR in $(( $(date +%s) - start )) s" >&2
buildah images "localhost/lichessbot:$FLAVOUR"
