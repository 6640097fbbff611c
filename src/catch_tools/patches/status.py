# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``status`` and ``reverse`` on a git work tree.

``status`` compares the commits on top of the base with what the series produces: a patch is ``applied`` when its
exact commit (same id as ``apply`` would make) is there, ``applied-modified`` when a commit with the same
``git patch-id --stable`` is there (same change, other message/identity/offsets), else ``not-applied``; a patch that
would not apply to the base is ``fails``. The tree has *drifted* when HEAD's tree differs from base+series, there are
commits no patch accounts for, or the work tree has uncommitted changes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.git import Repo
from catch_tools.patches.commits import fast_import
from catch_tools.patches.engine import simulate
from catch_tools.patches.gittree import REF_APPLIED, REF_BASE, GitTreeReader, open_tree, recorded_base
from catch_tools.patches.series import Series
from catch_tools.patches.transaction import Transaction, recover
from catch_tools.pin import Pin

RENAME_OPT = "-M50%"


def patch_ids(repo: Repo, text: bytes) -> list[tuple[str, str]]:
    """``git patch-id --stable`` of a diff stream: ``[(patch id, commit id)]``."""
    proc = repo.run("patch-id", "--stable", input=text, check=False)
    pairs: list[tuple[str, str]] = []
    for line in proc.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            pairs.append((fields[0], fields[1]))
    return pairs


def commit_patch_ids(repo: Repo, base: str, head: str) -> dict[str, str]:
    """Commit id -> patch-id for the commits ``base..head``."""
    log = repo.run("log", "-p", "--no-color", RENAME_OPT, "--format=commit %H", f"{base}..{head}").out
    return {commit: pid for pid, commit in patch_ids(repo, log)}


@dataclass
class StatusReport:
    """Per-patch state and drift of a work tree."""

    root: str
    base: str
    head: str
    patches: list[tuple[str, str]]  # (name, state)
    drift: list[str] = field(default_factory=list)
    in_progress: str | None = None

    def to_text(self) -> str:
        lines = [f"tree {self.root}: base {self.base[:12]}, HEAD {self.head[:12]}"]
        if self.in_progress:
            lines.append(f"in progress: {self.in_progress}")
        lines += [f"  {state:<17} {name}" for name, state in self.patches]
        applied = sum(1 for _, s in self.patches if s == "applied")
        lines.append(f"{applied}/{len(self.patches)} applied; " + ("drifted: " + "; ".join(self.drift)
                                                                    if self.drift else "no drift from base+series"))
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps({"root": self.root, "base": self.base, "head": self.head, "in_progress": self.in_progress,
                           "patches": [{"name": n, "state": s} for n, s in self.patches], "drift": self.drift},
                          indent=2)


def series_status(source: Path, patches_dir: Path, *, base: str | None = None, pin: Pin | None = None
                  ) -> StatusReport:
    """Which patches of ``patches_dir`` are applied in ``source`` and whether it drifted (see module doc).

    Raises:
        UserError: bad series/patch, ``source`` not a git tree, no base.
    """
    repo = open_tree(source)
    pending = Transaction.pending(repo)
    in_progress = None
    if pending is not None:
        state = pending.state
        in_progress = (f"patch {state.patch} stopped at a conflict (finish it with `git -C {source} am "
                       "--continue` then `scripts/apply_patches.py export`, or run `scripts/apply_patches.py reverse "
                       f"--source {source}`)" if state.operation == "stopped"
                       else f"interrupted {state.operation}: the work tree is half-updated; run "
                       f"`scripts/apply_patches.py apply --source {source}` to recover and finish it (or "
                       f"`scripts/apply_patches.py reverse --source {source}` to go back to the base)")
    patches = Series.read(patches_dir).patches
    base_sha = recorded_base(repo, pin, base)
    head = repo.head()
    assert head is not None
    outcomes = simulate(patches, GitTreeReader(repo, base_sha))
    ok_prefix = []
    for out in outcomes:
        if not out.ok:
            break
        ok_prefix.append(out)
    expected = fast_import(repo, base_sha, ok_prefix)
    on_base = repo.is_ancestor(base_sha, head)
    actual = (repo.run("rev-list", "--reverse", "--first-parent", f"{base_sha}..{head}").stdout.split()
              if on_base else [])
    actual_ids = commit_patch_ids(repo, base_sha, head) if on_base else {}
    file_ids = {}
    for patch in patches:
        pids = patch_ids(repo, patch.raw)
        file_ids[patch.name] = pids[0][0] if pids else None
    states: list[tuple[str, str]] = []
    used: set[str] = set()
    for i, (patch, out) in enumerate(zip(patches, outcomes, strict=True)):
        if i < len(expected) and expected[i] in actual:
            states.append((patch.name, "applied"))
            used.add(expected[i])
            continue
        match = next((c for c, pid in actual_ids.items() if pid == file_ids[patch.name] and c not in used), None)
        if match:
            used.add(match)
            states.append((patch.name, "applied-modified"))
        else:
            states.append((patch.name, "not-applied" if out.ok else "fails"))
    drift: list[str] = []
    if not on_base:
        drift.append(f"HEAD is not on the base {base_sha[:12]}")
    extra = [c for c in actual if c not in used]
    if extra:
        drift.append(f"{len(extra)} commit(s) not from the series (first {extra[0][:12]})")
    # HEAD's tree must equal base + the patches it carries: all of them, or a leading part (none after `reverse`).
    # Not checked when a patch is there in another form (applied-modified): its tree cannot be recomputed.
    carried = 0
    while carried < len(states) and states[carried][1] == "applied":
        carried += 1
    if on_base and all(s != "applied-modified" for _, s in states) and carried <= len(expected):
        want = expected[carried - 1] if carried else base_sha
        if repo.out("rev-parse", f"{want}^{{tree}}") != repo.out("rev-parse", f"{head}^{{tree}}"):
            drift.append("HEAD's tree differs from base+series" if carried == len(patches)
                         else f"HEAD's tree differs from base+the first {carried} patch(es) of the series")
    dirty = repo.dirty_paths()
    if dirty:
        drift.append(f"{len(dirty)} uncommitted change(s), e.g. {dirty[0]}")
    return StatusReport(str(repo.root), base_sha, head, states, drift, in_progress)


def reverse_series(source: Path, *, base: str | None = None, force: bool = False, pin: Pin | None = None) -> str:
    """Remove the series: HEAD, index and work tree back to the base; ``refs/patches/*`` deleted.

    The base is ``refs/patches/base`` when recorded, else the pinned base. Returns a one-line summary.

    Raises:
        UserError: uncommitted changes, or commits on HEAD other than the recorded applied series, unless ``force``.
    """
    repo = open_tree(source)
    note = recover(repo, force=True)
    base_sha = recorded_base(repo, pin, base)
    head = repo.head()
    assert head is not None
    dirty = repo.dirty_paths()
    if dirty and not force:
        raise UserError(f"work tree has uncommitted changes ({len(dirty)} file(s), e.g. {dirty[0]}): pass --force "
                        "to discard them", path=str(repo.root))
    if head not in (base_sha, repo.rev(REF_APPLIED)) and not force:
        raise UserError(f"HEAD {head[:12]} is not the applied series (it has other commits): save them with "
                        "`export` or pass --force", path=str(repo.root))
    prefix = f"{note}; " if note else ""
    if head == base_sha and not dirty:
        repo.set_refs({REF_APPLIED: None, REF_BASE: None})
        return prefix + f"already at the base {base_sha[:12]}; nothing to do"
    touched = repo.out("diff", "--name-only", "-z", base_sha, head).split("\0")
    with Transaction(repo, "reverse", [t for t in touched if t]) as tx:
        tx.move_head(base_sha, reset=bool(dirty))
        tx.finish({REF_APPLIED: None, REF_BASE: None})
    return prefix + f"reversed: HEAD is the base {base_sha[:12]}"
