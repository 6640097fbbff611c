# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""``FUSE_GROUP_DEBUG_MODE``: how fusion groups execute (read at every group call, so it can change between runs).

- unset or empty: compiled (Inductor C++ kernels on the group's mlu memory);
- ``cpu``: the group's ATen graph runs eagerly on CPU copies of its inputs; outputs are copied back to mlu;
- ``eager``: the group's ATen graph runs as eager mlu kernels;
- ``layerwise``: node by node as eager mlu kernels, each node checked against the same op on CPU copies of its
  inputs; the first mismatch of a group (beyond ``FUSE_GROUP_DEBUG_RTOL``/``FUSE_GROUP_DEBUG_ATOL``, defaults
  1e-4/1e-5) is warned about and recorded in the group's report entry.

Nodes outside fusion groups always run as eager mlu kernels.
"""

from __future__ import annotations

import os

from torch_mlu.compile.errors import FuseConfigError

MODE_ENV = "FUSE_GROUP_DEBUG_MODE"
MODES = ("compiled", "cpu", "eager", "layerwise")


def debug_mode() -> str:
    """The current mode: one of :data:`MODES`. Raises :class:`FuseConfigError` for any other value."""
    value = os.environ.get(MODE_ENV, "").strip().lower()
    if not value:
        return "compiled"
    if value not in MODES:
        raise FuseConfigError(f"{MODE_ENV}={value!r}: expected one of cpu, eager, layerwise (or unset)")
    return value


def tolerances() -> tuple[float, float]:
    """(rtol, atol) for the layerwise check, from ``FUSE_GROUP_DEBUG_RTOL``/``FUSE_GROUP_DEBUG_ATOL``."""
    try:
        rtol = float(os.environ.get("FUSE_GROUP_DEBUG_RTOL", "1e-4"))
        atol = float(os.environ.get("FUSE_GROUP_DEBUG_ATOL", "1e-5"))
    except ValueError as exc:
        raise FuseConfigError(f"FUSE_GROUP_DEBUG_RTOL/ATOL: {exc}") from None
    if rtol < 0 or atol < 0:
        raise FuseConfigError(f"FUSE_GROUP_DEBUG_RTOL/ATOL must be >= 0, got {rtol:g}/{atol:g}")
    return rtol, atol
