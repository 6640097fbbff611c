# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The one CUDA -> mlu API table shared by ``transfer_to_mlu`` (run time) and ``torch_gpu2mlu`` (source rewrite).

The table is ``api_map.csv`` next to this module, one row per public name of ``torch.cuda`` 2.13 (see
:mod:`torch_mlu.contrib._surface` for what counts as public) plus a few CUDA-specific names elsewhere in torch.
Columns:

- ``api``: dotted name as users write it (``torch.cuda.memory_allocated``).
- ``status``: ``mapped`` (same meaning on mlu; ``mlu`` is the equivalent), ``unsupported`` (no mlu meaning; using
  it raises :class:`UnsupportedCudaAPIError` naming the API and ``reason``), or ``not_applicable`` (a CUDA-only
  notion whose absence is harmless on mlu; ``mlu`` is a stand-in that warns once and does nothing, or the
  unchanged object for exception types that mlu never raises).
- ``mlu``: dotted path of the equivalent object, importable once ``torch_mlu`` is loaded (empty when unsupported).
- ``reason``: why, for unsupported and not-applicable rows; a note for mapped rows.
- ``since``: the torch release that added the name, for names newer than 2.13 (empty: 2.13 has it). One table
  serves every torch the backend builds on: :meth:`ApiMap.available` leaves out the rows the installed torch is too old
  for, and a test checks both sides (the name exists from ``since`` on, and not before). Rows written before the
  column existed have four fields; a short row reads as an empty ``since``.

A row whose ``api`` is a prefix of other rows is a namespace (module); all its public names have rows of their own.
"""

from __future__ import annotations

import csv
import functools
import io
import re
from dataclasses import dataclass
from importlib import resources

STATUSES = ("mapped", "unsupported", "not_applicable")


class UnsupportedCudaAPIError(RuntimeError):
    """A CUDA API with no mlu meaning was used (message names the API and the reason from the table)."""


@dataclass(frozen=True)
class ApiEntry:
    """One row of the table; see the module docstring for the meaning of each field."""

    api: str
    status: str
    mlu: str
    reason: str
    since: str = ""

    def available_in(self, torch_version: str) -> bool:
        """Whether torch ``torch_version`` (``"2.13.0+cpu"``, ``"2.15.0"``) has this name: no ``since``, or a release
        at or after it."""
        return not self.since or _release(torch_version) >= _release(self.since)

    def message(self) -> str:
        """One-line explanation for errors, warnings and reports."""
        if self.status == "unsupported":
            return f"{self.api} is not supported on mlu: {self.reason}"
        if self.status == "not_applicable":
            return f"{self.api} has no mlu meaning: {self.reason}"
        return f"{self.api} -> {self.mlu}"


class ApiMap:
    """Lookup over the table: exact names, namespaces, and the longest classified prefix of a dotted name."""

    def __init__(self, entries: list[ApiEntry]) -> None:
        self.entries: dict[str, ApiEntry] = {e.api: e for e in entries}
        self.namespaces: frozenset[str] = frozenset(
            api.rsplit(".", 1)[0] for api in self.entries if "." in api and api.rsplit(".", 1)[0] in self.entries
        )

    def __len__(self) -> int:
        return len(self.entries)

    def available(self, torch_version: str) -> ApiMap:
        """The rows whose names exist in torch ``torch_version`` (see ``since``)."""
        return ApiMap([e for e in self.entries.values() if e.available_in(torch_version)])

    def get(self, api: str) -> ApiEntry | None:
        """The row for exactly ``api``, or None."""
        return self.entries.get(api)

    def resolve(self, dotted: str) -> tuple[ApiEntry | None, str]:
        """Classify a dotted name as written in code: ``(entry, rest)``.

        ``entry`` is the row of the longest prefix of ``dotted`` that is not a namespace with names left over, and
        ``rest`` the remaining attributes (``"torch.cuda.Event.query"`` -> (row of torch.cuda.Event, ".query")).
        A name under a namespace that the table does not list (``torch.cuda._lazy_init``, a name added by a newer
        torch) gives ``(None, "")``: unknown.
        """
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            entry = self.entries.get(head)
            if entry is None:
                continue
            rest = "".join("." + p for p in parts[cut:])
            if rest and head in self.namespaces:
                return None, ""
            return entry, rest
        return None, ""


def _release(version: str) -> tuple[int, ...]:
    """``"2.15.0+cu132"`` -> (2, 15, 0); a pre-release counts as its release (``2.15.0a0`` has 2.15's names)."""
    match = re.match(r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?", version)
    if match is None:
        raise ValueError(f"not a torch version: {version!r}")
    return tuple(int(p or 0) for p in match.groups())


def _parse(text: str, source: str) -> list[ApiEntry]:
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames not in (["api", "status", "mlu", "reason"], ["api", "status", "mlu", "reason", "since"]):
        raise ValueError(f"{source}:1: header must be api,status,mlu,reason[,since], got {reader.fieldnames}")
    entries: list[ApiEntry] = []
    for row in reader:
        entry = ApiEntry(row["api"], row["status"], row["mlu"], row["reason"], row.get("since") or "")
        where = f"{source}:{reader.line_num}"
        if entry.since and not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", entry.since):
            raise ValueError(f"{where}: since must be a release (X.Y.Z), got {entry.since!r}")
        if entry.status not in STATUSES:
            raise ValueError(f"{where}: status must be one of {', '.join(STATUSES)}, got {entry.status!r}")
        if entry.status != "unsupported" and not entry.mlu:
            raise ValueError(f"{where}: a {entry.status} row needs an mlu equivalent")
        if entry.status != "mapped" and not entry.reason:
            raise ValueError(f"{where}: a {entry.status} row needs a reason")
        entries.append(entry)
    return entries


@functools.lru_cache(maxsize=1)
def load_api_map() -> ApiMap:
    """The table shipped in this package (``api_map.csv``), parsed once. Raises ValueError naming the line of a
    malformed row (header, unknown status, missing target or reason)."""
    text = resources.files(__package__).joinpath("api_map.csv").read_text(encoding="utf-8")
    return ApiMap(_parse(text, "api_map.csv"))
