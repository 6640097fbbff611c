# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""AMP on mlu: torch.autocast("mlu") follows CUDA's cast policy; GradScaler("mlu") unscales and skips like CUDA."""

from __future__ import annotations

import pytest
import torch


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_autocast_policy(dtype):
    a = torch.randn(8, 8, device="mlu")
    w = torch.randn(4, 3, 3, 3, device="mlu")
    x = torch.randn(1, 3, 8, 8, device="mlu")
    with torch.autocast("mlu", dtype=dtype):
        assert torch.mm(a, a).dtype == dtype                     # lower_precision_fp
        assert torch.nn.functional.conv2d(x, w).dtype == dtype
        assert torch.nn.functional.linear(a, a).dtype == dtype
        low = torch.mm(a, a)
        assert torch.softmax(low, 1).dtype == torch.float32     # fp32 policy
        assert torch.log(low.abs() + 1).dtype == torch.float32
        assert (low + a).dtype == torch.float32                  # type promotion, untouched by autocast
    assert torch.mm(a, a).dtype == torch.float32


def test_autocast_values_close_to_fp32():
    a = torch.randn(16, 16)
    with torch.autocast("mlu", dtype=torch.bfloat16):
        out = torch.mm(a.mlu(), a.mlu())
    torch.testing.assert_close(out.float().cpu(), a @ a, atol=0.5, rtol=0.05)


def test_amp_module_and_supported_dtypes():
    assert torch.float16 in torch.mlu.get_amp_supported_dtype()
    with torch.mlu.amp.autocast(dtype=torch.bfloat16):
        assert torch.is_autocast_enabled("mlu")
        assert torch.get_autocast_dtype("mlu") == torch.bfloat16


def test_grad_scaler_steps_and_skips_like_cuda():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1).mlu()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("mlu", init_scale=1024.0, growth_interval=1)
    x = torch.randn(8, 4, device="mlu")

    before = [p.detach().clone() for p in model.parameters()]
    with torch.autocast("mlu", dtype=torch.float16):
        loss = model(x).float().square().mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2048.0  # finite grads: stepped and grew (growth_interval=1)
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters(), strict=True))

    opt.zero_grad()
    after_good = [p.detach().clone() for p in model.parameters()]
    loss = model(x).float().square().mean() * float("inf")
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0  # non-finite grads: step skipped, scale backed off by 0.5
    for a, p in zip(after_good, model.parameters(), strict=True):
        assert torch.equal(a, p)


def test_unscaled_grads_match_fp32():
    torch.manual_seed(1)
    ref = torch.nn.Linear(3, 2)
    x = torch.randn(5, 3)
    ref(x).sum().backward()
    model = torch.nn.Linear(3, 2).mlu()
    model.load_state_dict(ref.state_dict())
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    scaler = torch.amp.GradScaler("mlu", init_scale=256.0)
    scaler.scale(model(x.mlu()).sum()).backward()
    scaler.unscale_(opt)
    torch.testing.assert_close(model.weight.grad.cpu(), ref.weight.grad)
