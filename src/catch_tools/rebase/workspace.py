# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Where a rebase works: the Catch checkout (its ``patches/``), the upstream work tree, and the store of the
in-progress state in that work tree's git directory (:class:`~catch_tools.rebase.state.StateStore`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.git import NotAWorkTree, Repo
from catch_tools.patches.gittree import COMMITTER
from catch_tools.rebase.state import RebaseState, StateStore


def open_upstream(path: Path) -> Repo:
    """The upstream work tree at ``path``, committing as the series' committer (the patch engine's, so a rebased
    series has the commit ids ``apply`` gives it).

    Raises:
        UserError: ``path`` is a bare repository, not the top of a work tree, or no repository.
    """
    try:
        return Repo.open(path, committer=COMMITTER)
    except NotAWorkTree as err:
        if err.kind == "bare":
            raise UserError("a bare repository has no work tree to rebase in", path=path) from None
        detail = f" ({err.why})" if err.why else ""
        raise UserError(f"not a git checkout{detail} (use --source DIR for another upstream checkout)",
                        path=path) from None


@dataclass
class Workspace:
    """The project checkout ``project`` (holds ``patches/``; its git index holds the ``pytorch`` gitlink if any), the
    upstream ``repo`` and the ``store`` of the rebase state."""

    project: Path
    repo: Repo
    store: StateStore

    @classmethod
    def open(cls, project: Path, upstream: Path) -> Workspace:
        """The workspace of ``project`` and the upstream work tree ``upstream`` (:func:`open_upstream`).

        Raises:
            UserError: ``upstream`` is no work tree to rebase in.
        """
        repo = open_upstream(upstream)
        return cls(project.resolve(), repo, StateStore(repo.git_dir))

    @property
    def patches(self) -> Path:
        """The project's ``patches/``."""
        return self.project / "patches"

    def load(self) -> RebaseState:
        """The saved state of the rebase in progress, checked to be this project's.

        Raises:
            UserError: no rebase in progress, an unreadable state (:class:`~catch_tools.rebase.state.StateUnreadable`),
                or one that belongs to another project.
        """
        state = self.store.load()
        if Path(state.project) != self.project:
            raise UserError(f"the rebase in progress belongs to the project {state.project}; pass --project "
                            f"{state.project}", path=self.project)
        return state

    # -- checks ------------------------------------------------------------------------------------------------------
