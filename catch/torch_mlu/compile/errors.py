# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Errors of the mlu graph-mode backend."""

from __future__ import annotations


class FuseConfigError(ValueError):
    """A graph-mode environment variable (``FUSE_GROUP_DEBUG_MODE`` ...) has an invalid value."""
