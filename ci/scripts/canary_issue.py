#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Open, update or close the rebase canary's tracking issue from the output of ``ci/scripts/rebase_canary.sh``.

    python ci/scripts/canary_issue.py OUT_DIR [--dry-run]

OUT_DIR holds ``target`` (the upstream ref), ``result`` (``ok`` or ``conflict``) and ``report.md``. One open issue
per target, titled ``Rebase canary: the series conflicts with <target>`` and labelled ``rebase-canary``:

- conflict, no open issue: create it with the report as body;
- conflict, open issue: add the new report as a comment (the history shows since when it conflicts);
- ok, open issue: comment that the series applies again and close it; ok, no issue: nothing.

Uses the GitHub CLI (``gh``; GH_TOKEN and GH_REPO from the workflow, or ``gh auth login`` locally). ``--dry-run``
prints the ``gh`` commands that change something instead of running them. Exit status 0, 2 on bad input (one line).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

LABEL = "rebase-canary"


def title_for(target: str) -> str:
    """The tracking issue's title for an upstream ref (stable, so the next night finds the same issue)."""
    return f"Rebase canary: the series conflicts with {target}"


def plan(result: str, target: str, report: Path, open_issues: Sequence[dict[str, object]]) -> list[list[str]]:
    """The ``gh`` commands (argv lists) that bring the tracking issue in line with tonight's ``result``.

    ``open_issues`` is ``gh issue list --json number,title`` output for open issues with the label. Raises
    ValueError for a result other than ``ok`` / ``conflict``.
    """
    if result not in ("ok", "conflict"):
        raise ValueError(f"result must be 'ok' or 'conflict', not {result!r}")
    title = title_for(target)
    existing = [str(issue["number"]) for issue in open_issues if issue.get("title") == title]
    if result == "conflict":
        if existing:
            return [["gh", "issue", "comment", existing[0], "--body-file", str(report)]]
        return [
            ["gh", "label", "create", LABEL, "--force", "--color", "B60205",
             "--description", "the nightly rebase canary found a conflicting patch"],
            ["gh", "issue", "create", "--title", title, "--label", LABEL, "--body-file", str(report)],
        ]
    commands: list[list[str]] = []
    for number in existing:
        commands.append(["gh", "issue", "close", number, "--comment",
                         f"The series applies onto `{target}` again (nightly rebase canary); closing."])
    return commands


def _read(out: Path, name: str) -> str:
    path = out / name
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as err:
        print(f"error: {path}: cannot read ({err.strerror}); run ci/scripts/rebase_canary.sh first", file=sys.stderr)
        raise SystemExit(2) from None


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; see the module docstring."""
    parser = argparse.ArgumentParser(prog="canary_issue.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="output directory of ci/scripts/rebase_canary.sh")
    parser.add_argument("--dry-run", action="store_true", help="print the gh commands instead of running them")
    args = parser.parse_args(argv)
    target, result = _read(args.out, "target"), _read(args.out, "result")
    report = args.out / "report.md"
    if result == "conflict" and not report.is_file():
        print(f"error: {report}: missing (the canary writes it with a conflict)", file=sys.stderr)
        return 2
    if result not in ("ok", "conflict"):
        print(f"error: {args.out / 'result'}:1: expected 'ok' or 'conflict', found {result!r}", file=sys.stderr)
        return 2
    listed = subprocess.run(["gh", "issue", "list", "--label", LABEL, "--state", "open", "--limit", "100",
                             "--json", "number,title"], capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        # A missing label is not an error for the listing: no issue carries it yet.
        if "not found" not in listed.stderr:
            print(f"error: gh issue list failed: {listed.stderr.strip()}", file=sys.stderr)
            return 2
        open_issues = []
    else:
        open_issues = json.loads(listed.stdout or "[]")
    for command in plan(result, target, report, open_issues):
        if args.dry_run:
            print(" ".join(command))
        else:
            subprocess.run(command, check=True)
    print(f"canary issue: {target}: {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
