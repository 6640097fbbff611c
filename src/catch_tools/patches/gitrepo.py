# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Git access for the patch engine: the repository, its base, refs, and the in-progress state that makes ``apply``
crash-safe.

Refs written (under ``refs/patches/``, outside ``refs/heads`` so they never show up as branches):

* ``refs/patches/base``: the base commit the series was applied on;
* ``refs/patches/applied``: the head produced by the series;
* ``refs/patches/apply-in-progress``: the HEAD before a running ``apply``/``reverse`` (with a JSON state file
  ``<git-dir>/catch-patches/state.json``). A run killed with ``kill -9`` leaves both; the next run restores the
  recorded HEAD, index and work tree before doing anything else.

Every git command runs with the user's global/system configuration disabled (``GIT_CONFIG_GLOBAL=/dev/null``,
``GIT_CONFIG_NOSYSTEM=1``, git(1) ENVIRONMENT) so personal settings cannot change commit ids or exported bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.gitcli import BlobReader, git_out, locate, run_git
from catch_tools.gitcli import git_env as git_env  # re-exported: the patch engine's modules import it from here
from catch_tools.pin import Pin, load_pin

REF_BASE = "refs/patches/base"
REF_APPLIED = "refs/patches/applied"
REF_IN_PROGRESS = "refs/patches/apply-in-progress"
REF_IMPORT = "refs/patches/import-tmp"
#: Committer of every series commit, and the author when a patch names none (DEP-3/plain without Author).
COMMITTER_NAME = "Catch Patches"
COMMITTER_EMAIL = "patches@catch.invalid"
#: Author date when a patch states none: 2000-01-01T00:00:00Z (fixed, so commit ids are reproducible).
FIXED_DATE = (946684800, "+0000")


@dataclass
class Target:
    """A git work tree the series is applied to."""

    root: Path
    git_dir: Path
    blobs: BlobReader

    @property
    def state_dir(self) -> Path:
        return self.git_dir / "catch-patches"

    def rev(self, ref: str) -> str | None:
        """The commit ``ref`` names, or None."""
        return self.revs(ref)[0]

    def revs(self, *refs: str) -> list[str | None]:
        """The commit each of ``refs`` names (None where it names none), from one ``git cat-file --batch-check``.

        Each name is resolved as ``git rev-parse --verify "<name>^{commit}"`` resolves it (gitrevisions(7)); cat-file
        prints ``<name> missing`` or ``<name> ambiguous`` for a name that resolves to no single commit.
        """
        query = "".join(f"{ref}^{{commit}}\n" for ref in refs if "\n" not in ref)
        proc = run_git(self.root, "cat-file", "--batch-check", input=query.encode("utf-8", "surrogateescape"))
        answers = iter(proc.stdout.decode("utf-8", "replace").splitlines())
        shas: list[str | None] = []
        for ref in refs:
            parts = [] if "\n" in ref else next(answers, "").split(" ")  # <sha> commit <size>, or <name> missing
            shas.append(parts[0] if len(parts) == 3 and parts[1] == "commit" and parts[2].isdigit() else None)
        return shas

    def head(self) -> str | None:
        return self.rev("HEAD")

    def set_ref(self, ref: str, sha: str | None) -> None:
        """Point ``ref`` at ``sha``, or delete it when ``sha`` is None (a missing ref is no error)."""
        self.set_refs({ref: sha})

    def set_refs(self, refs: dict[str, str | None]) -> None:
        """Point each ref at its commit, or delete it where the value is None, in one ``git update-ref --stdin``
        transaction (all or none: git-update-ref(1), "--stdin")."""
        commands = "".join(f"update {ref} {sha}\n" if sha else f"delete {ref}\n" for ref, sha in refs.items())
        run_git(self.root, "update-ref", "--stdin", input=commands.encode())

    def dirty_paths(self) -> list[str]:
        """Tracked files whose index or work tree differ from HEAD (untracked files are not counted)."""
        out = run_git(self.root, "status", "--porcelain=v1", "-z", "--untracked-files=no",
                      "--ignore-submodules=all").stdout.decode("utf-8", "replace")
        return [entry[3:] for entry in out.split("\0") if entry]

    def operation_in_progress(self) -> str | None:
        """``"am"``/``"rebase"``/``"merge"``/``"cherry-pick"`` when git has such an operation in progress."""
        if (self.git_dir / "rebase-apply" / "applying").exists():
            return "am"
        if (self.git_dir / "rebase-apply").exists() or (self.git_dir / "rebase-merge").exists():
            return "rebase"
        for name, op in (("MERGE_HEAD", "merge"), ("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert")):
            if (self.git_dir / name).exists():
                return op
        return None


def open_target(source: Path) -> Target:
    """Open the git work tree at ``source``.

    Raises:
        UserError: ``source`` does not exist, is not the top of a git work tree, or has no commit.
    """
    if not source.is_dir():
        raise UserError("source tree does not exist (for the pytorch/ submodule run "
                        "`git submodule update --init pytorch`, or pass --source DIR)", path=str(source))
    bare, git_dir, top, why = locate(source)
    if bare or (top is not None and top != source.resolve()):
        raise UserError("not the top directory of a git work tree: pass --source <the work tree's top directory>",
                        path=str(source))
    if top is None or git_dir is None:
        detail = f" ({why})" if why else ""
        raise UserError(f"not a git work tree{detail} (use --target-dir for a plain directory)", path=str(source))
    target = Target(top, git_dir, BlobReader(top))
    if target.head() is None:
        raise UserError("the repository has no commit", path=str(source))
    return target


def resolve_base(target: Target, base: str | None = None, pin: Pin | None = None) -> str:
    """The commit the series applies on: ``base`` if given, else the pin's commit if the repository has it, else the
    pin's tag (trees built from release wheels carry the tag but their own commit ids).

    Raises:
        UserError: ``base`` names no commit, or neither the pin's commit nor its tag exist in the repository.
    """
    if base is not None:
        sha = target.rev(base)
        if sha is None:
            raise UserError(f"--base {base}: no such commit", path=str(target.root))
        return sha
    pin = pin or load_pin()
    for ref in (pin.commit, f"refs/tags/{pin.tag}"):
        sha = target.rev(ref)
        if sha is not None:
            return sha
    raise UserError(f"neither the pinned commit {pin.commit[:12]} nor tag {pin.tag} exists here "
                    f"(fetch it: git -C {target.root} fetch origin tag {pin.tag})", path=str(target.root))


@dataclass
class State:
    """What ``state.json`` records while an operation changes the tree."""

    operation: str  # "apply", "apply-am", "stopped", "reverse"
    orig_head: str
    orig_branch: str | None
    orig_refs: dict[str, str | None]
    pid: int
    touched: list[str] = field(default_factory=list)
    patch: str | None = None  # the patch stopped at (operation "stopped")
    patch_file: str | None = None


def read_state(target: Target) -> State | None:
    path = target.state_dir / "state.json"
    try:
        return State(**json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError):
        raise UserError(f"corrupt state file: remove it and run `git -C {target.root} reset --hard` "
                        "to a known commit", path=str(path)) from None


def write_state(target: Target, state: State) -> None:
    """Record ``state`` atomically, then the ``apply-in-progress`` ref."""
    target.state_dir.mkdir(exist_ok=True)
    tmp = target.state_dir / "state.json.tmp"
    tmp.write_text(json.dumps(asdict(state), indent=1), encoding="utf-8")
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    tmp.replace(target.state_dir / "state.json")
    target.set_ref(REF_IN_PROGRESS, state.orig_head)


def clear_state(target: Target, refs: dict[str, str | None] | None = None) -> None:
    """Drop the in-progress state; ``refs`` are set in the same ref transaction that deletes the
    ``apply-in-progress`` ref (:meth:`Target.set_refs`)."""
    target.set_refs({**(refs or {}), REF_IN_PROGRESS: None})
    with contextlib.suppress(FileNotFoundError):
        (target.state_dir / "state.json").unlink()


def snapshot(target: Target, operation: str, touched: list[str] | None = None) -> State:
    """The current HEAD, branch and ``refs/patches/*`` as a :class:`State`."""
    head, base, applied = target.revs("HEAD", REF_BASE, REF_APPLIED)
    assert head is not None
    branch = run_git(target.root, "symbolic-ref", "-q", "HEAD", check=False).stdout.decode().strip() or None
    return State(operation, head, branch, {REF_BASE: base, REF_APPLIED: applied}, os.getpid(), touched or [])


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def move_head(target: Target, new: str, *, reset: bool = False, head: str | None = None) -> None:
    """Check out commit ``new`` like a fast-forward: index and work tree follow (two-tree ``read-tree -m -u``, which
    refuses to overwrite untracked files before touching anything), then HEAD (or the branch HEAD names) moves.
    ``head``: the current HEAD when the caller has just read it (else it is read here)."""
    head = head or target.head()
    if reset:
        run_git(target.root, "read-tree", "--reset", "-u", new)
    else:
        run_git(target.root, "read-tree", "-m", "-u", head or new, new)
    pause = os.environ.get("CATCH_PATCHES_PAUSE_MIDWAY")
    if pause:
        # Test hook for crash-safety tests: the window between updating the work tree and moving HEAD.
        time.sleep(float(pause))
    run_git(target.root, "update-ref", "-m", "catch patches", "HEAD", new)


def restore(target: Target, state: State) -> None:
    """Put HEAD, branch, index, work tree and ``refs/patches/*`` back to ``state`` and drop the state."""
    for stale in ("rebase-apply", "rebase-merge"):
        shutil.rmtree(target.git_dir / stale, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        (target.git_dir / "index.lock").unlink()
    before = set(git_out(target.root, "ls-tree", "-r", "--name-only", "-z", state.orig_head).split("\0"))
    if state.orig_branch:
        run_git(target.root, "symbolic-ref", "HEAD", state.orig_branch)
        run_git(target.root, "update-ref", state.orig_branch, state.orig_head)
    else:
        run_git(target.root, "update-ref", "--no-deref", "HEAD", state.orig_head)
    run_git(target.root, "read-tree", "--reset", "-u", state.orig_head)
    for path in state.touched:
        # Files a killed run created that the restored tree does not have (read-tree only removes indexed files).
        p = target.root / path
        if path not in before and (p.is_file() or p.is_symlink()):
            p.unlink()
    clear_state(target, state.orig_refs)


def recover(target: Target, *, force: bool = False) -> str | None:
    """Finish what an interrupted run left behind. Returns a note for the user, or None if nothing was pending.

    * a run killed mid-way (state ``apply``/``apply-am``/``reverse``, its process gone): restore the recorded state;
    * a patch stopped at a conflict (``apply --stop-at-conflict``): refused unless ``force`` (then aborted);
    * a stale ``git am``/rebase not started by us: aborted (``git am --abort``/``git rebase --abort``).

    Raises:
        UserError: another run is still active (its pid is alive), or a stopped conflict without ``force``.
    """
    state = read_state(target)
    if state is not None:
        if state.operation == "stopped" and not force:
            raise UserError(f"patch {state.patch} is stopped at a conflict: resolve it and run "
                            f"`git -C {target.root} am --continue`, then export; or discard with --force "
                            "(or `reverse`)", path=state.patch_file)
        if state.operation != "stopped" and _pid_alive(state.pid):
            raise UserError(f"another apply (pid {state.pid}) is running on this tree", path=str(target.root))
        restore(target, state)
        what = "discarded the conflict of" if state.operation == "stopped" else "recovered from an interrupted"
        return f"{what} {state.operation}: restored HEAD {state.orig_head[:12]}"
    op = target.operation_in_progress()
    if op in ("am", "rebase"):
        run_git(target.root, op, "--abort", check=False)
        for stale in ("rebase-apply", "rebase-merge"):
            shutil.rmtree(target.git_dir / stale, ignore_errors=True)
        return f"aborted a stale git {op} in {target.root}"
    if op is not None:
        raise UserError(f"a git {op} is in progress: finish or abort it first", path=str(target.root))
    if target.rev(REF_IN_PROGRESS) is not None:
        target.set_ref(REF_IN_PROGRESS, None)
    return None

