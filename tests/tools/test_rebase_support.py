# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Small synthetic upstream repositories and Catch projects for the rebase tests (helpers + a sanity test).

An *upstream* is a git repo whose commits stand for releases (tag ``v2.13.0``, ``v2.14.0``...; the message states an
``upstream commit <40 hex>`` like the wheel-built repository of :mod:`catch_tools.upstream`). A *project* is a temp
directory with ``patches/series``, ``patches/manifest.toml`` (the real manifest re-pinned with ``update_pin``), the
patch files, and a git index holding a ``pytorch`` gitlink at the pin -- the layout of the real checkout.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from catch_tools.patches import export_series
from catch_tools.paths import repo_root
from catch_tools.pin import load_pin, manifest_path, update_pin

SCRIPT = repo_root() / "scripts" / "rebase.py"
AUTHOR = {"GIT_AUTHOR_NAME": "Ada Maintainer", "GIT_AUTHOR_EMAIL": "ada@catch.invalid",
          "GIT_AUTHOR_DATE": "1710000000 +0000", "GIT_COMMITTER_NAME": "Up Stream",
          "GIT_COMMITTER_EMAIL": "up@catch.invalid", "GIT_COMMITTER_DATE": "1710000000 +0000",
          "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str, input: str | None = None) -> str:
    """Run git in ``cwd`` with fixed identities; return stdout stripped (raises on failure)."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, input=input,
                          env={**os.environ, **AUTHOR}, check=False)
    if proc.returncode:
        raise AssertionError(f"git {args} failed: {proc.stderr}")
    return proc.stdout.strip()


def fake_sha(label: str) -> str:
    """A stable 40-hex id standing for a real upstream commit (absent from the synthetic repos)."""
    return hashlib.sha1(label.encode()).hexdigest()


def lines(prefix: str, count: int) -> str:
    """``count`` distinct lines ``<prefix> line <n>``, newline-terminated."""
    return "".join(f"{prefix} line {n}\n" for n in range(1, count + 1))


BASE_FILES = {
    "torch/a.py": lines("a", 40),
    "torch/b.py": lines("b", 40),
    "torch/c.py": lines("c", 40),
    "torch/d.py": lines("d", 40),
    "torch/utils/e.py": lines("e", 40),
}


def write_tree(repo: Path, files: dict[str, str | None]) -> None:
    """Write (or delete, for None) files under ``repo``."""
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def release(repo: Path, version: str, files: dict[str, str | None], renames: dict[str, str] | None = None) -> str:
    """Commit a release tagged ``v<version>`` with a message naming its (fake) upstream commit; return its sha."""
    for old, new in (renames or {}).items():
        (repo / new).parent.mkdir(parents=True, exist_ok=True)
        git(repo, "mv", old, new)
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m",
        f"PyTorch v{version}\n\nPython files of torch-{version}.whl; upstream commit {fake_sha(version)}.\n")
    git(repo, "tag", f"v{version}")
    return git(repo, "rev-parse", "HEAD")


def make_upstream(path: Path) -> Path:
    """An upstream repo with release v2.13.0 of :data:`BASE_FILES` on branch ``main``."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    release(path, "2.13.0", dict(BASE_FILES))
    return path


def edit(text: str, old: str, new: str) -> str:
    """Replace exactly one occurrence of ``old`` in ``text``."""
    assert text.count(old) == 1, old
    return text.replace(old, new)


Edit = dict[str, Callable[[str], str | None]]


def make_project(path: Path, upstream: Path, patches: list[tuple[str, str, Edit]],
                 tests: dict[str, str] | None = None) -> Path:
    """A project pinned at v2.13.0 of ``upstream`` carrying ``patches`` ((label, subject, {path: edit}) in order);
    ``tests`` maps a label to the node id of its ``Catch-Test:`` trailer.

    Each patch is made as a commit on top of the previous ones in a scratch clone and written to ``patches/`` with the
    patch engine's export (file names ``NNNN-<subject>.patch``), as a maintainer would. The project is a git repo
    whose index holds the ``pytorch`` gitlink at the pin.
    """
    (path / "patches").mkdir(parents=True)
    shutil.copy(manifest_path(repo_root()), manifest_path(path))
    shutil.copy(repo_root() / "constraints.txt", path / "constraints.txt")  # the rebase moves its torch== too
    update_pin(manifest_path(path), tag="v2.13.0", commit=fake_sha("2.13.0"), wheel_version="2.13.0+cpu")
    scratch = path.parent / f".scratch-{path.name}"
    git(path.parent, "clone", "-q", str(upstream), str(scratch))
    git(scratch, "checkout", "-q", "--detach", "v2.13.0")
    for label, subject, edits in patches:
        for rel, func in edits.items():
            target = scratch / rel
            new = func(target.read_text() if target.exists() else "")
            if new is None:
                git(scratch, "rm", "-q", rel)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(new)
        git(scratch, "add", "-A")
        body = f"{subject}\n\nWhy: {subject.lower()}.\n\nUpstream-Status: Pending\nRegression-Test: tests/x.py\n"
        if label in (tests or {}):
            body += f"Catch-Test: {(tests or {})[label]}\n"
        git(scratch, "commit", "-q", "-m", body)
    (path / "patches" / "series").write_text("# Catch patch series (test)\n")
    if patches:
        export_series(scratch, path / "patches", base="v2.13.0")
    shutil.rmtree(scratch)
    git(path, "init", "-q", "-b", "main")
    git(path, "update-index", "--add", "--cacheinfo", f"160000,{load_pin(manifest_path(path)).commit},pytorch")
    return path


def snapshot(project: Path, upstream: Path) -> dict[str, object]:
    """Everything ``--abort`` must restore: patches/ bytes and modes, constraints.txt, index entries, upstream refs,
    HEAD, status."""
    files = {p.relative_to(project).as_posix(): (p.read_bytes(), p.stat().st_mode)
             for p in sorted((project / "patches").rglob("*")) if p.is_file()}
    return {
        "patches": files,
        "constraints": (project / "constraints.txt").read_bytes(),
        "index": git(project, "ls-files", "--stage"),
        "refs": git(upstream, "for-each-ref", "--format=%(refname) %(objectname)"),
        "head": subprocess.run(["git", "symbolic-ref", "-q", "HEAD"], cwd=upstream, capture_output=True, text=True,
                               check=False).stdout + git(upstream, "rev-parse", "HEAD"),
        "status": git(upstream, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        "git_files": sorted(p.name for p in (upstream / ".git").iterdir() if p.name not in ("index", "logs")),
    }


def run_cli(project: Path, upstream: Path, *args: str, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """Run ``scripts/rebase.py --project P --source U <args>`` in a subprocess (so SIGKILL hooks can fire)."""
    return subprocess.run([sys.executable, str(SCRIPT), "--project", str(project), "--source", str(upstream), *args],
                          capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False, timeout=300)


def series_names(project: Path) -> list[str]:
    """The patch names listed in the project's ``patches/series``."""
    text = (project / "patches" / "series").read_text()
    return [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def test_support_builds_a_consistent_project(tmp_path: Path) -> None:
    up = make_upstream(tmp_path / "up")
    proj = make_project(tmp_path / "proj", up, [("x", "Change a", {"torch/a.py": lambda t: t + "x\n"})])
    assert series_names(proj) == ["0001-Change-a.patch"]
    assert load_pin(manifest_path(proj)).commit in git(proj, "ls-files", "--stage")
    git(up, "apply", "--check", str(proj / "patches" / "0001-Change-a.patch"))
