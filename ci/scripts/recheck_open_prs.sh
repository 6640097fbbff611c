#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# After patches/ or the pin changed on main: re-check the series of every open pull request merged with the new main
# (ci/scripts/check_merge.sh), and comment on each pull request that no longer passes.
#
#   bash ci/scripts/recheck_open_prs.sh [--base main] [--dry-run]
#
# Needs the GitHub CLI (GH_TOKEN/GH_REPO in the workflow) and a clone with origin set. --dry-run prints the comments
# instead of posting them. Exit status: 0 every open pull request is healthy on the new main, 1 at least one is not.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base=main dry_run=0
while [ $# -gt 0 ]; do
    case $1 in
        --base) base=$2; shift 2 ;;
        --dry-run) dry_run=1; shift ;;
        *) echo "error: recheck_open_prs.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
cd "$root"
git fetch --quiet origin "+refs/heads/$base:refs/remotes/origin/$base"
main_sha=$(git rev-parse --short "origin/$base")
failed=()
for number in $(gh pr list --base "$base" --state open --limit 200 --json number --jq '.[].number'); do
    git fetch --quiet origin "+refs/pull/$number/head:refs/remotes/pr/$number"
    echo "== pull request #$number on $base ($main_sha)"
    if bash ci/scripts/check_merge.sh "origin/$base" "refs/remotes/pr/$number" > "/tmp/recheck-$number.log" 2>&1; then
        echo "#$number: healthy"
        continue
    fi
    tail -n 30 "/tmp/recheck-$number.log"
    failed+=("$number")
    body="The patch series no longer passes when this pull request is merged with \`$base\` at $main_sha (\`patches/\` or the pin changed there). Run \`bash ci/scripts/check_merge.sh origin/$base HEAD\` after rebasing to see it; last lines:

\`\`\`
$(tail -n 15 "/tmp/recheck-$number.log")
\`\`\`"
    if [ $dry_run -eq 1 ]; then
        printf 'would comment on #%s:\n%s\n' "$number" "$body"
    else
        gh pr comment "$number" --body "$body"
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "recheck: ${#failed[@]} open pull request(s) broken by $base ($main_sha): ${failed[*]}"
    exit 1
fi
echo "recheck: every open pull request is healthy on $base ($main_sha)"
