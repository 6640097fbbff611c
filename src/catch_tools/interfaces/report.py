# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Findings of the native interface check, the exit status they make, and their human/JSON rendering.

Exit bits follow libabigail's ``abidiff`` (its manual, "Return values"): 1 = error (the check could not run
completely), 4 = a change that needs review, 8 = an incompatible change. The exit status is the OR of the bits of all
findings; 0 means the combined wheel keeps every upstream interface.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from catch_tools import output

if TYPE_CHECKING:
    from rich.console import Console

ERROR = 1
REVIEW = 4
INCOMPATIBLE = 8
BIT_NAMES = {ERROR: "error", REVIEW: "review", INCOMPATIBLE: "incompatible"}
LAYER_NAMES = {0: "files and metadata", 1: "ELF", 2: "operator schemas", 3: "Python API"}


@dataclass(frozen=True)
class Finding:
    """One problem: ``bit`` (ERROR/REVIEW/INCOMPATIBLE), a stable ``code``, a one-line ``message``, the ``path``."""

    layer: int
    bit: int
    code: str
    message: str
    path: str = ""


@dataclass
class LayerResult:
    """A layer's findings, informational ``notes`` (no bit) and its run time in seconds."""

    layer: int
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, bit: int, code: str, message: str, path: str = "") -> None:
        """Record a finding for this layer."""
        self.findings.append(Finding(self.layer, bit, code, message, path))

    @property
    def bits(self) -> int:
        """OR of the findings' bits."""
        out = 0
        for finding in self.findings:
            out |= finding.bit
        return out


@dataclass
class Report:
    """All layers run, in order."""

    upstream: str
    combined: str
    layers: list[LayerResult] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """OR of every layer's bits (0: compatible)."""
        out = 0
        for layer in self.layers:
            out |= layer.bits
        return out

    def to_json(self) -> str:
        """``{"upstream", "combined", "exit_code", "layers": [{"layer", "name", "bits", "seconds", "notes",
        "findings": [{"layer", "bit", "kind", "code", "message", "path"}]}]}``."""
        layers = []
        for layer in self.layers:
            findings = [{**asdict(f), "kind": BIT_NAMES[f.bit]} for f in layer.findings]
            layers.append({"layer": layer.layer, "name": LAYER_NAMES[layer.layer], "bits": layer.bits,
                           "seconds": round(layer.seconds, 3), "notes": layer.notes, "findings": findings})
        return json.dumps({"upstream": self.upstream, "combined": self.combined, "exit_code": self.exit_code,
                           "layers": layers}, indent=2)

    def render(self, console: Console, limit: int = 20) -> None:
        """Human report: a summary table, then up to ``limit`` findings per layer and the notes."""
        console.print(f"native interfaces of {self.combined}\n  against {self.upstream}", markup=False,
                      highlight=False)
        table = output.table()
        for col in ("layer", "checks", "result", "findings", "time"):
            output.column(table, col)
        for layer in self.layers:
            result = "ok" if not layer.bits else "+".join(n for b, n in BIT_NAMES.items() if layer.bits & b)
            table.add_row(str(layer.layer), LAYER_NAMES[layer.layer], result, str(len(layer.findings)),
                          f"{layer.seconds:.1f} s")
        console.print(table)
        for layer in self.layers:
            for finding in layer.findings[:limit]:
                where = f" [{finding.path}]" if finding.path else ""
                console.print(f"layer {layer.layer} {BIT_NAMES[finding.bit]}: {finding.code}: {finding.message}{where}",
                              markup=False, highlight=False)
            if len(layer.findings) > limit:
                console.print(f"layer {layer.layer}: ... {len(layer.findings) - limit} more finding(s) (see --json)")
            for note in layer.notes:
                console.print(f"layer {layer.layer} note: {note}", markup=False, highlight=False)
        console.print(f"exit status {self.exit_code}")
