# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The git work tree a series is applied to: the refs the series records there, the identity of its commits, its
base, and reading a commit's files for the in-memory engine. Git itself is :mod:`catch_tools.git`.

Refs written (under ``refs/patches/``, outside ``refs/heads`` so they never show up as branches):

* ``refs/patches/base``: the base commit the series was applied on;
* ``refs/patches/applied``: the head produced by the series;
* ``refs/patches/apply-in-progress``: the HEAD before a running ``apply``/``reverse``
  (:mod:`catch_tools.patches.transaction`);
* ``refs/patches/import-tmp``: the branch ``git fast-import`` writes to, deleted right after.

Every commit of the series -- made by ``apply`` (:mod:`catch_tools.patches.commits`) or by the rebase -- has the
committer :data:`COMMITTER` and the author date as committer date, so the same series on the same base gives the same
commit ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.git import Identity, NotAWorkTree, Repo
from catch_tools.patches.engine import FileState
from catch_tools.pin import Pin, load_pin

REF_BASE = "refs/patches/base"
REF_APPLIED = "refs/patches/applied"
REF_IN_PROGRESS = "refs/patches/apply-in-progress"
REF_IMPORT = "refs/patches/import-tmp"
#: Committer of every series commit, and the author when a patch names none (DEP-3/plain without Author).
COMMITTER = Identity("Catch Patches", "patches@catch.invalid")
#: Author date when a patch states none: 2000-01-01T00:00:00Z (fixed, so commit ids are reproducible).
FIXED_DATE = (946684800, "+0000")

#: What to do when ``--source`` is no work tree, by :attr:`catch_tools.git.NotAWorkTree.kind`.
_SOURCE_ADVICE = {
    "missing": "source tree does not exist (for the pytorch/ submodule run `git submodule update --init pytorch`, "
               "or pass --source DIR)",
    "bare": "not the top directory of a git work tree: pass --source <the work tree's top directory>",
    "subdirectory": "not the top directory of a git work tree: pass --source <the work tree's top directory>",
    "none": "not a git work tree{why} (use --target-dir for a plain directory)",
}


def open_tree(source: Path) -> Repo:
    """The git work tree at ``source``, committing as :data:`COMMITTER`.

    Raises:
        UserError: ``source`` does not exist, is not the top of a git work tree, or has no commit.
    """
    try:
        repo = Repo.open(source, committer=COMMITTER)
    except NotAWorkTree as err:
        why = f" ({err.why})" if err.why else ""
        raise UserError(_SOURCE_ADVICE[err.kind].format(why=why), path=str(source)) from None
    if repo.head() is None:
        raise UserError("the repository has no commit", path=str(source))
    return repo


def resolve_base(repo: Repo, pin: Pin | None = None, base: str | None = None, *,
                 hint: str | None = None) -> tuple[str, str]:
    """The commit the series applies on, and how it was named: ``base`` if given, else the pin's commit if the
    repository has it (a full PyTorch clone), else the pin's tag (trees built from release wheels carry the tag but
    their own commit ids).

    ``hint``: what to do when neither exists (default: fetch the tag).

    Raises:
        UserError: ``base`` names no commit, or neither the pin's commit nor its tag exist in the repository.
    """
    if base is not None:
        sha = repo.rev(base)
        if sha is None:
            raise UserError(f"--base {base}: no such commit", path=str(repo.root))
        return sha, base
    pin = pin or load_pin()
    for name, ref in ((pin.commit, pin.commit), (pin.tag, f"refs/tags/{pin.tag}")):
        sha = repo.rev(ref)
        if sha is not None:
            return sha, name
    raise UserError(f"neither the pinned commit {pin.commit[:12]} nor tag {pin.tag} exists here "
                    f"({hint or f'fetch it: git -C {repo.root} fetch origin tag {pin.tag}'})", path=str(repo.root))


def recorded_base(repo: Repo, pin: Pin | None = None, base: str | None = None) -> str:
    """The base an earlier ``apply`` recorded (``refs/patches/base``), else :func:`resolve_base`."""
    return repo.rev(REF_BASE) or resolve_base(repo, pin, base)[0]


class GitTreeReader:
    """The tree of one commit as the engine's :class:`~catch_tools.patches.engine.TreeReader`, read through
    ``git ls-tree`` and the repository's persistent ``git cat-file --batch``.

    ``paths``: the only paths the caller will ask about (a series'
    :meth:`~catch_tools.patches.series.Series.touched_paths`). Then ``ls-tree`` lists just those and their
    directories instead of the whole tree (PyTorch's has ~15,000 files), and a question about any other path falls
    back to the whole listing.
    """

    def __init__(self, repo: Repo, commit: str, paths: Iterable[str] | None = None):
        self.repo = repo
        self.commit = commit
        self.entries: dict[str, tuple[str, str]] = {}
        self.known: set[str] | None = None
        wanted = sorted({d for p in paths for d in _with_parents(p)}) if paths is not None else None
        if wanted is not None and len(wanted) <= _MAX_LISTED_PATHS:
            # Non-recursive with literal pathspecs (git-ls-tree(1)): a blob or link names its own entry, a directory
            # lists its entries -- so a symlink on the way to a path shows up as the entry it is.
            self._list(wanted)
            self.known = set(wanted)
        else:
            self._list(None)

    def _list(self, paths: list[str] | None) -> None:
        args = ["ls-tree", "-z", "--full-tree", self.commit] + (["--", *paths] if paths is not None else ["-r"])
        proc = self.repo.run(*args, env={"GIT_LITERAL_PATHSPECS": "1"})
        for entry in proc.out.decode("utf-8", "replace").split("\0"):
            if entry:
                meta, path = entry.split("\t", 1)
                mode, kind, sha = meta.split()
                if kind == "blob":
                    self.entries[path] = (mode, sha)

    def exists(self, path: str) -> bool:
        if self.known is not None and path not in self.known:
            self.entries.clear()
            self.known = None
            self._list(None)
        return path in self.entries

    def read(self, path: str) -> FileState:
        mode, sha = self.entries[path]
        return mode, self.repo.blobs.read(sha)


#: Above this many paths, one recursive listing of the whole tree beats a command line of pathspecs.
_MAX_LISTED_PATHS = 2000


def _with_parents(path: str) -> list[str]:
    """``a/b/c`` -> ``["a", "a/b", "a/b/c"]``."""
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
