# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``scripts/prove_patches.py`` (``catch prove``): the patch proof gate, each patch's ``Catch-Test`` must fail on
unpatched upstream torch and pass on the patched one (:mod:`catch_tools.proof`).

Exit status: 0 every patch proven (or the table is current), 1 a patch rejected (one ``rejected: <patch>: <why>``
line each on stderr) or the table is stale, 2 bad input (one line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from catch_tools import clikit, output, paths
from catch_tools.errors import UserError
from catch_tools.patches.parse import display_path
from catch_tools.proof import PatchProof, proofs_to_json, prove_series, render_table

EXAMPLES = (
    "scripts/prove_patches.py",
    "scripts/prove_patches.py --patch 0001-collect_env-report-the-PrivateUse1-backend-its-packa.patch --json",
    "scripts/prove_patches.py --torch-tree .venv-run/lib/python3.11/site-packages",
    "scripts/prove_patches.py --check-table",
)


def build_parser(prog: str = "prove_patches.py") -> argparse.ArgumentParser:
    """The parser, in the :mod:`catch_tools.clikit` vocabulary."""
    p = clikit.parser(prog, (__doc__ or "").split("\n\n")[0], EXAMPLES,
                      epilog="Exit status: 0 every patch proven, 1 a patch rejected or a stale table, 2 bad input.")
    p.add_argument("--patches-dir", metavar="DIR", type=Path, help="the series directory (default: <repo>/patches)")
    p.add_argument("--torch-tree", metavar="DIR", type=Path,
                   help="patched torch tree, e.g. the site-packages of an installed combined wheel (default: the "
                        "installed torch with the series applied, as a tree of links)")
    p.add_argument("--upstream-tree", metavar="DIR", type=Path,
                   help="unpatched torch tree (default: the installed torch)")
    p.add_argument("--patch", action="append", default=[], metavar="NAME", help="prove only this patch (repeatable)")
    p.add_argument("--json", action="store_true", help="print the verdicts as JSON instead of a table")
    p.add_argument("--write-table", action="store_true", help="regenerate docs/patches.md and exit")
    p.add_argument("--check-table", action="store_true", help="exit 1 if docs/patches.md is not current")
    return p


def print_table(results: list[PatchProof]) -> None:
    """Print the verdicts as a table on stdout (:mod:`catch_tools.output`)."""
    table = output.table("patch proof gate")
    for col in ("patch", "test", "unpatched", "patched", "verdict", "s"):
        output.column(table, col)
    for r in results:
        verdict = "[green]proven[/green]" if r.ok else "[red]REJECTED[/red]"
        table.add_row(r.patch, r.test or "-", r.unpatched, r.patched, verdict, f"{r.seconds:.1f}")
    output.print_table(table)


def _table(patches_dir: Path, root: Path, check: bool) -> int:
    """``--write-table`` / ``--check-table``: docs/patches.md generated from the series."""
    doc = root / "docs" / "patches.md"
    text = render_table(patches_dir)
    if check:
        if not doc.is_file() or doc.read_text(encoding="utf-8") != text:
            print(f"{display_path(doc)} is stale: run python scripts/prove_patches.py --write-table", file=sys.stderr)
            return 1
        print(f"{display_path(doc)} is current")
        return 0
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")
    print(f"wrote {display_path(doc)}")
    return 0


def main(argv: Sequence[str] | None = None, prog: str = "prove_patches.py") -> int:
    """Parse ``argv`` and run the gate (or write/check the table); returns the exit status (see module doc).

    Raises:
        UserError: a tree option that names no directory, or what :func:`catch_tools.proof.prove_series` raises.
    """
    args = build_parser(prog).parse_args(argv)
    clikit.setup_logging(args)
    root = paths.repo_root()
    patches_dir = args.patches_dir or paths.patches_dir()
    if args.write_table or args.check_table:
        return _table(patches_dir, root, args.check_table)
    for opt in ("torch_tree", "upstream_tree"):
        value = getattr(args, opt)
        if value is not None and not value.is_dir():
            raise UserError(f"--{opt.replace('_', '-')}: no such directory", path=str(value))

    def report(result: PatchProof) -> None:
        if not args.json:
            mark = "proven" if result.ok else "REJECTED"
            print(f"{mark}: {result.patch} ({result.seconds:.1f} s)", file=sys.stderr)

    results = prove_series(patches_dir, root=root, torch_tree=args.torch_tree, upstream_tree=args.upstream_tree,
                           only=args.patch, on_result=report)
    if args.json:
        print(proofs_to_json(results))
    else:
        print_table(results)
    for r in results:
        if not r.ok:
            print(f"rejected: {r.patch}: {r.reason}", file=sys.stderr)
    return 0 if all(r.ok for r in results) else 1
