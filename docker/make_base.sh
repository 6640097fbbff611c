#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# Make a local Debian bookworm base image with Python 3.11 for the Catch images, without a registry.
#
#   bash docker/make_base.sh [IMAGE]        # default IMAGE: localhost/catch-base:bookworm
#
# The images' default base is the public python:3.11-slim-bookworm; where no registry can be reached, this script
# builds an equivalent base from Debian's own packages with debootstrap (bookworm's python3 is 3.11) and imports it
# with `podman import`. Pass it to a build with `--build-arg BASE=localhost/catch-base:bookworm`
# (docker/build_images.sh does when CATCH_BASE is set). Cached: does nothing when IMAGE already exists.
#
# Needs root, debootstrap and podman (Debian: apt-get install podman debootstrap). Environment:
#   CATCH_PODMAN    podman command with global options (default: podman --storage-driver=vfs --cgroup-manager=cgroupfs)
#   DEBIAN_MIRROR   default http://deb.debian.org/debian
# CA certificates the host adds in /usr/local/share/ca-certificates (a TLS-intercepting proxy, a company CA) are
# installed into the base as well, and pip is told to use the system bundle (PIP_CERT), so pip inside a build can
# reach PyPI through the same proxy as the host.
set -euo pipefail
image=${1:-localhost/catch-base:bookworm}
read -r -a podman <<< "${CATCH_PODMAN:-podman --storage-driver=vfs --cgroup-manager=cgroupfs}"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if "${podman[@]}" image exists "$image"; then
    echo "make_base: $image exists (remove it with: ${podman[*]} rmi $image)"
    exit 0
fi
for tool in debootstrap "${podman[0]}"; do
    command -v "$tool" > /dev/null || { echo "error: make_base.sh: $tool not found (apt-get install podman debootstrap)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "error: make_base.sh: debootstrap needs root" >&2; exit 2; }

rootfs=$(mktemp -d /var/tmp/catch-base.XXXXXX)
cleanup() {  # debootstrap mounts proc/sys inside the rootfs: unmount before removing, never cross into them
    for m in dev/pts dev proc sys; do mountpoint -q "$rootfs/$m" 2> /dev/null && umount -l "$rootfs/$m"; done
    rm -rf --one-file-system "$rootfs" "$rootfs.log"
}
trap cleanup EXIT
start=$(date +%s)
echo "make_base: debootstrap bookworm (minbase + python3.11) into $rootfs"
debootstrap --variant=minbase \
    --include=ca-certificates,python3,python3-venv,python3-pip,python3-dev \
    bookworm "$rootfs" "$mirror" > "$rootfs.log" 2>&1 || { tail -n 20 "$rootfs.log" >&2; exit 1; }
rm -f "$rootfs.log"

shopt -s nullglob
extra=(/usr/local/share/ca-certificates/*.crt)
if [ ${#extra[@]} -gt 0 ]; then
    cp "${extra[@]}" "$rootfs/usr/local/share/ca-certificates/"
    chroot "$rootfs" update-ca-certificates > /dev/null
    echo "make_base: added ${#extra[@]} host CA certificate file(s)"
fi
# Same shape as the public base: no apt lists or caches in the image.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb

tar -C "$rootfs" -c . | "${podman[@]}" import \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["python3"]' \
    - "$image" > /dev/null
echo "make_base: imported $image in $(( $(date +%s) - start )) s"
