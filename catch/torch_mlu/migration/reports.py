# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Reports of a conversion run, in the shape Ascend's migration tool users know.

Files written into the report directory (CSV: RFC 4180, UTF-8, header row, 1-based line numbers; a file name that
is not printable, such as one with a newline or with bytes that are not UTF-8, is quoted like a Python string
literal: :func:`~torch_mlu.migration.plan.shown`):

- ``change_list.csv``: ``file,line,before,after`` for every rewritten expression or statement.
- ``unsupported_api.csv``: ``file,line,api,status,reason`` for table rows ``unsupported`` (left unchanged: they
  raise on mlu) and ``not_applicable`` (replaced by stand-ins that warn once).
- ``unknown_api.csv``: ``file,line,api`` for ``torch.cuda`` names the table does not classify (private names, or
  names from a newer torch); left unchanged.
- ``cuda_op_list.csv``: ``api,status,count,files``: every CUDA-specific API found, with how often and where.
- ``torch_gpu2mlu.log``: one line per input file with its outcome, then a summary.

``run_distributed_mlu.sh`` goes into the output tree when distributed code was found (under another name when the
input has its own file of that name: :func:`write_launcher`).
"""

from __future__ import annotations

import csv
import os
import shlex
import stat
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from torch_mlu.migration.plan import shown

if TYPE_CHECKING:  # tree imports libcst; the command checks its arguments (REPORT_NAMES) before it needs libcst
    from torch_mlu.migration.tree import TreeResult

LOG_NAME = "torch_gpu2mlu.log"
LAUNCHER_NAME = "run_distributed_mlu.sh"
#: Every file :func:`write_reports` writes, by key of its result.
REPORTS = {
    "change_list": "change_list.csv",
    "unsupported_api": "unsupported_api.csv",
    "unknown_api": "unknown_api.csv",
    "cuda_op_list": "cuda_op_list.csv",
    "log": LOG_NAME,
}
REPORT_NAMES = tuple(REPORTS.values())


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def write_reports(run: TreeResult, report_dir: Path) -> dict[str, Path]:
    """Write the four CSV files and the log into ``report_dir`` (created); returns their paths by name."""
    report_dir.mkdir(parents=True, exist_ok=True)
    changes: list[list[object]] = []
    unsupported: list[list[object]] = []
    unknown: list[list[object]] = []
    counts: Counter[tuple[str, str]] = Counter()
    where: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
    for outcome in run.files:
        result = outcome.result
        if result is None:
            continue
        name = shown(outcome.rel)
        for ch in result.changes:
            changes.append([name, ch.line, ch.before, ch.after])
        for use in result.uses:
            key = (use.api, use.kind)
            counts[key] += 1
            where[key].add(name)
            if use.kind in ("unsupported", "not_applicable"):
                unsupported.append([name, use.line, use.api, use.kind, use.reason])
            elif use.kind == "unknown":
                unknown.append([name, use.line, use.api])
    paths = {key: report_dir / name for key, name in REPORTS.items()}
    _write_csv(paths["change_list"], ["file", "line", "before", "after"], changes)
    _write_csv(paths["unsupported_api"], ["file", "line", "api", "status", "reason"], unsupported)
    _write_csv(paths["unknown_api"], ["file", "line", "api"], unknown)
    ops = [[api, kind, n, ";".join(sorted(where[(api, kind)]))] for (api, kind), n in sorted(counts.items())]
    _write_csv(paths["cuda_op_list"], ["api", "status", "count", "files"], ops)
    with paths["log"].open("w", encoding="utf-8") as log:
        for outcome in run.files:
            level = "WARNING" if outcome.status.startswith("skipped") else "INFO"
            loc = shown(outcome.rel) if outcome.line is None else f"{shown(outcome.rel)}:{outcome.line}"
            detail = f": {outcome.message}" if outcome.message else ""
            log.write(f"{level} {loc}: {outcome.status}{detail}\n")
        log.write("INFO summary: " + summary(run) + "\n")
    return paths


def summary(run: TreeResult) -> str:
    """``"3 converted, 1 unchanged, 2 copied, 1 skipped-malformed, 0 skipped-unreadable"``."""
    names = ("converted", "unchanged", "copied", "skipped-malformed", "skipped-unreadable")
    return ", ".join(f"{run.count(n)} {n}" for n in names)


def write_launcher(run: TreeResult, out_dir: Path) -> Path | None:
    """Write the distributed launcher into ``out_dir`` when a converted file uses torch.distributed; its default
    entry point is the first such file with an ``if __name__ == ...`` block. Returns its path, or None.

    The launcher never replaces a file that is not ours. It is ``run_distributed_mlu.sh`` unless the input has an
    entry of that name (a file, a symlink, a directory; also one the run skipped) or ``out_dir`` has one: then the
    first free name of ``run_distributed_mlu-2.sh``, ``run_distributed_mlu-3.sh``, ... A regular file that already
    holds exactly the launcher's text (ours, from an earlier run) is kept as it is. The file is created exclusively
    (``O_EXCL``): never through a symlink, never over a file that appeared meanwhile.

    Raises:
        OSError: ``out_dir`` cannot be written.
    """
    entries = [o.rel for o in run.files if o.result is not None and o.result.distributed]
    if not entries:
        return None
    mains = [o.rel for o in run.files if o.result is not None and o.result.distributed and o.result.has_main]
    entry = (mains or entries)[0]
    taken = {o.rel.split("/")[0] for o in run.files}  # the input's own names in out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    stem, number = LAUNCHER_NAME.removesuffix(".sh"), 0
    while True:
        number += 1
        path = out_dir / (LAUNCHER_NAME if number == 1 else f"{stem}-{number}.sh")
        data = _launcher_text(path.name, entries, entry).encode("utf-8")
        if _holds(path, data):
            return path
        if path.name in taken:
            continue
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        try:
            with open(fd, "wb") as f:
                f.write(data)
                os.fchmod(f.fileno(), os.fstat(f.fileno()).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return path


def _holds(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a regular file (not a symlink) holding exactly ``data``."""
    try:
        return stat.S_ISREG(path.lstat().st_mode) and path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def _launcher_text(name: str, entries: list[str], entry: str) -> str:
    """The launcher script named ``name``: runs ``entry`` (by default) on every visible mlu device.

    File names are the user's: in comments they are :func:`~torch_mlu.migration.plan.shown` (one line each), and the
    default entry is quoted for the shell (:func:`shlex.quote`), so that no name runs as code when the launcher runs.
    """
    others = "\n".join(f"#   {shown(e)}" for e in entries)
    return f"""#!/usr/bin/env bash
# Generated by torch_gpu2mlu: runs the converted distributed code on every visible mlu device with torchrun.
# Files with distributed code:
{others}
# Usage: ./{name} [script args...]
#   ENTRY=other.py ./{name}    choose the entry script (default: {shown(entry)})
#   NPROC=2 ./{name}           processes per node (default: torch.mlu.device_count())
#   NNODES, NODE_RANK, MASTER_ADDR, MASTER_PORT: multi-node rendezvous (defaults: one node, 127.0.0.1:29500)
set -euo pipefail
cd "$(dirname "$0")"
DEFAULT_ENTRY={shlex.quote(entry)}
ENTRY="${{ENTRY:-$DEFAULT_ENTRY}}"
NPROC="${{NPROC:-$(python -c 'import torch, torch_mlu; print(torch.mlu.device_count())')}}"
exec python -m torch.distributed.run \\
    --nnodes="${{NNODES:-1}}" --node_rank="${{NODE_RANK:-0}}" \\
    --master_addr="${{MASTER_ADDR:-127.0.0.1}}" --master_port="${{MASTER_PORT:-29500}}" \\
    --nproc_per_node="$NPROC" "$ENTRY" "$@"
"""
