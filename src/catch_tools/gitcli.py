# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The one layer between the tooling and the git command line: every ``git`` process of ``catch_tools`` runs here.

Every command runs with the user's global/system configuration disabled (``GIT_CONFIG_GLOBAL=/dev/null``,
``GIT_CONFIG_NOSYSTEM=1``, git(1) ENVIRONMENT) and ``LC_ALL=C``, so personal settings cannot change commit ids,
exported bytes or the messages parsed; ``GIT_DIR``/``GIT_WORK_TREE``/``GIT_INDEX_FILE`` of the caller are dropped so a
command acts on the repository at ``cwd``. A failure becomes a one-line :class:`~catch_tools.errors.UserError`
quoting git's last stderr line. GitPython (``git.Repo``) is used on top of it where a persistent ``cat-file`` helps.
"""

from __future__ import annotations

import logging
import os
import subprocess
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
