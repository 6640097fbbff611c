# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch_gpu2mlu``: convert CUDA PyTorch scripts into mlu scripts, with reports.

    torch_gpu2mlu -i INPUT [-o OUTPUT] [--report-dir DIR] [--force]
    torch_gpu2mlu -i INPUT --inplace [--report-dir DIR]

INPUT is a ``.py`` file or a directory. The converted tree goes to OUTPUT (default ``<INPUT>_mlu`` next to the
input; for a file, OUTPUT is the directory that receives it); the input is never modified unless ``--inplace``.
Reports (``change_list.csv``, ``unsupported_api.csv``, ``unknown_api.csv``, ``cuda_op_list.csv``,
``torch_gpu2mlu.log``) go to ``--report-dir`` (default ``<OUTPUT>_report``); ``run_distributed_mlu.sh`` goes into
OUTPUT when distributed code is found. The rewrite rules are in :mod:`torch_mlu.migration.transform`.

Exit status: 0 when every file was converted or copied; 1 when some files were skipped (malformed or unreadable:
each named on stderr and in the log, the rest still converted); 2 for a usage error (missing input, an OUTPUT that
exists and is not empty without ``--force``, an OUTPUT inside INPUT), printed as one line ``error: <path>: <msg>``.

Needs libcst, which the Catch wheel installs as an extra: pip install "torch[migration]" (or pip install libcst).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


class MigrationError(Exception):
    """A usage error of the converter, reported as one line ``error: <path>[:<line>]: <message>``, exit 2."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line

    def __str__(self) -> str:
        where = "" if self.path is None else (self.path if self.line is None else f"{self.path}:{self.line}") + ": "
        return where + self.message


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="torch_gpu2mlu", description=__doc__.replace("``", ""),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-i", "--input", required=True, type=Path, help="a .py file or a directory of CUDA PyTorch code")
    p.add_argument("-o", "--output", type=Path, help="output directory (default: <input>_mlu)")
    p.add_argument("--inplace", action="store_true", help="rewrite the input files themselves")
    p.add_argument("--report-dir", type=Path, help="where the reports go (default: <output>_report)")
    p.add_argument("--force", action="store_true", help="write into an existing, non-empty output directory")
    return p


def _resolve_paths(args: argparse.Namespace) -> tuple[Path, Path | None, Path]:
    src: Path = args.input
    if not src.exists() and not src.is_symlink():
        raise MigrationError("no such file or directory", src)
    if not src.is_dir() and src.suffix != ".py":
        raise MigrationError("input must be a .py file or a directory", src)
    if args.inplace:
        if args.output is not None:
            raise MigrationError("--inplace and --output exclude each other", args.output)
        base = src.parent / (src.stem if src.is_file() else src.name)
        return src, None, args.report_dir or base.with_name(base.name + "_mlu_report")
    out: Path = args.output or src.parent / ((src.stem if src.is_file() else src.name) + "_mlu")
    if src.is_dir() and out.resolve().is_relative_to(src.resolve()):
        raise MigrationError(f"output directory is inside the input tree {src}", out)
    if out.exists() and not out.is_dir():
        raise MigrationError("output exists and is not a directory", out)
    if out.is_dir() and any(out.iterdir()) and not args.force:
        raise MigrationError("output directory exists and is not empty (use --force to write into it)", out)
    return src, out, args.report_dir or out.with_name(out.name + "_report")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the converter; returns the exit status described in the module docstring. Raises MigrationError."""
    args = _parser().parse_args(argv)
    try:
        import libcst  # noqa: F401
    except ImportError:
        raise MigrationError("torch_gpu2mlu needs libcst: pip install 'torch[migration]' (or 'libcst>=1.0.1')") \
            from None
    from torch_mlu.migration.reports import summary, write_launcher, write_reports
    from torch_mlu.migration.tree import convert_tree

    src, out, report_dir = _resolve_paths(args)
    run = convert_tree(src, out)
    paths = write_reports(run, report_dir)
    launcher = write_launcher(run, out if out is not None else (src if src.is_dir() else src.parent))
    for outcome in run.files:
        if outcome.status.startswith("skipped"):
            loc = outcome.rel if outcome.line is None else f"{outcome.rel}:{outcome.line}"
            print(f"error: {loc}: {outcome.status}: {outcome.message}", file=sys.stderr)
    print(f"torch_gpu2mlu: {summary(run)}")
    print(f"output: {out if out is not None else src} (in place)" if out is None else f"output: {out}")
    print(f"reports: {paths['log'].parent}")
    if launcher is not None:
        print(f"distributed launcher: {launcher}")
    skipped = run.count("skipped-malformed") + run.count("skipped-unreadable")
    return 1 if skipped else 0


def entry(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point (``torch_gpu2mlu = "torch_mlu.migration.cli:entry"``): :func:`main` with usage
    errors printed as one line; returns the exit status."""
    try:
        return main(argv)
    except MigrationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
