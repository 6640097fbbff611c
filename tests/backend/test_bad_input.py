# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Bad input is refused like CUDA refuses it: clear errors, no crash."""

from __future__ import annotations

import pytest
import torch
from mlu_helpers import run_python

from torch_mlu import _C


def test_device_index_out_of_range():
    d = torch.device("mlu:7")  # constructing the device is fine, as for CUDA ...
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.empty(2, device=d)  # ... using it is not
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.ones(2).to("mlu:7")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.mlu.set_device(7)
    assert torch.mlu.current_device() == 0


def test_mixed_mlu_devices_refused():
    with pytest.raises(RuntimeError, match=r"same device, but found at least two devices, mlu:0 and mlu:1"):
        torch.ones(2, device="mlu:0") + torch.ones(2, device="mlu:1")
    with pytest.raises(RuntimeError, match="same device"):
        torch.mm(torch.ones(2, 2, device="mlu:1"), torch.ones(2, 2, device="mlu:0"))


def test_mlu_and_cpu_refused():
    with pytest.raises(RuntimeError, match=r"mlu:0 and cpu"):
        torch.ones(3, device="mlu") * torch.ones(3)
    with pytest.raises(RuntimeError, match="same device"):
        torch.nn.functional.linear(torch.ones(2, 3, device="mlu"), torch.ones(4, 3))


def test_freed_and_foreign_pointers_are_errors():
    p = _C._rt_malloc(0, 256)
    assert _C._rt_pointer_type(p) == "device"
    _C._rt_free(p)
    assert _C._rt_pointer_type(p) == "unregistered"
    with pytest.raises(RuntimeError, match="invalid pointer"):
        _C._rt_free(p)  # double free
    with pytest.raises(RuntimeError, match="invalid pointer"):
        _C._rt_memcpy_d2h(p, 16)  # use after free
    host = torch.ones(4)
    with pytest.raises(RuntimeError, match="invalid pointer"):
        _C._rt_free(host.data_ptr())  # foreign (host) pointer
    q = _C._rt_malloc(1, 64)
    with pytest.raises(RuntimeError, match="invalid pointer"):
        _C._rt_memcpy_d2h(q + 32, 64)  # runs past the end of the allocation
    _C._rt_free(q)


def test_device_pointers_are_not_host_addresses():
    t = torch.ones(4, device="mlu")
    assert _C._rt_pointer_type(t.data_ptr()) == "device"
    assert _C._rt_pointer_type(torch.ones(4).data_ptr()) == "unregistered"


def test_oom_is_out_of_memory_error():
    out = run_python("import torch\ntry:\n    torch.empty(2**40, dtype=torch.uint8, device='mlu')\n"
                     "except torch.OutOfMemoryError as e:\n"
                     "    print('OOM', 'Tried to allocate 1024.00 GiB' in str(e))\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "OOM True"


def test_bad_stream_and_event_use():
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.mlu.Stream(device="mlu:9")
    with pytest.raises(ValueError, match="Expected a mlu device"):
        torch.mlu.current_stream("cpu")
