# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``apply --target-dir``: the series onto a plain directory without git (an unpacked wheel).

Same engine and errors as the git mode (:mod:`catch_tools.patches.engine`). Path classes
(:mod:`catch_tools.patches.classify`) decide what a wheel overlay can take: ``python`` paths are patched,
``unshipped`` paths (tests, docs, CI) are skipped with a note, and a ``native`` path is an error naming the patch,
because a wheel holds the compiled result, not the source.

Atomic: everything is computed in memory first; then every new file is written next to its target, the originals are
renamed to backups, the new files renamed into place, and the backups removed. A failure while writing puts the
backups back. Crash-safe: a journal ``.catch-apply-journal.json`` in the target lists the files being replaced
(phase ``commit``) and is marked ``done`` once every new file is in place; a run killed in between leaves it, and the
next run rolls back (``commit``: originals restored) or forward (``done``: leftover backups removed) before anything
else.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.patches.classify import classify_path
from catch_tools.patches.engine import DirReader, FileState, simulate
from catch_tools.patches.model import MODE_EXEC, MODE_LINK, Patch, PathClass
from catch_tools.patches.parse import display_path
from catch_tools.patches.series import load_series

_TMP = ".catch-new"
_BAK = ".catch-orig"
JOURNAL = ".catch-apply-journal.json"


def _write_journal(target_dir: Path, phase: str, entries: list[dict[str, str | bool]]) -> None:
    tmp = target_dir / (JOURNAL + ".tmp")
    tmp.write_text(json.dumps({"phase": phase, "entries": entries}), encoding="utf-8")
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    tmp.replace(target_dir / JOURNAL)


def recover_dir(target_dir: Path) -> str | None:
    """Finish an interrupted :func:`commit_dir_changes` (see module doc). Returns a note, or None if none pending."""
    journal = target_dir / JOURNAL
    try:
        data = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:
        raise UserError("corrupt journal of an interrupted apply: restore the directory from its source",
                        path=display_path(journal)) from None
    for entry in data["entries"]:
        dest, tmp, bak = (target_dir / str(entry[k]) for k in ("dest", "tmp", "bak"))
        if tmp.exists() or tmp.is_symlink():
            tmp.unlink()
        if data["phase"] == "done":
            if bak.exists() or bak.is_symlink():
                bak.unlink()
        elif bak.exists() or bak.is_symlink():
            os.replace(bak, dest)
        elif entry["created"] and (dest.exists() or dest.is_symlink()):
            dest.unlink()
    journal.unlink()
    return ("finished" if data["phase"] == "done" else "rolled back") + f" an interrupted apply in {target_dir}"


def _skip_unshipped(path: str) -> PathClass | None:
    return "unshipped" if classify_path(path) == "unshipped" else None


def plan_dir_apply(patches: list[Patch], target_dir: Path) -> tuple[dict[str, FileState | None], list[str]]:
    """Compute the final state of every path the series changes in ``target_dir``, writing nothing.

    Returns ``(changes, notes)``. Raises :class:`UserError` for a native path (naming the patch and line) or the
    first patch that does not apply.
    """
    for patch in patches:
        for change in patch.files:
            native = [p for p in change.paths if classify_path(p) == "native"]
            if native:
                raise UserError(f"patch {patch.name} changes native source {native[0]}: a wheel/directory overlay "
                                "cannot apply it; a source build is needed (scripts/build_wheel.py --from-source)",
                                path=display_path(patch.path), line=change.patch_line)
    outcomes = simulate(patches, DirReader(target_dir), skip_class=_skip_unshipped)
    notes: list[str] = []
    changes: dict[str, FileState | None] = {}
    for out in outcomes:
        if not out.ok:
            prob = out.problems[0]
            raise UserError(f"patch {out.patch.name} does not apply to {display_path(target_dir)}: {prob.message}; "
                            "nothing was changed", path=display_path(out.patch.path), line=prob.line)
        if out.skipped:
            notes.append(f"{out.patch.name}: skipped unshipped path(s) {', '.join(out.skipped)}")
        changes.update(out.changes)
    return changes, notes


def _write_new(path: Path, state: FileState) -> Path:
    tmp = path.with_name(path.name + _TMP)
    mode, data = state
    tmp.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    if mode == MODE_LINK:
        os.symlink(data.decode("utf-8"), tmp)
    else:
        tmp.write_bytes(data)
        os.chmod(tmp, 0o755 if mode == MODE_EXEC else 0o644)
    return tmp


def commit_dir_changes(target_dir: Path, changes: dict[str, FileState | None]) -> list[Path]:
    """Write ``changes`` into ``target_dir`` all-or-nothing (see module doc). Returns the changed paths."""
    staged: list[tuple[Path, Path | None]] = []
    backups: list[tuple[Path, Path]] = []
    entries: list[dict[str, str | bool]] = [
        {"dest": rel, "tmp": rel + _TMP, "bak": rel + _BAK,
         "created": not ((target_dir / rel).exists() or (target_dir / rel).is_symlink())}
        for rel in sorted(changes)]
    try:
        _write_journal(target_dir, "commit", entries)
        for rel, state in sorted(changes.items()):
            dest = target_dir / rel
            staged.append((dest, None if state is None else _write_new(dest, state)))
        for dest, _ in staged:
            if dest.exists() or dest.is_symlink():
                bak = dest.with_name(dest.name + _BAK)
                os.replace(dest, bak)
                backups.append((dest, bak))
        pause = os.environ.get("CATCH_PATCHES_PAUSE_MIDWAY")
        if pause:  # test hook for crash-safety tests: originals moved away, new files not yet in place
            time.sleep(float(pause))
        for dest, tmp in staged:
            if tmp is not None:
                os.replace(tmp, dest)
        _write_journal(target_dir, "done", entries)
    except OSError as err:
        for _dest, tmp in staged:
            if tmp is not None and (tmp.exists() or tmp.is_symlink()):
                tmp.unlink()
        for dest, bak in backups:
            os.replace(bak, dest)
        (target_dir / JOURNAL).unlink(missing_ok=True)
        raise UserError(f"cannot write {err.filename}: {err.strerror}; nothing was changed",
                        path=display_path(target_dir)) from None
    for _, bak in backups:
        bak.unlink()
    (target_dir / JOURNAL).unlink()
    return [dest for dest, _ in staged]


def apply_series_to_dir(series_dir: Path, target_dir: Path, *, echo: Callable[[str], None] | None = None
                        ) -> list[Path]:
    """Apply the series in ``series_dir`` (a ``patches/`` directory) to the plain directory ``target_dir``.

    Returns the changed files (absolute paths under ``target_dir``), sorted. ``echo`` receives notes about skipped
    unshipped paths. The combined-wheel builder calls this on the unpacked upstream wheel.

    Raises:
        UserError: a bad series or patch, a native path, a patch that does not apply, or a write error; the
        directory is then unchanged.
    """
    if not target_dir.is_dir():
        raise UserError("target directory does not exist", path=display_path(target_dir))
    recovered = recover_dir(target_dir)
    patches = load_series(series_dir)
    changes, notes = plan_dir_apply(patches, target_dir)
    if recovered:
        notes.insert(0, recovered)
    for note in notes:
        if echo is not None:
            echo(f"note: {note}")
    return commit_dir_changes(target_dir, changes)
