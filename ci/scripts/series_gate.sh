#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# The series gate every pull request runs (and a developer runs before pushing):
#   apply_patches.py lint; check, apply and status on the real upstream tree at the pin; export --dry-run (exit 1
#   when patches/ is stale, i.e. the commits on the tree and the files in patches/ differ).
#
#   bash ci/scripts/series_gate.sh [PROJECT_DIR]     # default: this checkout
#
# The tree: PROJECT_DIR/pytorch when it is a git clone (submodule initialised), else the real v<pin> tree built
# from the release wheel (scripts/upstream.py checkout, cached under ${CATCH_CACHE:-~/.cache/catch}/work, or at
# $CATCH_GATE_TREE when set).
# Exit status: 0 healthy, 1 a check failed (its own output says which patch), 2 bad input.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
project=$(cd "${1:-$here}" && pwd)
py=${PYTHON:-python3}
cd "$project"
# The project's own series, pin and tooling, even when another checkout's catch_tools is installed (pip install -e).
export CATCH_ROOT=$project PYTHONPATH=$project/src${PYTHONPATH:+:$PYTHONPATH}
step() { printf '\n== series gate: %s\n' "$*"; }

step "lint ($project/patches)"
"$py" scripts/apply_patches.py lint
if [ -e pytorch/.git ]; then
    tree=$project/pytorch
else
    # One work tree per project checkout, so two gates (e.g. recheck of several PRs) never share a tree.
    key=$(printf '%s' "$project" | sha1sum | cut -c1-12)
    tree=$("$py" scripts/upstream.py checkout "${CATCH_GATE_TREE:-${CATCH_CACHE:-$HOME/.cache/catch}/work/series-gate-$key}")
fi
step "check against the pinned base ($tree)"
"$py" scripts/apply_patches.py check --source "$tree"
step "apply"
"$py" scripts/apply_patches.py apply --source "$tree"
"$py" scripts/apply_patches.py status --source "$tree"
step "export --dry-run (is patches/ what the applied commits export to?)"
"$py" scripts/apply_patches.py export --dry-run --source "$tree"
step "ok"
