# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``apply`` onto a git work tree: the series as one commit per patch on the pinned base.

Order of work (every check happens before anything is written):

1. recover from an interrupted earlier run (:func:`catch_tools.patches.transaction.recover`);
2. parse the whole series; resolve the base (``--base``, else the pin's commit, else the pin's tag);
3. refuse a dirty tree, or a HEAD that is neither the base nor the recorded ``refs/patches/applied``, unless ``force``;
4. apply the series in memory (:mod:`catch_tools.patches.engine`) and write the commits with ``git fast-import``
   (:mod:`catch_tools.patches.commits`) -- objects only;
5. if the result is already checked out: say so and stop (no-op);
6. in one :class:`~catch_tools.patches.transaction.Transaction`: move index/work tree and HEAD, set
   ``refs/patches/base`` and ``refs/patches/applied``. Any failure restores the tree as it was.

When a patch does not apply exactly and ``--3way`` or ``--stop-at-conflict`` is given (or the series holds binary
patches, which only git applies), the series is replayed with ``git am`` instead (same commit ids for the patches
that apply cleanly); a conflict either restores everything or, with ``--stop-at-conflict``, leaves git am stopped on
that patch and returns the steps to finish.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.git import Repo
from catch_tools.patches.commits import fast_import, render_mbox
from catch_tools.patches.engine import simulate
from catch_tools.patches.gittree import REF_APPLIED, REF_BASE, GitTreeReader, open_tree, resolve_base
from catch_tools.patches.model import Patch
from catch_tools.patches.parse import display_path
from catch_tools.patches.series import Series
from catch_tools.patches.transaction import Transaction, recover, state_dir
from catch_tools.pin import Pin
from catch_tools.progress import Reporter


@dataclass
class ApplyResult:
    """What :func:`apply_to_git` did. ``stopped`` is set (with ``next_steps``) when it left a conflict in progress."""

    base: str
    head: str
    commits: list[tuple[str, str]] = field(default_factory=list)
    noop: bool = False
    notes: list[str] = field(default_factory=list)
    three_way: list[str] = field(default_factory=list)
    stopped: str | None = None
    next_steps: list[str] = field(default_factory=list)


def _check_head(repo: Repo, base: str, force: bool) -> list[str]:
    head, applied, recorded_base = repo.revs("HEAD", REF_APPLIED, REF_BASE)
    assert head is not None
    dirty = repo.dirty_paths()
    if dirty and not force:
        raise UserError(f"work tree has uncommitted changes ({len(dirty)} file(s), e.g. {dirty[0]}): commit and "
                        "export them, discard them, or pass --force to discard", path=str(repo.root))
    known = head == base or (head == applied and recorded_base == base)
    if not known and not force:
        if repo.is_ancestor(base, head):
            count = repo.out("rev-list", "--count", f"{base}..{head}")
            raise UserError(f"HEAD has {count} commit(s) on top of the base that are not the applied series: "
                            "save them with `export`, or pass --force to discard them", path=str(repo.root))
        raise UserError(f"target is not at the pinned base: HEAD {head[:12]} is not {base[:12]} nor a series "
                        "applied on it (pass --force to reset it to the base)", path=str(repo.root))
    return dirty


def apply_to_git(source: Path, patches_dir: Path, *, base: str | None = None, force: bool = False,
                 three_way: bool = False, stop_at_conflict: bool = False, pin: Pin | None = None,
                 progress: Reporter | None = None) -> ApplyResult:
    """Apply the series in ``patches_dir`` to the git work tree ``source`` (see the module doc for the steps).

    Returns an :class:`ApplyResult`. Raises :class:`UserError` for every refusal or failure; the tree, HEAD and
    refs are then exactly as before (except after ``stop_at_conflict``, which returns ``stopped`` instead).
    ``progress``: the caller's display (a counted line while the series is applied in memory).
    """
    repo = open_tree(source)
    notes = [n for n in [recover(repo, force=force)] if n]
    series = Series.read(patches_dir)
    patches = series.patches
    base_sha = resolve_base(repo, pin, base)[0]
    dirty = _check_head(repo, base_sha, force)
    reader = GitTreeReader(repo, base_sha, series.touched_paths())
    with (progress or Reporter()).counted("applying in memory", len(patches)) as bar:
        outcomes = simulate(patches, reader, on_patch=lambda _: bar.advance())
    failed = [o for o in outcomes if not o.ok]
    binary = any(ch.binary for p in patches for ch in p.files)
    if failed and not (three_way or stop_at_conflict or binary):
        first = next(o for o in outcomes if not o.ok)
        prob = first.problems[0]
        raise UserError(f"patch {first.patch.name} does not apply: {prob.message}; nothing was changed "
                        "(try --3way, or `check` to list every failure)", path=display_path(first.patch.path),
                        line=prob.line)
    if failed or binary:
        return _apply_with_am(repo, base_sha, series, three_way=three_way, stop_at_conflict=stop_at_conflict,
                              notes=notes)
    commits = fast_import(repo, base_sha, outcomes)
    new_head = commits[-1] if commits else base_sha
    result = ApplyResult(base_sha, new_head, [(p.name, c) for p, c in zip(patches, commits, strict=True)],
                         notes=notes)
    tx = Transaction(repo, "apply", sorted({p for o in outcomes for p in o.changes}))
    head, applied = tx.state.orig_head, tx.state.orig_refs[REF_APPLIED]
    if head == new_head and not dirty and applied == new_head and tx.state.orig_refs[REF_BASE] == base_sha:
        result.noop = True
        return result
    with tx:
        tx.move_head(new_head, reset=bool(dirty) or head not in (base_sha, applied))
        tx.finish({REF_BASE: base_sha, REF_APPLIED: new_head})
    return result


_APPLYING = re.compile(r"^Applying: (.*)$")


def _am_groups(patches: list[Patch]) -> list[list[int]]:
    """Consecutive runs of patches with the same strip level (``git am -pN`` takes one level per run)."""
    groups: list[list[int]] = []
    for i, patch in enumerate(patches):
        if groups and patches[groups[-1][0]].strip == patch.strip:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _apply_with_am(repo: Repo, base: str, series: Series, *, three_way: bool, stop_at_conflict: bool,
                   notes: list[str]) -> ApplyResult:
    result = ApplyResult(base, base, notes=notes)
    patches = series.patches
    with Transaction(repo, "apply-am", series.touched_paths()) as tx:
        tx.move_head(base, reset=True)
        # Record the base now: a conflict left for the maintainer is exported against it.
        repo.set_refs({REF_BASE: base, REF_APPLIED: None})
        with tempfile.TemporaryDirectory(dir=state_dir(repo)) as tmp:
            hooks = Path(tmp) / "hooks"
            hooks.mkdir()
            for group in _am_groups(patches):
                mbox = Path(tmp) / "series.mbox"
                mbox.write_bytes(b"".join(render_mbox(patches[i]) for i in group))
                args = ["-c", f"core.hooksPath={hooks}", "am", "-k", "--committer-date-is-author-date",
                        f"-p{patches[group[0]].strip}", "--no-gpg-sign"]
                if three_way:
                    args.append("--3way")
                proc = repo.run(*args, str(mbox), check=False)
                result.three_way.extend(_three_way_subjects(proc.out.decode("utf-8", "replace")))
                if not proc.ok:
                    return _am_failed(tx, patches, group, proc.out + proc.err, result, stop_at_conflict, three_way)
        head = repo.head()
        assert head is not None
        result.head = head
        commits = repo.run("rev-list", "--reverse", f"{base}..{head}").stdout.split()
        result.commits = [(p.name, c) for p, c in zip(patches, commits, strict=False)]
        tx.finish({REF_BASE: base, REF_APPLIED: head})
    return result


def _three_way_subjects(output: str) -> list[str]:
    found, current = [], None
    for line in output.splitlines():
        m = _APPLYING.match(line)
        if m:
            current = m.group(1)
        elif line.startswith("Falling back to patching base and 3-way merge") and current:
            found.append(current)
    return found


def _am_failed(tx: Transaction, patches: list[Patch], group: list[int], output: bytes, result: ApplyResult,
               stop_at_conflict: bool, three_way: bool) -> ApplyResult:
    repo = tx.repo
    try:
        index = int((repo.git_dir / "rebase-apply" / "next").read_text().strip()) - 1
    except (OSError, ValueError):
        index = 0
    patch = patches[group[min(index, len(group) - 1)]]
    text = output.decode("utf-8", "replace")
    reason = next((ln for ln in text.splitlines() if ln.startswith(("error:", "CONFLICT"))), "does not apply")
    conflicted = repo.unmerged()
    if not stop_at_conflict:
        tx.restore()
        raise UserError(f"patch {patch.name} does not apply{' even with 3-way' if three_way else ''}: {reason}; "
                        "nothing was changed", path=display_path(patch.path), line=patch.files[0].patch_line)
    tx.stop(patch.name, display_path(patch.path))
    root = repo.root
    files = " ".join(conflicted) or " ".join(p for ch in patch.files for p in ch.paths)
    later = len(patches) - 1 - group[-1]
    result.stopped = patch.name
    result.next_steps = [
        f"patch {patch.name} stopped: {reason}",
        f"1. fix {files} in {root} (`git -C {root} am --show-current-patch=diff` shows the patch)",
        f"2. git -C {root} add {files} && git -C {root} am --continue",
        "3. scripts/apply_patches.py export --source " + str(root) + "  (writes the resolved patch back)",
        "4. scripts/apply_patches.py apply --source " + str(root) + " --force  (re-applies the refreshed "
        "series and records the refs)" + (f"; {later} later patch(es) are applied by this step" if later else ""),
        "or give up: scripts/apply_patches.py reverse --source " + str(root),
    ]
    return result


def apply_and_describe(source: Path, patches_dir: Path, echo: Callable[[str], None], *, base: str | None = None,
                       force: bool = False, three_way: bool = False, stop_at_conflict: bool = False,
                       pin: Pin | None = None, progress: Reporter | None = None) -> int:
    """Run :func:`apply_to_git` and print a summary with ``echo``; returns the exit code (1 when stopped at a
    conflict, else 0). Raises what :func:`apply_to_git` raises."""
    result = apply_to_git(source, patches_dir, base=base, force=force, three_way=three_way,
                          stop_at_conflict=stop_at_conflict, pin=pin, progress=progress)
    for note in result.notes:
        echo(f"note: {note}")
    if result.stopped:
        for line in result.next_steps:
            echo(line)
        return 1
    if result.noop:
        echo(f"already applied: {len(result.commits)} patch(es) on {result.base[:12]}, head {result.head[:12]}; "
             "nothing to do")
        return 0
    for name in result.three_way:
        echo(f"note: applied with 3-way merge: {name}")
    echo(f"applied {len(result.commits)} patch(es) on {result.base[:12]}: head {result.head[:12]} "
         f"({REF_APPLIED})")
    return 0
