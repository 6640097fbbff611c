#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Check the GitHub Actions workflows: valid against the workflow schema, and every ``run:`` step calls our scripts.

    python ci/scripts/check_workflows.py [WORKFLOW.yml ...] [--root DIR] [--no-schema]

Default: every ``.github/workflows/*.yml`` of the repository. Two checks:

1. Schema: ``check-jsonschema --builtin-schema vendor.github-workflows`` (the SchemaStore schema vendored in the
   check-jsonschema package from PyPI; works offline).
2. No inline logic: each command line of a ``run:`` block (after joining ``\\`` continuations, without comments) must
   start with an allow-listed tool (:data:`TOOLS`: tox, pip, git, gh) or run a file of the repository, directly
   (``scripts/x.py``, ``.ci/run``) or through an interpreter (``python scripts/x.py``, ``bash ci/scripts/x.sh``,
   ``python -m pip``/``tox``); shell control flow, pipes, ``&&``/``||``/``;`` and command substitution are refused:
   that logic belongs in a script a developer can run locally. ``${{ ... }}`` expressions are fine.

Prints one ``error: <file>:<line>: <message>`` per problem (line of the command in the YAML file). Exit status 0
clean, 1 problems found, 2 bad usage (missing file, check-jsonschema not installed).
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

TOOLS = frozenset({"tox", "pip", "git", "gh"})
INTERPRETERS = frozenset({"python", "python3", "bash", "sh"})
MODULES = frozenset({"pip", "tox"})
SHELL_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
                            "function", "[", "[[", "test"})
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
_INLINE_LOGIC = re.compile(r"&&|\|\||(?<![<>])\||;|\$\(|`")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Problem:
    """One finding: ``path:line: message`` (line 1-based, in the workflow file)."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"error: {self.path}:{self.line}: {self.message}"


def run_steps(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line of the run: value, script text)`` for every ``run:`` step of every job in workflow ``path``.

    Raises ValueError for a file that is not YAML or not a mapping (the schema check reports details).
    """
    try:
        doc = YAML(typ="rt").load(path.read_text(encoding="utf-8"))
    except Exception as err:  # ruamel raises many parser error types
        raise ValueError(f"not valid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(doc, CommentedMap):
        raise ValueError("not a workflow (top level is not a mapping)")
    for job in (doc.get("jobs") or {}).values():
        if not isinstance(job, CommentedMap):
            continue
        for step in job.get("steps") or []:
            if isinstance(step, CommentedMap) and "run" in step:
                line, _col = step.lc.value("run")
                # A block scalar (`run: |`) starts on the line after the key.
                text = str(step["run"])
                offset = 1 if "\n" in text.rstrip("\n") or text.endswith("\n") else 0
                yield line + 1 + offset, text


def command_lines(script: str) -> Iterator[tuple[int, str]]:
    """Split a ``run:`` script into ``(line offset, command)``: ``\\`` continuations joined, blanks/comments dropped."""
    pending, start = "", 0
    for number, raw in enumerate(script.splitlines()):
        line = raw.strip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            yield start, command
    if pending.strip():
        yield start, pending.strip()


def check_command(command: str, root: Path) -> str | None:
    """Return why ``command`` is not allowed in a workflow, or None when it is (see the module docstring)."""
    bare = _EXPRESSION.sub("EXPR", command)
    if _INLINE_LOGIC.search(bare):
        return f"inline shell logic in {command!r}: move it into a script under ci/scripts/"
    try:
        words = shlex.split(bare, comments=True)
    except ValueError as err:
        return f"cannot parse {command!r}: {err}"
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return f"{command!r} runs nothing"
    first = words[0]
    if first in SHELL_KEYWORDS:
        return f"shell control flow {first!r} in {command!r}: move it into a script under ci/scripts/"
    if first in TOOLS:
        return None
    if first in INTERPRETERS:
        rest = [w for w in words[1:] if w not in ("-u", "-e", "-x")]
        if len(rest) >= 2 and rest[0] == "-m" and first.startswith("python"):
            return None if rest[1] in MODULES else f"python -m {rest[1]}: not an allowed module ({sorted(MODULES)})"
        if not rest:
            return f"{first} without a script in {command!r}"
        return _repo_file(rest[0], root, command)
    if "/" in first:
        return _repo_file(first, root, command)
    return f"{first!r} is neither an allowed tool ({', '.join(sorted(TOOLS))}) nor a script of the repository"


def _repo_file(word: str, root: Path, command: str) -> str | None:
    target = (root / word).resolve()
    if not target.is_relative_to(root.resolve()):
        return f"{word} is outside the repository"
    if not target.is_file():
        return f"{word} does not exist in the repository (in {command!r})"
    return None


def check_runs(path: Path, root: Path) -> list[Problem]:
    """Every disallowed command line of workflow ``path`` (see :func:`check_command`)."""
    try:
        steps = list(run_steps(path))
    except ValueError as err:
        return [Problem(path, 1, str(err))]
    problems = []
    for line, script in steps:
        for offset, command in command_lines(script):
            why = check_command(command, root)
            if why:
                problems.append(Problem(path, line + offset, why))
    return problems


def check_schema(paths: Sequence[Path]) -> tuple[bool, str]:
    """Validate ``paths`` with check-jsonschema's vendored GitHub workflow schema; returns (ok, its output).

    Raises FileNotFoundError when check-jsonschema is not installed.
    """
    exe = shutil.which("check-jsonschema")
    if exe is None:
        raise FileNotFoundError("check-jsonschema")
    proc = subprocess.run([exe, "--builtin-schema", "vendor.github-workflows", *map(str, paths)],
                          capture_output=True, text=True, check=False)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; see the module docstring for arguments and exit statuses."""
    default_root = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(prog="check_workflows.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="workflow files (default: .github/workflows/*.yml)")
    parser.add_argument("--root", type=Path, default=default_root, help="repository root the scripts must exist in")
    parser.add_argument("--no-schema", action="store_true", help="skip the schema check")
    args = parser.parse_args(argv)
    files = args.files or sorted((args.root / ".github" / "workflows").glob("*.y*ml"))
    if not files:
        print(f"error: {args.root / '.github' / 'workflows'}: no workflow files", file=sys.stderr)
        return 2
    missing = [f for f in files if not f.is_file()]
    if missing:
        print(f"error: {missing[0]}: no such file", file=sys.stderr)
        return 2
    problems = [p for f in files for p in check_runs(f, args.root)]
    for problem in problems:
        print(problem)
    ok = not problems
    if not args.no_schema:
        try:
            valid, output = check_schema(files)
        except FileNotFoundError:
            print("error: check-jsonschema is not installed (pip install check-jsonschema)", file=sys.stderr)
            return 2
        if not valid:
            print(output)
        ok = ok and valid
    print(f"{len(files)} workflow file(s): {'ok' if ok else 'problems found'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
