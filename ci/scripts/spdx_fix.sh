#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Give every file that `reuse lint` reports without copyright or licensing information the project's SPDX header
# (REUSE Specification 3.3, https://reuse.software/spec/), written by `reuse annotate` with the template
# .reuse/templates/catch.jinja2:
#     <comment> SPDX-FileCopyrightText: 2026 Catch Developers
#     <comment> SPDX-License-Identifier: BSD-3-Clause
# Comment styles: `//` for C/C++; `#` for files reuse has no style for or would give another one (Dockerfile.*,
# *.dockerignore, .gitmodules, *.txt, *.ini, patches/series, .ci/run); reuse's own choice otherwise (Python, shell,
# TOML, YAML: `#`; Markdown: `<!-- -->`).
# A shebang stays on line 1 (reuse keeps it); so does a Dockerfile parser directive (`# syntax=...`), which BuildKit
# only honours on the first line. Files that cannot carry a header (patches, CSV, generated tables) belong in
# REUSE.toml instead; a file reuse has no comment style for is skipped and stays in the final lint's report.
#
#   bash ci/scripts/spdx_fix.sh [PATH...]   # default: every non-compliant file; PATHs (files or directories)
#                                           # restrict the fix to files under them
# Needs `reuse` (pip install reuse). Exit status: 0 the tree is REUSE compliant afterwards, 1 `reuse lint` still
# fails (one line per offender on stdout), 2 reuse is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
command -v reuse >/dev/null || { echo "error: reuse not found (pip install reuse)" >&2; exit 2; }

mapfile -t missing < <(reuse lint --json | python3 -c '
import json, sys
bad = json.load(sys.stdin)["non_compliant"]
print("\n".join(sorted(set(bad["missing_copyright_info"]) | set(bad["missing_licensing_info"]))))')

selected() {  # is $1 under one of the PATH arguments (all files when there are none)?
    (($# == 1)) && return 0
    local file=$1 p
    shift
    for p in "$@"; do
        p=${p%/}
        [[ $file == "$p" || $file == "$p"/* ]] && return 0
    done
    return 1
}

c_files=() hash_files=() docker_files=() other_files=()
for f in "${missing[@]}"; do
    [[ -n $f ]] && selected "$f" "$@" || continue
    case $f in
        *.c|*.cc|*.cpp|*.h|*.hpp|*.cu) c_files+=("$f") ;;
        Dockerfile*|*/Dockerfile*)
            if [[ $f != *.dockerignore ]] && head -n1 "$f" | grep -Eq '^# *(syntax|escape|check)='; then
                docker_files+=("$f")
            else
                hash_files+=("$f")
            fi ;;
        *.dockerignore|.gitmodules|*.txt|*.ini|patches/series|.ci/*) hash_files+=("$f") ;;
        *) other_files+=("$f") ;;
    esac
done

annotate() {
    reuse annotate --template catch --copyright "Catch Developers" --year 2026 --license BSD-3-Clause "$@"
}
((${#c_files[@]} == 0)) || annotate --style cppsingle "${c_files[@]}"
((${#hash_files[@]} == 0)) || annotate --style python "${hash_files[@]}"
((${#other_files[@]} == 0)) || annotate --skip-unrecognised "${other_files[@]}"
for f in ${docker_files[@]+"${docker_files[@]}"}; do
    # Header below the parser directive: annotate the rest, then put the directive back on line 1 (`cat >` keeps
    # the file's mode).
    directive=$(head -n1 "$f")
    rest=$(tail -n +2 "$f"; printf x)
    printf '%s' "${rest%x}" > "$f"
    annotate --style python "$f"
    body=$(cat "$f"; printf x)
    printf '%s\n%s' "$directive" "${body%x}" > "$f"
done

reuse lint --lines
