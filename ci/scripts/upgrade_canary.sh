#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# The whole upgrade, unattended, in a scratch copy: rebase the series onto the newest torch release pip can see, replay
# the recorded conflict resolutions (resolutions/), then scripts/upgrade.py (fetch the release's wheel, build the
# backend against it, backend suite + patch proof gate, combined wheel, native interface check, digits demo on mlu in a
# fresh venv). tox -e next and the nightly canary workflow run it. Never changes this checkout.
#
#   bash ci/scripts/upgrade_canary.sh [--onto X.Y.Z] [--out DIR]
#
#   --onto   the release to upgrade to (default: the newest final release `pip index versions torch` lists)
#   --out    where the reports go (default: ./upgrade-canary): result (ok | conflict | failed | current), target,
#            rebase-report.md/.json, upgrade-report.md/.json, log
#
# Downloads are cached ($CATCH_CACHE, default ~/.cache/catch: the release wheels, the upstream history; pip's cache
# for the dependencies); the upgrade's venvs are kept in $CATCH_CACHE/upgrade-canary/<release> and reused.
# The copy is a clone of this checkout's committed HEAD. pip runs without the machine's torch cap while fetching
# the new release (PIP_CONSTRAINT=/dev/null: a constraint in the environment overrides the config files'), and with
# the scratch copy's constraints.txt (moved to the new release by the rebase) everywhere else.
# Exit status: 0 every step passed (or the pin is already the newest release), 1 a step failed (the report says
# which and what to do next), 2 bad input.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
onto='' out=upgrade-canary
while [ $# -gt 0 ]; do
    case $1 in
        --onto) onto=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "error: upgrade_canary.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
cache=${CATCH_CACHE:-$HOME/.cache/catch}
export CATCH_CACHE=$cache
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/result "$out"/*.md "$out"/*.json
: > "$out/log"
pinned=$("$py" -c "import tomllib,sys; print(tomllib.load(open(sys.argv[1],'rb'))['upstream']['tag'].lstrip('v'))" \
    "$root/patches/manifest.toml")
if [ -z "$onto" ]; then
    onto=$(PIP_CONSTRAINT=/dev/null "$py" -m pip index versions torch 2> /dev/null \
        | sed -n 's/^Available versions: //p' | tr ',' '\n' | tr -d ' ' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+$' \
        | sort -V | tail -n 1)
    [ -n "$onto" ] || { echo "error: pip index versions torch listed no release" >&2; exit 2; }
fi
echo "v$onto" > "$out/target"
if [ "$(printf '%s\n%s\n' "$pinned" "$onto" | sort -V | tail -n 1)" = "$pinned" ]; then
    echo current > "$out/result"
    echo "upgrade canary: the pin ($pinned) is already the newest release ($onto)"
    exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git clone --quiet --no-recurse-submodules "$root" "$scratch/catch"
# The scratch clone's scripts run its own tooling (catch_tools), also under a python3 without the tooling installed.
export PYTHONPATH=$scratch/catch/src${PYTHONPATH:+:$PYTHONPATH}
started=$(date +%s)
step() { echo "[$(( $(date +%s) - started )) s] $*" | tee -a "$out/log"; }
step "upstream history v$pinned -> v$onto (release wheels, cached)"
PIP_CONSTRAINT=/dev/null "$py" "$scratch/catch/scripts/upstream.py" checkout "$scratch/up" "$pinned" "$onto" \
    >> "$out/log" 2>&1
step "rebase onto v$onto (recorded resolutions replayed)"
set +e
"$py" "$scratch/catch/scripts/rebase.py" --project "$scratch/catch" --source "$scratch/up" --onto "v$onto" \
    --report "$out/rebase-report" >> "$out/log" 2> "$scratch/stop"
rc=$?
set -e
cat "$scratch/stop" >> "$out/log"
if [ "$rc" = 1 ]; then
    { echo "# Upgrade canary: the series conflicts with v$onto"; echo; echo '```'; cat "$scratch/stop"; echo '```'; echo
      echo "Resolve it once by hand (docs/upgrade.md) and commit the recorded resolution (resolutions/v$onto/)."; } \
        > "$out/rebase-report.md"
    echo conflict > "$out/result"
    cat "$out/rebase-report.md" >&2
    exit 1
elif [ "$rc" != 0 ]; then
    echo failed > "$out/result"
    echo "error: rebase.py failed (exit $rc); log: $out/log" >&2; tail -n 20 "$out/log" >&2; exit 1
fi
step "upgrade steps (scripts/upgrade.py)"
set +e
"$py" "$scratch/catch/scripts/upgrade.py" --project "$scratch/catch" \
    --work "$cache/upgrade-canary/$onto" --report "$out/upgrade-report" 2>> "$out/log"
rc=$?
set -e
step "done (exit $rc)"
if [ "$rc" = 0 ]; then echo ok > "$out/result"; else echo failed > "$out/result"; fi
exit "$rc"
