# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``out=`` with an empty tensor (OpInfo's ``test_out_argument_empty``, run by torch_openreg's test_opinfo.py):
the output is resized to the result, silently, with the values CPU gives; a non-empty out of the wrong shape
warns as on CPU. Covers device kernels and an op that goes through the CPU fallback.
"""

from __future__ import annotations

import warnings

import pytest
import torch

CASES = {
    "add": lambda a, b, out: torch.add(a, b, out=out),
    "mm": lambda a, b, out: torch.mm(a, b, out=out),
    "sum": lambda a, b, out: torch.sum(a, 0, out=out),
    "cat": lambda a, b, out: torch.cat([a, b], out=out),
    "topk-values": lambda a, b, out: torch.topk(a.flatten(), 3, out=(out, torch.empty(0, dtype=torch.long,
                                                                                       device=out.device)))[0],
    "histc": lambda a, b, out: torch.histc(a, bins=4, out=out),  # CPU fallback
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_empty_is_resized_like_cpu(name):
    fn = CASES[name]
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(4, 4, generator=g), torch.randn(4, 4, generator=g)
    ref = fn(a, b, torch.empty(0))
    out = torch.empty(0, device="mlu")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*resized.*")
        got = fn(a.to("mlu"), b.to("mlu"), out)
    assert got.data_ptr() == out.data_ptr() or name == "topk-values"
    assert out.shape == ref.shape and out.device.type == "mlu"
    torch.testing.assert_close(out.cpu(), ref)


def test_out_wrong_nonempty_shape_warns_like_cpu():
    a = torch.ones(3)
    with pytest.warns(UserWarning, match="resized"):
        torch.add(a, 1, out=torch.empty(2))
    with pytest.warns(UserWarning, match="resized"):
        torch.add(a.to("mlu"), 1, out=torch.empty(2, device="mlu"))
