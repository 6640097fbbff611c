# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The fast path of a rebase step: move a run of patches onto the new base in memory, through the patch engine.

For a run of consecutive patch commits (a contiguous piece of the previous step's chain):

1. ``git patch-id --stable`` of every commit (one ``git log -p`` and one ``git patch-id`` for the whole run) against the
   upstream commits between the old and the new base -> **upstreamed** with the upstream commit (patch-id, not a
   search of commit messages, which misses changes upstream merged under another message);
2. the commits as patches (one ``git format-patch``, the engine's export options) applied in memory onto the new base
   with the engine's :func:`~catch_tools.patches.engine.simulate` -- ``git apply``'s matching rules, no fuzz -- which
   says per hunk whether it matched at its line (**clean**) or moved (**offset**, with the line count);
3. the leading patches that apply are written as commits by one ``git fast-import``
   (:func:`~catch_tools.patches.commits.fast_import`: the engine's reproducible identity and dates).

The first patch that does not apply is left to :mod:`pick` (git apply / reverse check / 3-way cherry-pick with a work
tree); the caller then starts a new run after it. No work tree is touched here, which is what makes a step cost about
what ``git rebase`` costs.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from catch_tools.git import Repo
from catch_tools.patches.commits import fast_import
from catch_tools.patches.engine import PatchOutcome, simulate
from catch_tools.patches.export import FORMAT_PATCH_OPTIONS
from catch_tools.patches.gittree import GitTreeReader
from catch_tools.patches.model import Patch
from catch_tools.patches.parse import parse_patch


@dataclass
class Moved:
    """One patch handled by the fast path: status clean/offset/upstreamed, detail, upstream commit, new commit."""

    status: str
    detail: str = ""
    upstream_commit: str | None = None
    commit: str | None = None


@dataclass
class BatchResult:
    """``moved``: results for the leading patches of the run, in order; ``tip``: the new tip after them."""

    moved: list[Moved] = field(default_factory=list)
    tip: str = ""


def commit_patch_ids(repo: Repo, commits: list[str]) -> dict[str, str]:
    """Map commit -> ``git patch-id --stable`` for ``commits`` (two git processes for any number of commits)."""
    if not commits:
        return {}
    log = repo.run("log", "--no-walk=unsorted", "-p", "--full-index", "--no-renames", "--format=commit %H",
                   *commits).stdout
    ids = {}
    for line in repo.run("patch-id", "--stable", input=log).stdout.splitlines():
        pid, commit = line.split()
        ids[commit] = pid
    return ids


def commit_files(repo: Repo, commits: list[str], *, in_range: str | None = None,
                 pathspec: list[str] | None = None) -> dict[str, frozenset[str]]:
    """Map commit -> the set of paths it changes (renames as delete + add), in one git process.

    Either for ``commits``, or for the non-merge commits of ``in_range`` (``"old..new"``) that touch ``pathspec``
    (``--full-diff``: each commit's full set, not just the paths asked for).
    """
    fmt = ["--format=commit %H", "--name-only", "--no-renames"]
    if in_range is not None:
        args = ["log", "--no-merges", "--full-diff", *fmt, in_range, "--", *(pathspec or [])]
    elif commits:
        args = ["log", "--no-walk=unsorted", *fmt, *commits]
    else:
        return {}
    files: dict[str, set[str]] = {}
    current: set[str] = set()
    for line in repo.run(*args).stdout.splitlines():
        if line.startswith("commit "):
            current = files.setdefault(line.split()[1], set())
        elif line:
            current.add(line)
    return {commit: frozenset(paths) for commit, paths in files.items()}


def upstream_patch_ids(repo: Repo, old: str, new: str, ours: list[frozenset[str]]) -> dict[str, str]:
    """Map patch-id -> upstream commit for the commits in ``old..new`` that could equal one of our patches.

    Two commits can only have the same patch-id if they change the same set of files, so only upstream commits whose
    file set equals one of ``ours`` are diffed (a real PyTorch release has thousands of commits; the wheel-built
    repository one huge commit per release): one ``git log --name-only`` over the range limited to our paths, then
    ``git log -p | git patch-id --stable`` for the candidates only.
    """
    wanted = {files for files in ours if files}
    if not wanted:
        return {}
    paths = sorted(set().union(*wanted))
    found = commit_files(repo, [], in_range=f"{old}..{new}", pathspec=paths)
    candidates = [commit for commit, files in found.items() if files in wanted]
    if not candidates:
        return {}
    ids: dict[str, str] = {}
    for commit, pid in commit_patch_ids(repo, candidates).items():
        ids.setdefault(pid, commit)
    return ids


def move_run(repo: Repo, tip: str, commits: list[str], names: list[str], upstream_ids: dict[str, str]
             ) -> BatchResult:
    """Move the leading patches of the contiguous run ``commits`` (named ``names``) onto ``tip``; see module doc.

    Returns the results for as many patches as could be moved without git's per-patch machinery (possibly none: the
    first patch then needs :func:`pick.apply_patch`).
    """
    result = BatchResult(tip=tip)
    pids = commit_patch_ids(repo, commits)
    with tempfile.TemporaryDirectory(dir=repo.git_dir) as tmp:
        repo.run("format-patch", *FORMAT_PATCH_OPTIONS, "-o", tmp, f"{commits[0]}^..{commits[-1]}")
        files = sorted(Path(tmp).iterdir())
        if len(files) != len(commits):
            return result  # an empty commit or similar oddity: let the per-patch path decide
        patches = [parse_patch(path, name=name) for path, name in zip(files, names, strict=True)]
    todo: list[tuple[int, int]] = []  # (index in run, index in simulated list)
    simulated: list[Patch] = []
    for index, commit in enumerate(commits):
        if pids.get(commit) not in upstream_ids:
            todo.append((index, len(simulated)))
            simulated.append(patches[index])
    outcomes = simulate(simulated, GitTreeReader(repo, tip), report_fuzz=False) if simulated else []
    by_index = {index: outcomes[sim] for index, sim in todo}
    prefix: list[PatchOutcome] = []
    for index, commit in enumerate(commits):
        out = by_index.get(index)
        if out is None:
            up = upstream_ids[pids[commit]]
            result.moved.append(Moved("upstreamed", f"same patch-id as upstream commit {up[:12]}", up))
            continue
        if not out.ok:
            break
        prefix.append(out)
        offsets, numbers = [], dict[str, int]()
        for path, hunk in out.hunks:
            numbers[path] = numbers.get(path, 0) + 1
            if hunk.offset:
                offsets.append((path, numbers[path], hunk.offset))
        if offsets:
            detail = ", ".join(f"{path} hunk #{n} offset {off:+d}" for path, n, off in offsets)
            result.moved.append(Moved("offset", detail))
        else:
            result.moved.append(Moved("clean"))
    new_commits = iter(fast_import(repo, tip, prefix))
    for moved in result.moved:
        if moved.status != "upstreamed":
            moved.commit = next(new_commits)
            result.tip = moved.commit
    return result
