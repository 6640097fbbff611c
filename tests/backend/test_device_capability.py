# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.accelerator.get_device_capability("mlu")`` (torch_openreg's test_device.py asks the same of its device):
the standard types and the quantized types, which mlu tensors hold (quantized tensors compute like CPU's).

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


QINTS = (torch.qint8, torch.quint8, torch.qint32, torch.quint4x2, torch.quint2x4)


def test_capability_claims_every_dtype_torch_openreg_claims():
    # oracle: torch_openreg's test_device.py (test_device_capability) wants every dtype of
    # get_all_dtypes(include_complex32=True, include_qint=True); its guard claims all of c10::DeviceCapability's.
    from torch.testing._internal.common_dtype import get_all_dtypes

    dtypes = torch.accelerator.get_device_capability("mlu:1")["supported_dtypes"]
    assert [d for d in get_all_dtypes(include_complex32=True, include_qint=True) if d not in dtypes] == []


@pytest.mark.parametrize("dtype", QINTS, ids=str)
def test_claimed_quantized_types_quantize_on_mlu_like_cpu(dtype):
    assert dtype in torch.accelerator.get_device_capability("mlu")["supported_dtypes"]
    x = torch.randn(16, generator=torch.Generator().manual_seed(0))
    q = torch.quantize_per_tensor(x.to("mlu"), 0.05, 3, dtype)
    ref = torch.quantize_per_tensor(x, 0.05, 3, dtype)
    assert q.device.type == "mlu" and q.dtype == dtype
    assert torch.equal(q.dequantize().cpu(), ref.dequantize())


def test_capability_of_a_missing_device_is_an_error():
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.accelerator.get_device_capability(torch.device("mlu", torch.mlu.device_count()))
