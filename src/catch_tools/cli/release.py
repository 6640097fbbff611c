# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The release command lines: ``catch release publish`` (``scripts/publish_index.py``: wheels into the static
package index, :mod:`catch_tools.release.index`) and ``catch release rehearse`` (``scripts/release_rehearsal.py``:
the whole release against real servers on 127.0.0.1, :mod:`catch_tools.release.rehearsal`).
"""

from __future__ import annotations

import argparse
import json
import signal
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from types import FrameType

from packaging.utils import parse_wheel_filename

from catch_tools import clikit
from catch_tools.clikit import Command, dispatch
from catch_tools.release import rehearsal
from catch_tools.release.index import publish_all
from catch_tools.release.rehearsal import Rehearsal, Step
from catch_tools.release.wheel_check import check_wheel

PUBLISH_EXAMPLES = (
    "scripts/publish_index.py dist/torch-2.13.0+cpu.catch1-*.whl --index-dir /srv/index",
    "scripts/publish_index.py --check dist/torch-2.13.0+cpu.catch1-*.whl",
)
REHEARSE_EXAMPLES = (
    "scripts/release_rehearsal.py",
    "scripts/release_rehearsal.py --no-podman --json /tmp/rehearsal.json",
)


def publish_parser(prog: str = "publish_index.py") -> argparse.ArgumentParser:
    """``publish_index.py WHEEL... --index-dir DIR | --check``."""
    p = clikit.parser(prog, "Publish wheels into a static PEP 503 package index (DIR/files/WHEEL + "
                      "DIR/simple/<project>/index.html), or only check that each wheel is what its name says.",
                      PUBLISH_EXAMPLES, epilog="Exit status: 0 done, 2 bad input (one line; nothing is published).")
    p.add_argument("wheels", nargs="+", type=Path, metavar="WHEEL", help="wheel files to publish")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--index-dir", type=Path, metavar="DIR", help="root of the static index (created if missing)")
    where.add_argument("--check", action="store_true",
                       help="only check that each wheel is what its name says (name, WHEEL tags, METADATA, RECORD)")
    return p


def publish_main(argv: Sequence[str] | None = None, prog: str = "publish_index.py") -> int:
    """Publish (one line per wheel) or check the wheels; see :func:`publish_parser`.

    Raises:
        UserError: a wheel refused, or an index that cannot be written (see
            :func:`catch_tools.release.index.publish_all`).
    """
    args = publish_parser(prog).parse_args(argv)
    clikit.setup_logging(args)
    if args.check:
        for wheel in args.wheels:
            got = check_wheel(wheel)
            print(f"ok {wheel.name}: {got.project} {got.version} sha256 {got.sha256}")
        return 0
    entries = publish_all(args.wheels, args.index_dir)
    for wheel, entry in zip(args.wheels, entries, strict=True):
        project = parse_wheel_filename(wheel.name)[0]
        print(f"published {entry.filename} sha256 {entry.sha256} requires-python {entry.requires_python or '-'} "
              f"-> {args.index_dir}/simple/{project}/")
    return 0


def rehearse_parser(prog: str = "release_rehearsal.py") -> argparse.ArgumentParser:
    """``release_rehearsal.py [--json REPORT] [--no-podman] [--fail-at STEP]``."""
    p = clikit.parser(prog, rehearsal.__doc__ or "", REHEARSE_EXAMPLES)
    p.add_argument("--json", type=Path, metavar="REPORT", help="also write the report (steps, digests, pids) as JSON")
    p.add_argument("--fail-at", metavar="STEP", help="make the step of this name fail (tests the cleanup)")
    p.add_argument("--no-podman", action="store_true", help="behave as if podman were missing")
    return p


def _terminate(signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def rehearse_main(argv: Sequence[str] | None = None, prog: str = "release_rehearsal.py") -> int:
    """Run the rehearsal, print one line per step and the table; exit 0 ok, 1 a step failed."""
    args = rehearse_parser(prog).parse_args(argv)
    clikit.setup_logging(args)
    signal.signal(signal.SIGTERM, _terminate)  # a killed run still stops its servers and deletes its files
    work = Path(tempfile.mkdtemp(prefix="catch-release-"))

    def show(step: Step) -> None:
        print(f"[{step.seconds:6.1f} s] {step.result:7} {step.name}" + (f": {step.detail}" if step.detail else ""),
              flush=True)

    report = Rehearsal(work, fail_at=args.fail_at, podman="" if args.no_podman else None, on_step=show).run()
    print()
    print(report.table())
    if args.json:
        args.json.write_text(json.dumps({**asdict(report), "ok": report.ok}, indent=2))
    return 0 if report.ok else 1


#: ``catch release <command>``: each a command line of its own.
COMMANDS = {
    "publish": Command("wheels into the static package index (scripts/publish_index.py)", publish_main),
    "rehearse": Command("the whole release against servers on 127.0.0.1 (scripts/release_rehearsal.py)",
                        rehearse_main),
}


def main(argv: Sequence[str] | None = None, prog: str = "catch release") -> int:
    """``catch release {publish,rehearse} ...``: run the command line of that name (:func:`dispatch`)."""
    return dispatch(prog, (__doc__ or "").split("\n\n")[0], COMMANDS, argv)
