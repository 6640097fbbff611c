# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The one layer between the tooling and the git command line: every ``git`` process of ``catch_tools`` runs here.

Every command runs with the user's global/system configuration disabled (``GIT_CONFIG_GLOBAL=/dev/null``,
``GIT_CONFIG_NOSYSTEM=1``, git(1) ENVIRONMENT) and ``LC_ALL=C``, so personal settings cannot change commit ids,
exported bytes or the messages parsed; ``GIT_DIR``/``GIT_WORK_TREE``/``GIT_INDEX_FILE`` of the caller are dropped so a
command acts on the repository at ``cwd``. A failure becomes a one-line :class:`~catch_tools.errors.UserError`
quoting git's last stderr line. :func:`locate` finds a work tree's top and git directory with one ``rev-parse``;
:class:`BlobReader` keeps one ``git cat-file --batch`` process for reading many blobs (the patch engine reads every
file a series touches). The tooling does not import GitPython: its import alone would slow every CLI's start-up.
"""

from __future__ import annotations

import logging
import os
import subprocess
import weakref
from pathlib import Path

from catch_tools.errors import UserError

log = logging.getLogger(__name__)


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for git subprocesses (see module doc)."""
    env = dict(os.environ)
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C",
                "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true", "GIT_MERGE_AUTOEDIT": "no"})
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(key, None)
    if extra:
        env.update(extra)
    return env


def run_git(cwd: Path, *args: str, input: bytes | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git <args>`` in ``cwd``; raise :class:`UserError` with git's last stderr line when it fails and
    ``check`` is true."""
    log.debug("git %s (in %s)", " ".join(args), cwd)
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, env=git_env(env), check=False)
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UserError(f"git {args[0]} failed: {msg[-1] if msg else f'exit {proc.returncode}'}", path=str(cwd))
    return proc


def git_out(cwd: Path, *args: str) -> str:
    """Stripped stdout of a successful git command."""
    return run_git(cwd, *args).stdout.decode("utf-8", "replace").strip()


def try_git(cwd: Path, *args: str, input: bytes | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``run_git(..., check=False)``: the caller reads ``returncode`` (a missing ref, a directory that is no
    repository)."""
    return run_git(cwd, *args, input=input, check=False, env=env)


def locate(path: Path) -> tuple[bool, Path | None, Path | None, str]:
    """Where ``path`` stands in git: ``(bare, git_dir, top_of_work_tree, why_not)`` from one
    ``git rev-parse --is-bare-repository --absolute-git-dir --show-toplevel``. ``git_dir``/``top`` are None when git
    cannot say (no repository, a bare one, inside ``.git``); ``why_not`` is then git's message without ``fatal:``, or
    "" when ``path`` is simply no repository."""
    proc = try_git(path, "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel")
    out = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    bare = out[:1] == ["true"]
    if proc.returncode == 0 and len(out) == 3:
        return bare, Path(out[1]).resolve(), Path(out[2]).resolve(), ""
    why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
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
