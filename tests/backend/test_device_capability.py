# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.accelerator.get_device_capability("mlu")`` (torch_openreg's test_device.py asks the same of its device).

It raised "Backend doesn't support getting device capabilities" before the guard's ``getDeviceCapability``.
"""

from __future__ import annotations

import pytest
import torch


def test_capability_lists_the_dtypes_mlu_tensors_compute_with():
    caps = torch.accelerator.get_device_capability("mlu")
    dtypes = caps["supported_dtypes"]
    assert caps == torch.accelerator.get_device_capability(torch.device("mlu", 0))
    for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int8, torch.bool,
               torch.complex64):
        assert dt in dtypes
        assert torch.ones(2, dtype=dt, device="mlu").add(torch.ones(2, dtype=dt, device="mlu")).dtype == dt
    assert torch.float8_e4m3fn in dtypes
    assert torch.ones(2, device="mlu").to(torch.float8_e4m3fn).float().cpu().tolist() == [1.0, 1.0]
    assert not any(str(d).removeprefix("torch.") == "int1" for d in dtypes)  # sub-byte types are not claimed


def test_capability_of_a_missing_device_is_an_error():
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.accelerator.get_device_capability(torch.device("mlu", torch.mlu.device_count()))
