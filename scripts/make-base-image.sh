#!/bin/sh
# Make a stand-in for the Dockerfile's base image (debian:bookworm-slim) with debootstrap, for machines that
# cannot reach a container registry but can reach a Debian mirror. The result is tagged
# localhost/debian:bookworm-slim; build with `--build-arg BASE=localhost/debian:bookworm-slim`
# (scripts/build-image.sh does).
#
# It is what the official image is made of (debuerreotype: debootstrap --variant=minbase, then the same dpkg
# excludes of documentation, man pages and locales), not a byte-for-byte copy of it: its size is within a few MB.
#
#   sudo apt-get install debootstrap podman   # Debian 12
#   scripts/make-base-image.sh [MIRROR]       # as root; about 2 minutes
set -eu
MIRROR=${1:-http://deb.debian.org/debian}
TAG=${TAG:-localhost/debian:bookworm-slim}
driver=${STORAGE_DRIVER:-vfs}
podman() { command podman --storage-driver "$driver" ${STORAGE_ROOT:+--root "$STORAGE_ROOT"} "$@"; }
work=$(mktemp -d /var/tmp/lichessbot-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$MIRROR"

# As the official slim image (debuerreotype's slimify): no documentation, man pages or locales, now or later.
cat > "$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
cat > "$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
EOF
find "$root/usr/share/doc" -mindepth 2 ! -name copyright -delete 2>/dev/null || true
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
rm -rf "$root/usr/share/man/"* "$root/usr/share/info/"* "$root/usr/share/locale/"* "$root/usr/share/lintian" \
       "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin "$root/var/cache/apt/archives/"*.deb \
       "$root/var/log/"*.log "$root/tmp/"*
echo "deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main" > "$root/etc/apt/sources.list"

# A host behind a TLS-intercepting proxy trusts its CA through /usr/local/share/ca-certificates: so does the
# stand-in (the machines of this project need it to reach PyPI and static.rust-lang.org from a build).
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates
fi

tar --numeric-owner -C "$root" -c . | podman import --change 'CMD ["bash"]' - "$TAG"
podman image ls "$TAG"
