#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# Publish the combined wheel of a release tag: into the package index users `pip install` from, and as a GitHub
# release asset beside the release's scorecard, docs/support.md (what runs on mlu: the OpInfo census per dtype, the
# conformance counts, the probes; generated and checked in CI), copied into DIST_DIR as support.md. The images are
# pushed by docker/build_images.sh --push. The tag must name the wheel's version: v2.13.0-catch1 <->
# torch-2.13.0+cpu.catch1.
#
#   bash ci/scripts/publish_release.sh TAG DIST_DIR
#
# Settings (environment):
#   CATCH_INDEX_DIR   root of the static PEP 503 index the release serves (scripts/publish_index.py: files/ and
#                     simple/ pages with #sha256= fragments and data-requires-python); unset: no index publishing.
#                     A web server serves the directory; the rehearsal (tox -e release) serves it on 127.0.0.1
#   CATCH_GH_RELEASE  1 (default): upload to the GitHub release of TAG (needs the GitHub CLI, GH_TOKEN in the
#                     workflow; re-running replaces the assets: --clobber); 0: skip it (the rehearsal has no GitHub)
# Before anything is written, every tool the run needs is checked (the Python of PYTHON, default python3, must import
# the project's tooling and its dependencies; gh unless CATCH_GH_RELEASE=0; sha256sum, mktemp), and
# scripts/publish_index.py --check checks that the wheel is what its name says (file name, WHEEL tags, METADATA name
# and version, RECORD): a renamed wheel is refused. SHA256SUMS (the wheel and support.md) and support.md are written
# to temporary files with random names in DIST_DIR first (a read-only DIST_DIR is refused before the index is touched)
# and renamed over SHA256SUMS and support.md once the index publish succeeded (a symlink there is replaced, never
# written through). Paths are passed after `--`, so a
# DIST_DIR named like an option is a path. File names in errors are quoted (printf %q) so that each error is one
# line.
# Exit status: 0 published, 2 bad input (a wheel that is not what its name says, tag and wheel disagree, no wheel, a
# missing tool, a DIST_DIR SHA256SUMS cannot be written into), other: gh's.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: publish_release.sh TAG DIST_DIR" >&2; exit 2; }
tag=$1 dist=$2
root=$(cd -- "$(dirname -- "$0")/../.." && pwd)
publish_index=$root/scripts/publish_index.py
py=${PYTHON:-python3}
die() { echo "error: $*" >&2; exit 2; }
# publish_index.py imports catch_tools: this checkout's, also under a python3 without the tooling installed.
export PYTHONPATH=$root/src${PYTHONPATH:+:$PYTHONPATH}

# ---- the settings and the Python, before anything is read
case ${CATCH_GH_RELEASE:-1} in
    0|1) ;;
    *) die "CATCH_GH_RELEASE=$(printf %q "$CATCH_GH_RELEASE"): expected 1 (upload to the GitHub release) or 0 (skip it)" ;;
esac
# the Python must run the tooling: catch_tools (this checkout's src/, on PYTHONPATH above) and the packages it imports
# (packaging)
command -v -- "$py" > /dev/null \
    || die "$(printf %q "$py"): no such Python: set PYTHON to the Python of the project's environment (e.g. PYTHON=.venv/bin/python)"
if ! why=$("$py" -c 'import catch_tools.release.index' 2>&1)
then
    why=${why##*$'\n'}
    die "$(printf %q "$py") cannot run the project's tooling ($why): set PYTHON to the Python of the project's environment (where catch_tools and its dependencies are installed, e.g. PYTHON=.venv/bin/python)"
fi

# ---- the wheel
shopt -s nullglob
wheels=("$dist"/torch-*catch*.whl)
[ ${#wheels[@]} -eq 1 ] || die "$(printf %q "$dist"): expected one combined wheel, found ${#wheels[@]}"
wheel=${wheels[0]}
name=$(basename -- "$wheel")
"$py" "$publish_index" --check -- "$wheel" > /dev/null || exit $?
version=$(cut -d- -f2 <<< "$name")                           # 2.13.0+cpu.catch1
want="v${version%%+*}-catch${version##*.catch}"            # v2.13.0-catch1
[ "$tag" = "$want" ] || die "$(printf %q "$wheel"): version $version belongs to tag $want, not $(printf %q "$tag")"

# ---- every other tool, before anything is written
needed=(sha256sum mktemp)
[ "${CATCH_GH_RELEASE:-1}" = 0 ] || needed+=(gh)
for tool in "${needed[@]}"; do
    command -v "$tool" > /dev/null || {
        [ "$tool" = gh ] && die "gh (the GitHub CLI) is not on PATH: install it, or set CATCH_GH_RELEASE=0 to skip the GitHub release"
        die "$tool is not on PATH (GNU coreutils)"; }
done

# ---- SHA256SUMS and support.md: temporary files now (DIST_DIR must be writable), renamed once the index has the wheel
scorecard=$root/docs/support.md
[ -f "$scorecard" ] || die "$(printf %q "$scorecard"): missing; the scorecard a release publishes beside its wheel (python tests/backend/support_matrix.py --write docs/support.md)"
for f in SHA256SUMS support.md; do
    [ -d "$dist/$f" ] && [ ! -L "$dist/$f" ] && die "$(printf %q "$dist/$f"): a directory, in the way of $f"
done
sums=$(mktemp -- "$dist/.SHA256SUMS.XXXXXXXXXX" 2>&1) || die "$(printf %q "$dist"): cannot write SHA256SUMS there: ${sums##*: }"
card=
trap 'rm -f -- "$sums" ${card:+"$card"}' EXIT
card=$(mktemp -- "$dist/.support.md.XXXXXXXXXX")
cat -- "$scorecard" > "$card"
{ (cd -- "$dist" && sha256sum -- "$name"); printf '%s  support.md\n' "$(sha256sum < "$card" | cut -d' ' -f1)"; } > "$sums"
chmod -- "$(printf %o $(( 0666 & ~$(umask) )))" "$sums" "$card"
if [ -n "${CATCH_INDEX_DIR:-}" ]; then
    "$py" "$publish_index" --index-dir="$CATCH_INDEX_DIR" -- "$wheel"
fi
mv -fT -- "$card" "$dist/support.md"
mv -fT -- "$sums" "$dist/SHA256SUMS"
trap - EXIT
if [ "${CATCH_GH_RELEASE:-1}" = 0 ]; then
    echo "published $tag: $name and support.md (no GitHub release: CATCH_GH_RELEASE=0)"
    exit 0
fi
if gh release view -- "$tag" > /dev/null 2>&1; then
    gh release upload --clobber -- "$tag" "$wheel" "$dist/support.md" "$dist/SHA256SUMS"
else
    gh release create --title "Catch $tag" \
        --notes "Combined wheel torch $version (PyTorch ${version%%+*} + the Catch series + torch_mlu). Images: ghcr.io/catch-mlu/catch:${tag#v}, ghcr.io/catch-mlu/catch-dev:${tag#v}." \
        -- "$tag" "$wheel" "$dist/support.md" "$dist/SHA256SUMS"
fi
echo "published $tag: $name and support.md"
