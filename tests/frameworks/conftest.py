# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Framework tests (tox env ``frameworks``): DeepSpeed and mmengine, installed from PyPI with the torch pin and no
native op builds, running their own MLU code paths on the emulated device."""

from __future__ import annotations

import torch

import torch_mlu  # noqa: F401  (a broken build fails loudly)

assert torch.mlu.is_available()
