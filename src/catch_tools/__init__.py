# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Catch tooling: the patch engine, rebase, the combined-wheel build and the native interface check.

Layout (one job per module):

- :mod:`catch_tools.errors`      -- ``UserError`` and the CLI wrapper that turns it into one line and exit code.
- :mod:`catch_tools.pin`         -- the pin manifest ``patches/manifest.toml`` (upstream tag, commit, wheel version).
- :mod:`catch_tools.paths`       -- where the project's directories are.
- :mod:`catch_tools.patches`     -- the patch engine behind ``scripts/apply_patches.py``.
- :mod:`catch_tools.wheel`       -- the combined wheel behind ``scripts/build_wheel.py``.
- :mod:`catch_tools.interfaces`  -- the native interface check behind ``scripts/check_native_interfaces.py``.
- :mod:`catch_tools.rebase`      -- the series upgrade behind ``scripts/rebase.py``.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
