# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""What :func:`torch_mlu.migration.transform.convert_source` finds in one module: the rewritten code, each change
and each use of a CUDA API, with 1-based lines of the input."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Change:
    """One rewritten expression or statement: 1-based line in the input, source text before and after."""

    line: int
    before: str
    after: str


@dataclass
class ApiUse:
    """A use of a CUDA API: ``kind`` is ``mapped``, ``unsupported``, ``not_applicable`` or ``unknown``."""

    line: int
    api: str
    kind: str
    reason: str = ""


@dataclass
class FileResult:
    """Outcome of :func:`convert_source` for one module."""

    code: str
    encoding: str = "utf-8"
    changes: list[Change] = field(default_factory=list)
    uses: list[ApiUse] = field(default_factory=list)
    distributed: bool = False
    has_main: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.changes)
