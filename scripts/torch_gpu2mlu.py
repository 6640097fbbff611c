#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Convert CUDA PyTorch scripts into mlu scripts with reports (``torch_gpu2mlu``). See --help.

Thin entry point over :mod:`torch_mlu.migration.cli` (installed with the backend, also as the console script
``torch_gpu2mlu``). Run from a checkout, it uses the checkout's converter, which is pure Python
(``catch/torch_mlu/migration`` and the API table in ``catch/torch_mlu/contrib``): it works without the backend
built or installed, and never imports an installed torch_mlu, which may be an older build. It needs libcst for a
conversion (one line says so when it is missing); ``--help`` needs nothing.
"""

import sys
import types
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
try:
    import catch_tools  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "src"))

# torch_mlu/__init__.py loads torch and the built backend; the converter needs neither. The package is given here
# as the checkout's directory without running that __init__, so `torch_mlu.migration` and `torch_mlu.contrib` (whose
# own __init__ files import nothing) come from the checkout.
_CHECKOUT = REPO / "catch" / "torch_mlu"
_package = types.ModuleType("torch_mlu", "The checkout's pure-Python torch_mlu subpackages (the backend not loaded).")
_package.__path__ = [str(_CHECKOUT)]
sys.modules["torch_mlu"] = _package

from catch_tools.errors import UserError, run_cli  # noqa: E402
from torch_mlu.migration.cli import MigrationError, main  # noqa: E402


def _main(argv: Sequence[str] | None = None) -> int:
    try:
        return main(argv)
    except MigrationError as err:
        raise UserError(err.message, path=err.path, line=err.line) from None


if __name__ == "__main__":
    sys.exit(run_cli(_main))
