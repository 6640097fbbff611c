# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``scripts/check_native_interfaces.py [UPSTREAM.whl] COMBINED.whl [--json] [--layers 0,1,2,3]``.

Without ``UPSTREAM.whl`` the pinned upstream wheel is used (``patches/manifest.toml``; cached pip download).

Exit status: OR of 1 (error: a layer could not run), 4 (change needing review), 8 (incompatible change); 0 when the
combined wheel keeps every upstream interface. Unreadable wheels exit 1 with one line on stderr; a bad command line
(two paths to the same file, an interpreter that does not exist) or reviewed-changes file exits 2.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from catch_tools import output
from catch_tools.clikit import parser, setup_logging
from catch_tools.errors import UserError
from catch_tools.interfaces.accept import apply_acceptances, load_acceptances
from catch_tools.interfaces.check import ALL_LAYERS, run_check
from catch_tools.interfaces.schemas import BACKEND_NAMESPACES
from catch_tools.pin import load_pin
from catch_tools.progress import progress
from catch_tools.upstream import release_wheel


def _layers(text: str) -> list[int]:
    try:
        layers = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"layers must be a comma-separated subset of 0,1,2,3, got {text!r}") from None
    if not layers or any(x not in ALL_LAYERS for x in layers):
        raise argparse.ArgumentTypeError(f"layers must be a comma-separated subset of 0,1,2,3, got {text!r}")
    return layers


def refuse_same_file(upstream: Path, combined: Path) -> None:
    """Refuse two paths to one wheel: the same file (same path, a symlink or a hard link: equal ``st_dev`` and
    ``st_ino``, as :func:`os.path.samefile`) or two copies of the same bytes. Comparing a wheel with itself passes by
    construction, so a check fed the same wheel twice must not pass.

    Raises:
        UserError (exit code 2): one line naming both paths.
    """
    a, b = upstream.stat(), combined.stat()
    if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
        same = "is the same file as"
    elif a.st_size == b.st_size and filecmp.cmp(upstream, combined, shallow=False):
        same = "has the same bytes as"
    else:
        return
    raise UserError(f"{same} the upstream wheel {upstream}: a wheel compared with itself passes by construction; "
                    "pass the upstream wheel, then the combined one", path=combined)


def _python(text: str) -> str:
    """``text``, once it names an executable the probes can start (a path, or a name on ``PATH``, as ``subprocess``
    finds it: :func:`shutil.which`).

    Raises:
        UserError (exit code 2): no such executable.
    """
    found = shutil.which(text)
    if found is None:
        what = "is not an executable file" if os.path.exists(text) else "interpreter not found"
        raise UserError(f"{what} (--python)", path=text)
    return text


def _parser(prog: str = "check_native_interfaces.py") -> argparse.ArgumentParser:
    p = parser(
        prog,
        "Compare the upstream torch wheel with the combined wheel: layer 0 files and metadata, 1 ELF, 2 operator "
        "schemas, 3 Python API.",
        ["scripts/check_native_interfaces.py dist/torch-2.13.0+cpu.catch1-*.whl",
         "scripts/check_native_interfaces.py torch-2.13.0+cpu-*.whl dist/torch-2.13.0+cpu.catch1-*.whl --json",
         "scripts/check_native_interfaces.py dist/torch-*.whl --layers 0,3 --accept patches/interfaces-reviewed.toml"],
        epilog="Exit status: OR of 1 (error), 4 (change needing review), 8 (incompatible change); 0 = compatible. "
               "2 = bad command line or reviewed-changes file.")
    p.add_argument("wheels", type=Path, nargs="+", metavar="WHEEL",
                   help="[UPSTREAM.whl] COMBINED.whl (default upstream: the pinned wheel)")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--layers", type=_layers, default=list(ALL_LAYERS), help="layers to run (default 0,1,2,3)")
    p.add_argument("--python", help="interpreter for the layer 1/2 probes (default: this one)")
    p.add_argument("--backend-namespace", action="append", dest="namespaces",
                   help=f"operator namespace of the backend (repeatable; default {', '.join(BACKEND_NAMESPACES)})")
    p.add_argument("--full-elf", action="store_true", help="parse shared objects even when byte-identical")
    p.add_argument("--full-api", action="store_true", help="load the whole torch package with griffe (slow)")
    p.add_argument("--no-runtime", action="store_true", help="layer 1 without the probe of ABI runtime facts")
    p.add_argument("--no-cache", action="store_true",
                   help="do not keep the unpacked upstream wheel and its probe under the cache directory")
    p.add_argument("--accept", type=Path, metavar="TOML",
                   help="reviewed changes: review findings listed there become notes (see catch_tools.interfaces"
                        ".accept)")
    return p


def main(argv: Sequence[str] | None = None, prog: str = "check_native_interfaces.py") -> int:
    """Parse ``argv``, run the check, print the report; returns the exit status."""
    cli = _parser(prog)
    args = cli.parse_args(argv)
    setup_logging(args)
    if len(args.wheels) > 2:
        cli.error("at most two wheels: [UPSTREAM.whl] COMBINED.whl")
    combined = args.wheels[-1]
    upstream = args.wheels[0] if len(args.wheels) == 2 else release_wheel(load_pin().wheel_version)
    for path in (upstream, combined):
        if path.is_dir():
            raise UserError("is a directory, expected a wheel file (.whl): pass the wheel itself, e.g. dist/*.whl",
                            path=path, exit_code=1)
        if not path.is_file():
            raise UserError("wheel not found (build it with scripts/build_wheel.py, or check the path)", path=path,
                            exit_code=1)
    python = _python(args.python) if args.python else None
    accepted = load_acceptances(args.accept) if args.accept else []
    refuse_same_file(upstream, combined)
    with progress("interface check") as shown:
        report = run_check(upstream, combined, args.layers, python=python,
                           namespaces=tuple(args.namespaces or BACKEND_NAMESPACES), full_elf=args.full_elf,
                           full_api=args.full_api, runtime=not args.no_runtime, cache=not args.no_cache,
                           progress=shown)
    apply_acceptances(report, accepted)
    if args.json:
        print(report.to_json())
    else:
        report.render(output.console())
    return report.exit_code
