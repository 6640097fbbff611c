# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Backend tests need torch_mlu built and installed (tox env ``backend``).

Importing torch_mlu here (instead of skipping when it is missing) makes a broken build fail the run loudly.
"""

from __future__ import annotations

import pytest
import torch

import torch_mlu  # noqa: F401  (registers torch.mlu even with TORCH_DEVICE_BACKEND_AUTOLOAD=0)


@pytest.fixture(autouse=True)
def _sync_after_test():
    yield
    torch.mlu.synchronize()


@pytest.fixture
def no_fallback():
    """The test runs with the CPU fallback refused (``torch.mlu.set_fallback_strict``): a pass means mlu kernels ran."""
    torch.mlu.set_fallback_strict(True)
    try:
        yield
    finally:
        torch.mlu.set_fallback_strict(False)
