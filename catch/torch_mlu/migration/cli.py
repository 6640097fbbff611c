# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch_gpu2mlu``: convert CUDA PyTorch scripts into mlu scripts, with reports.

    torch_gpu2mlu -i INPUT [-o OUTPUT] [--report-dir DIR] [--force]
    torch_gpu2mlu -i INPUT --inplace [--report-dir DIR]

INPUT is a ``.py`` file or a directory. The converted tree goes to OUTPUT (default ``<INPUT>_mlu`` next to the
input; for a file, OUTPUT is the directory that receives it). Reports (``change_list.csv``, ``unsupported_api.csv``,
``unknown_api.csv``, ``cuda_op_list.csv``, ``torch_gpu2mlu.log``) go to ``--report-dir`` (default
``<OUTPUT>_report``); ``run_distributed_mlu.sh`` goes into OUTPUT (in place: into INPUT) when distributed code is
found. It never replaces a file that is not ours: when the input has its own ``run_distributed_mlu.sh``, that file
is kept (copied to OUTPUT as any other) and the launcher is written as ``run_distributed_mlu-2.sh`` (or the next free
number), which the run prints. The rewrite rules are in :mod:`torch_mlu.migration.transform`.

Nothing is written into INPUT unless ``--inplace``, whatever ``-o`` and ``--report-dir`` say: an output or report
directory that is INPUT or inside it, and any output or report file that would land on an input file or in the
input tree (symlinks resolved; also when INPUT lies inside OUTPUT), is refused before anything is written. Output and
reports are written into staging directories ``.torch_gpu2mlu-<random>`` and moved into place at the end: a run that
fails or is interrupted leaves no half-written output. FIFOs, sockets and devices are refused up front (reading one
would block), as INPUT or anywhere in it.

``--inplace`` rewrites files of INPUT only: a symlink in INPUT whose target lies outside it (symlinks resolved) is
never written through. When such a file would change, the run is refused before any file is rewritten; convert with
``-o`` instead, or replace the link with a copy.

Exit status: 0 when every file was converted or copied; 1 when some files were skipped (malformed or unreadable:
each named on stderr and in the log with its line when there is one, the rest still converted); 2 for a usage error
(missing input, an input that is a FIFO, socket or device or holds one, an OUTPUT that exists and is not empty
without ``--force``, an OUTPUT or report directory that is a file, a write into INPUT as above, an ``--inplace``
write through a symlink out of INPUT) or a failed write, printed as one line ``error: <path>: <msg>``. A file name
that is not printable (a newline, bytes that are not UTF-8) is quoted like a Python string literal there, in the log
and in the reports, so that every message stays one line.

Needs libcst, which the Catch wheel installs as an extra: pip install "torch[migration]" (or pip install libcst).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from torch_mlu.migration.plan import (
    MigrationError,
    Staging,
    check_directory,
    check_targets,
    file_kind,
    input_files,
    shown,
)
from torch_mlu.migration.reports import LAUNCHER_NAME, REPORT_NAMES

__all__ = ["MigrationError", "entry", "main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="torch_gpu2mlu", description=__doc__.replace("``", ""),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-i", "--input", required=True, type=Path, help="a .py file or a directory of CUDA PyTorch code")
    p.add_argument("-o", "--output", type=Path, help="output directory (default: <input>_mlu)")
    p.add_argument("--inplace", action="store_true", help="rewrite the input files themselves")
    p.add_argument("--report-dir", type=Path, help="where the reports go (default: <output>_report)")
    p.add_argument("--force", action="store_true", help="write into an existing, non-empty output directory")
    return p


def _named(path: Path) -> Path:
    """``path``, made absolute when it has no name of its own (``.``, ``..``), to derive default names from."""
    return path if path.name not in ("", "..") else Path(os.path.abspath(path))


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or lies under it, both with symlinks resolved."""
    real, top = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    return real == top or real.is_relative_to(top)


def _resolve_paths(args: argparse.Namespace) -> tuple[Path, Path | None, Path]:
    """Input, output (None: in place) and report directory, checked before anything is read or written.

    Raises:
        MigrationError: a missing input, an input or a file in it that is not a regular file or a directory, an
            output or report directory that is not a directory, an output that exists and is not empty without
            ``--force``, and (without ``--inplace``) any output or report file that would land in the input.
    """
    src: Path = args.input
    if not os.path.lexists(src):
        raise MigrationError("no such file or directory", src)
    kind = file_kind(src.stat().st_mode) if src.exists() else "a broken symlink"
    if kind not in ("a directory", "a regular file", "a broken symlink"):
        raise MigrationError(f"input is {kind}, not a .py file or a directory", src)
    if kind != "a directory" and src.suffix != ".py":
        raise MigrationError("input must be a .py file or a directory", src)
    files = input_files(src)
    base = _named(src)
    base = base.parent / (base.stem if kind != "a directory" else base.name)
    if args.inplace:
        if args.output is not None:
            raise MigrationError("--inplace and --output exclude each other", args.output)
        report_dir = args.report_dir or base.with_name(base.name + "_mlu_report")
        check_directory(report_dir, "report directory")
        return src, None, report_dir
    out: Path = args.output or base.with_name(base.name + "_mlu")
    check_directory(out, "output directory")
    if src.is_dir() and _inside(out, src):
        raise MigrationError(f"output directory is inside the input tree {shown(src)}", out)
    check_targets(src, [out / rel for _, rel in files] + [out / LAUNCHER_NAME], "the output",
                  " (to convert in place, use --inplace)")
    if out.is_dir() and any(out.iterdir()) and not args.force:
        raise MigrationError("output directory exists and is not empty (use --force to write into it)", out)
    report_dir = args.report_dir or _named(out).with_name(_named(out).name + "_report")
    check_directory(report_dir, "report directory")
    if src.is_dir() and _inside(report_dir, src):
        raise MigrationError(f"report directory is inside the input tree {shown(src)}", report_dir)
    check_targets(src, [report_dir / name for name in REPORT_NAMES], "a report")
    return src, out, report_dir


def main(argv: Sequence[str] | None = None) -> int:
    """Run the converter; returns the exit status described in the module docstring.

    Every argument is checked before anything is written; the output and the reports are written into staging
    directories (:class:`~torch_mlu.migration.plan.Staging`) moved into place at the end, so a failed run leaves
    nothing behind. Raises MigrationError (a usage error, or a write that failed: one line).
    """
    args = _parser().parse_args(argv)
    src, out, report_dir = _resolve_paths(args)
    try:
        import libcst  # noqa: F401
    except ImportError:
        raise MigrationError("torch_gpu2mlu needs libcst: pip install 'torch[migration]' (or 'libcst>=1.0.1')") \
            from None
    from torch_mlu.migration.reports import summary, write_launcher, write_reports
    from torch_mlu.migration.tree import convert_tree

    stages: list[Staging] = []
    try:
        try:
            if out is not None:
                stages.append(Staging(out))  # first: where nothing can be written, the error names -o's path
            reports = Staging(report_dir)
            stages.append(reports)
            skip = [stage.path for stage in stages]
            if out is None:
                run = convert_tree(src, None, skip=skip)
                write_reports(run, reports.path)
                launcher = write_launcher(run, src if src.is_dir() else src.parent)
            else:
                output = stages[0]
                run = convert_tree(src, output.path, skip=skip)
                write_reports(run, reports.path)
                launcher = write_launcher(run, output.path)
                output.check()
                reports.check()
                output.commit()
                launcher = None if launcher is None else out / launcher.name
            reports.commit()
        except BaseException:
            for stage in stages:
                stage.discard()
            raise
    except OSError as err:
        where = err.filename
        for stage in stages:
            where = stage.as_target(where)  # a staged file is named where it was going: the path the user gave
        raise MigrationError(f"cannot write: {err.strerror or err}", where) from None
    for outcome in run.files:
        if outcome.status.startswith("skipped"):
            loc = shown(outcome.rel) if outcome.line is None else f"{shown(outcome.rel)}:{outcome.line}"
            print(f"error: {loc}: {outcome.status}: {outcome.message}", file=sys.stderr)
    print(f"torch_gpu2mlu: {summary(run)}")
    print(f"output: {shown(src)} (in place)" if out is None else f"output: {shown(out)}")
    print(f"reports: {shown(report_dir)}")
    if launcher is not None:
        theirs = launcher.with_name(LAUNCHER_NAME)
        kept = "" if launcher == theirs else f" ({shown(theirs)} is not ours: kept)"
        print(f"distributed launcher: {shown(launcher)}{kept}")
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
