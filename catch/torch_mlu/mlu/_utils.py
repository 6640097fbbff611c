# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Device index parsing shared by ``torch.mlu`` (``torch.cuda._utils._get_device_index`` semantics)."""

from __future__ import annotations

import torch

from torch_mlu import _C


def _get_device_index(device: object, optional: bool = False, allow_cpu: bool = False) -> int:
    """Index of ``device`` (int, "mlu", "mlu:1", torch.device). ``None``/"mlu" without index: current device
    when ``optional`` (else ValueError). A non-mlu device raises ValueError, as torch.cuda does for non-cuda.
    Like torch.cuda's, it does not check the index against device_count()."""
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type == "cpu" and allow_cpu:
            return -1
        if device.type != "mlu":
            raise ValueError(f"Expected a mlu device, but got: {device}")
        device = device.index
    if device is None or device == -1:
        if not optional and device is None:
            raise ValueError("Expected a mlu device with a specified index or an integer, but got: None")
        return _C.current_device()
    if not isinstance(device, int):
        raise ValueError(f"Expected a mlu device index, got {device!r}")
    # Range checks happen where the index is used (as for CUDA), e.g. set_device or torch.load's own check.
    return device
