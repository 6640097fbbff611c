#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# Publish the combined wheel of a release tag: into the package index users `pip install` from, and as a GitHub
# release asset (the images are pushed by docker/build_images.sh --push). The tag must name the wheel's version:
# v2.13.0-catch1 <-> torch-2.13.0+cpu.catch1.
#
#   bash ci/scripts/publish_release.sh TAG DIST_DIR
#
# Settings (environment):
#   CATCH_INDEX_DIR   root of the static PEP 503 index the release serves (scripts/publish_index.py: files/ and
#                     simple/ pages with #sha256= fragments and data-requires-python); unset: no index publishing.
#                     A web server serves the directory; the rehearsal (tox -e release) serves it on 127.0.0.1
#   CATCH_GH_RELEASE  1 (default): upload to the GitHub release of TAG (needs the GitHub CLI, GH_TOKEN in the
#                     workflow; re-running replaces the assets: --clobber); 0: skip it (the rehearsal has no GitHub)
# Before anything is written, scripts/publish_index.py --check checks that the wheel is what its name says (file
# name, WHEEL tags, METADATA name and version, RECORD): a renamed wheel is refused. File names in errors are quoted
# (printf %q) so that each error is one line.
# Exit status: 0 published, 2 bad input (a wheel that is not what its name says, tag and wheel disagree, no wheel),
# other: gh's.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: publish_release.sh TAG DIST_DIR" >&2; exit 2; }
tag=$1 dist=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
publish_index=$root/scripts/publish_index.py
# publish_index.py imports catch_tools: this checkout's, also under a python3 without the tooling installed.
export PYTHONPATH=$root/src${PYTHONPATH:+:$PYTHONPATH}
shopt -s nullglob
wheels=("$dist"/torch-*catch*.whl)
[ ${#wheels[@]} -eq 1 ] || {
    echo "error: $(printf %q "$dist"): expected one combined wheel, found ${#wheels[@]}" >&2; exit 2; }
wheel=${wheels[0]}
"${PYTHON:-python3}" "$publish_index" --check "$wheel" > /dev/null || exit $?
version=$(basename "$wheel" | cut -d- -f2)                 # 2.13.0+cpu.catch1
want="v${version%%+*}-catch${version##*.catch}"            # v2.13.0-catch1
[ "$tag" = "$want" ] || {
    echo "error: $(printf %q "$wheel"): version $version belongs to tag $want, not $(printf %q "$tag")" >&2; exit 2; }
(cd "$dist" && sha256sum "$(basename "$wheel")" > SHA256SUMS)
if [ -n "${CATCH_INDEX_DIR:-}" ]; then
    "${PYTHON:-python3}" "$publish_index" "$wheel" --index-dir "$CATCH_INDEX_DIR"
fi
if [ "${CATCH_GH_RELEASE:-1}" = 0 ]; then
    echo "published $tag: $(basename "$wheel") (no GitHub release: CATCH_GH_RELEASE=0)"
    exit 0
fi
if gh release view "$tag" > /dev/null 2>&1; then
    gh release upload "$tag" "$wheel" "$dist/SHA256SUMS" --clobber
else
    gh release create "$tag" "$wheel" "$dist/SHA256SUMS" --title "Catch $tag" \
        --notes "Combined wheel torch $version (PyTorch ${version%%+*} + the Catch series + torch_mlu). Images: ghcr.io/catch-mlu/catch:${tag#v}, ghcr.io/catch-mlu/catch-dev:${tag#v}."
fi
echo "published $tag: $(basename "$wheel")"
