# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``scripts/build_wheel.py``: build the combined wheel ``torch-<wheel_version>.catch<N>-<tags>.whl``.

Overlay mode (default): upstream wheel of the pin + series (Python files) + Catch backend wheel (``--catch-wheel``,
else the cached one of :func:`catch_tools.wheel.sources.cached_backend_wheel`, built when missing), see
:func:`catch_tools.wheel.overlay.build_overlay`. Source mode (``--from-source``): see :mod:`catch_tools.wheel.source`.
Exit status 0 on success, 2 on a user error (one line on stderr, nothing left in the output directory).
"""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from catch_tools import paths
from catch_tools.clikit import parser, setup_logging
from catch_tools.errors import UserError
from catch_tools.paths import cache_dir, repo_root
from catch_tools.pin import Pin, load_pin, manifest_path
from catch_tools.progress import progress
from catch_tools.userfiles import output_dir
from catch_tools.wheel import source as source_mode
from catch_tools.wheel.overlay import BuildResult, build_overlay
from catch_tools.wheel.sources import (
    backend_build_command,
    backend_wheel,
    cached_backend_wheel,
    given_backend_wheel,
    upstream_wheel,
)


def _parser(prog: str = "build_wheel.py") -> argparse.ArgumentParser:
    p = parser(
        prog,
        "Build the combined wheel torch-<wheel_version>.catch<N>-<tags>.whl: the pinned upstream wheel + the series + "
        "the Catch backend (overlay mode), or from the pytorch/ checkout (--from-source).",
        ["scripts/build_wheel.py", "scripts/build_wheel.py --catch-wheel dist/torch_mlu-0.1.0-py3-none-any.whl",
         "scripts/build_wheel.py --patches-dir /tmp/my-series --out /tmp/dist",
         "scripts/build_wheel.py --from-source --dry-run"],
        epilog="Exit status 0 on success, 2 on bad input (one line on stderr; nothing is left in the output dir).")
    p.add_argument("--upstream-wheel", type=Path,
                   help="the pinned upstream torch wheel (default: pip download, cached)")
    p.add_argument("--catch-wheel", type=Path,
                   help="a prebuilt torch_mlu wheel (default: catch/ built, or its cached wheel: catch backend)")
    p.add_argument("--patches-dir", metavar="DIR", type=Path, help="the series directory (default: <repo>/patches)")
    p.add_argument("--out", type=Path, help="output directory (default: <repo>/dist)")
    p.add_argument("--reverify", action="store_true",
                   help="verify the upstream wheel's RECORD hashes even if this exact file was verified before")
    p.add_argument("--from-source", action="store_true", help="build upstream torch from pytorch/ with the series")
    p.add_argument("--source", type=Path, help="PyTorch checkout for --from-source (default: <repo>/pytorch)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="MAX_JOBS for --from-source")
    p.add_argument("--dry-run", action="store_true", help="with --from-source: print the steps and environment")
    return p


def _report(result: BuildResult) -> None:
    t = result.timings
    print(f"wrote {result.wheel}")
    print(f"  patched: {len(result.patched)}  added: {len(result.added)}  removed: {len(result.removed)}")
    print(f"  time: inputs+series {t['inputs_and_series']:.2f} s, write {t['write']:.2f} s, waiting for input "
          f"verification {t['verify_wait']:.2f} s, total {t['total']:.2f} s")


def main(argv: Sequence[str] | None = None, prog: str = "build_wheel.py") -> int:
    """Parse ``argv`` and build; returns the exit status. Raises UserError on bad input (see module doc)."""
    args = _parser(prog).parse_args(argv)
    setup_logging(args)
    root = repo_root()
    patches_dir = args.patches_dir or paths.patches_dir()
    pin = load_pin(manifest_path(root) if args.patches_dir is None else patches_dir / "manifest.toml",
                   option="--patches-dir DIR holding the series and its manifest.toml")
    out = args.out or root / "dist"
    if args.dry_run and not args.from_source:
        raise UserError("--dry-run only applies to --from-source")
    output_dir(out, "--out", create=False)
    if args.from_source:
        return _from_source(args, pin, root, out)
    up = upstream_wheel(args.upstream_wheel, pin)
    with progress("building the combined wheel") as shown:
        be = given_backend_wheel(args.catch_wheel) if args.catch_wheel is not None else \
            cached_backend_wheel(root / "catch", progress=shown)
        result = build_overlay(upstream_wheel=up, backend_wheel=be, patches_dir=patches_dir, pin=pin,
                               out_dir=out, verify_cache=not args.reverify, progress=shown)
    _report(result)
    return 0


def _from_source(args: argparse.Namespace, pin: Pin, root: Path, out: Path) -> int:
    source = args.source or root / "pytorch"
    build_dir = cache_dir() / "source-build" / pin.wheel_version
    steps = source_mode.plan(pin, root, source, build_dir, args.jobs)
    if args.dry_run:
        print(f"# source build of torch {pin.wheel_version} (pin {pin.commit}) + series + Catch -> {out}")
        print("# environment added to every build step:")
        for key, value in sorted(source_mode.source_env(pin, args.jobs).items()):
            print(f"export {key}={shlex.quote(value)}")
        for number, step in enumerate(steps, start=1):
            print(f"# {number}. {step.title}")
            print(step.render())
        print(f"# {len(steps) + 1}. build the Catch backend against the installed torch {pin.wheel_version}")
        print(" ".join(shlex.quote(a) for a in backend_build_command(root / "catch", build_dir / "catch")))
        print(f"# {len(steps) + 2}. add Catch to the built wheel: overlay assembly without the series "
              "(already applied), git_version = HEAD of the checkout")
        for problem in source_mode.preflight(source):
            print(f"# preflight: {problem}")
        return 0
    problems = source_mode.preflight(source)
    if problems:
        raise UserError(problems[0] + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""))
    source_mode.run_plan(steps)
    built = sorted(build_dir.glob("torch-*.whl"))
    if not built:
        raise UserError("the source build produced no torch wheel", path=build_dir)
    with progress("adding Catch to the built wheel") as shown:
        be = backend_wheel(args.catch_wheel, root / "catch", build_dir / "catch", progress=shown)
        result = build_overlay(upstream_wheel=built[-1], backend_wheel=be,
                               patches_dir=args.patches_dir or paths.patches_dir(), pin=pin, out_dir=out,
                               expected_commit=source_mode.head_commit(source), verify_cache=False,
                               apply_series=False, progress=shown)
    _report(result)
    return 0
