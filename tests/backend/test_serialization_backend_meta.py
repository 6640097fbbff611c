# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Backend metadata (c10::BackendMeta) of mlu tensors through torch.save / torch.load.

The facts checked are torch_openreg's (test/cpp_extensions/open_registration_extension, its serialization test): a
fresh device tensor has no backend metadata; once set, it survives torch.save + torch.load onto the device; loaded
with ``map_location="cpu"`` the tensor has none. Our metadata is a layout tag (``torch.ops.torch_mlu.set_layout``).
"""

from __future__ import annotations

import io

import pytest
import torch

import torch_mlu  # noqa: F401

get_layout = torch.ops.torch_mlu.get_layout
set_layout = torch.ops.torch_mlu.set_layout


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


def test_backend_meta_survives_save_load_on_the_device_only():
    y = torch.empty(4, 4, dtype=torch.long).to("mlu")
    assert get_layout(y) is None
    set_layout(y, "NHWC")
    assert get_layout(y) == "NHWC"
    z1 = _roundtrip(y)
    assert z1.device.type == "mlu" and get_layout(z1) == "NHWC"
    z2 = _roundtrip(y, map_location="cpu")
    assert z2.device.type == "cpu" and get_layout(z2) is None
    z3 = _roundtrip(y, map_location="mlu:1")
    assert z3.device == torch.device("mlu:1") and get_layout(z3) == "NHWC"
    # an untagged tensor stays untagged; the other metadata (conj) still round-trips beside a tag
    assert get_layout(_roundtrip(torch.ones(2, device="mlu"))) is None
    c = torch.randn(3, dtype=torch.cfloat, device="mlu").conj()
    set_layout(c, "ARRAY")
    c2 = _roundtrip(c)
    assert c2.is_conj() and get_layout(c2) == "ARRAY"


def test_backend_meta_follows_shallow_copies_and_state_dicts():
    m = torch.nn.Conv2d(2, 4, 3).to("mlu")
    set_layout(m.weight, "NHWC")
    assert get_layout(m.weight.detach()) == "NHWC"  # a shallow copy keeps the ExtraMeta
    assert get_layout(m.weight.clone()) is None  # a fresh tensor starts untagged
    sd = _roundtrip(m.state_dict())
    assert get_layout(sd["weight"]) == "NHWC" and get_layout(sd["bias"]) is None


def test_unknown_layout_in_a_file_loads_untagged_with_a_warning(monkeypatch, capfd):
    t = torch.ones(3, device="mlu")
    real = torch._utils.get_tensor_metadata
    monkeypatch.setattr(torch._utils, "get_tensor_metadata", lambda x: {**real(x), "mlu_layout_FUTURE": True})
    buf = io.BytesIO()
    torch.save(t, buf)
    monkeypatch.undo()
    buf.seek(0)
    loaded = torch.load(buf)
    # torch._C._set_tensor_metadata has no Python warning handler: c10's warning goes to stderr
    assert "saved with layout 'FUTURE', which this torch_mlu does not know" in capfd.readouterr().err
    assert get_layout(loaded) is None and loaded.cpu().tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: set_layout(torch.ones(2, device="mlu"), "XYZ"), "unknown layout 'XYZ' \\(one of NCHW, NHWC"),
        (lambda: set_layout(torch.ones(2), "NHWC"), "expected an mlu tensor, got cpu"),
    ],
)
def test_bad_layout_is_a_clear_error(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()
