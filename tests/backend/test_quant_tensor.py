# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Quantized tensors on mlu (QuantizedPrivateUse1), as ATen gives them to cuda (QuantizedCUDA).

Oracle: the same calls on CPU tensors (ATen's QuantizedCPU kernels): bit-identical ``int_repr``, equal dequantized
values and qparams, and CPU's errors for the checks both devices share. Every call runs with the CPU fallback
forbidden, so a pass means the mlu kernels ran.
"""

from __future__ import annotations

import warnings

import pytest
import torch

import torch_mlu  # noqa: F401

pytestmark = [pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions.*deprecated"),
              pytest.mark.usefixtures("no_fallback")]


def _x(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * 3


def _same(q_cpu: torch.Tensor, q_mlu: torch.Tensor) -> None:
    assert q_mlu.device.type == "mlu" and q_mlu.is_quantized
    assert q_mlu.dtype == q_cpu.dtype and q_mlu.qscheme() == q_cpu.qscheme() and q_mlu.shape == q_cpu.shape
    assert torch.equal(q_mlu.int_repr().cpu(), q_cpu.int_repr())
    assert torch.equal(q_mlu.dequantize().cpu(), q_cpu.dequantize())


@pytest.mark.parametrize("qdtype", [torch.quint8, torch.qint8, torch.qint32])
def test_quantize_per_tensor_matches_cpu(qdtype):
    x = _x(5, 7)
    ref = torch.quantize_per_tensor(x, 0.05, 3 if qdtype == torch.quint8 else -2, qdtype)
    got = torch.quantize_per_tensor(x.to("mlu"), 0.05, 3 if qdtype == torch.quint8 else -2, qdtype)
    _same(ref, got)
    assert (got.q_scale(), got.q_zero_point()) == (ref.q_scale(), ref.q_zero_point())
    back = got.to("cpu")
    assert back.device.type == "cpu" and back.is_quantized
    assert torch.equal(back.int_repr(), ref.int_repr()) and back.q_scale() == ref.q_scale()
    # the qparams-as-tensors overload and the dynamic one
    t = torch.quantize_per_tensor(x.to("mlu"), torch.tensor(0.05, device="mlu"), torch.tensor(1, device="mlu"), qdtype)
    _same(torch.quantize_per_tensor(x, torch.tensor(0.05), torch.tensor(1), qdtype), t)
    if qdtype != torch.qint32:
        _same(torch.quantize_per_tensor_dynamic(x, qdtype, False),
              torch.quantize_per_tensor_dynamic(x.to("mlu"), qdtype, False))


@pytest.mark.parametrize(("qdtype", "axis"), [(torch.qint8, 0), (torch.quint8, 1)])
def test_quantize_per_channel_matches_cpu(qdtype, axis):
    x = _x(4, 6)
    n = x.shape[axis]
    scales = torch.linspace(0.02, 0.1, n, dtype=torch.double)
    zps = torch.arange(n) if qdtype == torch.quint8 else torch.zeros(n, dtype=torch.long)
    ref = torch.quantize_per_channel(x, scales, zps, axis, qdtype)
    got = torch.quantize_per_channel(x.to("mlu"), scales.to("mlu"), zps.to("mlu"), axis, qdtype)
    _same(ref, got)
    assert got.q_per_channel_axis() == axis
    assert got.q_per_channel_scales().device.type == "mlu"  # the qparams stay with the tensor, as on cuda
    assert torch.equal(got.q_per_channel_scales().cpu(), ref.q_per_channel_scales())
    assert torch.equal(got.q_per_channel_zero_points().cpu(), ref.q_per_channel_zero_points())
    back = got.to("cpu")
    assert torch.equal(back.int_repr(), ref.int_repr()) and torch.equal(back.dequantize(), ref.dequantize())
    assert back.q_per_channel_scales().device.type == "cpu"


def test_cpu_quantized_tensor_round_trips_and_views():
    ref = torch.quantize_per_tensor(_x(3, 4, 5), 0.1, 7, torch.quint8)
    got = ref.to("mlu")
    _same(ref, got)
    for view in (lambda q: q.t() if q.dim() == 2 else q.transpose(0, 2), lambda q: q[1:, ::2], lambda q: q.view(12, 5),
                 lambda q: q.unsqueeze(1).squeeze(1), lambda q: q.reshape(-1)):
        _same(view(ref), view(got))
        # .contiguous() first: ATen's _to_copy makes a non-dense quantized tensor's copy with empty_like on the
        # source's device (TensorConversions.cpp), on cuda as here
        assert torch.equal(view(got).contiguous().to("cpu").int_repr(), view(ref).int_repr())
    # a copy into an existing quantized tensor takes the source's quantizer, as copy_ does on CPU
    dst = torch._empty_affine_quantized([3, 4, 5], scale=1.0, zero_point=0, dtype=torch.quint8, device="mlu")
    dst.copy_(got)
    _same(ref, dst)
    assert dst.q_scale() == ref.q_scale() and dst.q_zero_point() == 7
    # a float source is quantized with the destination's qparams
    x = _x(3, 4, 5, seed=1)
    dst.copy_(x.to("mlu"))
    cpu_dst = ref.clone()
    cpu_dst.copy_(x)
    _same(cpu_dst, dst)


def test_factories():
    e = torch._empty_affine_quantized([2, 3], scale=0.5, zero_point=1, dtype=torch.qint8, device="mlu")
    assert (e.device.type, e.dtype, e.shape, e.q_scale(), e.q_zero_point()) == ("mlu", torch.qint8, (2, 3), 0.5, 1)
    like = torch.empty_like(e)
    assert like.device == e.device and like.q_scale() == 0.5
    pc = torch._empty_per_channel_affine_quantized([3, 2], scales=torch.ones(3, device="mlu"),
                                                   zero_points=torch.zeros(3, dtype=torch.long, device="mlu"),
                                                   axis=0, dtype=torch.quint8, device="mlu")
    assert pc.device.type == "mlu" and pc.qscheme() == torch.per_channel_affine


def test_quantized_ops_match_cpu():
    mask = torch.tensor([True, False, True]).unsqueeze(1).expand(3, 4)
    ops = {
        "clone": lambda q: q.clone(),
        "relu": torch.relu,
        "gelu": torch.nn.functional.gelu,
        "flip": lambda q: q.flip(0),
        "index_select": lambda q: q.index_select(1, torch.tensor([0, 2], device=q.device)),
        "max.dim": lambda q: q.max(1).values,
        "min.dim": lambda q: q.min(0).values,
        "relu_": lambda q: torch.relu_(q.clone()),
        "fill_": lambda q: q.clone().fill_(0.5),
        "masked_fill_": lambda q: q.clone().masked_fill_(mask.to(q.device), 1.0),
    }
    ref = torch.quantize_per_tensor(_x(3, 4), 0.1, 2, torch.quint8)
    got = ref.to("mlu")
    for name, op in ops.items():
        r, g = op(ref), op(got)
        assert g.device.type == "mlu", name
        assert torch.equal(g.int_repr().cpu(), r.int_repr()), name
    q = got.clone()
    assert torch.relu_(q) is q  # in place on the mlu tensor itself


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda d: torch.quantize_per_tensor(torch.randn(3, dtype=torch.double, device=d), 0.1, 0,
                                                         torch.quint8), id="double-input"),
        pytest.param(lambda d: torch.quantize_per_tensor(torch.randn(3, device=d), 0.1, 0, torch.float), id="dtype"),
        pytest.param(lambda d: torch.quantize_per_tensor(torch.randn(3, device=d), 0.1, 0, torch.quint8)
                     .requires_grad_(), id="requires-grad"),
        pytest.param(lambda d: torch.quantize_per_tensor(torch.randn(3, device=d), 0.1, 0, torch.quint8)
                     .float(), id="to-float"),
        pytest.param(lambda d: torch.empty(3, device=d).copy_(
            torch.quantize_per_tensor(torch.randn(3, device=d), 0.1, 0, torch.quint8)), id="copy-to-float"),
    ],
)
def test_errors_are_cpus(call):
    with pytest.raises(Exception) as cpu:  # noqa: PT011 - the oracle is whatever CPU raises
        call("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(type(cpu.value)) as mlu:
            call("mlu")
    assert str(mlu.value).splitlines()[0] == str(cpu.value).splitlines()[0]
