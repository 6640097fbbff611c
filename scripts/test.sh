#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# The README's test command (and CI's: .ci/run is exactly `bash scripts/test.sh`), from a fresh clone with only the
# README's prerequisites (Python 3.11, a C++ compiler):
#
#   bash scripts/test.sh                  # every env of tox.ini's env_list
#   bash scripts/test.sh -e lint,docs     # any `tox run` arguments, e.g. -e ENV, --workdir DIR, -- PYTEST-ARGS
#
# It installs what it needs itself: tox into .tox/bootstrap/ (a virtual environment, made once), and, for envs
# `images` and `release`, podman, debootstrap and docker-registry (the CNCF distribution registry) from the
# distribution's packages when they are missing and this runs as root with apt-get; otherwise those envs skip their
# image steps and say why. The envs, their dependencies and the pip constraint
# (constraints.txt: torch==2.13.0) live in tox.ini, so adding an env there needs no change here.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1
start=$(date +%s)

# tox into its own environment (never into the system Python); a second run only checks it is there.
boot=.tox/bootstrap
if [ ! -x "$boot/bin/tox" ]; then
    echo "test.sh: installing tox into $boot"
    rm -rf "$boot"
    "$py" -m venv "$boot"
    "$boot/bin/python" -m pip install --quiet 'tox>=4'
fi

# Envs images and release need podman (daemonless builds) and debootstrap (the base image); release also needs
# docker-registry (a real OCI registry on 127.0.0.1). The other envs need none of them.
wants_images() {
    local arg selected=""
    for arg in "$@"; do
        [ "$arg" = "--" ] && break
        case "$arg" in
            -e|--env|-m|--labels|-f|--factors) selected=yes ;;
            -e*|--env=*) selected=yes ;;
        esac
        case "$arg" in *images*|*release*) return 0 ;; esac
    done
    [ -z "$selected" ]
}
if wants_images "$@"; then
    missing=()
    command -v podman >/dev/null || missing+=(podman)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    command -v docker-registry >/dev/null || missing+=(docker-registry)
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "test.sh: installing ${missing[*]} (apt-get) for envs images and release"
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        else
            echo "test.sh: ${missing[*]} missing and not installable here (needs root and apt-get):" \
                 "envs images and release will skip their image steps"
        fi
    fi
fi

# Free disk space before and after: the image envs' vfs storage holds full copies of each image.
disk_free() { df -h --output=avail "$PWD" "${TMPDIR:-/var/tmp}" | tail -n +2 | tr -s ' ' | paste -sd ' '; }
echo "test.sh: free disk space here and in temporary files:$(disk_free)"
status=0
"$boot/bin/tox" run "$@" || status=$?
echo "test.sh: tox run finished in $(( $(date +%s) - start )) s with status $status; free disk space:$(disk_free)"
exit "$status"
