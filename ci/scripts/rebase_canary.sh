#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# Nightly rebase canary: try to move the series onto a newer upstream, on a throwaway copy of the project, and write
# the outcome for the tracking issue (ci/scripts/canary_issue.py) and the CI artifact. Never changes this checkout.
#
#   bash ci/scripts/rebase_canary.sh --onto REF|latest-release --source DIR --out DIR
#
#   --onto     an upstream tag/commit/branch in DIR (e.g. origin/nightly, origin/viable/strict), or latest-release:
#              the newest vX.Y.Z tag (no release candidates)
#   --source   upstream PyTorch git clone (ci/scripts/fetch_upstream.sh; or the tree from scripts/upstream.py tree)
#   --out      output directory: result (ok | conflict), target, report.md, report.json (when it finished), log
#
# The series is applied at the pin on a work clone of --source, then scripts/rebase.py --onto REF runs with a copy
# of patches/ as its project; on a conflict the rebase is aborted and its stop message becomes report.md.
# Exit status: 0 the canary ran (whatever the result: see OUT/result), 2 bad input, other: a tool failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
# The scripts import catch_tools: this checkout's, also under a python3 without the tooling installed.
export PYTHONPATH=$root/src${PYTHONPATH:+:$PYTHONPATH}
onto='' source='' out=''
while [ $# -gt 0 ]; do
    case $1 in
        --onto) onto=$2; shift 2 ;;
        --source) source=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "error: rebase_canary.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
if [ -z "$onto" ] || [ -z "$source" ] || [ -z "$out" ]; then
    echo "usage: rebase_canary.sh --onto REF|latest-release --source DIR --out DIR" >&2
    exit 2
fi
[ -d "$source/.git" ] || [ "$(git -C "$source" rev-parse --is-bare-repository 2> /dev/null)" = true ] \
    || { echo "error: $source: not a git repository (ci/scripts/fetch_upstream.sh makes one)" >&2; exit 2; }
if [ "$onto" = latest-release ]; then
    onto=$(git -C "$source" tag -l 'v[0-9]*' --sort=-v:refname | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | head -n 1)
    [ -n "$onto" ] || { echo "error: $source: no release tag vX.Y.Z" >&2; exit 2; }
fi
git -C "$source" rev-parse --verify --quiet "$onto^{commit}" > /dev/null \
    || { echo "error: $source: no commit '$onto' (fetch it first)" >&2; exit 2; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Throwaway project (patches/ + pin) and upstream work clone: the rebase rewrites both.
mkdir -p "$work/project"
cp -r "$root/patches" "$work/project/patches"
# the recorded conflict resolutions (scripts/rebase.py replays them: a conflict resolved once is not reported again)
if [ -d "$root/resolutions" ]; then cp -r "$root/resolutions" "$work/project/resolutions"; fi
git clone --quiet --shared "$source" "$work/upstream"
git -C "$work/upstream" fetch --quiet --tags origin '+refs/remotes/origin/*:refs/remotes/origin/*' 2> /dev/null || true
echo "$onto" > "$out/target"
rm -f "$out/report.json" "$out/report.md"

# --force: the fresh clone is at upstream's default branch, not at the pin; apply resets it to the pinned base.
"$py" "$root/scripts/apply_patches.py" apply --force --patches-dir "$work/project/patches" --source "$work/upstream" \
    > "$out/log" 2>&1
set +e
"$py" "$root/scripts/rebase.py" --onto "$onto" --project "$work/project" --source "$work/upstream" \
    --report "$work/report" >> "$out/log" 2> "$work/stop"
rc=$?
set -e
cat "$work/stop" >> "$out/log"
case $rc in
    0) cp "$work/report.md" "$out/report.md"; cp "$work/report.json" "$out/report.json"; echo ok > "$out/result" ;;
    1) { echo "# Rebase canary: the series conflicts with \`$onto\`"; echo; echo '```'; cat "$work/stop"; echo '```'; echo
         echo "Reproduce: \`bash ci/scripts/rebase_canary.sh --onto $onto --source <pytorch clone> --out <dir>\`," \
              "then rebase for real with \`scripts/rebase.py --onto $onto\` (README, rebase section)."; } \
           > "$out/report.md"
       "$py" "$root/scripts/rebase.py" --abort --project "$work/project" --source "$work/upstream" >> "$out/log" 2>&1
       echo conflict > "$out/result" ;;
    *) echo "error: rebase.py failed (exit $rc); log: $out/log" >&2; tail -n 20 "$out/log" >&2; exit "$rc" ;;
esac
echo "rebase canary onto $onto: $(cat "$out/result") (report: $out/report.md)"
