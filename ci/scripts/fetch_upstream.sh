#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# Make (or update) a blobless clone of upstream PyTorch for the rebase canary: all release tags plus the nightly
# branches (nightly, viable/strict). Blobs are fetched on demand, so only the files the series touches are downloaded.
#
#   bash ci/scripts/fetch_upstream.sh DEST [URL]      # URL default: the pin's repository (patches/manifest.toml)
#
# Prints DEST. Exit status: 0 ok, 2 bad usage, other: git's.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: fetch_upstream.sh DEST [URL]" >&2; exit 2; }
dest=$1
url=${2:-https://github.com/pytorch/pytorch.git}
if [ ! -d "$dest/.git" ]; then
    git clone --quiet --filter=blob:none --no-checkout "$url" "$dest"
fi
git -C "$dest" fetch --quiet --filter=blob:none --tags origin \
    '+refs/heads/nightly:refs/remotes/origin/nightly' '+refs/heads/viable/strict:refs/remotes/origin/viable/strict'
echo "$dest"
