# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Apply the hunks of one file change to file contents in memory, with git's matching rules.

Matching follows ``git apply`` (apply.c ``find_pos``/``match_fragment``), which ``git am`` uses:

* every context and removed line must match exactly (no fuzz);
* the search starts at the hunk's *new* start line (earlier hunks of the same file are already applied) and moves
  outwards, forwards first: guess, guess+1, guess-1, guess+2, ...; the distance found is the *offset*;
* a hunk whose old start is 0 or 1 must match at the beginning of the file, and a hunk without trailing context
  must match at the end;
* a hunk never matches over lines an earlier hunk of the same file wrote (its whole postimage, context included):
  git flags them ``LINE_PATCHED`` and skips such positions (no ``--allow-overlap``). Found by the differential test:
  a file whose docstring repeats made the nearer, already patched copy match.

For reporting only (``check``), a hunk that does not match exactly is retried the way GNU patch's ``--fuzz`` does
(ignoring up to 2 leading/trailing context lines) so the report can say "would apply with fuzz N at line L". git
never applies with fuzz, so such a hunk still counts as failing.
"""

from __future__ import annotations

from dataclasses import dataclass

from catch_tools.patches.model import Hunk

MAX_REPORT_FUZZ = 2


@dataclass(frozen=True)
class HunkResult:
    """Where a hunk matched: ``status`` is ``"ok"`` (at its line), ``"offset"``, ``"fuzz"`` (would only apply with
    fuzz: a failure for git) or ``"fail"``. ``line`` is the 1-based line of the match in the file as it was when
    the hunk was applied, ``offset`` in lines."""

    hunk: Hunk
    status: str
    line: int | None = None
    offset: int = 0
    fuzz: int = 0


def _leading_trailing(hunk: Hunk) -> tuple[int, int]:
    kinds = [ln.kind for ln in hunk.lines]
    lead = next((i for i, k in enumerate(kinds) if k != " "), len(kinds))
    trail = next((i for i, k in enumerate(reversed(kinds)) if k != " "), len(kinds))
    return lead, trail


def _matches(img: list[bytes], pos: int, old: list[bytes], patched: list[bool] | None = None) -> bool:
    if pos < 0 or pos + len(old) > len(img):
        return False
    if patched is not None and any(patched[pos:pos + len(old)]):
        return False
    return all(img[pos + i] == line for i, line in enumerate(old))


def _search(img: list[bytes], old: list[bytes], guess: int, begin: bool, end: bool,
            patched: list[bool] | None = None) -> int | None:
    if begin and end:
        return 0 if len(img) == len(old) and _matches(img, 0, old, patched) else None
    if begin:
        return 0 if _matches(img, 0, old, patched) else None
    if end:
        pos = len(img) - len(old)
        return pos if pos >= 0 and _matches(img, pos, old, patched) else None
    limit = len(img) - len(old)
    if limit < 0:
        return None
    guess = min(max(guess, 0), limit)
    if not old:
        return guess if _matches(img, guess, old, patched) else None
    first = old[0]
    for distance in range(0, max(guess, limit - guess) + 1):
        for pos in ((guess,) if distance == 0 else (guess + distance, guess - distance)):
            if 0 <= pos <= limit and img[pos] == first and _matches(img, pos, old, patched):
                return pos
    return None


def find_hunk(img: list[bytes], hunk: Hunk, *, allow_fuzz: bool = False,
              patched: list[bool] | None = None) -> HunkResult:
    """Locate ``hunk`` in ``img`` (the file's lines with their ``\\n``), never over a line flagged in ``patched``
    (written by an earlier hunk). Does not modify ``img``."""
    old = hunk.old_lines
    guess = hunk.new_start - 1 if hunk.new_start > 0 else 0
    lead, trail = _leading_trailing(hunk)
    begin = hunk.old_start <= 1
    end = trail == 0
    pos = _search(img, old, guess, begin, end, patched)
    if pos is not None:
        offset = pos - guess
        return HunkResult(hunk, "offset" if offset else "ok", pos + 1, offset)
    if allow_fuzz:
        for fuzz in range(1, MAX_REPORT_FUZZ + 1):
            cut_lead, cut_trail = min(fuzz, lead), min(fuzz, trail)
            if cut_lead == 0 and cut_trail == 0:
                continue
            sub = old[cut_lead: len(old) - cut_trail]
            pos = _search(img, sub, guess + cut_lead, False, False, patched)
            if pos is not None:
                return HunkResult(hunk, "fuzz", pos - cut_lead + 1, pos - cut_lead - guess, fuzz)
    return HunkResult(hunk, "fail")


def apply_hunks(content: bytes, hunks: list[Hunk], *, allow_fuzz_report: bool = False
                ) -> tuple[bytes | None, list[HunkResult]]:
    """Apply ``hunks`` in order to ``content``.

    Returns ``(new content, results)``; new content is None when any hunk failed (then ``results`` holds every
    hunk's outcome, later hunks being tried against the partially patched image so all failures are reported).
    """
    img = content.splitlines(keepends=True)
    patched = [False] * len(img)
    results: list[HunkResult] = []
    failed = False
    for hunk in hunks:
        res = find_hunk(img, hunk, allow_fuzz=allow_fuzz_report, patched=patched)
        results.append(res)
        if res.status in ("ok", "offset") and res.line is not None:
            start = res.line - 1
            img[start: start + len(hunk.old_lines)] = hunk.new_lines
            patched[start: start + len(hunk.old_lines)] = [True] * len(hunk.new_lines)
        else:
            failed = True
    if failed:
        return None, results
    return b"".join(img), results
