# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Reviewed changes: a TOML file that records "needs review" findings a maintainer has looked at and accepted.

Shape (each entry needs ``code`` and ``reason``; ``path`` and ``match`` narrow it)::

    [[accept]]
    code = "api-added-outside-backend"         # Finding.code
    path = "torch/utils/collect_env.py"        # Finding.path, exact (optional)
    match = "get_privateuse1_backend_info"     # substring of Finding.message (optional)
    reason = "patch 0001 adds the helper collect_env needs; Upstream-Status: Pending"

Only review findings (bit 4) can be accepted: an incompatible change (bit 8) or an error (bit 1) never can, and the
operator-schema rules keep their empty allow-list. An accepted finding becomes a note naming the reason; an entry that
matched nothing is reported as a note so stale entries get noticed.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from catch_tools.errors import UserError, toml_error
from catch_tools.interfaces.report import REVIEW, Report


@dataclass(frozen=True)
class Acceptance:
    """One reviewed change (see module doc)."""

    code: str
    reason: str
    path: str | None = None
    match: str | None = None

    def covers(self, code: str, path: str, message: str) -> bool:
        """True when a finding with these fields is this reviewed change."""
        return (code == self.code and (self.path is None or path == self.path)
                and (self.match is None or self.match in message))


def load_acceptances(path: Path) -> list[Acceptance]:
    """Read the reviewed-changes file.

    Raises:
        UserError (exit code 2): missing file, not a regular file, not UTF-8 or a TOML error (with line),
            ``accept`` not an array of tables, an entry without ``code``/``reason`` or with unknown keys.
    """
    if path.exists() and not path.is_file():
        what = "is a directory" if path.is_dir() else "is not a regular file"
        raise UserError(f"{what}, expected the reviewed-changes TOML file", path=path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError("reviewed-changes file not found (the default is patches/interfaces-reviewed.toml)",
                        path=path) from None
    except OSError as err:
        raise UserError(f"cannot read the reviewed-changes file: {err.strerror}", path=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:  # TOML files are UTF-8 (TOML 1.0, "Spec")
        raise UserError(f"not UTF-8 (byte 0x{raw[err.start]:02x}): TOML files must be UTF-8", path=path,
                        line=raw.count(b"\n", 0, err.start) + 1) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise toml_error(err, path) from None
    entries = data.get("accept", [])
    if not isinstance(entries, list):
        raise UserError("accept must be an array of tables ([[accept]] entries)", path=path)
    out = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise UserError(f"[[accept]] entry {number} must be a table, got {type(entry).__name__}", path=path)
        unknown = set(entry) - {"code", "reason", "path", "match"}
        if unknown or not entry.get("code") or not entry.get("reason"):
            raise UserError(f"[[accept]] entry {number} needs code and reason and nothing else "
                            f"(unknown: {sorted(unknown)})", path=path)
        out.append(Acceptance(str(entry["code"]), str(entry["reason"]), entry.get("path"), entry.get("match")))
    return out


def apply_acceptances(report: Report, accepted: list[Acceptance]) -> None:
    """Turn review findings covered by ``accepted`` into notes; note unused entries (see module doc)."""
    used: set[int] = set()
    for layer in report.layers:
        kept = []
        for finding in layer.findings:
            hit = next((i for i, acc in enumerate(accepted)
                        if finding.bit == REVIEW and acc.covers(finding.code, finding.path, finding.message)), None)
            if hit is None:
                kept.append(finding)
                continue
            used.add(hit)
            layer.notes.append(f"accepted {finding.code}: {finding.message} -- {accepted[hit].reason}")
        layer.findings = kept
    for i, acc in enumerate(accepted):
        if i not in used and report.layers:
            report.layers[-1].notes.append(f"reviewed-change entry not used: {acc.code} {acc.path or ''} "
                                           f"{acc.match or ''}".rstrip())
