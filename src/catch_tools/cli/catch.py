# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``catch``: every command line of the tooling as a subcommand (the table is in :mod:`catch_tools.cli`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from catch_tools.cli import (
    backend,
    gpu2mlu,
    interfaces,
    patches,
    prove,
    rebase,
    release,
    upgrade,
    upstream,
    versions,
    wheel,
)
from catch_tools.clikit import Command, dispatch
from catch_tools.errors import run_cli

EXAMPLES = (
    "catch apply --source ../pytorch",
    "catch wheel --out dist",
    "catch backend --install",
    "catch interfaces dist/torch-2.13.0+cpu.catch1-*.whl",
    "catch rebase --onto v2.14.0",
)


def _patches(command: str) -> Callable[[Sequence[str], str], int]:
    """``catch <command>`` for a subcommand of ``apply_patches.py``."""
    def run(argv: Sequence[str], prog: str) -> int:
        return patches.main([command, *argv], prog=prog.rsplit(" ", 1)[0])
    return run


COMMANDS: dict[str, Command] = {
    "apply": Command("apply the series to a git tree or a directory", _patches("apply")),
    "check": Command("dry run: report every patch that would fail", _patches("check")),
    "status": Command("applied/not applied per patch, and drift", _patches("status")),
    "reverse": Command("remove the series: back to the base", _patches("reverse")),
    "export": Command("regenerate patches/ from the commits on the base", _patches("export")),
    "lint": Command("static checks of patches/", _patches("lint")),
    "rebase": Command("move the series to a new upstream release", rebase.main),
    "upgrade": Command("after the rebase: fetch, build, test, package and demo the release", upgrade.main),
    "wheel": Command("build the combined wheel", wheel.main),
    "backend": Command("the backend wheel (torch_mlu), built once per sources and cached; --install", backend.main),
    "interfaces": Command("compare the combined wheel's native interfaces with upstream's", interfaces.main),
    "prove": Command("the patch proof gate: each patch's test fails unpatched and passes patched", prove.main),
    "upstream": Command("real upstream PyTorch material from release wheels (wheel, tree, checkout)", upstream.main),
    "release": Command("publish wheels into the package index, or rehearse the release", release.main),
    "gpu2mlu": Command("convert CUDA PyTorch scripts to mlu", gpu2mlu.main),
    "versions": Command("the version matrix (Catch, PyTorch, Python, wheel tag)", versions.main),
}


def main(argv: Sequence[str] | None = None) -> int:
    """``catch <command> [args...]``: run the command's own command line (see the module doc)."""
    description = "Catch: PyTorch for Cambricon MLU -- the tooling of the patch series, the combined wheel and the " \
                  "release, one command line.\n\nexamples:\n" + "".join(f"  {e}\n" for e in EXAMPLES)
    return dispatch("catch", description, COMMANDS, argv)


def entry() -> None:
    """Console-script entry point (``catch``)."""
    sys.exit(run_cli(main))
