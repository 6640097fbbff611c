# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Command line of the patch engine: ``scripts/apply_patches.py {apply,check,status,reverse,export,lint}``, also
``catch apply``, ``catch check``... (:mod:`catch_tools.cli`).

Exit status: 0 success; 1 when the command's answer is "no" (``check`` found failing patches, ``lint`` found
problems, ``export --dry-run`` would change files, ``apply --stop-at-conflict`` stopped); 2 for a user error
(one line ``error: <file>:<line>: <message>`` on stderr, see :func:`catch_tools.errors.run_cli`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from catch_tools.clikit import add_verbosity, plain, setup_logging
from catch_tools.errors import UserError
from catch_tools.patches.check import check_series
from catch_tools.patches.dirapply import apply_series_to_dir
from catch_tools.patches.export import describe_export, export_series
from catch_tools.patches.gitapply import apply_and_describe
from catch_tools.patches.lint import lint_series
from catch_tools.patches.status import reverse_series, series_status
from catch_tools.pin import MANIFEST_NAME, Pin, load_pin
from catch_tools.progress import progress


def _default(func: str) -> Path:
    from catch_tools import paths

    try:
        return Path(getattr(paths, func)())
    except FileNotFoundError as err:
        raise UserError(f"{err}; or pass --patches-dir/--source explicitly") from None


def _patches_dir(args: argparse.Namespace) -> Path:
    return Path(args.patches_dir) if args.patches_dir else _default("patches_dir")


def _pin(args: argparse.Namespace) -> Pin | None:
    """The pin: ``--pin``, else ``<patches-dir>/manifest.toml``; None when ``--base`` names the base and the series
    directory has no manifest (the pin is only needed to find the base)."""
    if args.pin:
        return load_pin(Path(args.pin), option="--pin FILE")
    local = _patches_dir(args) / MANIFEST_NAME
    if args.patches_dir and not local.is_file() and getattr(args, "base", None):
        return None
    if args.patches_dir and not local.is_file():
        raise UserError(f"no {MANIFEST_NAME} in {args.patches_dir}: the series' pin states its upstream base; copy "
                        f"patches/{MANIFEST_NAME} there, or pass --pin FILE or --base REF", path=str(local))
    return load_pin(local if local.is_file() else None, option="--pin FILE")


def _source(args: argparse.Namespace) -> Path:
    if args.source:
        return Path(args.source)
    path = _default("pytorch_dir")
    if path.is_dir() and not any(path.iterdir()):
        raise UserError("the pytorch/ submodule is not checked out (run `git submodule update --init pytorch`, or "
                        "pass --source DIR: a git tree holding the pinned tag)", path=str(path))
    return path


def _cmd_apply(args: argparse.Namespace) -> int:
    if args.target_dir:
        if args.three_way or args.stop_at_conflict or args.base or args.source:
            raise UserError("--target-dir takes no --source/--base/--3way/--stop-at-conflict: drop them, or drop "
                            "--target-dir to apply to a git tree")
        changed = apply_series_to_dir(_patches_dir(args), Path(args.target_dir), echo=print)
        print(f"applied the series to {args.target_dir}: {len(changed)} file(s) changed")
        return 0
    source, patches, pin = _source(args), _patches_dir(args), _pin(args)
    with progress("apply") as shown:
        return apply_and_describe(source, patches, print, base=args.base, force=args.force,
                                  three_way=args.three_way, stop_at_conflict=args.stop_at_conflict, pin=pin,
                                  progress=shown)


def _cmd_check(args: argparse.Namespace) -> int:
    with progress("check") as shown:
        if args.target_dir:
            report = check_series(_patches_dir(args), target_dir=Path(args.target_dir), progress=shown)
        else:
            report = check_series(_patches_dir(args), source=_source(args), base=args.base, pin=_pin(args),
                                  progress=shown)
    print(report.to_json() if args.json else report.to_text(verbose=args.verbose))
    return 1 if report.failed else 0


def _cmd_status(args: argparse.Namespace) -> int:
    report = series_status(_source(args), _patches_dir(args), base=args.base, pin=_pin(args))
    print(report.to_json() if args.json else report.to_text())
    return 0


def _cmd_reverse(args: argparse.Namespace) -> int:
    print(reverse_series(_source(args), base=args.base, force=args.force, pin=_pin(args)))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    patches = _patches_dir(args)
    result = export_series(_source(args), patches, base=args.base, dry_run=args.dry_run, pin=_pin(args),
                           refresh=args.refresh)
    for line in describe_export(result, patches, args.dry_run):
        print(line)
    return 1 if args.dry_run and result.changed else 0


def _cmd_lint(args: argparse.Namespace) -> int:
    patches = _patches_dir(args)
    problems = lint_series(patches, pin=Path(args.pin) if args.pin else patches / MANIFEST_NAME)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if not problems:
        print("lint: series is clean")
    return 1 if problems else 0


_EXAMPLES = {
    "apply": ["scripts/apply_patches.py apply", "scripts/apply_patches.py apply --source ../pytorch --3way",
              "scripts/apply_patches.py apply --target-dir build/wheel-tree"],
    "check": ["scripts/apply_patches.py check", "scripts/apply_patches.py check --target-dir build/wheel-tree --json"],
    "status": ["scripts/apply_patches.py status --source ../pytorch"],
    "reverse": ["scripts/apply_patches.py reverse --source ../pytorch"],
    "export": ["scripts/apply_patches.py export --source ../pytorch --dry-run",
               "scripts/apply_patches.py export --source ../pytorch --refresh"],
    "lint": ["scripts/apply_patches.py lint", "scripts/apply_patches.py lint --patches-dir /tmp/my-series"],
}


def _sub(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, parents: list[argparse.ArgumentParser],
         help: str, description: str) -> argparse.ArgumentParser:
    epilog = "examples:\n" + "".join(f"  {e}\n" for e in _EXAMPLES[name])
    return sub.add_parser(name, parents=parents, help=help, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser(prog: str = "apply_patches.py") -> argparse.ArgumentParser:
    """The argparse parser (one subcommand per capability; the shared vocabulary of :mod:`catch_tools.clikit`)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--patches-dir", metavar="DIR", help="the series directory (default: <repo>/patches)")
    common.add_argument("--pin", metavar="FILE", help="pin manifest (default: <patches-dir>/manifest.toml)")
    add_verbosity(common)
    tree = argparse.ArgumentParser(add_help=False)
    tree.add_argument("--source", metavar="DIR", help="git work tree (default: the pytorch/ submodule)")
    tree.add_argument("--base", metavar="REF", help="base commit (default: the pin's commit, else its tag)")

    parser = argparse.ArgumentParser(prog=prog, description=plain(__doc__ or ""),
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="examples:\n" + "".join(f"  {e[0]}\n" for e in _EXAMPLES.values()))
    sub = parser.add_subparsers(dest="command", required=True)
    p = _sub(sub, "apply", [common, tree], "apply the series as one commit per patch",
             "Reset to the pinned base and apply each patch as one reproducible commit; records refs/patches/base "
             "and refs/patches/applied. Atomic: on failure nothing changes.")
    p.add_argument("--target-dir", metavar="DIR", help="apply to a plain directory (an unpacked wheel) instead")
    p.add_argument("--force", action="store_true", help="discard uncommitted changes and unknown commits")
    p.add_argument("--3way", dest="three_way", action="store_true", help="fall back to 3-way merges (git am -3)")
    p.add_argument("--stop-at-conflict", action="store_true",
                   help="leave a conflicting patch in progress (git am) and print the steps to finish")
    p.set_defaults(func=_cmd_apply)
    p = _sub(sub, "check", [common, tree], "dry run: report every patch that would fail",
             "Dry run against the pinned base (or --target-dir): every failing patch with file, hunk header, and "
             "offset/fuzz; changes nothing. Exit 1 if any patch fails. -v lists every hunk, not only moved ones.")
    p.add_argument("--target-dir", metavar="DIR", help="check against a plain directory instead")
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p.set_defaults(func=_cmd_check)
    p = _sub(sub, "status", [common, tree], "applied/not applied per patch, and drift",
             "Which patches are applied in the tree and whether it drifted from base+series.")
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p.set_defaults(func=_cmd_status)
    p = _sub(sub, "reverse", [common, tree], "remove the series: back to the base",
             "Move HEAD, index and work tree back to the base and delete refs/patches/*.")
    p.add_argument("--force", action="store_true", help="discard uncommitted changes and unknown commits")
    p.set_defaults(func=_cmd_reverse)
    p = _sub(sub, "export", [common, tree], "regenerate patches/ from the commits on the base",
             "Write one format-patch file per commit on top of the base and rewrite series; equivalent patches stay "
             "byte-identical. --dry-run exits 1 listing what would change.")
    p.add_argument("--dry-run", action="store_true", help="change nothing; exit 1 if patches/ is out of date")
    p.add_argument("--refresh", action="store_true",
                   help="also rewrite equivalent patches whose hunks moved (line numbers, index lines, context as on "
                   "the base; header and trailers kept)")
    p.set_defaults(func=_cmd_export)
    p = _sub(sub, "lint", [common], "static checks of patches/",
             "Series and files agree, headers present, patches parse, every diff header field and hunk count git "
             "apply validates is valid, no hunk undercounts its body, no path escapes; the pin manifest (--pin, "
             "else <patches-dir>/manifest.toml) exists and every key is valid.")
    p.set_defaults(func=_cmd_lint)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "apply_patches.py") -> int:
    """Parse ``argv`` and run the subcommand; returns the exit status (see module doc)."""
    args = build_parser(prog).parse_args(argv)
    setup_logging(args)
    return int(args.func(args))
