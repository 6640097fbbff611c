#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# Would the series still be healthy after merging REF into BASE? Merges in a temporary worktree and runs the series
# gate (ci/scripts/series_gate.sh) on the merge result. Two pull requests can each pass alone and break the series
# together (electron#39950); this checks one of them against the main that already has the other.
#
#   bash ci/scripts/check_merge.sh BASE REF      # e.g. origin/main refs/remotes/pr/123
#
# Exit status: 0 the merge is healthy, 1 the merge conflicts or the gate fails (its output says why), 2 bad input.
# Leaves the repository as it was (the worktree is removed).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: check_merge.sh BASE REF" >&2; exit 2; }
base=$1 ref=$2
for r in "$base" "$ref"; do
    git -C "$root" rev-parse --verify --quiet "$r^{commit}" > /dev/null \
        || { echo "error: check_merge.sh: no commit '$r' in $root" >&2; exit 2; }
done
work=$(mktemp -d)
cleanup() { git -C "$root" worktree remove --force "$work/tree" 2> /dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
git -C "$root" worktree add --quiet --detach "$work/tree" "$base"
if ! git -C "$work/tree" -c user.name="Catch CI" -c user.email=ci@catch.invalid \
        merge --quiet --no-edit --no-ff "$ref" > "$work/merge.log" 2>&1; then
    cat "$work/merge.log"
    echo "check_merge: $ref does not merge cleanly into $base"
    exit 1
fi
if CATCH_GATE_TREE="$work/upstream" bash "$root/ci/scripts/series_gate.sh" "$work/tree"; then
    echo "check_merge: $ref merged into $base: series healthy"
else
    echo "check_merge: $ref merged into $base: series gate FAILED"
    exit 1
fi
