# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The combined wheel: upstream torch + the series + the Catch backend (``torch_mlu``) in one wheel.

- :mod:`.zipraw`   -- raw (no recompression) zip member copy and a minimal zip writer.
- :mod:`.record`   -- RECORD parsing, writing and verification (cached by file hash).
- :mod:`.metadata` -- version, entry points and ``torch/version.py`` edits.
- :mod:`.inputs`   -- validation of the upstream wheel against the pin and of the backend wheel.
- :mod:`.overlay`  -- the overlay build (default mode).
- :mod:`.source`   -- the source build plan (``--from-source``).
- :mod:`.sources`  -- obtaining the input wheels (pip download, pip wheel of ``catch/``).
- the command line (``scripts/build_wheel.py``) is :mod:`catch_tools.cli.wheel`.
"""

from catch_tools.wheel.overlay import BuildResult, build_overlay

__all__ = ["BuildResult", "build_overlay"]
