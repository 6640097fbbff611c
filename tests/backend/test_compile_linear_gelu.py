# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""A linear layer and GELU as one op (torch_mlu.compile.linear_gelu, torch_mlu::linear_gelu).

Oracles: float64 GELU (``torch.special.erf``) and its derivative written out for the op; eager autograd on CPU for
compiled models; ATen's own float32 GELU for how close to float64 a float32 result gets.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from mlu_helpers import trains_like_cpu
from torch import nn

import torch_mlu.compile as mlu_compile
from torch_mlu.compile import kernels

linear_gelu = torch.ops.torch_mlu.linear_gelu


def _exact(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    h = F.linear(x.double(), w.double(), None if b is None else b.double())
    cdf = 0.5 * (1 + torch.special.erf(h / math.sqrt(2)))
    return h * cdf, cdf + h * torch.exp(-h * h / 2) / math.sqrt(2 * math.pi)


# (input shape, out features, bias): the transformer block's fc1 (the register-tiled path with Wᵀ packed), padded
# output columns, a 1-d input, no bias, and products too small for the tiled path (ATen's linear, then one GELU pass).
CASES = [((1, 512, 64), 256, True), ((3, 70, 90), 200, True), ((90,), 40, True), ((512, 64), 256, False),
         ((16, 64), 256, True), ((5, 7), 3, False)]


@pytest.mark.parametrize(("shape", "out_features", "with_bias"), CASES)
def test_linear_gelu_matches_float64_as_closely_as_aten(shape, out_features, with_bias):
    torch.manual_seed(0)
    x = torch.randn(*shape) * 2
    w = torch.randn(out_features, shape[-1]) / math.sqrt(shape[-1])
    b = torch.randn(out_features) if with_bias else None
    want, want_derivative = _exact(x, w, b)
    aten_error = (F.gelu(F.linear(x, w, b)).double() - want).abs().max().item()
    out, derivative = linear_gelu(x, w, b, True)
    assert out.shape == derivative.shape == want.shape and out.is_contiguous()
    # GEMM rounding dominates both errors; ours may sum in another order
    assert (out.double() - want).abs().max().item() <= 3 * aten_error + 1e-6
    torch.testing.assert_close(derivative.double(), want_derivative, rtol=0, atol=2e-6)
    alone, empty = linear_gelu(x, w, b)
    assert empty.numel() == 0
    torch.testing.assert_close(alone.double(), want, rtol=0, atol=3 * aten_error + 2e-6)


def test_linear_gelu_reads_a_strided_input():
    # input rows with a stride (a slice of a wider activation), as compiled code may pass them
    torch.manual_seed(0)
    wide = torch.randn(512, 128)
    x = wide[:, 32:96]
    w, b = torch.randn(256, 64) / 8, torch.randn(256)
    out, _ = linear_gelu(x, w, b)
    torch.testing.assert_close(out, F.gelu(F.linear(x.contiguous(), w, b)), rtol=1e-5, atol=1e-5)


def test_linear_gelu_saturates_and_keeps_nan():
    # Large |h|: GELU(h) = h above, 0 below (erf clamped to +-1); NaN propagates. Oracle: ATen's GELU.
    x = torch.tensor([[1.0], [-1.0], [float("nan")], [0.0]]).repeat(1, 16)
    w = torch.full((32, 16), 10.0)
    out, derivative = linear_gelu(x, w, None, True)
    want = F.gelu(F.linear(x, w))
    torch.testing.assert_close(out, want, equal_nan=True)
    assert derivative[0].eq(1).all() and derivative[1].eq(0).all() and derivative[2].isnan().all()


def test_linear_gelu_on_mlu_is_the_cpu_op():
    torch.manual_seed(0)
    x, w, b = torch.randn(8, 4, 64), torch.randn(256, 64) / 8, torch.randn(256)
    got = linear_gelu(x.to("mlu"), w.to("mlu"), b.to("mlu"), True)
    for mlu_result, cpu_result in zip(got, linear_gelu(x, w, b, True), strict=True):
        assert mlu_result.device.type == "mlu"
        torch.testing.assert_close(mlu_result.cpu(), cpu_result, rtol=1e-5, atol=1e-5)


def test_linear_gelu_backward_is_the_linear_layers():
    # Oracle: autograd through F.linear and F.gelu in float64.
    torch.manual_seed(0)
    x, w, b = (torch.randn(*s, dtype=torch.float32, requires_grad=True) for s in ((6, 5, 64), (256, 64), (256,)))
    grad = torch.randn(6, 5, 256)
    out, _ = linear_gelu(x, w, b, True)
    out.backward(grad)
    ref = [t.detach().double().requires_grad_() for t in (x, w, b)]
    F.gelu(F.linear(*ref)).backward(grad.double())
    for got, want in zip((x.grad, w.grad, b.grad), ref, strict=True):
        torch.testing.assert_close(got.double(), want.grad, rtol=1e-4, atol=1e-4)


def test_linear_gelu_refuses_a_double_backward():
    # its backward treats the saved derivative as a constant: a second derivative would be silently wrong
    x = torch.randn(4, 16, requires_grad=True)
    out, _ = linear_gelu(x, torch.randn(32, 16), None, True)
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(out.sum(), x, create_graph=True)


def test_linear_gelu_without_derivative_refuses_a_backward():
    w = torch.randn(32, 16, requires_grad=True)
    out, _ = linear_gelu(torch.randn(4, 16), w, None)
    with pytest.raises(RuntimeError, match="derivative=False"):
        out.sum().backward()


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16))


def test_compiled_mlp_uses_linear_gelu_and_trains_like_cpu(monkeypatch):
    monkeypatch.setenv(kernels.KERNELS_ENV, "catch")
    trains_like_cpu(_mlp, torch.randn(32, 16))
    forward, backward = mlu_compile.last_report().graphs
    (group,) = forward.groups
    assert group.kernels.get("torch_mlu.linear_gelu.default") == 1
    assert "aten.erf.default" not in group.ops and "aten.erf.default" not in backward.groups[0].ops


@pytest.mark.parametrize("setting", ["catch", "aten"])
def test_compiled_inference_matches_eager_cpu(monkeypatch, setting):
    monkeypatch.setenv(kernels.KERNELS_ENV, setting)
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _mlp().eval()
    x = torch.randn(512, 16)
    want = model(x)
    with torch.no_grad():
        got = torch.compile(model.to("mlu"), backend="mlu")(x.to("mlu"))
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)
    (group,) = mlu_compile.last_report().graphs[0].groups
    assert ("torch_mlu.linear_gelu.default" in group.kernels) is (setting == "catch")


class _NotFused(nn.Module):
    """GELUs the pass must leave alone: tanh-approximated, and after a linear whose result is also used elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.b(x)
        return F.gelu(self.a(x), approximate="tanh") + F.gelu(h) + h


def test_pass_leaves_other_gelus_alone(monkeypatch):
    monkeypatch.setenv(kernels.KERNELS_ENV, "catch")
    trains_like_cpu(_NotFused, torch.randn(8, 16))
    (group,) = mlu_compile.last_report().graphs[0].groups
    assert "torch_mlu.linear_gelu.default" not in group.kernels
