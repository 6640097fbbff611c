# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Move one patch commit onto a new base with git, and classify how it went.

Order of attempts for a patch commit ``C`` onto the current tip ``T`` (all git's own machinery, no merge code here):

1. its ``git patch-id --stable`` equals an upstream commit's between the old and the new base -> **upstreamed**
   (patch-id, not a search of commit messages);
2. ``git apply --index -v`` of ``C``'s diff: succeeds -> **clean**, or **offset** when git reports
   ``Hunk #n succeeded at N (offset M lines)`` (git apply never fuzzes unless asked with ``-C``);
3. ``git apply --check --reverse`` succeeds -> the change is already in the new base -> **upstreamed** (empty);
4. with 3-way on: ``git cherry-pick --no-commit C`` (merge-ort: follows renames) -> an empty result is
   **upstreamed**, a non-empty one **3way**; unmerged paths -> **conflict** (left in the work tree for the maintainer);
   with 3-way off: ``git apply --index --reject`` leaves ``*.rej`` files -> **conflict**.

Commits are made with ``git commit -C C``: author, author date and message are the patch's; the committer is fixed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from catch_tools.git import Repo

_OFFSET = re.compile(r"^Hunk #(\d+) succeeded at (\d+) \(offset (-?\d+) lines?\)\.$", re.MULTILINE)
_CHECKING = re.compile(r"^Checking patch (.+)\.\.\.$", re.MULTILINE)


@dataclass
class PickOutcome:
    """Result of moving one patch: ``status`` in clean/offset/3way/upstreamed/conflict and what it left behind."""

    status: str
    commit: str | None = None  # the new commit (clean, offset, 3way)
    detail: str = ""
    upstream_commit: str | None = None
    files: list[str] = field(default_factory=list)


def commit_diff(repo: Repo, commit: str) -> tuple[str, str]:
    """(author date in git's raw format, the full diff ``commit^..commit`` as ``git apply`` takes it).

    One ``git diff-tree`` call: full index lines (``git apply --3way`` needs their blob ids), binary included, renames
    off so the diff applies by path.
    """
    out = repo.run("diff-tree", "-p", "--full-index", "--binary", "--no-renames", "--pretty=format:%ad",
                   "--date=raw", commit).stdout
    date, _, diff = out.partition("\n")
    return date.strip(), diff.lstrip("\n")


def patch_id(repo: Repo, diff: str) -> str | None:
    """``git patch-id --stable`` of a diff (line numbers and whitespace ignored), None for an empty diff."""
    out = repo.run("patch-id", "--stable", input=diff).stdout.split()
    return out[0] if out else None


def touched_paths(diff: str) -> list[str]:
    """Paths (old and new) a ``git diff`` output touches, from its ``diff --git a/X b/Y`` lines."""
    paths: set[str] = set()
    for line in diff.splitlines():
        if line.startswith("diff --git a/"):
            a, _, b = line[len("diff --git a/"):].partition(" b/")
            paths.update((a, b))
    return sorted(paths)


def apply_patch(repo: Repo, commit: str, upstream_ids: dict[str, str], three_way: bool) -> PickOutcome:
    """Apply patch commit ``commit`` on HEAD (clean tree required) and classify it (see module docstring).

    On ``conflict`` the work tree and index hold the conflict (markers or ``*.rej``); otherwise HEAD is the new commit
    (or unchanged for ``upstreamed``) and the tree is clean.
    """
    date, diff = commit_diff(repo, commit)
    pid = patch_id(repo, diff)
    if pid is None:
        return PickOutcome("upstreamed", detail="the patch is empty")
    if pid in upstream_ids:
        up = upstream_ids[pid]
        return PickOutcome("upstreamed", upstream_commit=up, detail=f"same patch-id as upstream commit {up[:12]}")
    applied = repo.run("apply", "--index", "-v", "--whitespace=nowarn", input=diff, check=False)
    if applied.ok:
        offsets = [(path, hunk) for path, hunk in _hunk_offsets(applied.stderr) if hunk]
        new = _commit(repo, commit, date)
        if offsets:
            detail = ", ".join(f"{path} hunk #{num} offset {off:+d}" for path, (num, off) in offsets)
            return PickOutcome("offset", commit=new, detail=detail)
        return PickOutcome("clean", commit=new)
    if repo.run("apply", "--check", "--reverse", input=diff, check=False).ok:
        return PickOutcome("upstreamed", detail="change already present in the new base (reverse-applies cleanly)")
    if not three_way:
        repo.run("apply", "--index", "--reject", "--whitespace=nowarn", input=diff, check=False)
        files = _rejected(applied.stderr) or touched_paths(diff)
        return PickOutcome("conflict", files=files, detail="git apply rejected hunks (see *.rej files)")
    picked = repo.run("cherry-pick", "--no-commit", "--allow-empty", commit, check=False)
    conflicted = repo.unmerged()
    if picked.ok and not conflicted:
        if repo.run("diff", "--cached", "--quiet", "HEAD", check=False).ok:
            repo.reset_hard("HEAD")
            return PickOutcome("upstreamed", detail="empty after 3-way merge: upstream already has the change")
        return PickOutcome("3way", commit=_commit(repo, commit, date), detail="applied with 3-way merge")
    files = conflicted or _merge_failed_files(picked.stderr + picked.stdout) or touched_paths(diff)
    return PickOutcome("conflict", files=files, detail=_first_conflict_line(picked.stdout + picked.stderr))


def resolution_is_empty(repo: Repo) -> bool:
    """True when the maintainer's resolution (the work tree, staged with ``git add -A``) equals HEAD: the patch's
    whole change was removed."""
    repo.run("add", "-A")
    return repo.run("diff", "--cached", "--quiet", "HEAD", check=False).ok


def commit_resolution(repo: Repo, commit: str) -> str | None:
    """Stage the maintainer's resolution and commit it as patch ``commit``; None when it leaves no change."""
    repo.run("add", "-A")
    if repo.run("diff", "--cached", "--quiet", "HEAD", check=False).ok:
        repo.reset_hard("HEAD")
        return None
    return _commit(repo, commit, commit_diff(repo, commit)[0])


def _commit(repo: Repo, commit: str, date: str) -> str:
    """Commit the index as patch ``commit`` (author and message reused with ``-C``; committer date = author date)."""
    repo.run("commit", "-q", "--no-verify", "--allow-empty-message", "-C", commit, env={"GIT_COMMITTER_DATE": date})
    for leftover in ("MERGE_MSG", "AUTO_MERGE"):
        (repo.git_dir / leftover).unlink(missing_ok=True)
    return repo.out("rev-parse", "HEAD")


def _hunk_offsets(verbose: str) -> list[tuple[str, tuple[int, int] | None]]:
    """Per file in ``git apply -v`` output: (path, (hunk, offset)) for the largest offset, or (path, None)."""
    result: list[tuple[str, tuple[int, int] | None]] = []
    blocks = _CHECKING.split(verbose)
    for path, body in zip(blocks[1::2], blocks[2::2], strict=True):
        hunks = [(int(m.group(1)), int(m.group(3))) for m in _OFFSET.finditer(body)]
        result.append((path, max(hunks, key=lambda h: abs(h[1])) if hunks else None))
    return result


def _rejected(stderr: str) -> list[str]:
    """Files named by ``error: patch failed: <path>:<line>`` / ``error: <path>: does not exist in index``."""
    files = {m.group(1) for m in re.finditer(r"^error: patch failed: (.+):\d+$", stderr, re.MULTILINE)}
    files |= {m.group(1) for m in re.finditer(r"^error: (.+): does not exist in index$", stderr, re.MULTILINE)}
    return sorted(files)


def _merge_failed_files(text: str) -> list[str]:
    files = re.findall(r"CONFLICT \([^)]*\): .*? (?:in|for) (\S+)", text)
    return sorted(set(files))


def _first_conflict_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith(("CONFLICT", "error:")):
            return line.strip()
    return "3-way merge stopped with conflicts"
