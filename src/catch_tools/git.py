# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Git for the tooling: every ``git`` process of ``catch_tools`` runs here. Project-agnostic: which refs a tool
records and which identity commits it makes are the callers' business (the patch series': :mod:`catch_tools.patches.
gittree`).

* :func:`run_git` runs one command with the user's global/system configuration disabled (``GIT_CONFIG_GLOBAL=
  /dev/null``, ``GIT_CONFIG_NOSYSTEM=1``, git(1) ENVIRONMENT) and ``LC_ALL=C``, so personal settings cannot change
  commit ids, exported bytes or the messages parsed; ``GIT_DIR``/``GIT_WORK_TREE``/``GIT_INDEX_FILE`` of the caller
  are dropped so a command acts on the repository at ``cwd``. A failure becomes a one-line
  :class:`~catch_tools.errors.UserError` quoting git's last stderr line.
* :class:`Repo` is one work tree: refs, HEAD, status, a fixed committer for every command, and a
  :class:`BlobReader` (one ``git cat-file --batch`` process for reading many blobs).
* :func:`locate` finds a work tree's top and git directory with one ``rev-parse``.

The git CLI is called (one process per command) rather than GitPython: its import alone would slow every CLI's
start-up, and the tools need git's own exit statuses and messages (``git apply -v`` offsets, merge conflicts). The
shape follows Electron's ``script/lib/git.py``: one module that knows git, none that knows it twice.
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import tarfile
import weakref
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from catch_tools.errors import UserError

log = logging.getLogger(__name__)


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for git subprocesses (see module doc), with ``extra`` added."""
    env = dict(os.environ)
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C",
                "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true", "GIT_MERGE_AUTOEDIT": "no"})
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(key, None)
    if extra:
        env.update(extra)
    return env


@dataclass(frozen=True)
class GitResult:
    """Outcome of one git command: exit status and the raw output streams (``stdout``/``stderr`` decode them)."""

    status: int
    out: bytes
    err: bytes

    @property
    def ok(self) -> bool:
        return self.status == 0

    @property
    def stdout(self) -> str:
        """Standard output as text: UTF-8, any other byte kept as a surrogate (``surrogateescape``), so it
        round-trips through :meth:`Repo.run`'s ``input``."""
        return self.out.decode("utf-8", "surrogateescape")

    @property
    def stderr(self) -> str:
        return self.err.decode("utf-8", "surrogateescape")


def _verb(args: tuple[str, ...]) -> str:
    """The git command of ``args`` (``-c key=value am ...`` -> ``am``), for error messages."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-c":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return args[0] if args else ""


def run_git(cwd: Path, *args: str, input: bytes | str | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> GitResult:
    """Run ``git <args>`` in ``cwd`` (``input`` on stdin; text is sent as UTF-8 with ``surrogateescape``).

    Raises:
        UserError: the command fails and ``check`` is true; the one line quotes git's last stderr line.
    """
    log.debug("git %s (in %s)", " ".join(args), cwd)
    data = input.encode("utf-8", "surrogateescape") if isinstance(input, str) else input
    proc = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, env=git_env(env), check=False)
    result = GitResult(proc.returncode, proc.stdout, proc.stderr)
    if check and not result.ok:
        msg = result.err.decode("utf-8", "replace").strip().splitlines()
        raise UserError(f"git {_verb(args)} failed: {msg[-1] if msg else f'exit {result.status}'}", path=str(cwd))
    return result


def try_git(cwd: Path, *args: str, input: bytes | str | None = None, env: dict[str, str] | None = None) -> GitResult:
    """``run_git(..., check=False)``: the caller reads ``ok`` (a missing ref, a directory that is no repository)."""
    return run_git(cwd, *args, input=input, check=False, env=env)


def git_out(cwd: Path, *args: str) -> str:
    """Stripped standard output of a git command that must succeed."""
    return run_git(cwd, *args).stdout.strip()


def listed_files(root: Path) -> list[str] | None:
    """The files git sees under ``root``, relative to it: tracked and untracked-not-ignored (``git ls-files -z -co
    --exclude-standard``, a tracked file deleted from the work tree included), or None when ``root`` is in no git
    work tree (git missing, no repository, a bare one)."""
    try:
        proc = try_git(root, "ls-files", "-z", "-co", "--exclude-standard")
    except OSError:  # no git executable
        return None
    return [p for p in proc.stdout.split("\0") if p] if proc.ok else None


def locate(path: Path) -> tuple[bool, Path | None, Path | None, str]:
    """Where ``path`` stands in git: ``(bare, git_dir, top_of_work_tree, why_not)`` from one
    ``git rev-parse --is-bare-repository --absolute-git-dir --show-toplevel``. ``git_dir``/``top`` are None when git
    cannot say (no repository, a bare one, inside ``.git``); ``why_not`` is then git's message without ``fatal:``, or
    "" when ``path`` is simply no repository."""
    proc = try_git(path, "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel")
    out = proc.stdout.splitlines()
    bare = out[:1] == ["true"]
    if proc.ok and len(out) == 3:
        return bare, Path(out[1]).resolve(), Path(out[2]).resolve(), ""
    why = proc.err.decode("utf-8", "replace").strip().splitlines()
    reason = "" if not why or "not a git repository" in why[0] else why[0].removeprefix("fatal: ")
    return bare, Path(out[1]).resolve() if len(out) > 1 else None, None, reason


class BlobReader:
    """Blob contents by object id through one persistent ``git cat-file --batch`` in ``cwd`` (started on first use,
    stopped by :meth:`close` or when the reader is collected), as GitPython's ``odb.stream`` does without its import.

    Raises:
        KeyError: from :meth:`read`, for an object id the repository lacks.
    """

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None

    def read(self, sha: str) -> bytes:
        """The bytes of object ``sha`` (40 hex digits)."""
        if self._proc is None:
            self._proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.cwd, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, env=git_env())
            weakref.finalize(self, BlobReader._stop, self._proc)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(sha.encode("ascii") + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().split()  # <sha> <type> <size>, or <name> missing
        if len(header) != 3:
            raise KeyError(sha)
        data = self._proc.stdout.read(int(header[2]))
        self._proc.stdout.read(1)  # the LF after the contents
        return data

    def close(self) -> None:
        """Stop the ``cat-file`` process (a later :meth:`read` starts another)."""
        if self._proc is not None:
            BlobReader._stop(self._proc)
            self._proc = None

    @staticmethod
    def _stop(proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@dataclass(frozen=True)
class Identity:
    """A git identity (``user.name`` / ``user.email``)."""

    name: str
    email: str

    def committer_env(self) -> dict[str, str]:
        """The environment that makes git commit as this identity (git-commit-tree(1), "Commit information")."""
        return {"GIT_COMMITTER_NAME": self.name, "GIT_COMMITTER_EMAIL": self.email}


class NotAWorkTree(UserError):
    """``path`` is not the top of a git work tree. ``kind`` says how: ``missing`` (no such directory), ``bare`` (a
    bare repository), ``subdirectory`` (below the top of a work tree), ``none`` (no repository; ``why`` is git's
    reason when it gave one). Callers word the advice in their own options."""

    def __init__(self, kind: str, path: Path, why: str = "") -> None:
        super().__init__(f"not the top of a git work tree ({kind}{': ' + why if why else ''})", path=path)
        self.kind = kind
        self.why = why


#: Git's own markers of an operation in progress, and the operation each stands for.
_IN_PROGRESS = (("rebase-apply/applying", "am"), ("rebase-apply", "rebase"), ("rebase-merge", "rebase"),
                ("MERGE_HEAD", "merge"), ("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert"))


class Repo:
    """A non-bare git work tree: ``root`` (its top), ``git_dir``, and ``committer``, the identity of every commit its
    commands make (None: git's own rules)."""

    def __init__(self, root: Path, git_dir: Path, *, committer: Identity | None = None) -> None:
        self.root = root
        self.git_dir = git_dir
        self.committer = committer

    @classmethod
    def open(cls, path: Path, *, committer: Identity | None = None) -> Repo:
        """The work tree whose top directory is ``path``.

        Raises:
            NotAWorkTree: ``path`` does not exist, is a bare repository, a subdirectory of a work tree, or no
                repository.
        """
        if not path.is_dir():
            raise NotAWorkTree("missing", path)
        bare, git_dir, top, why = locate(path)
        if bare:
            raise NotAWorkTree("bare", path)
        if top is not None and top != path.resolve():
            raise NotAWorkTree("subdirectory", path)
        if top is None or git_dir is None:
            raise NotAWorkTree("none", path, why)
        return cls(top, git_dir, committer=committer)

    @cached_property
    def blobs(self) -> BlobReader:
        """The blob reader of this repository (one ``cat-file`` process, started on first read)."""
        return BlobReader(self.root)

    def run(self, *args: str, input: bytes | str | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> GitResult:
        """:func:`run_git` in the work tree, with :attr:`committer` (and ``env``) in the environment.

        Raises:
            UserError: the command fails and ``check`` is true.
        """
        full = {**(self.committer.committer_env() if self.committer else {}), **(env or {})}
        return run_git(self.root, *args, input=input, check=check, env=full)

    def out(self, *args: str) -> str:
        """Stripped standard output of a command that must succeed."""
        return self.run(*args).stdout.strip()

    def rev(self, ref: str) -> str | None:
        """The commit ``ref`` names (tag, branch, ref, commit id), or None."""
        return self.revs(ref)[0]

    def revs(self, *refs: str) -> list[str | None]:
        """The commit each of ``refs`` names (None where it names none), from one ``git cat-file --batch-check``.

        Each name is resolved as ``git rev-parse --verify "<name>^{commit}"`` resolves it (gitrevisions(7)); cat-file
        prints ``<name> missing`` or ``<name> ambiguous`` for a name that resolves to no single commit.
        """
        query = "".join(f"{ref}^{{commit}}\n" for ref in refs if "\n" not in ref)
        answers = iter(self.run("cat-file", "--batch-check", input=query).stdout.splitlines())
        shas: list[str | None] = []
        for ref in refs:
            parts = [] if "\n" in ref else next(answers, "").split(" ")  # <sha> commit <size>, or <name> missing
            shas.append(parts[0] if len(parts) == 3 and parts[1] == "commit" and parts[2].isdigit() else None)
        return shas

    def head(self) -> str | None:
        """The commit of HEAD, or None in a repository without commits."""
        return self.rev("HEAD")

    def head_ref(self) -> str | None:
        """The branch HEAD is on (``refs/heads/...``), or None when it is detached."""
        return self.run("symbolic-ref", "-q", "HEAD", check=False).stdout.strip() or None

    def set_ref(self, ref: str, sha: str | None) -> None:
        """Point ``ref`` at ``sha``, or delete it when ``sha`` is None (a missing ref is no error)."""
        self.set_refs({ref: sha})

    def set_refs(self, refs: dict[str, str | None]) -> None:
        """Point each ref at its commit, or delete it where the value is None, in one ``git update-ref --stdin``
        transaction (all or none: git-update-ref(1), "--stdin")."""
        commands = "".join(f"update {ref} {sha}\n" if sha else f"delete {ref}\n" for ref, sha in refs.items())
        self.run("update-ref", "--stdin", input=commands)

    def is_ancestor(self, older: str, newer: str) -> bool:
        """``git merge-base --is-ancestor older newer``."""
        return self.run("merge-base", "--is-ancestor", older, newer, check=False).ok

    def dirty_paths(self, *, untracked: bool = False, submodules: bool = False) -> list[str]:
        """Files whose index or work tree differ from HEAD; untracked files too when ``untracked``, submodules whose
        checkout differs from the recorded commit too when ``submodules``."""
        out = self.run("status", "--porcelain=v1", "-z", f"--untracked-files={'all' if untracked else 'no'}",
                       f"--ignore-submodules={'none' if submodules else 'all'}").out.decode("utf-8", "replace")
        entries = out.split("\0")
        paths, skip = [], False
        for entry in entries:
            if skip or not entry:  # the source name after a rename entry
                skip = False
                continue
            paths.append(entry[3:])
            skip = entry[0] in "RC"
        return paths

    def unmerged(self) -> list[str]:
        """Paths with unmerged index entries (a conflict in progress)."""
        return sorted(set(self.run("diff", "--name-only", "--diff-filter=U").stdout.split()))

    def operation_in_progress(self) -> str | None:
        """``"am"``/``"rebase"``/``"merge"``/``"cherry-pick"``/``"revert"`` when git has such an operation in
        progress."""
        return next((op for marker, op in _IN_PROGRESS if (self.git_dir / marker).exists()), None)

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

    def export(self, commit: str, dest: Path, path: str) -> bool:
        """Write ``path`` (a directory) of ``commit`` under ``dest`` (``git archive``; the work tree is not touched).
        Returns False when ``commit`` has no ``path``."""
        archive = self.run("archive", "--format=tar", commit, "--", path, check=False)
        if not archive.ok:
            return False
        with tarfile.open(fileobj=io.BytesIO(archive.out)) as tar:
            tar.extractall(dest, filter="data")
        return True
