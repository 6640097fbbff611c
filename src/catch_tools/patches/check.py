# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``check``: a dry run of the whole series that reports every patch that would fail, changing nothing.

For each patch and hunk: the file, the hunk header, the patch line, and where it matched (``ok``, ``offset`` N lines,
``fuzz`` N -- which git refuses -- or ``fail``). A failing patch is left out and the following ones are checked
against the tree without it, so one run lists every failure (later failures may be consequences of earlier ones).
Against a git tree the base is the pinned base (not HEAD); against ``--target-dir`` the directory's files are used,
with unshipped paths skipped and native paths reported as failures, as ``apply --target-dir`` would.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.patches.classify import classify_path
from catch_tools.patches.engine import DirReader, PatchOutcome, TreeReader, simulate
from catch_tools.patches.gittree import GitTreeReader, open_tree, resolve_base
from catch_tools.patches.model import Patch, PathClass
from catch_tools.patches.parse import display_path
from catch_tools.patches.series import Series
from catch_tools.pin import Pin
from catch_tools.progress import Reporter


@dataclass
class PatchCheck:
    """The verdict for one patch: ``problems`` are ``(file, line, message)``; ``hunks`` are dicts for JSON."""

    name: str
    file: str
    ok: bool
    problems: list[tuple[str, int | None, str]] = field(default_factory=list)
    hunks: list[dict[str, object]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass
class CheckReport:
    """Per-patch verdicts in series order and the tree checked against."""

    target: str
    base: str | None
    patches: list[PatchCheck]

    @property
    def failed(self) -> list[PatchCheck]:
        return [p for p in self.patches if not p.ok]

    def to_json(self) -> str:
        return json.dumps({
            "target": self.target, "base": self.base, "ok": not self.failed,
            "patches": [{"name": p.name, "file": p.file, "ok": p.ok, "skipped": p.skipped,
                         "problems": [{"file": f, "line": ln, "message": m} for f, ln, m in p.problems],
                         "hunks": p.hunks} for p in self.patches],
        }, indent=2)

    def to_text(self, verbose: bool = False) -> str:
        lines: list[str] = []
        for p in self.patches:
            moved = [h for h in p.hunks if h["status"] != "ok"]
            lines.append(f"{'ok  ' if p.ok else 'FAIL'} {p.name}" + (f" ({len(moved)} hunk(s) moved)" if moved
                                                                        and p.ok else ""))
            for f, ln, m in p.problems:
                lines.append(f"  {f}:{ln}: {m}" if ln else f"  {f}: {m}")
            for h in p.hunks if verbose else moved:
                if h["status"] == "offset":
                    lines.append(f"  {h['path']} {h['header']} (patch line {h['patch_line']}): applies at line "
                                 f"{h['line']}, offset {h['offset']:+d}")
            for s in p.skipped:
                lines.append(f"  skipped unshipped path {s}")
        lines.append(f"{len(self.patches) - len(self.failed)}/{len(self.patches)} patch(es) apply to {self.target}"
                     + (f" at {self.base[:12]}" if self.base else ""))
        return "\n".join(lines)


def _outcome_check(out: PatchOutcome) -> PatchCheck:
    file = display_path(out.patch.path)
    check = PatchCheck(out.patch.name, file, out.ok, skipped=out.skipped)
    check.problems = [(file, p.line, p.message) for p in out.problems]
    for path, r in out.hunks:
        check.hunks.append({"path": path, "header": r.hunk.header, "patch_line": r.hunk.patch_line,
                            "status": r.status, "line": r.line, "offset": r.offset, "fuzz": r.fuzz})
    return check


def check_series(series: Series | Path, *, source: Path | None = None, target_dir: Path | None = None,
                 base: str | None = None, pin: Pin | None = None, progress: Reporter | None = None) -> CheckReport:
    """Dry-run the series (a :class:`~catch_tools.patches.series.Series`, or its ``patches/`` directory) against the
    git tree ``source`` (at its pinned base) or the plain directory ``target_dir``. Exactly one of the two must be
    given. ``progress``: the caller's display (a counted line while checking).

    Returns a :class:`CheckReport` (it never raises for a patch that fails to parse or apply: those are reported).

    Raises:
        UserError: problems with the series file itself, the target, or the base.
    """
    if (source is None) == (target_dir is None):
        raise UserError("check needs exactly one of a git source tree or --target-dir")
    series = Series.of(series)
    reader: TreeReader
    if source is not None:
        repo = open_tree(source)
        base_sha: str | None = resolve_base(repo, pin, base)[0]
        assert base_sha is not None
        reader = GitTreeReader(repo, base_sha)
        where = str(source)
    else:
        assert target_dir is not None
        if not target_dir.is_dir():
            raise UserError("is a file, expected a directory (an unpacked wheel)" if target_dir.is_file() else
                            "target directory does not exist (unpack the wheel there: python -m zipfile -e WHL DIR)",
                            path=display_path(target_dir))
        reader, base_sha, where = DirReader(target_dir), None, str(target_dir)
    checks: dict[int, PatchCheck] = {}
    parsed: list[tuple[int, Patch]] = []
    for i, entry in enumerate(series.entries):
        path = series.directory / entry.name
        try:
            patch = series.parse(entry)
        except UserError as err:
            checks[i] = PatchCheck(entry.name, display_path(path), False, [(err.path or "", err.line, err.message)])
            continue
        if target_dir is not None:
            native = [(ch, p) for ch in patch.files for p in ch.paths if classify_path(p) == "native"]
            if native:
                ch, p = native[0]
                checks[i] = PatchCheck(entry.name, display_path(path), False, [(
                    display_path(path), ch.patch_line,
                    f"changes native source {p}: a directory overlay cannot apply it; a source build is needed")])
                continue
        parsed.append((i, patch))

    def skip(path: str) -> PathClass | None:
        return "unshipped" if target_dir is not None and classify_path(path) == "unshipped" else None

    with (progress or Reporter()).counted("checking", len(parsed)) as bar, contextlib.ExitStack() as stack:
        if isinstance(reader, DirReader):
            stack.callback(reader.close)
        outcomes = simulate([p for _, p in parsed], reader, report_fuzz=True, skip_class=skip,
                            on_patch=lambda _: bar.advance())
    for (i, _), out in zip(parsed, outcomes, strict=True):
        checks[i] = _outcome_check(out)
    return CheckReport(where, base_sha, [checks[i] for i in sorted(checks)])
