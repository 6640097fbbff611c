# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""torch.save / torch.load of mlu tensors, map_location, storage sharing."""

from __future__ import annotations

import io

import pytest
import torch


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


def test_save_load_keeps_device_and_values():
    t = torch.randn(3, 4).to("mlu:1")
    loaded = _roundtrip(t)
    assert loaded.device == torch.device("mlu:1")
    torch.testing.assert_close(loaded.cpu(), t.cpu())


def test_map_location():
    t = torch.arange(6.0, device="mlu")
    assert _roundtrip(t, map_location="mlu:1").device == torch.device("mlu:1")
    on_cpu = _roundtrip(t, map_location="cpu")
    assert on_cpu.device.type == "cpu"
    torch.testing.assert_close(on_cpu, torch.arange(6.0))
    assert _roundtrip(torch.ones(2), map_location="mlu").device.type == "mlu"


def test_shared_storage_survives():
    base = torch.arange(10.0, device="mlu")
    view = base[2:5]
    a, b = _roundtrip([base, view])
    b.fill_(-1)
    assert a[2:5].cpu().tolist() == [-1.0, -1.0, -1.0]


def test_module_state_dict():
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 2).mlu()
    sd = _roundtrip(m.state_dict(), map_location="mlu:1")
    m2 = torch.nn.Linear(4, 2).to("mlu:1")
    m2.load_state_dict(sd)
    x = torch.randn(3, 4)
    torch.testing.assert_close(m2(x.to("mlu:1")).cpu(), m(x.mlu()).cpu())


def test_load_to_missing_device_is_refused():
    with pytest.raises(RuntimeError, match="device_count"):
        _roundtrip(torch.ones(2, device="mlu"), map_location="mlu:5")


def test_storage_methods():
    s = torch.ones(3).untyped_storage().mlu()
    assert s.is_mlu and s.device.type == "mlu"
    assert s.cpu().tolist() == torch.ones(3).untyped_storage().tolist()
