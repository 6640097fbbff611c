# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The upstream cause of a conflict: which upstream change between the old and the new base touched the lines a
conflicting hunk of a patch changes.

For each hunk of the patch in a conflicting file, its old line range (the lines it changes, in the old base; for a
pure insertion the two lines around it) is looked up, widened by the line on each side (git's merge conflicts on
adjacent changes too), in the upstream history ``OLD..NEW``:

- a **real history** (more than one commit between the bases, not all of them release commits built from wheels):
  the commits ``git log -L<start>,<end>:<file>
  OLD..NEW`` names (the range mapped to the new base's lines first, as ``-L`` reads it there), with their subjects
  and the pull request PyTorch's merge bot writes into the message (``Pull Request resolved: .../pull/N``, or
  ``(#N)`` at the end of the subject);
- a **wheel-built history** (one commit per release, :data:`catch_tools.upstream.WHEEL_BUILT_GREP`), or a single
  commit: the hunks of ``git diff OLD NEW -- <file>`` whose changed lines overlap the patch's hunk's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from unidiff import Hunk, PatchSet
from unidiff.errors import UnidiffParseError

from catch_tools.git import Repo
from catch_tools.upstream import WHEEL_BUILT_GREP

_PR_TRAILER = re.compile(r"^Pull Request resolved: https://github\.com/pytorch/pytorch/pull/(\d+)\s*$", re.MULTILINE)
_PR_SUBJECT = re.compile(r"\(#(\d+)\)\s*$")
#: Changed lines of an upstream hunk shown in the conflict stop (the report's JSON keeps the whole hunk).
SHOWN_HUNK_LINES = 8


@dataclass
class UpstreamCommit:
    """An upstream commit that touched the lines: its id, subject and pull request number (None when not found)."""

    commit: str
    subject: str
    pr: int | None = None


@dataclass
class Cause:
    """The upstream change behind one conflicting hunk: ``file`` lines ``start``-``end`` of the old base (the lines
    the patch's hunk changes), and the upstream ``commits`` (real history) or ``hunks`` (wheel-built history, each
    the hunk's text with its ``@@`` header) that touched them."""

    file: str
    start: int
    end: int
    commits: list[UpstreamCommit] = field(default_factory=list)
    hunks: list[str] = field(default_factory=list)


def pr_number(subject: str, body: str) -> int | None:
    """The pull request of an upstream commit, as PyTorch's merge bot writes it, or None."""
    found = _PR_TRAILER.search(body) or _PR_SUBJECT.search(subject)
    return int(found.group(1)) if found else None


def _hunks(diff: str, path: str) -> list[Hunk]:
    """The hunks of ``path`` in ``diff``."""
    try:
        files = PatchSet(diff)
    except UnidiffParseError:
        return []
    return [h for f in files if f.source_file in (f"a/{path}", path) or f.target_file in (f"b/{path}", path)
            for h in f]


def _changed(hunk: Hunk) -> tuple[int, int]:
    """The old lines a hunk changes: its removed lines, or for a pure insertion the context lines around it."""
    removed = [ln.source_line_no for ln in hunk if ln.is_removed and ln.source_line_no is not None]
    if removed:
        return min(removed), max(removed)
    lines = list(hunk)
    first = next((i for i, ln in enumerate(lines) if ln.is_added), 0)
    before = next((ln.source_line_no for ln in reversed(lines[:first]) if ln.is_context), None)
    after = next((ln.source_line_no for ln in lines[first:] if ln.is_context), None)
    start = before or after or max(hunk.source_start, 1)
    return start, after or start


def _to_new(line: int, upstream: list[Hunk], end: bool) -> int:
    """Line ``line`` of the old base as a line of the new base (a changed line maps to its hunk's new edge)."""
    offset = 0
    for h in upstream:
        if line < h.source_start:
            break
        if line < h.source_start + h.source_length:
            return max(h.target_start + h.target_length - 1, h.target_start) if end else h.target_start
        offset += h.target_length - h.source_length
    return line + offset


def find(repo: Repo, old: str, new: str, patch_commit: str, files: list[str]) -> list[Cause]:
    """The upstream causes of the hunks of ``patch_commit`` in ``files`` (the conflicting ones), ``old``..``new``."""
    real = (int(repo.out("rev-list", "--count", f"{old}..{new}") or "0") > 1
            and int(repo.out("rev-list", "--count", "--invert-grep", f"--grep={WHEEL_BUILT_GREP}",
                             f"{old}..{new}") or "0") > 0)
    causes = []
    for path in files:
        ours = repo.run("diff-tree", "-p", "--no-renames", patch_commit, "--", path, check=False).stdout
        theirs = _hunks(repo.run("diff", "--no-renames", old, new, "--", path, check=False).stdout, path)
        for hunk in _hunks(ours, path):
            start, end = _changed(hunk)
            low, high = max(start - 1, 1), end + 1
            cause = Cause(path, start, end)
            if real:
                new_low, new_high = _to_new(low, theirs, False), _to_new(high, theirs, True)
                cause.commits = _line_log(repo, old, new, path, new_low, new_high)
            else:
                cause.hunks = [str(h) for h in theirs if _changed(h)[0] <= high and low <= _changed(h)[1]]
            if cause.commits or cause.hunks:
                causes.append(cause)
    return causes


def _line_log(repo: Repo, old: str, new: str, path: str, start: int, end: int) -> list[UpstreamCommit]:
    """``git log -L<start>,<end>:<path> old..new``: the commits that touched those lines of the new base."""
    size = repo.run("cat-file", "-p", f"{new}:{path}", check=False)
    total = size.stdout.count("\n") if size.ok else 0
    if total == 0:
        return []
    start, end = min(start, total), min(max(end, start), total)
    log = repo.run("log", f"-L{start},{end}:{path}", "-s", "--format=%H%x00%s%x00%b%x1e", f"{old}..{new}",
                   check=False)
    found = []
    for entry in log.stdout.split("\x1e"):
        parts = entry.strip("\n").split("\x00")
        if len(parts) == 3:
            commit, subject, body = parts
            found.append(UpstreamCommit(commit, subject, pr_number(subject, body)))
    return found


def describe(causes: list[Cause], *, whole: bool = False) -> list[str]:
    """Plain lines naming each cause (``whole``: every line of an upstream hunk, else the changed lines, at most
    :data:`SHOWN_HUNK_LINES`), for the conflict stop and the report."""
    lines = []
    for cause in causes:
        where = f"{cause.file}:{cause.start}-{cause.end}"
        for c in cause.commits:
            pr = f" (PR #{c.pr})" if c.pr is not None else ""
            lines.append(f"{where}: upstream commit {c.commit[:12]} {c.subject}{pr}")
        for text in cause.hunks:
            header, *body = text.splitlines()
            lines.append(f"{where}: upstream hunk {header}")
            changed = body if whole else [b for b in body if b[:1] in "+-"]
            shown = changed if whole else changed[:SHOWN_HUNK_LINES]
            lines += [f"  {b}" for b in shown]
            if len(changed) > len(shown):
                lines.append(f"  ... {len(changed) - len(shown)} more changed line(s)")
    return lines
