# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Shared fixtures for the tooling tests: small git trees made in temporary directories, patch series written with
plain ``git format-patch`` (independent of the code under test), snapshots of a tree for "nothing changed" checks,
and running a script through its command line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import git
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = REPO_ROOT / "scripts"
#: A pin whose commit is NOT in the small trees, so the engine must fall back to the tag (as with real trees).
PIN_TEMPLATE = """[upstream]
repository = "https://github.com/pytorch/pytorch.git"
tag = "{tag}"
commit = "{commit}"
wheel_version = "2.13.0+cpu"

[series]
version = 1
"""
FOREIGN_COMMIT = "cf30153c4c131c8164ee7798e5022d810682e2cb"


def git_cmd(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in ``cwd`` and return stripped stdout (raises on failure)."""
    full = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", **(env or {}))
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=full).stdout.strip()


def numbered(prefix: str, n: int) -> str:
    """``n`` distinct lines ``<prefix> <i>`` (a file body where every hunk context is unique)."""
    return "".join(f"{prefix} line {i}\n" for i in range(1, n + 1))


@dataclass
class SmallTree:
    """A git work tree at tag ``v2.13.0`` plus a ``patches/`` directory next to it."""

    root: Path
    repo: git.Repo
    base: str
    patches: Path

    def write(self, rel: str, content: str | bytes | None) -> None:
        path = self.root / rel
        if content is None:
            path.unlink()
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)

    def commit(self, subject: str, changes: dict[str, str | bytes | None], *, body: str = "",
               status: str | None = "Pending", test: str | None = "tests/tools/test_x.py::test_x",
               author: str = "Ada Lovelace <ada@example.org>", date: str = "2026-01-02T03:04:05+01:00") -> str:
        """Commit ``changes`` (path -> new content, None deletes) with a message carrying the trailers."""
        for rel, content in changes.items():
            self.write(rel, content)
        git_cmd(self.root, "add", "-A")
        trailers = "".join(f"{k}: {v}\n" for k, v in (("Upstream-Status", status), ("Catch-Test", test)) if v)
        message = subject + "\n\n" + (body + "\n\n" if body else "") + trailers
        name, mail = author[:-1].split(" <")
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": mail, "GIT_AUTHOR_DATE": date,
               "GIT_COMMITTER_NAME": "Someone", "GIT_COMMITTER_EMAIL": "s@example.org", "GIT_COMMITTER_DATE": date}
        git_cmd(self.root, "commit", "-q", "-m", message, env=env)
        return git_cmd(self.root, "rev-parse", "HEAD")

    def format_series(self, since: str | None = None) -> list[str]:
        """Write the commits ``since..HEAD`` (default: the base) as patches + series with plain git, then move the
        tree back to the base. Returns the patch names."""
        for old in self.patches.glob("*.patch"):
            old.unlink()
        out = git_cmd(self.root, "format-patch", "-k", "--zero-commit", "--no-signature", "--no-stat",
                      "--full-index", "-o", str(self.patches), f"{since or self.base}..HEAD")
        names = [Path(line).name for line in out.splitlines()]
        (self.patches / "series").write_text("# test series\n" + "".join(n + "\n" for n in names))
        git_cmd(self.root, "reset", "-q", "--hard", self.base)
        return names

    def snapshot(self) -> dict[str, object]:
        """HEAD, refs, status and every work-tree file's bytes (for "target unchanged" assertions)."""
        files = {str(p.relative_to(self.root)): p.read_bytes() for p in sorted(self.root.rglob("*"))
                 if p.is_file() and ".git" not in p.relative_to(self.root).parts}
        refs = git_cmd(self.root, "for-each-ref", "--format=%(refname) %(objectname)")
        return {"head": git_cmd(self.root, "rev-parse", "HEAD"), "refs": refs, "files": files,
                "status": git_cmd(self.root, "status", "--porcelain")}


BASE_FILES = {
    "torch/a.py": numbered("a", 60),
    "torch/b.py": numbered("b", 30),
    "torch/sub/c.py": numbered("c", 20),
    "aten/src/ATen/native/x.cpp": numbered("x", 10),
    "test/test_a.py": numbered("t", 10),
    "docs/index.md": "# docs\n",
}


@pytest.fixture
def small_tree(tmp_path: Path) -> SmallTree:
    """A fresh tree with :data:`BASE_FILES` at tag v2.13.0 (pin commit foreign -> tag fallback), empty series."""
    root = tmp_path / "tree"
    repo = git.Repo.init(root)
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Base")
        cfg.set_value("user", "email", "base@example.org")
    tree = SmallTree(root, repo, "", tmp_path / "patches")
    for rel, content in BASE_FILES.items():
        tree.write(rel, content)
    git_cmd(root, "add", "-A")
    git_cmd(root, "commit", "-q", "-m", "upstream v2.13.0")
    git_cmd(root, "tag", "v2.13.0")
    tree.base = git_cmd(root, "rev-parse", "HEAD")
    tree.patches.mkdir()
    (tree.patches / "series").write_text("")
    (tree.patches / "manifest.toml").write_text(PIN_TEMPLATE.format(tag="v2.13.0", commit=FOREIGN_COMMIT))
    return tree


@pytest.fixture
def run_script() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``scripts/<name>`` with the current interpreter: ``run_script("apply_patches.py", "lint", ...)``."""

    def run(name: str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
        full = dict(os.environ, **(env or {}))
        return subprocess.run([sys.executable, str(SCRIPTS / name), *args], cwd=cwd, capture_output=True,
                              text=True, env=full, check=False, timeout=300)

    return run


@pytest.fixture(scope="session")
def real_upstream() -> Path:
    """The cached git repository of the real pinned release's Python tree (``catch_tools.upstream``), read-only:
    tag ``v<version>`` holds ``torch/**/*.py`` of the ``torch==<version>`` wheel."""
    from catch_tools.pin import load_pin
    from catch_tools.upstream import upstream_repo

    return upstream_repo([load_pin().public_version])


@pytest.fixture
def real_clone(real_upstream: Path, tmp_path: Path) -> Path:
    """A private clone of :func:`real_upstream` (hard links: fast, safe to modify), checked out at the pin's tag."""
    from catch_tools.pin import load_pin

    clone = tmp_path / "pytorch"
    git_cmd(tmp_path, "clone", "-q", str(real_upstream), str(clone))
    git_cmd(clone, "checkout", "-q", "--detach", load_pin().tag)
    return clone
