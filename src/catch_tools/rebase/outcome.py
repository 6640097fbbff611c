# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""How a run of the rebase ends: :class:`Stopped` at a conflict (with what to do next) or :class:`Finished`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Stopped:
    """The rebase stopped at a conflict: ``patch`` could not be applied onto ``onto``; ``files`` hold the conflict."""

    patch: str
    onto: str
    files: list[str]
    detail: str
    upstream: Path

    def message(self) -> str:
        """Multi-line guidance for the maintainer: what conflicted and the commands to go on."""
        files = "\n".join(f"    {f}" for f in self.files)
        return (
            f"conflict: patch {self.patch} does not apply onto {self.onto} ({self.detail})\n"
            f"  files:\n{files}\n"
            f"  resolve them in {self.upstream} (remove every conflict marker; `git rm` a file the patch no longer "
            "needs), then run:\n"
            "    scripts/rebase.py --continue\n"
            f"  or drop the patch:  scripts/rebase.py --drop {self.patch} --reason \"...\"\n"
            "  or give up:         scripts/rebase.py --abort\n"
        )


@dataclass
class Finished:
    """The rebase completed: the report (dict, see :func:`report.build`) and the files it was written to."""

    report: dict[str, Any]
    paths: list[Path]


Outcome = Stopped | Finished
