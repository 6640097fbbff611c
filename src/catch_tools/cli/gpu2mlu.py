# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``scripts/torch_gpu2mlu.py`` (``catch gpu2mlu``): convert CUDA PyTorch scripts into mlu scripts with reports.

The converter is ``torch_mlu.migration`` (also installed with the backend as the console script ``torch_gpu2mlu``).
It is pure Python (``catch/torch_mlu/migration`` and the API table in ``catch/torch_mlu/contrib``), so it runs from
the checkout without the backend built or installed: the checkout's ``catch/torch_mlu`` directory is given as the
``torch_mlu`` package without running its ``__init__`` (which loads torch and the built backend), and an installed
``torch_mlu``, which may be an older build, is never imported. A conversion needs libcst (one line says so when it is
missing); ``--help`` needs nothing.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence

from catch_tools.errors import UserError
from catch_tools.paths import repo_root


def _converter() -> types.ModuleType:
    """``torch_mlu.migration.cli`` of the checkout (see the module doc).

    Raises:
        UserError: no Catch checkout (an installed tooling without one: use the backend's ``torch_gpu2mlu``).
    """
    try:
        checkout = repo_root() / "catch" / "torch_mlu"
    except FileNotFoundError as err:
        raise UserError(f"{err}: gpu2mlu runs the checkout's converter (catch/torch_mlu/migration); with the backend "
                        "installed, run torch_gpu2mlu instead") from None
    package = types.ModuleType("torch_mlu", "The checkout's pure-Python torch_mlu subpackages (no backend).")
    package.__path__ = [str(checkout)]
    sys.modules["torch_mlu"] = package  # whatever torch_mlu was importable: the checkout's converter is run
    from torch_mlu.migration import cli  # the package registered above: the checkout's converter

    return cli


def main(argv: Sequence[str] | None = None, prog: str = "torch_gpu2mlu.py") -> int:
    """Run the converter's command line (its own parser, whose program name is ``torch_gpu2mlu``); returns its exit
    status.

    Raises:
        UserError: the converter refuses its input (its one-line error, with file and line).
    """
    cli = _converter()
    try:
        return int(cli.main(argv))
    except cli.MigrationError as err:
        raise UserError(err.message, path=err.path, line=err.line) from None
