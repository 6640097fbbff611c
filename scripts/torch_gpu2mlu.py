#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Convert CUDA PyTorch scripts into mlu scripts with reports (``torch_gpu2mlu``). See --help.

Thin entry point over :mod:`catch_tools.cli.gpu2mlu` (also ``catch gpu2mlu``), which runs the checkout's converter
(``catch/torch_mlu/migration``) without the backend built or installed.
"""

import sys

from catch_tools.cli.gpu2mlu import main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
