# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``scripts/rebase.py``: move the patch series to a new upstream PyTorch release.

Usage::

    rebase.py --onto v2.14.0 [--via v2.13.1,...] [--source DIR] [--no-3way] [--drop NAME --reason TEXT]...
              [--report PATH] [--json] [--prove all|conflicts|none]
    rebase.py --continue [--drop NAME --reason TEXT]...     # after resolving a conflict (or after a crash)
    rebase.py --continue --reason TEXT                      # after resolving a conflict to no change (git rm):
                                                            # the maintainer's drop (asked for on a terminal)
    rebase.py --drop NAME --reason TEXT                     # drop a patch during a rebase, then continue
    rebase.py --abort                                       # back to exactly the state before --onto
    rebase.py status

Exit status: 0 done (or nothing to report), 1 stopped at a conflict (the message says what to do), 2 bad input (one
line, nothing changed), 130 interrupted (the state on disk lets ``--continue``/``--abort`` finish).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from catch_tools import clikit, output
from catch_tools.errors import UserError
from catch_tools.paths import repo_root
from catch_tools.progress import progress
from catch_tools.rebase import proving, report
from catch_tools.rebase.flow import Rebase
from catch_tools.rebase.outcome import Finished

EXAMPLES = (
    "scripts/rebase.py --onto v2.14.0",
    "scripts/rebase.py --onto v2.15.0 --via v2.14.0,v2.14.1 --source ~/src/pytorch",
    "scripts/rebase.py --continue        # after resolving the conflict it stopped at",
    "scripts/rebase.py --drop 0003-x.patch --reason \"upstreamed in v2.14.0\"",
    "scripts/rebase.py --abort",
    "scripts/rebase.py status",
)


def build_parser(prog: str = "rebase.py") -> argparse.ArgumentParser:
    """The ``rebase.py`` parser, in the :mod:`catch_tools.clikit` vocabulary (``--source``, ``--json``, ``-v/-q``)."""
    head, _, rest = __doc__.partition("\n\n")
    parser = clikit.parser(prog, head, EXAMPLES, epilog=rest.rsplit("\n\n", 1)[-1].replace("\n", " "))
    parser.add_argument("command", nargs="?", choices=["status"], help="status: where a rebase stands")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--onto", metavar="REF", help="upstream tag or commit to move the series onto")
    action.add_argument("--continue", dest="cont", action="store_true", help="go on after resolving a conflict")
    action.add_argument("--abort", action="store_true", help="undo the rebase in progress completely")
    parser.add_argument("--via", metavar="REF,REF", default="",
                        help="intermediate releases to step through, oldest first (e.g. v2.14.0,v2.14.1)")
    parser.add_argument("--source", metavar="DIR", type=Path,
                        help="upstream git work tree (default: the pytorch/ submodule)")
    parser.add_argument("--project", metavar="DIR", type=Path, help="Catch checkout (default: this repository)")
    parser.add_argument("--3way", dest="three_way", action=argparse.BooleanOptionalAction, default=True,
                        help="fall back to a 3-way merge when a patch does not apply (default: on)")
    parser.add_argument("--drop", metavar="NAME", action="append", default=[],
                        help="drop this patch (repeatable; each needs a --reason)")
    parser.add_argument("--reason", metavar="TEXT", action="append", default=[],
                        help="why the matching --drop is dropped")
    parser.add_argument("--report", metavar="PATH", type=Path,
                        help="also write the report here (PATH.md and PATH.json); always written to "
                        "<upstream git dir>/catch-rebase-report.{md,json}")
    parser.add_argument("--prove", choices=proving.MODES,
                        help="which patches run their Catch-Test on the new base without and with the series: all "
                        "(default; at the end, and a conflicting patch's at its stop), conflicts (only patches that "
                        "conflicted: cheap for a long series), none")
    parser.add_argument("--json", action="store_true", help="print the JSON report on stdout instead of a table")
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "rebase.py") -> int:
    """Parse ``argv`` and run one rebase action; see the module docstring for exit statuses.

    Raises:
        UserError: bad arguments or bad state (reported as one line by :func:`catch_tools.errors.run_cli`).
    """
    args = build_parser(prog).parse_args(argv)
    clikit.setup_logging(args)
    # --continue --reason TEXT (no --drop): the reason for a conflict resolved to no change (the maintainer's drop)
    continue_reason = args.reason[0] if args.cont and not args.drop and len(args.reason) == 1 else None
    if len(args.drop) != len(args.reason) and continue_reason is None:
        raise UserError("each --drop NAME needs its own --reason \"...\" (the reason goes into the report)")
    drops = dict(zip(args.drop, args.reason, strict=True)) if continue_reason is None else {}
    project = (args.project or repo_root()).resolve()
    upstream = (args.source or project / "pytorch").resolve()
    chosen = [bool(args.command), bool(args.onto), args.cont, args.abort]
    if sum(chosen) > 1:
        raise UserError("choose one of: status, --onto, --continue, --abort")
    if not any(chosen) and not drops:
        raise UserError("nothing to do: give --onto REF, --continue, --abort, --drop NAME --reason TEXT or status")
    if args.source is None and not (upstream / ".git").exists():
        raise UserError("the pytorch/ submodule is not checked out: run `git submodule update --init pytorch`, or "
                        "pass --source DIR (a PyTorch clone)", path=upstream)
    rebase = Rebase(project, upstream)
    if args.command == "status":
        print(rebase.status())
        return 0
    if args.abort:
        for warning in rebase.abort():
            output.say(f"warning: {warning}", stderr=True)
        print(f"rebase aborted: {upstream} and {project / 'patches'} are back to their state before it")
        return 0
    with progress("rebase") as shown:
        rebase.progress = shown
        if sys.stdin.isatty():
            def ask(name: str) -> str:
                with shown.paused():
                    return input(f"{name}: your resolution drops this patch; why? ")
            rebase.ask_reason = ask
        if args.onto:
            via = [ref for ref in args.via.split(",") if ref]
            outcome = rebase.start(args.onto, via, three_way=args.three_way, drops=drops, report_path=args.report,
                                   prove=args.prove or "all")
        else:
            outcome = rebase.resume(drops, continue_reason, args.prove)
    if isinstance(outcome, Finished):
        if args.json:
            sys.stdout.write(report.to_json(outcome.report))
        else:
            report.print_summary(outcome.report, outcome.paths)
        return 0
    again = ["python", "scripts/rebase.py"] + (["--project", project] if args.project is not None else [])
    again += ["--source", upstream] if args.source is not None else []
    output.say(outcome.message(output.command(*again)), stderr=True)
    return 1
