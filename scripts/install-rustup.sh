#!/bin/sh
# Install the Rust toolchain with rustup-init, checked before it runs (the Dockerfile's core stage):
#
#   RUSTUP_VERSION=1.29.0 RUSTUP_SHA256_X86_64=... RUSTUP_SHA256_AARCH64=... RUST_VERSION=1.95.0 \
#       CARGO_HOME=/opt/cargo RUSTUP_HOME=/opt/rustup scripts/install-rustup.sh
#
# rustup-init of the pinned RUSTUP_VERSION for this machine (x86_64 or aarch64 Linux, glibc) comes from rustup's
# versioned archive, https://static.rust-lang.org/rustup/archive/<version>/<target>/rustup-init, over HTTPS only;
# its SHA-256 must equal the pinned one (the Dockerfile's ARGs, rustup's own rustup-init.sha256 beside the file),
# or nothing runs and the exit status is 1. rustup-init then installs RUST_VERSION (the minimal profile); rustup
# checks each component it downloads against the SHA-256 of the channel's manifest.
set -eu
arch=$(uname -m)
case "$arch" in
    x86_64) want=${RUSTUP_SHA256_X86_64:-} ;;
    aarch64) want=${RUSTUP_SHA256_AARCH64:-} ;;
    *) echo "install-rustup.sh: no pinned rustup-init checksum for $arch" >&2; exit 1 ;;
esac
if [ -z "$want" ]; then
    echo "install-rustup.sh: no pinned rustup-init checksum for $arch (RUSTUP_SHA256_...)" >&2
    exit 1
fi
url="https://static.rust-lang.org/rustup/archive/$RUSTUP_VERSION/$arch-unknown-linux-gnu/rustup-init"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
curl --proto '=https' --tlsv1.2 -sSf -o "$dir/rustup-init" "$url"
got=$(sha256sum "$dir/rustup-init" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
    echo "install-rustup.sh: $url has SHA-256 $got, not the pinned $want: not run" >&2
    exit 1
fi
chmod +x "$dir/rustup-init"
"$dir/rustup-init" -y --no-modify-path --profile minimal --default-toolchain "$RUST_VERSION"
