# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""How a run of the rebase ends: :class:`Stopped` at a conflict (with what to do next) or :class:`Finished`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catch_tools import output
from catch_tools.rebase.cause import Cause, describe


@dataclass
class Stopped:
    """The rebase stopped at a conflict: ``patch`` could not be applied onto ``onto``; ``files`` hold the conflict;
    ``causes`` are the upstream changes behind it (:mod:`catch_tools.rebase.cause`); ``drop_reason`` is set when the
    patch's test passes on ``onto`` without it (:mod:`catch_tools.rebase.proving`): dropping it comes first then."""

    patch: str
    onto: str
    files: list[str]
    detail: str
    upstream: Path
    causes: list[Cause] = field(default_factory=list)
    drop_reason: str = ""

    def message(self, rebase: str = "python scripts/rebase.py") -> str:
        """Multi-line guidance for the maintainer: what conflicted and the commands to go on, each on a line of its
        own (``rebase``: how to run the rebase again, with the options this run was given)."""
        files = "".join(f"    {f}\n" for f in self.files)
        git = output.command("git", "-C", self.upstream)
        removed = output.command(self.files[0]) if len(self.files) == 1 else "FILE"
        drop = f"    {rebase} --drop {output.command(self.patch)} --reason "
        causes = "".join(f"    {line}\n" for line in describe(self.causes))
        first = ""
        if self.drop_reason:
            first = (f"  obsolete? its test passes on {self.onto} without it; drop it:\n"
                     f"{drop}{output.quoted(self.drop_reason)}\n  or ")
        return (
            f"conflict: patch {self.patch} does not apply onto {self.onto} ({self.detail})\n"
            f"  files:\n{files}"
            + (f"  upstream changes to these lines:\n{causes}" if causes else "")
            + (first or "  ")
            + f"resolve them in {self.upstream} (remove every conflict marker); a file the patch no longer needs:\n"
            f"    {git} rm {removed}\n"
            "  then go on:\n"
            f"    {rebase} --continue\n"
            "  or drop the patch:\n"
            f"{drop}\"...\"\n"
            "  or give up:\n"
            f"    {rebase} --abort\n"
        )


@dataclass
class Finished:
    """The rebase completed: the report (dict, see :func:`report.build`) and the files it was written to."""

    report: dict[str, Any]
    paths: list[Path]


Outcome = Stopped | Finished
