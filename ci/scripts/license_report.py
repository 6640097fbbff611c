#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Licenses of everything Catch ships or runs with, checked against an allowlist of licenses we can ship.

    python ci/scripts/license_report.py [--wheel dist/torch-*.whl] [--only wheel|tooling]

Two groups, each installed into its own throwaway venv (``python -m venv --without-pip``, filled by this
interpreter's pip through ``pip --python``, pip >= 22.3), so each report covers exactly what that install pulls:

- ``wheel``: the combined wheel with its ``Requires-Dist`` (what ``pip install dist/torch-*.whl`` installs: torch
  itself, filelock, typing-extensions, setuptools, sympy, mpmath, networkx, jinja2, MarkupSafe, fsspec). The wheel is
  ``--wheel``, else the newest ``dist/torch-*catch*.whl``, else the pinned upstream ``torch==<pin wheel_version>``,
  whose ``Requires-Dist`` the combined wheel must equal (native interface check, layer 0).
- ``tooling``: the ``[project] dependencies`` of ``pyproject.toml`` (catch_tools' runtime dependencies).

``PIP_CONSTRAINT`` defaults to ``constraints.txt`` (torch==2.13.0): no other torch is ever installed.
The licenses come from ``pip-licenses --from=all`` (https://github.com/raimon49/pip-licenses) on the venv. A
package's license is its PEP 639 ``License-Expression`` when it has one, else its ``License ::`` trove classifiers,
else its ``License`` field; SPDX expressions are parsed with ``license-expression``. A license passes when every
term is in :data:`ALLOWED` (``OR``: one alternative suffices; ``WITH``: the exception must be in
:data:`ALLOWED_EXCEPTIONS`); several classifiers must all pass. :data:`EXCEPTIONS` lists reviewed packages by name.

Prints one table per group, then one ``error: <group>: <package> <version>: ...`` line per offender on stderr.
Exit status: 0 every license allowed, 1 an offender, 2 bad input (no such wheel, pip or pip-licenses failing).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import venv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from license_expression import ExpressionError, LicenseSymbol, LicenseWithExceptionSymbol, get_spdx_licensing
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from catch_tools.errors import UserError, run_cli  # noqa: E402
from catch_tools.pin import load_pin  # noqa: E402

# Permissive licenses (SPDX identifiers) whose terms a binary redistribution of the wheel can meet by shipping the
# notices. MPL-2.0 is file-level copyleft: fine to ship unmodified (certifi-style data packages); changes to those
# files would have to be published.
ALLOWED = frozenset({
    "0BSD", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "BSL-1.0", "CNRI-Python", "HPND", "ISC", "MIT", "MIT-0",
    "MPL-2.0", "PSF-2.0", "Python-2.0", "Unlicense", "Zlib",
})
ALLOWED_EXCEPTIONS = frozenset({"LLVM-exception"})
# `License ::` trove classifiers (https://pypi.org/classifiers/) and free-text `License` fields seen in practice,
# mapped to an SPDX identifier. "BSD License" names no clause count: every BSD variant is allowed.
ALIASES = {
    "Apache Software License": "Apache-2.0",
    "Apache 2.0": "Apache-2.0",
    "Apache License 2.0": "Apache-2.0",
    "BSD": "BSD-3-Clause",
    "BSD License": "BSD-3-Clause",
    "ISC License (ISCL)": "ISC",
    "MIT License": "MIT",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
    "Python Software Foundation License": "PSF-2.0",
    "The Unlicense (Unlicense)": "Unlicense",
    "zlib/libpng License": "Zlib",
}
# Public domain dedications (no SPDX identifier): nothing to comply with.
PUBLIC_DOMAIN = frozenset({"Public Domain", "Public Domain (CC0)"})
# Reviewed packages whose metadata the rules above cannot read, by normalized name, with the reason. Empty: every
# dependency of both groups declares an allowed license (see the report). Add an entry only after reading the
# package's license file, e.g.  "somepkg": "License field holds the full MIT text; LICENSE file is MIT".
EXCEPTIONS: dict[str, str] = {}

GROUPS = ("wheel", "tooling")
_LICENSING = get_spdx_licensing()


@dataclass
class Row:
    """One installed distribution: its declared license and the verdict (``reason`` is "" when allowed)."""

    name: str
    version: str
    license: str
    source: str
    reason: str


def declared_license(info: dict[str, str]) -> tuple[str, str]:
    """``(license, source)`` of one ``pip-licenses --from=all`` record (PEP 639 expression > classifiers > field)."""
    for key, source in (("License-Expression", "expression"), ("License-Classifier", "classifier"),
                        ("License-Metadata", "metadata")):
        value = (info.get(key) or "").strip()
        if value and value != "UNKNOWN":
            return value, source
    return "UNKNOWN", "none"


def _expression_reason(text: str) -> str:
    """Why the SPDX expression ``text`` cannot ship ("" when it can)."""
    try:
        parsed = _LICENSING.parse(text, validate=True, strict=True)
    except ExpressionError as err:
        return f"not an SPDX expression ({err})"
    return _node_reason(parsed)


def _node_reason(node: object) -> str:
    if isinstance(node, LicenseWithExceptionSymbol):
        lic = _node_reason(node.license_symbol)
        exc = str(node.exception_symbol.key)
        return lic or ("" if exc in ALLOWED_EXCEPTIONS else f"license exception {exc} is not allowed")
    if isinstance(node, LicenseSymbol):
        return "" if node.key in ALLOWED else f"{node.key} is not allowed"
    args = getattr(node, "args", ())
    reasons = [_node_reason(arg) for arg in args]
    if type(node).__name__ == "OR":
        return "" if any(not r for r in reasons) else "; ".join(reasons)
    return "; ".join(r for r in reasons if r)


def license_reason(license_text: str, source: str) -> str:
    """Why ``license_text`` (from :func:`declared_license`) is not allowed; "" when every part is allowed."""
    if source == "none":
        return "no license in the package metadata"
    parts = [p.strip() for p in license_text.split(";")] if source == "classifier" else [license_text.strip()]
    reasons = []
    for part in parts:
        if part in PUBLIC_DOMAIN:
            continue
        reason = _expression_reason(ALIASES.get(part, part))
        if reason:
            reasons.append(f"{part!r}: {reason}")
    return "; ".join(reasons)


def _run(cmd: list[str], what: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise UserError(f"{what} failed (exit {proc.returncode}): {last}")
    return proc.stdout


def install_and_read(requirements: list[str], where: Path) -> list[dict[str, str]]:
    """Install ``requirements`` into a new venv under ``where``; return pip-licenses' records of that venv.

    Raises:
        UserError: pip cannot install them, or pip-licenses fails.
    """
    venv.EnvBuilder(with_pip=False).create(where)
    python = str(where / "bin" / "python")
    env = dict(os.environ)
    env.setdefault("PIP_CONSTRAINT", str(ROOT / "constraints.txt"))
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-compile", "--disable-pip-version-check",
          "--quiet", *requirements], f"pip install {' '.join(requirements)}", env)
    out = _run([sys.executable, "-m", "piplicenses", "--python", python, "--with-system", "--from=all",
                "--format=json"], "pip-licenses")
    records: list[dict[str, str]] = json.loads(out)
    return records


def judge(records: list[dict[str, str]]) -> list[Row]:
    """Rows of a report, with :data:`EXCEPTIONS` applied, sorted by package name."""
    rows = []
    for info in records:
        name = info["Name"]
        text, source = declared_license(info)
        reason = license_reason(text, source)
        key = name.lower().replace("_", "-")
        if reason and key in EXCEPTIONS:
            reason, source = "", f"exception: {EXCEPTIONS[key]}"
        rows.append(Row(name, info["Version"], text, source, reason))
    return sorted(rows, key=lambda r: r.name.lower())


def wheel_requirement(wheel: str | None) -> str:
    """The requirement that stands for the combined wheel (see module doc).

    Raises:
        UserError: ``wheel`` does not exist.
    """
    if wheel:
        if not Path(wheel).is_file():
            raise UserError("no such wheel", path=wheel)
        return str(Path(wheel).resolve())
    built = sorted((ROOT / "dist").glob("torch-*catch*.whl"), key=lambda p: p.stat().st_mtime)
    if built:
        return str(built[-1])
    return f"torch=={load_pin().wheel_version}"


def tooling_requirements() -> list[str]:
    """``[project] dependencies`` of the repository's ``pyproject.toml`` (PEP 621)."""
    path = ROOT / "pyproject.toml"
    deps: list[str] = tomllib.loads(path.read_text(encoding="utf-8"))["project"]["dependencies"]
    return deps


def print_table(console: Console, title: str, rows: list[Row]) -> None:
    table = Table(title=title)
    for column in ("package", "version", "license", "from", "verdict"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row.name, row.version, row.license, row.source, "ok" if not row.reason else "NOT ALLOWED")
    console.print(table)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: install, report and judge each group; returns the exit status (see module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--wheel", help="the combined wheel (default: newest dist/torch-*catch*.whl, else the pin)")
    parser.add_argument("--only", choices=GROUPS, help="report one group only")
    args = parser.parse_args(argv)
    console = Console(width=160)
    offenders: list[str] = []
    for group in GROUPS:
        if args.only and group != args.only:
            continue
        requirements = [wheel_requirement(args.wheel)] if group == "wheel" else tooling_requirements()
        with tempfile.TemporaryDirectory(prefix=f"catch-licenses-{group}-") as tmp:
            rows = judge(install_and_read(requirements, Path(tmp) / "venv"))
        label = Path(requirements[0]).name if group == "wheel" else "pyproject.toml [project] dependencies"
        print_table(console, f"{group}: {label}", rows)
        offenders += [f"error: {group}: {r.name} {r.version}: license {r.license!r} cannot ship ({r.reason}); "
                      f"allowlist and exceptions: ci/scripts/license_report.py" for r in rows if r.reason]
        console.print(f"{group}: {len(rows)} packages, {sum(1 for r in rows if r.reason)} not allowed")
    for line in offenders:
        print(line, file=sys.stderr)
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
