# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``scripts/upgrade.py``: after ``scripts/rebase.py`` moved the series and the pin, carry the upgrade on to a tested,
installable combined wheel of the new release.

Usage::

    upgrade.py [--project DIR] [--work DIR] [--from STEP] [--demo-epochs N] [--report PATH] [--json] [--force]
    upgrade.py status [--project DIR] [--work DIR] [--json]

It starts only from a pin ``scripts/rebase.py`` moved: the pin in ``patches/manifest.toml`` must differ from the one
committed in HEAD (``--force`` starts anyway). Steps: fetch, build, suite, wheel, interfaces, demo
(:mod:`catch_tools.upgrade.steps`). A rerun skips the steps that passed for the same release, checkout and sources.
``fetch`` records the upstream wheel it chose in the manifest; a run that does not pass every step puts the manifest
back as it found it. The report (rich table on the terminal; ``--json`` prints JSON) is written to
``<work>/upgrade-report.{md,json}`` (and ``PATH.{md,json}`` with ``--report``). The work directory (default
``<cache>/upgrade/<release>``) holds two venvs with the release's torch (~5 GB each for a CUDA build) and the wheels.

Exit status: 0 every step passed, 1 a step failed (its row says what to do next) or, for ``status``, no upgrade to the
pinned release has run, 2 bad input (one line; the checkout as it was).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from catch_tools import clikit, output
from catch_tools.paths import cache_dir, repo_root
from catch_tools.progress import progress
from catch_tools.upgrade import runner, steps
from catch_tools.upgrade.state import load_state
from catch_tools.userfiles import output_dir, writable_report_files

EXAMPLES = (
    "scripts/upgrade.py",
    "scripts/upgrade.py --from suite      # rerun from the test suite on",
    "scripts/upgrade.py status --json",
    "scripts/upgrade.py --force           # the pinned release, with no rebase before",
)


def _parser(prog: str = "upgrade.py") -> argparse.ArgumentParser:
    paragraphs = __doc__.split("\n\n")
    p = clikit.parser(prog, paragraphs[0], EXAMPLES,
                      epilog=" ".join(x.replace("\n", " ") for x in paragraphs[3:]).strip())
    p.add_argument("command", nargs="?", choices=["status"], help="status: the report of the last run, nothing run")
    p.add_argument("--project", metavar="DIR", type=Path, help="Catch checkout (default: this repository)")
    p.add_argument("--work", metavar="DIR", type=Path, help="work directory (default: <cache>/upgrade/<release>)")
    p.add_argument("--from", dest="start", choices=list(steps.STEPS), help="rerun from this step on")
    p.add_argument("--demo-epochs", type=int, default=3, help="epochs of the digits demo (default 3)")
    p.add_argument("--report", type=Path, metavar="PATH", help="also write PATH.md and PATH.json")
    p.add_argument("--json", action="store_true", help="print the JSON report on stdout instead of the table")
    p.add_argument("--force", action="store_true",
                   help="start even when no rebase moved the pin (it is the one committed in HEAD)")
    return p


def to_markdown(rep: dict[str, Any]) -> str:
    """The step report as Markdown: one row per step."""
    lines = [f"# Upgrade report: torch {rep['release']}", "",
             f"- result: {'every step passed' if rep['ok'] else 'FAILED'}; total {rep['total_seconds']} s",
             f"- work directory: `{rep['work']}`", "",
             "| step | what | result | time (s) | details | next on failure |", "|---|---|---|---|---|---|"]
    for r in rep["steps"]:
        cells = [r["step"], r["title"], r["status"], f"{float(r['seconds']):.1f}", r["detail"], r["next"]]
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def print_table(rep: dict[str, Any]) -> None:
    """The step report as a table (:mod:`catch_tools.output`), then where the report is."""
    table = output.table(f"upgrade to torch {rep['release']}: {'all steps passed' if rep['ok'] else 'FAILED'}")
    for column in ("step", "result", "time (s)", "details / next"):
        output.column(table, column)
    for r in rep["steps"]:
        style = {"passed": "green", "failed": "bold red"}.get(r["status"], "dim")
        text = r["detail"] + (f"\nnext: {r['next']}" if r["next"] and r["status"] == "failed" else "")
        table.add_row(r["step"], f"[{style}]{r['status']}[/]", f"{float(r['seconds']):.1f}", text)
    output.print_table(table)
    output.say(f"total {rep['total_seconds']} s; report: {rep['work']}/upgrade-report.md")


def rebase_command(project: Path, given_project: bool) -> str:
    """The rebase to run before the upgrade, as one command line: ``--project`` when the upgrade was given one,
    ``--source DIR`` when the ``pytorch/`` submodule is not checked out (rebase.py needs an upstream work tree)."""
    words = ["python", "scripts/rebase.py"] + (["--project", shlex.quote(str(project))] if given_project else [])
    if not (project / "pytorch" / ".git").exists():
        words += ["--source", "DIR"]
    return " ".join([*words, "--onto", "vX.Y.Z"])


def main(argv: Sequence[str] | None = None, prog: str = "upgrade.py") -> int:
    """Parse ``argv``, run (or show) the upgrade steps; see the module docstring for the exit status.

    Raises:
        UserError: bad arguments, the pin is not a release or no rebase moved it (without ``--force``,
            :func:`catch_tools.upgrade.runner.require_rebased_pin`), ``--work``/``--report`` name no directory, or
            the state file is damaged.
    """
    args = _parser(prog).parse_args(argv)
    clikit.setup_logging(args)
    project = (args.project or repo_root()).resolve()
    release = steps.release_of(project)
    work = (args.work or cache_dir() / "upgrade" / release).resolve()
    ctx = steps.Context(project=project, work=work, release=release, demo_epochs=args.demo_epochs)
    if args.command == "status":
        output_dir(work, "--work", create=False)
        state = load_state(work)
        if state.get("release") != release:
            other = f" (its last run was to torch {state['release']})" if state.get("release") else ""
            message = f"no upgrade to torch {release} has run in {work}{other}: run scripts/upgrade.py"
            if args.json:  # the report of no run: every step pending
                sys.stdout.write(json.dumps(runner.report(ctx, {}), indent=2) + "\n")
            print(message, file=sys.stderr if args.json else sys.stdout)
            return 1
        rep = runner.report(ctx, state)
    else:
        if not args.force:
            runner.require_rebased_pin(project, rebase_command(project, args.project is not None))
        report = args.report.resolve() if args.report else None
        targets = [*writable_report_files(work / "upgrade-report", "--work"),
                   *(writable_report_files(report, "--report") if report else ())]
        output_dir(work, "--work")
        if report:
            output_dir(report.parent, "--report")
        with progress(f"upgrade to torch {release}") as shown:
            rep = runner.run(ctx, args.start, progress=shown)
        for target in targets:
            text = to_markdown(rep) if target.suffix == ".md" else json.dumps(rep, indent=2) + "\n"
            target.write_text(text, encoding="utf-8")
    if args.json:
        sys.stdout.write(json.dumps(rep, indent=2) + "\n")
    else:
        print_table(rep)
    return 0 if rep["ok"] else 1
