# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Scaled dot-product attention on mlu (the areas of torch_openreg's test_sdpa.py, with real values checked).

- ``scaled_dot_product_attention`` on mlu equals CPU, forward and backward (mlu's ``_fused_sdp_choice`` follows
  CPU's rules, so both run CPU's flash kernel).
- ``_scaled_dot_product_fused_attention_overrideable`` and its backward compute attention, log-sum-exp and
  gradients (torch_openreg's only allocate); oracle: CPU's math SDPA in float64, with autograd.
- ``torch.autocast("mlu", torch.bfloat16)`` casts SDPA inputs like CPU/CUDA autocast (it raised a dtype mismatch
  when the inputs had different dtypes, as in a bf16 Llama forward).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

OVERRIDEABLE = torch.ops.aten._scaled_dot_product_fused_attention_overrideable
OVERRIDEABLE_BWD = torch.ops.aten._scaled_dot_product_fused_attention_overrideable_backward


def _qkv(b=2, hq=4, hk=4, lq=5, lk=7, e=8, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(b, hq, lq, e, generator=g, dtype=dtype), torch.randn(b, hk, lk, e, generator=g, dtype=dtype),
            torch.randn(b, hk, lk, e, generator=g, dtype=dtype))


def _reference(q, k, v, bias, is_causal, scale):
    """CPU math SDPA in float64: output, log-sum-exp and gradients for upstream gradient ``go``."""
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    b64 = bias.double().requires_grad_() if bias is not None and bias.is_floating_point() else bias
    gqa = q.size(1) != k.size(1)
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(q64, k64, v64, attn_mask=b64, is_causal=is_causal, scale=scale,
                                             enable_gqa=gqa)
    kk = k64.repeat_interleave(q.size(1) // k.size(1), 1)
    s = (q64 @ kk.transpose(-2, -1)) * (scale if scale is not None else q.size(-1) ** -0.5)
    if bias is not None:
        s = s.masked_fill(~bias, float("-inf")) if bias.dtype == torch.bool else s + b64
    if is_causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).tril().logical_not(), float("-inf"))
    return out, s.logsumexp(-1), (q64, k64, v64, b64)


CASES = {
    "plain": {},
    "float-bias": {"bias": "float"},
    "bool-mask": {"bias": "bool"},
    "causal-scale": {"is_causal": True, "scale": 0.3},
    "gqa": {"hk": 2},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_overrideable_forward_and_backward_compute_attention(case):
    opts = CASES[case]
    q, k, v = _qkv(hk=opts.get("hk", 4))
    bias = None
    if opts.get("bias") == "float":
        bias = torch.randn(2, 1, 5, 7)
    elif opts.get("bias") == "bool":
        bias = torch.rand(5, 7) > 0.3
        bias[:, 0] = True  # no fully masked row
    is_causal, scale = opts.get("is_causal", False), opts.get("scale")
    ref_out, ref_lse, leaves = _reference(q, k, v, bias, is_causal, scale)
    mq, mk, mv = (t.to("mlu") for t in (q, k, v))
    mb = bias.to("mlu") if bias is not None else None
    res = OVERRIDEABLE(mq, mk, mv, attn_bias=mb, is_causal=is_causal, scale=scale)
    out, lse = res[0], res[1]
    assert out.device.type == "mlu" and out.dtype == q.dtype
    torch.testing.assert_close(out.cpu().double(), ref_out.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lse.cpu().double(), ref_lse.detach(), rtol=1e-5, atol=1e-5)

    go = torch.randn_like(q)
    ref_out.backward(go.double())
    grads = OVERRIDEABLE_BWD(go.to("mlu"), mq, mk, mv, mb, [True, True, True, mb is not None], out, lse, res[2],
                             res[3], res[4], res[5], 0.0, is_causal, res[6], res[7], scale=scale)
    for got, leaf in zip(grads[:3], leaves[:3], strict=True):
        torch.testing.assert_close(got.cpu().double(), leaf.grad, rtol=1e-4, atol=1e-5)
    if bias is not None and bias.is_floating_point():
        torch.testing.assert_close(grads[3].cpu().double(), leaves[3].grad, rtol=1e-4, atol=1e-5)


def test_overrideable_autograd_formula_uses_the_backward():
    q, k, v = _qkv()
    ref_out, _, leaves = _reference(q, k, v, None, False, None)
    ref_out.sum().backward()
    mq, mk, mv = (t.to("mlu").requires_grad_() for t in (q, k, v))
    OVERRIDEABLE(mq, mk, mv)[0].sum().backward()
    for got, leaf in zip((mq, mk, mv), leaves[:3], strict=True):
        torch.testing.assert_close(got.grad.cpu().double(), leaf.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("is_causal", [False, True])
def test_sdpa_matches_cpu(is_causal):
    q, k, v = (t.requires_grad_() for t in _qkv(lq=7))
    mq, mk, mv = (t.detach().to("mlu").requires_grad_() for t in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    mout = F.scaled_dot_product_attention(mq, mk, mv, is_causal=is_causal)
    torch.testing.assert_close(mout.cpu(), out, rtol=1e-6, atol=1e-6)
    out.pow(2).sum().backward()
    mout.pow(2).sum().backward()
    for a, b in ((mq, q), (mk, k), (mv, v)):
        torch.testing.assert_close(a.grad.cpu(), b.grad, rtol=1e-5, atol=1e-6)


def test_autocast_bf16_casts_sdpa_inputs_like_cpu():
    q, k, v = _qkv()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ref = F.scaled_dot_product_attention(q, k.bfloat16(), v)  # mixed input dtypes, as in a bf16 Llama forward
    with torch.autocast("mlu", dtype=torch.bfloat16):
        got = F.scaled_dot_product_attention(q.to("mlu"), k.bfloat16().to("mlu"), v.to("mlu"))
    assert got.dtype == ref.dtype == torch.bfloat16
    torch.testing.assert_close(got.cpu(), ref, rtol=0, atol=0)
