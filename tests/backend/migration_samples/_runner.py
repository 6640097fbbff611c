# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Test helper: run a sample script as ``__main__``, optionally after ``import torch_mlu.contrib.transfer_to_mlu``.

    python _runner.py [--transfer] SCRIPT [ARGS...]

With ``--transfer`` this is exactly what a user does by putting the import at the top of an unchanged CUDA script.
The checkout's ``catch/torch_mlu`` goes first on the package path (see ``_support``), so the migration code under
test is the checkout's even when the installed torch_mlu is an older build.
"""

import runpy
import sys
from pathlib import Path

import torch  # noqa: F401  (before torch_mlu, as torch's backend autoload expects)

import torch_mlu

_CHECKOUT = Path(__file__).resolve().parents[3] / "catch" / "torch_mlu"
if _CHECKOUT.is_dir() and str(_CHECKOUT) not in torch_mlu.__path__:
    torch_mlu.__path__.insert(0, str(_CHECKOUT))  # the checkout's pure-Python subpackages win over an older install

if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--transfer":
        import torch_mlu.contrib.transfer_to_mlu  # noqa: F401

        args = args[1:]
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
