#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Keyword check of the tree: no unfinished-work markers, issue or session numbers, secrets, private addresses.

    python ci/scripts/check_keywords.py [--rules ci/keywords.toml] [--root DIR]

The rules live in ``ci/keywords.toml`` (``[[keyword]]`` tables: ``pattern``, ``why``, optional ``exclude`` and
``ignore_case``). Each rule is one ``git grep -n -I -E`` over the files git tracks (binary files skipped), so what is
searched is exactly what a clone publishes; the rules file itself is never searched.

Prints one ``error: <file>:<line>: <why>`` per hit. Exit status 0 clean, 1 hits found, 2 bad input (an unreadable or
invalid rules file, a pattern git rejects, not a git work tree).
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Rule:
    """One ``[[keyword]]`` table of the rules file."""

    pattern: str
    why: str
    exclude: tuple[str, ...] = ()
    ignore_case: bool = False


class BadInput(Exception):
    """A rules file or repository the check cannot use (exit status 2)."""


def load_rules(path: Path) -> list[Rule]:
    """The rules of ``path``. Raises :class:`BadInput` naming the file (and line of a TOML error)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise BadInput(f"{path}: cannot read: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise BadInput(f"{path}: invalid TOML: {err}") from None
    rules = []
    for number, table in enumerate(data.get("keyword", []), start=1):
        unknown = set(table) - {"pattern", "why", "exclude", "ignore_case"}
        if unknown or not isinstance(table.get("pattern"), str) or not isinstance(table.get("why"), str):
            extra = f"; unknown: {', '.join(sorted(unknown))}" if unknown else ""
            raise BadInput(f"{path}: [[keyword]] {number} needs the strings pattern and why "
                           f"(and only exclude, ignore_case besides){extra}")
        rules.append(Rule(table["pattern"], table["why"], tuple(table.get("exclude", ())),
                          bool(table.get("ignore_case", False))))
    if not rules:
        raise BadInput(f"{path}: no [[keyword]] rules")
    return rules


def hits(root: Path, rule: Rule, rules_file: Path) -> list[tuple[str, int]]:
    """``(path, line)`` of every match of ``rule`` in the tracked files of ``root`` (``git grep``)."""
    excludes = [f":(exclude){p}" for p in rule.exclude]
    with contextlib.suppress(ValueError):  # a rules file outside the repository is not searched anyway
        excludes.append(f":(exclude){rules_file.resolve().relative_to(root.resolve()).as_posix()}")
    cmd = ["git", "-c", "grep.lineNumber=true", "grep", "-n", "-I", "-E", *(["-i"] if rule.ignore_case else []),
           "-e", rule.pattern, "--", ".", *excludes]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode == 1:
        return []
    if proc.returncode != 0:
        message = (proc.stderr.strip().splitlines() or ["git grep failed"])[-1]
        raise BadInput(f"pattern {rule.pattern!r}: {message}")
    found = []
    for line in proc.stdout.splitlines():
        path, number, _ = line.split(":", 2)
        found.append((path, int(number)))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check (see the module docstring); returns the exit status."""
    root_default = Path(__file__).resolve().parent.parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=root_default, help="repository root (default: this checkout)")
    parser.add_argument("--rules", type=Path, default=None, help="rules file (default: <root>/ci/keywords.toml)")
    args = parser.parse_args(argv)
    rules_file = args.rules or args.root / "ci" / "keywords.toml"
    try:
        if subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=args.root, capture_output=True,
                          check=False).returncode != 0:
            raise BadInput(f"{args.root}: not a git work tree")
        problems = [(path, line, rule.why) for rule in load_rules(rules_file)
                    for path, line in hits(args.root, rule, rules_file)]
    except BadInput as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path, line, why in sorted(problems):
        print(f"error: {path}:{line}: {why}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
