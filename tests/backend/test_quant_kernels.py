# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The native int8 kernels (torch.ops.torch_mlu.*) against references computed on the CPU by other code paths:
ATen's own quantizer for rounding, explicit integer arithmetic (int64, so the reference cannot overflow) for the
accumulators, and float32 arithmetic for the rescale. Also: torch.ao observers on mlu give the CPU qparams, and bad
input is a clear error."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.ao.quantization import observer as obs
from torch.nn import functional as tf

from torch_mlu.quantization import functional as F

DEV = "mlu"


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _rand_q(shape, dtype: torch.dtype, seed: int) -> torch.Tensor:
    lo, hi = (0, 256) if dtype == torch.uint8 else (-128, 128)
    return torch.randint(lo, hi, shape, generator=_gen(seed), dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("qdtype,scale,zero_point", [
    (torch.quint8, 0.02, 0), (torch.quint8, 0.0137, 3), (torch.quint8, 0.02, 128), (torch.quint8, 1e-3, 255),
    (torch.qint8, 0.02, 0), (torch.qint8, 0.5, -7), (torch.qint8, 0.0137, 100), (torch.qint8, 0.003, -128),
])
def test_quantize_matches_aten_quantizer(qdtype, scale, zero_point):
    x = torch.randn(200_000, generator=_gen(1)) * 4
    # exact ties of round-half-to-even: (k + 0.5) * scale for a power-of-two scale
    ties = (torch.arange(-20, 20, dtype=torch.float32) + 0.5) * 0.25
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized-tensor creation functions are deprecated upstream
        ref = torch.quantize_per_tensor(x, scale, zero_point, qdtype).int_repr()
        ref_ties = torch.quantize_per_tensor(ties, 0.25, zero_point, qdtype).int_repr()
    got = F.quantize_int8(x.to(DEV), scale, zero_point, qdtype)
    assert got.device.type == "mlu" and got.dtype == ref.dtype
    assert torch.equal(got.cpu(), ref)
    assert torch.equal(F.quantize_int8(ties.to(DEV), 0.25, zero_point, qdtype).cpu(), ref_ties)


@pytest.mark.parametrize("adtype,zp", [(torch.uint8, 131), (torch.int8, -5), (torch.uint8, 0)])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 5, 33), (64, 48, 300)])
def test_int8_mm_is_integer_exact(adtype, zp, m, n, k):
    a = _rand_q((m, k), adtype, 2)
    b = _rand_q((n, k), torch.int8, 3)
    ref = (a.to(torch.int64) - zp) @ b.to(torch.int64).T
    got = F.int8_mm(a.to(DEV), zp, b.to(DEV))
    assert got.dtype == torch.int32 and got.device.type == "mlu"
    assert torch.equal(got.cpu().to(torch.int64), ref)


def test_int8_mm_extreme_values_do_not_overflow():
    k = 65536  # the documented bound: |a - zp| <= 255, |b| <= 128
    a = torch.full((2, k), 255, dtype=torch.uint8)
    b = torch.full((3, k), -128, dtype=torch.int8)
    got = F.int8_mm(a.to(DEV), 0, b.to(DEV)).cpu().to(torch.int64)
    assert torch.equal(got, torch.full((2, 3), 255 * -128 * k, dtype=torch.int64))


@pytest.mark.parametrize("with_bias", [True, False])
def test_int8_linear_rescales_the_exact_accumulator(with_bias):
    x = _rand_q((4, 6, 40), torch.uint8, 4)  # leading dims are batch dims
    w = _rand_q((9, 40), torch.int8, 5)
    ws = torch.rand(9, generator=_gen(6)) * 0.01 + 1e-4
    bias = torch.randn(9, generator=_gen(7)) if with_bias else None
    x_scale, x_zp = 0.037, 17
    acc = (x.to(torch.int64) - x_zp) @ w.to(torch.int64).T
    ref = acc.to(torch.float32) * (torch.tensor(x_scale, dtype=torch.float32) * ws)
    if bias is not None:
        ref = ref + bias
    got = F.int8_linear(x.to(DEV), x_scale, x_zp, w.to(DEV), ws.to(DEV), None if bias is None else bias.to(DEV))
    assert got.shape == (4, 6, 9) and got.dtype == torch.float32
    torch.testing.assert_close(got.cpu(), ref, rtol=1e-6, atol=1e-6)


def _conv_ref_int64(x, zp, w, stride, padding, dilation, groups):
    """Direct convolution in int64: pad with the zero point, subtract it, sum tap by tap."""
    xp = tf.pad(x.to(torch.int64), (padding[1], padding[1], padding[0], padding[0]), value=zp) - zp
    n, c, h, wd = xp.shape
    oc, cg, kh, kw = w.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = torch.zeros((n, oc, oh, ow), dtype=torch.int64)
    ocg = oc // groups
    w64 = w.to(torch.int64)
    for g in range(groups):
        xs_g = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                y0, x0 = i * dilation[0], j * dilation[1]
                rows = slice(y0, y0 + stride[0] * (oh - 1) + 1, stride[0])
                cols = slice(x0, x0 + stride[1] * (ow - 1) + 1, stride[1])
                patch = xs_g[:, :, rows, cols]
                taps = w64[g * ocg:(g + 1) * ocg, :, i, j]
                out[:, g * ocg:(g + 1) * ocg] += (patch.unsqueeze(1) * taps[None, :, :, None, None]).sum(2)
    return out


@pytest.mark.parametrize("adtype,zp", [(torch.uint8, 9), (torch.int8, -3)])
@pytest.mark.parametrize("geom", [
    dict(stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1),
    dict(stride=(2, 1), padding=(0, 2), dilation=(2, 1), groups=2),
    dict(stride=(1, 2), padding=(2, 0), dilation=(1, 1), groups=4),
])
def test_int8_conv2d_is_integer_exact_and_rescaled(adtype, zp, geom):
    x = _rand_q((3, 4, 9, 8), adtype, 8)
    w = _rand_q((8, 4 // geom["groups"], 3, 3), torch.int8, 9)
    ref = _conv_ref_int64(x, zp, w, **geom)
    acc = F.int8_conv2d_acc(x.to(DEV), zp, w.to(DEV), geom["stride"], geom["padding"], geom["dilation"],
                            geom["groups"])
    assert acc.dtype == torch.int32 and acc.device.type == "mlu"
    assert torch.equal(acc.cpu().to(torch.int64), ref)
    ws = torch.rand(8, generator=_gen(10)) * 0.01 + 1e-4
    bias = torch.randn(8, generator=_gen(11))
    out = F.int8_conv2d(x.to(DEV), 0.05, zp, w.to(DEV), ws.to(DEV), bias.to(DEV), geom["stride"], geom["padding"],
                        geom["dilation"], geom["groups"])
    expect = ref.to(torch.float32) * (torch.tensor(0.05, dtype=torch.float32) * ws)[None, :, None, None] + \
        bias[None, :, None, None]
    torch.testing.assert_close(out.cpu(), expect, rtol=1e-6, atol=1e-6)


def test_cpu_and_mlu_kernels_agree():
    x = _rand_q((2, 3, 5, 5), torch.uint8, 12)
    w = _rand_q((4, 3, 3, 3), torch.int8, 13)
    args = ([1, 1], [1, 1], [1, 1], 1)
    assert torch.equal(F.int8_conv2d_acc(x, 4, w, *args), F.int8_conv2d_acc(x.to(DEV), 4, w.to(DEV), *args).cpu())


def _feed(observer, batches, device):
    ob = observer().to(device)
    for b in batches:
        ob(b.to(device))
    return ob.calculate_qparams()


@pytest.mark.parametrize("observer", [
    obs.MinMaxObserver.with_args(dtype=torch.quint8),
    obs.MinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric),
    obs.MovingAverageMinMaxObserver.with_args(dtype=torch.quint8),
    obs.HistogramObserver.with_args(dtype=torch.quint8, reduce_range=False),
    obs.PerChannelMinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_channel_symmetric, ch_axis=0),
    obs.MovingAveragePerChannelMinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_channel_symmetric),
], ids=["minmax", "minmax-sym", "moving-avg", "histogram", "per-channel", "moving-avg-per-channel"])
def test_observers_on_mlu_compute_cpu_qparams(observer):
    batches = [torch.randn(16, 8, 5, generator=_gen(20 + i)) * (1 + i) + i * 0.3 for i in range(4)]
    cpu_scale, cpu_zp = _feed(observer, batches, "cpu")
    mlu_scale, mlu_zp = _feed(observer, batches, DEV)
    assert mlu_scale.device.type == "mlu"
    torch.testing.assert_close(mlu_scale.cpu(), cpu_scale, rtol=1e-6, atol=0)
    assert torch.equal(mlu_zp.cpu(), cpu_zp)


def _fake_quant_run(ctor, batches, device):
    fq = ctor().to(device)
    outs, grads = [], []
    for b in batches:
        x = b.detach().to(device).requires_grad_()
        y = fq(x)
        (y * torch.arange(y.numel(), device=device).reshape(y.shape)).sum().backward()
        outs.append(y.detach().cpu())
        grads.append(x.grad.cpu())
    scale, zp = fq.calculate_qparams()
    return outs, grads, scale.cpu(), zp.cpu()


@pytest.mark.parametrize("name", ["default_fake_quant", "default_per_channel_weight_fake_quant",
                                  "default_fused_act_fake_quant", "default_fused_per_channel_wt_fake_quant"])
def test_fake_quantize_on_mlu_matches_cpu_without_fallback(name):
    from torch.ao.quantization import fake_quantize

    ctor = getattr(fake_quantize, name)
    batches = [torch.randn(6, 5, 3, generator=_gen(40 + i)) * (1 + i) for i in range(3)]
    ref = _fake_quant_run(ctor, batches, "cpu")
    torch.mlu.reset_fallback_report()
    torch.mlu.set_fallback_strict(True)
    try:
        got = _fake_quant_run(ctor, batches, DEV)
    finally:
        torch.mlu.set_fallback_strict(False)
    assert torch.mlu.fallback_report() == {}
    for a, b in zip(ref[0] + ref[1], got[0] + got[1], strict=True):
        torch.testing.assert_close(b, a, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got[2], ref[2], rtol=1e-6, atol=0)
    assert torch.equal(got[3], ref[3])


@pytest.mark.parametrize("call,match", [
    (lambda: F.quantize_int8(torch.ones(3, dtype=torch.float16, device=DEV), 0.1, 0, torch.quint8),
     "expected a float32 tensor"),
    (lambda: F.quantize_int8(torch.ones(3, device=DEV), 0.0, 0, torch.quint8), "scale must be a positive"),
    (lambda: F.quantize_int8(torch.ones(3, device=DEV), 0.1, 300, torch.quint8), "zero_point 300 is outside"),
    (lambda: F.int8_mm(torch.ones(2, 3, device=DEV), 0, torch.ones(2, 3, dtype=torch.int8, device=DEV)),
     "expected a uint8 or int8 quantized activation"),
    (lambda: F.int8_mm(torch.ones(2, 3, dtype=torch.uint8, device=DEV), 0, torch.ones(2, 3, dtype=torch.uint8,
                                                                                        device=DEV)),
     "expected int8 weights"),
    (lambda: F.int8_mm(torch.ones(2, 3, dtype=torch.uint8, device=DEV), 0, torch.ones(2, 4, dtype=torch.int8,
                                                                                        device=DEV)),
     "reduction sizes differ"),
    (lambda: F.int8_linear(torch.ones(2, 3, dtype=torch.uint8, device=DEV), 0.1, 0,
                           torch.ones(2, 3, dtype=torch.int8), torch.ones(2), None), "expected the weight on mlu:0"),
    (lambda: F.int8_linear(torch.ones(2, 3, dtype=torch.uint8, device=DEV), 0.1, 0,
                           torch.ones(2, 3, dtype=torch.int8, device=DEV), torch.ones(3, device=DEV), None),
     r"float32 weight scales of shape \(2\)"),
    (lambda: F.int8_conv2d_acc(torch.ones(1, 3, 2, 2, dtype=torch.uint8, device=DEV), 0,
                               torch.ones(4, 3, 3, 3, dtype=torch.int8, device=DEV), [1, 1], [0, 0], [1, 1], 1),
     "does not fit"),
    (lambda: F.int8_mm(torch.ones(1, 70000, dtype=torch.uint8, device=DEV), 0,
                       torch.ones(1, 70000, dtype=torch.int8, device=DEV)), "exceeds 65536"),
    (lambda: F.quantize_int8(torch.ones(3, device=DEV), 0.1, 0, torch.float16), "supports quint8/qint8"),
])
def test_bad_input_is_a_clear_error(call, match):
    with pytest.raises((RuntimeError, ValueError), match=match):
        call()
