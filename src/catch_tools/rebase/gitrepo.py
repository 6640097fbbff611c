# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Thin, typed access to the upstream git repository the rebase works in, over :mod:`catch_tools.gitcli`.

Every git invocation goes through :class:`GitRepo.run`, which runs :func:`catch_tools.gitcli.try_git` (user and system
git configuration ignored, ``LC_ALL=C``) with the committer identity fixed (reproducible commit ids, as the patch
engine does for ``apply``), so that failures are reported uniformly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.gitcli import locate, try_git

#: Committer of every commit the rebase creates (the patch engine's identity); the committer date is the author date
#: (``git am --committer-date-is-author-date``), authors and messages are kept from the patch.
COMMITTER = {
    "GIT_COMMITTER_NAME": "Catch Patches",
    "GIT_COMMITTER_EMAIL": "patches@catch.invalid",
}


@dataclass(frozen=True)
class GitResult:
    """Outcome of one git command: exit status and decoded output streams."""

    status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.status == 0


class GitRepo:
    """A non-bare git work tree (the upstream PyTorch checkout or a clone of the wheel-built repository).

    Raises:
        UserError: when ``path`` is not the top of a git work tree (a bare repository, a subdirectory, no repository).
    """

    def __init__(self, path: Path) -> None:
        bare, git_dir, top, why = locate(path) if path.is_dir() else (False, None, None, "")
        if bare:
            raise UserError("a bare repository has no work tree to rebase in", path=path)
        if top is None or git_dir is None or top != path.resolve():
            detail = f" ({why})" if why else ""
            raise UserError(f"not a git checkout{detail} (use --source DIR for another upstream checkout)", path=path)
        self.path = top
        self.git_dir = git_dir

    def run(self, *args: str, stdin: str | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> GitResult:
        """Run ``git <args>`` in the work tree with the fixed committer; raise RuntimeError when ``check`` fails.

        The git CLI is called (one process per command, :func:`catch_tools.gitcli.try_git`) rather than GitPython's
        object layer: the rebase needs git's own exit statuses and messages (``git apply -v`` offsets, merge
        conflicts). Text crosses the pipe as UTF-8 with ``surrogateescape``, so any byte of a diff round-trips.
        """
        proc = try_git(self.path, *args, input=None if stdin is None else stdin.encode("utf-8", "surrogateescape"),
                       env={**COMMITTER, **env} if env else COMMITTER)
        result = GitResult(proc.returncode, proc.stdout.decode("utf-8", "surrogateescape"),
                           proc.stderr.decode("utf-8", "surrogateescape"))
        if check and not result.ok:
            raise RuntimeError(f"git {' '.join(args)} failed in {self.path}: {result.stderr.strip()}")
        return result

    def out(self, *args: str) -> str:
        """Standard output of a git command that must succeed, stripped."""
        return self.run(*args).stdout.strip()

    def resolve(self, ref: str) -> str | None:
        """The commit ``ref`` names (tag, branch, sha), or None when it names none."""
        res = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        return res.stdout.strip() if res.ok else None

    def ref_value(self, name: str) -> str | None:
        """Value of a full ref name such as ``refs/patches/base``, or None when absent."""
        res = self.run("rev-parse", "--verify", "--quiet", name, check=False)
        return res.stdout.strip() if res.ok else None

    def set_ref(self, name: str, value: str | None) -> None:
        """Point ``name`` at ``value``; delete it when ``value`` is None."""
        if value is None:
            self.run("update-ref", "-d", name, check=False)
        else:
            self.run("update-ref", name, value)

    def is_ancestor(self, older: str, newer: str) -> bool:
        """``git merge-base --is-ancestor older newer``."""
        return self.run("merge-base", "--is-ancestor", older, newer, check=False).ok

    def head(self) -> tuple[str | None, str | None]:
        """(symbolic ref of HEAD or None when detached, commit of HEAD or None in an empty repository)."""
        sym = self.run("symbolic-ref", "-q", "HEAD", check=False)
        return (sym.stdout.strip() or None) if sym.ok else None, self.resolve("HEAD")

    def dirty(self) -> list[str]:
        """``git status --porcelain`` lines (tracked changes and untracked files); empty when clean."""
        return [line for line in self.run("status", "--porcelain", "--untracked-files=all").stdout.splitlines() if line]

    def unmerged(self) -> list[str]:
        """Paths with unmerged index entries (a conflict in progress)."""
        return sorted(set(self.run("diff", "--name-only", "--diff-filter=U").stdout.split()))

    def reset_hard(self, commit: str, *, clean: bool = True) -> None:
        """Detach HEAD at ``commit`` and discard every change (merge state too; untracked files when ``clean``).

        ``git reset --hard`` writes only the files that differ between the index and ``commit``.
        """
        self.run("update-ref", "--no-deref", "HEAD", commit)  # detach without moving any branch
        self.run("reset", "-q", "--hard", "HEAD")
        if clean:
            self.run("clean", "-q", "-fd")
        for leftover in ("MERGE_MSG", "AUTO_MERGE", "CHERRY_PICK_HEAD", "MERGE_HEAD"):
            (self.git_dir / leftover).unlink(missing_ok=True)
