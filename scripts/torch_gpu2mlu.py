#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Convert CUDA PyTorch scripts into mlu scripts with reports (``torch_gpu2mlu``). See --help.

Thin entry point over :mod:`torch_mlu.migration.cli` (installed with the backend, also as the console script
``torch_gpu2mlu``). Run from a checkout, the checkout's ``catch/torch_mlu`` goes first on the package path, so the
converter used is the checkout's even when the installed torch_mlu is an older build.
"""

import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
try:
    import catch_tools  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "src"))

import torch  # noqa: E402,F401  (before torch_mlu: its autoload entry point imports it)

import torch_mlu  # noqa: E402

_CHECKOUT = REPO / "catch" / "torch_mlu"
if _CHECKOUT.is_dir() and str(_CHECKOUT) not in torch_mlu.__path__:
    torch_mlu.__path__.insert(0, str(_CHECKOUT))  # the checkout's converter wins over an older installed build

from catch_tools.errors import UserError, run_cli  # noqa: E402
from torch_mlu.migration.cli import MigrationError, main  # noqa: E402


def _main(argv: Sequence[str] | None = None) -> int:
    try:
        return main(argv)
    except MigrationError as err:
        raise UserError(err.message, path=err.path, line=err.line) from None


if __name__ == "__main__":
    sys.exit(run_cli(_main))
