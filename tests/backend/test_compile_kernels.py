# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Catch's kernels in compiled fusion groups: ``torch_mlu.attention`` / ``attention_backward`` return what
ATen's CPU flash-attention kernels return, in the same layouts, and hand back to them what they do not handle;
``torch_mlu.mm`` / ``addmm`` equal the ATen products on every operand layout; the max-pooling kernels return ATen's
values, indices and gradients bit for bit and the convolution kernels ATen's results and gradients; the
post-grad pass swaps in only the calls the kernels handle; a compiled transformer block uses them, reports them,
and still matches eager, also with ``CATCH_FUSE_KERNELS=aten``."""

from __future__ import annotations

import copy
import importlib.util
import math
import operator
import warnings

import pytest
import torch
import torch.nn.functional as F
from mlu_helpers import REPO, trains_like_cpu
from torch._subclasses.fake_tensor import FakeTensorMode

import torch_mlu.compile as mlu_compile
from torch_mlu.compile import backend as mlu_backend
from torch_mlu.compile import kernels, saved_probs

aten = torch.ops.aten
FLASH = aten._scaled_dot_product_flash_attention_for_cpu.default
FLASH_BACKWARD = aten._scaled_dot_product_flash_attention_for_cpu_backward.default
ATTENTION = torch.ops.torch_mlu.attention.default
ATTENTION_BACKWARD = torch.ops.torch_mlu.attention_backward.default
ATTENTION_WITH_PROBS = torch.ops.torch_mlu.attention_with_probs.default
ATTENTION_BACKWARD_WITH_PROBS = torch.ops.torch_mlu.attention_backward_with_probs.default


def _qkv(b: int, h: int, lq: int, lk: int, d: int, dtype: torch.dtype = torch.float32) -> list[torch.Tensor]:
    """q as a strided view of a packed projection (as models produce it), k and v contiguous."""
    g = torch.Generator().manual_seed(b * 1000 + h * 100 + lq + lk + d)
    packed = torch.randn(b, lq, 3 * h * d, generator=g, dtype=dtype)
    q = packed[..., : h * d].view(b, lq, h, d).transpose(1, 2)
    k = torch.randn(b, h, lk, d, generator=g, dtype=dtype)
    v = 2 * torch.randn(b, h, lk, d, generator=g, dtype=dtype)
    return [q, k, v]


def _close(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, what
    assert got.stride() == want.stride(), f"{what}: strides {got.stride()} != {want.stride()}"
    scale = want.abs().max().item()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6 + 1e-5 * scale, msg=what)


# (batch, heads, query length, key length, head dim). Head dims that are whole 16-float vectors take the
# register-tiled path at any size: the benchmark's shape, small heads, key lengths that are not whole vectors, query
# lengths that are not whole row blocks or tiles, two vectors per row. The others take the whole-matrix GEMM path
# above its threshold (2 Mi multiply-adds per product): lengths that are not whole vectors, head dims 1, 2 and 24.
SHAPES = [(1, 4, 512, 512, 16), (8, 4, 64, 64, 16), (2, 3, 301, 333, 32), (1, 2, 77, 1030, 64),
          (2, 3, 301, 333, 24), (1, 1, 1500, 1500, 1), (2, 2, 1024, 1030, 2)]


@pytest.mark.parametrize(("b", "h", "lq", "lk", "d"), SHAPES)
def test_attention_matches_flash_forward_and_backward(b, h, lq, lk, d):
    q, k, v = _qkv(b, h, lq, lk, d)
    want_out, want_lse = FLASH(q, k, v, scale=0.3)
    got_out, got_lse = ATTENTION(q, k, v, scale=0.3)
    _close(got_out, want_out, "output")
    _close(got_lse, want_lse, "logsumexp")
    grad_out = torch.randn_like(want_out)
    want = FLASH_BACKWARD(grad_out, q, k, v, want_out, want_lse, 0.0, False, scale=0.3)
    got = ATTENTION_BACKWARD(grad_out, q, k, v, got_out, got_lse, scale=0.3)
    for name, g, w in zip(("grad_query", "grad_key", "grad_value"), got, want, strict=True):
        _close(g, w, name)


@pytest.mark.parametrize("d", [16, 24])
@pytest.mark.parametrize("scale", [3.0, 10.0])
def test_attention_with_a_sharp_softmax_is_as_accurate_as_flash(scale, d):
    # Logits 10 to 30 times those of the test above (scores tens apart in a row) stress exp's range reduction, its
    # flush to 0 and the log-sum-exp. Head dim 16 takes the register-tiled path, 24 the whole-matrix one.
    q, k, v = _qkv(1, 2, 300, 333, d)
    grad_out = torch.randn(1, 300, 2, d, generator=torch.Generator().manual_seed(3)).transpose(1, 2)
    _assert_as_accurate_as_flash(q, k, v, grad_out, scale)


@pytest.mark.parametrize("lk", [512, 333])
def test_attention_rows_of_scores_far_below_zero(lk):
    # Every score of every row between -640 and -160 after scaling: exp relative to anything but the row's own maximum
    # underflows to 0 (and 0 / 0 is NaN). 512 keys take the product that also finds each row's maximum, 333 (not
    # whole vectors, so the product has padding columns of zero scores) a separate pass.
    g = torch.Generator().manual_seed(5)
    q = torch.rand(1, 2, 64, 16, generator=g) + 1
    k = -(torch.rand(1, 2, lk, 16, generator=g) + 1)
    v = torch.randn(1, 2, lk, 16, generator=g)
    grad_out = torch.randn(1, 2, 64, 16, generator=g)
    _assert_as_accurate_as_flash(q, k, v, grad_out, scale=10.0)
    assert FLASH(q, k, v, scale=10.0)[1].max() < -100


@pytest.mark.parametrize("magnitude", [1e2, 1e4, 1e5])
def test_attention_with_huge_scores_is_as_accurate_as_flash(magnitude):
    # Scores of 1e4 to 1e10: each row's softmax is one-hot, and exp's argument must come out exactly 0 at the row's
    # maximum. Formed as x c - max c, it was off by max c's rounding (over 127 past 2^31: NaN outputs); and a
    # log-sum-exp rounded several times left the backward's P far from 1 there (grad_value inf). The input gradients
    # are as ill-conditioned for flash as for Catch's kernels, so the test compares output, log-sum-exp and the value
    # gradient, against the flash op's own float32 error from its float64 result, with and without P kept.
    g = torch.Generator().manual_seed(3)
    q, k = (magnitude * torch.randn(1, 2, 64, 16, generator=g) for _ in range(2))
    v, grad_out = (torch.randn(1, 2, 64, 16, generator=g) for _ in range(2))
    exact = FLASH(q.double(), k.double(), v.double(), scale=0.25)
    exact_grad_v = FLASH_BACKWARD(grad_out.double(), q.double(), k.double(), v.double(), *exact, 0.0, False,
                                  scale=0.25)[2]
    flash = FLASH(q, k, v, scale=0.25)
    flash_grad_v = FLASH_BACKWARD(grad_out, q, k, v, *flash, 0.0, False, scale=0.25)[2]
    out, lse = ATTENTION(q, k, v, scale=0.25)
    grad_v = ATTENTION_BACKWARD(grad_out, q, k, v, out, lse, scale=0.25)[2]
    out_p, lse_p, probs = ATTENTION_WITH_PROBS(q, k, v, scale=0.25)
    grad_v_p = ATTENTION_BACKWARD_WITH_PROBS(grad_out, q, k, v, out_p, probs, scale=0.25)[2]

    def error(got: torch.Tensor, want: torch.Tensor) -> float:
        return ((got.double() - want).abs().max() / want.abs().max()).item()

    for name, got, ref, want in (("output", out, flash[0], exact[0]), ("logsumexp", lse, flash[1], exact[1]),
                                 ("grad_value", grad_v, flash_grad_v, exact_grad_v),
                                 ("output with P", out_p, flash[0], exact[0]),
                                 ("logsumexp with P", lse_p, flash[1], exact[1]),
                                 ("grad_value from P", grad_v_p, flash_grad_v, exact_grad_v)):
        assert error(got, want) <= 1.5 * error(ref, want) + 1e-7, name


def _assert_as_accurate_as_flash(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, grad_out: torch.Tensor,
                                 scale: float) -> None:
    """Catch's float32 outputs and gradients are no further from ATen's flash kernels in float64 than the flash
    kernels' own float32 results are, with 50 % slack for rounding; and laid out as the flash kernels lay out theirs."""
    exact = FLASH(q.double(), k.double(), v.double(), scale=scale)
    exact_grads = FLASH_BACKWARD(grad_out.double(), q.double(), k.double(), v.double(), *exact, 0.0, False,
                                 scale=scale)
    flash = FLASH(q, k, v, scale=scale)
    flash_grads = FLASH_BACKWARD(grad_out, q, k, v, *flash, 0.0, False, scale=scale)
    catch = ATTENTION(q, k, v, scale=scale)
    catch_grads = ATTENTION_BACKWARD(grad_out, q, k, v, *catch, scale=scale)

    def error(got: torch.Tensor, want: torch.Tensor) -> float:
        return ((got.double() - want).abs().max() / want.abs().max()).item()

    names = ("output", "logsumexp", "grad_query", "grad_key", "grad_value")
    for name, got, ref, want in zip(names, (*catch, *catch_grads), (*flash, *flash_grads), (*exact, *exact_grads),
                                    strict=True):
        assert got.stride() == ref.stride(), f"{name}: strides {got.stride()} != {ref.stride()}"
        assert error(got, want) <= 1.5 * error(ref, want) + 1e-7, name


# (batch, heads, query length, key length, head dim, scale): the tiled path with key lengths that are and are not
# whole vectors, a sharp softmax, several heads and batches; head dim 24 takes ATen's ops.
PROBS_CASES = [(1, 4, 512, 512, 16, 0.25), (2, 3, 301, 333, 32, 0.3), (1, 2, 300, 333, 16, 10.0),
               (2, 2, 100, 160, 24, 0.3)]


def _unfused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, grad_out: torch.Tensor,
                       scale: float) -> list[torch.Tensor]:
    """Output and input gradients of ``softmax(scale q kᵀ) v`` through ATen's ops and autograd (the eager
    computation that a training graph's attention pattern replaces), in the inputs' dtype."""
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out = torch.softmax(leaves[0] @ leaves[1].transpose(-2, -1) * scale, dim=-1) @ leaves[2]
    out.backward(grad_out)
    return [out.detach(), *(t.grad for t in leaves)]


@pytest.mark.parametrize(("b", "h", "lq", "lk", "d", "scale"), PROBS_CASES)
def test_attention_with_probs_is_as_accurate_as_aten_and_laid_out_as_its_fake(b, h, lq, lk, d, scale):
    # Oracle: the unfused attention in float64 (ATen's matmul, softmax and autograd). Catch's float32 output and
    # gradients must be within twice the error of the better-rounded of ATen's two float32 computations (the flash
    # kernels and the unfused ops), and P's error within twice that of ATen's float32 softmax(scale q kᵀ).
    q, k, v = _qkv(b, h, lq, lk, d)
    grad_out = torch.randn(b, lq, h, d, generator=torch.Generator().manual_seed(7)).transpose(1, 2)
    out, lse, probs = ATTENTION_WITH_PROBS(q, k, v, scale=scale)
    grads = ATTENTION_BACKWARD_WITH_PROBS(grad_out, q, k, v, out, probs, scale=scale)
    exact = _unfused_attention(q.double(), k.double(), v.double(), grad_out.double(), scale)
    unfused = _unfused_attention(q, k, v, grad_out, scale)
    flash = FLASH(q, k, v, scale=scale)
    flash_all = [flash[0], *FLASH_BACKWARD(grad_out, q, k, v, *flash, 0.0, False, scale=scale)]

    def error(got: torch.Tensor, want: torch.Tensor) -> float:
        return ((got.double() - want).abs().max() / want.abs().max()).item()

    names = ("output", "grad_query", "grad_key", "grad_value")
    for name, got, *refs, want in zip(names, (out, *grads), flash_all, unfused, exact, strict=True):
        assert got.stride() == refs[0].stride(), f"{name}: strides {got.stride()} != flash's {refs[0].stride()}"
        assert error(got, want) <= 2 * min(error(ref, want) for ref in refs) + 1e-7, name
    torch.testing.assert_close(lse, flash[1], rtol=1e-5, atol=1e-5)
    assert lse.stride() == flash[1].stride()
    exact_probs = torch.softmax(q.double() @ k.double().transpose(-2, -1) * scale, dim=-1)
    aten_probs = torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1)
    assert error(probs, exact_probs) <= 2 * error(aten_probs, exact_probs) + 1e-7, "probs"
    with FakeTensorMode() as mode:
        fakes = [mode.from_tensor(t) for t in (grad_out, q, k, v)]
        fake_fwd = ATTENTION_WITH_PROBS(*fakes[1:], scale=scale)
        fake_bwd = ATTENTION_BACKWARD_WITH_PROBS(*fakes, fake_fwd[0], fake_fwd[2], scale=scale)
    for got, fake in zip((out, lse, probs, *grads), (*fake_fwd, *fake_bwd), strict=True):
        assert (got.shape, got.stride()) == (fake.shape, fake.stride())


def test_attention_ops_run_on_mlu_tensors_as_device_kernels():
    # A fusion group's debug modes run its graph, these ops included, as eager mlu kernels: same results as on CPU,
    # outputs on the device, and no CPU fallback (torch.mlu.fallback_report counts the ops that took it).
    q, k, v = _qkv(2, 2, 64, 80, 16)
    grad_out = torch.randn(2, 2, 64, 16, generator=torch.Generator().manual_seed(9))
    torch.mlu.reset_fallback_report()
    for forward, backward in ((ATTENTION, ATTENTION_BACKWARD), (ATTENTION_WITH_PROBS, ATTENTION_BACKWARD_WITH_PROBS)):
        want = forward(q, k, v, scale=0.3)
        want_grads = backward(grad_out, q, k, v, want[0], want[-1], scale=0.3)
        got = forward(q.to("mlu"), k.to("mlu"), v.to("mlu"), scale=0.3)
        got_grads = backward(grad_out.to("mlu"), q.to("mlu"), k.to("mlu"), v.to("mlu"), got[0], got[-1], scale=0.3)
        for g, w in zip((*got, *got_grads), (*want, *want_grads), strict=True):
            assert g.device.type == "mlu"
            torch.testing.assert_close(g.cpu(), w, rtol=1e-6, atol=1e-6)
    assert not [op for op in torch.mlu.fallback_report() if op.startswith("torch_mlu::")]


@pytest.mark.parametrize(("d", "dtype"), [(16, torch.float32), (24, torch.float32), (16, torch.float64)])
def test_attention_reads_inputs_of_any_strides(d, dtype):
    # Keys whose rows are not contiguous (a key matrix transposed in place), values with a padded row, and a gradient
    # of the output in (B, H, L, D) order rather than the flash kernels' (B, L, H, D); float64 goes to the flash
    # kernels. The oracle is the flash kernels on row-contiguous copies: given the transposed keys as they are, they
    # return wrong outputs (torch 2.13), which Catch's kernels must not pass on when they hand a call over.
    q, _, _ = _qkv(2, 2, 200, 300, d, dtype)
    g = torch.Generator().manual_seed(7)
    k = torch.randn(2, 2, d, 300, generator=g, dtype=dtype).transpose(2, 3)
    v = torch.randn(2, 2, 300, d + 3, generator=g, dtype=dtype)[..., 1:1 + d]
    kc, vc = k.contiguous(), v.contiguous()
    want_out, want_lse = FLASH(q, kc, vc)
    got_out, got_lse = ATTENTION(q, k, v)
    _close(got_out, want_out, "output")
    _close(got_lse, want_lse, "logsumexp")
    grad_out = torch.randn(2, 2, 200, d, generator=g, dtype=dtype)
    want = FLASH_BACKWARD(grad_out.contiguous().transpose(1, 2).contiguous().transpose(1, 2), q, kc, vc, want_out,
                          want_lse, 0.0, False)
    got = ATTENTION_BACKWARD(grad_out, q, k, v, got_out, got_lse)
    for name, gr, w in zip(("grad_query", "grad_key", "grad_value"), got, want, strict=True):
        _close(gr, w, name)


@pytest.mark.parametrize("layout", ["contiguous", "projection view", "columns"])
@pytest.mark.parametrize("d", [16, 24])
def test_attention_output_has_the_layout_of_the_flash_ops_fake_kernel(layout, d):
    # Compiled code allocates and indexes the output with the strides of the op's fake kernel, which is the flash
    # op's (it follows q's layout in torch 2.13); a kernel returning other strides would fail its stride assertion.
    g = torch.Generator().manual_seed(11)
    b, h, lq, lk = 2, 2, 100, 160
    if layout == "contiguous":
        q = torch.randn(b, h, lq, d, generator=g)
    elif layout == "projection view":
        q = torch.randn(b, lq, 3 * h * d, generator=g)[..., : h * d].view(b, lq, h, d).transpose(1, 2)
    else:  # rows not contiguous
        q = torch.randn(b, h, d, lq, generator=g).transpose(2, 3)
    k = torch.randn(b, h, lk, d, generator=g)
    v = torch.randn(b, h, lk, d, generator=g)
    out, lse = ATTENTION(q, k, v)
    fake_out, fake_lse = FLASH(q.to("meta"), k.to("meta"), v.to("meta"))
    assert out.stride() == fake_out.stride() and lse.stride() == fake_lse.stride()
    want_out, want_lse = FLASH(q.contiguous(), k, v)
    torch.testing.assert_close(out, want_out, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lse, want_lse, rtol=1e-5, atol=1e-5)


def test_attention_default_scale_is_one_over_sqrt_head_dim():
    q, k, v = _qkv(1, 2, 400, 400, 9)
    out, lse = ATTENTION(q, k, v)
    out_scaled, lse_scaled = ATTENTION(q, k, v, scale=1 / math.sqrt(9))
    assert torch.equal(out, out_scaled) and torch.equal(lse, lse_scaled)
    _close(out, FLASH(q, k, v)[0], "default-scale output")


@pytest.mark.parametrize("case", ["float64", "long sequence", "small heads"])
def test_attention_hands_what_it_does_not_handle_to_flash(case):
    # The flash kernels are deterministic: a call routed to them gives their result bit for bit.
    if case == "float64":
        q, k, v = _qkv(1, 2, 300, 300, 32, torch.float64)
    elif case == "long sequence":  # 2049 x 2049 scores: over the 4 Mi elements Catch's kernel forms per head
        q, k, v = _qkv(1, 1, 2049, 2049, 2)
    else:  # 64 x 64 x 8 multiply-adds per head, not whole vectors: the fixed costs of whole-matrix GEMMs would dominate
        q, k, v = _qkv(8, 4, 64, 64, 8)
    want_out, want_lse = FLASH(q, k, v)
    got_out, got_lse = ATTENTION(q, k, v)
    assert torch.equal(got_out, want_out) and torch.equal(got_lse, want_lse)
    grad_out = torch.randn_like(want_out)
    want = FLASH_BACKWARD(grad_out, q, k, v, want_out, want_lse, 0.0, False)
    got = ATTENTION_BACKWARD(grad_out, q, k, v, got_out, got_lse)
    assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))


def _operands(layout: str, m: int, k: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(m + k + n)
    if layout == "row-major":
        return torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
    if layout == "column-major":  # a weight gradient's Xᵀ and a linear's Wᵀ
        return torch.randn(k, m, generator=g).t(), torch.randn(n, k, generator=g).t()
    # slices with padded rows: copied before oneDNN sees them
    return torch.randn(m, k + 7, generator=g)[:, 3:3 + k], torch.randn(k, n + 5, generator=g)[:, :n]


@pytest.mark.parametrize("layout", ["row-major", "column-major", "padded rows"])
@pytest.mark.parametrize(("m", "k", "n"), [(512, 64, 192), (192, 512, 64), (64, 512, 64), (37, 64, 10), (64, 10, 64),
                                           (200, 70, 90), (5, 300, 1)])
def test_matrix_products_equal_aten_on_every_layout(layout, m, k, n):
    # Row-major and padded-row right operands take Catch's register-tiled loops in place (any size; outputs that are
    # not whole vectors and row counts that are not whole tiles among them), column-major ones of at least 1 Mi
    # multiply-adds packed first (16 x 16 block transposes and the edges: 200 x 70 x 90), smaller ones oneDNN or ATen.
    a, b = _operands(layout, m, k, n)
    bias = torch.randn(n)
    exact_mm = a.double() @ b.double()
    magnitude = a.double().abs() @ b.double().abs()
    # Any float32 summation order stays within (k + 1) u (|a| |b| + |bias|) of the exact result (Higham, Accuracy
    # and Stability of Numerical Algorithms, 2nd ed., section 3.1), u = 2^-24; a wrong operand layout does not.
    u = 2.0**-24
    for name, got, exact, bound in (
        ("mm", torch.ops.torch_mlu.mm(a, b), exact_mm, k * u * magnitude),
        ("addmm", torch.ops.torch_mlu.addmm(bias, a, b), exact_mm + bias.double(),
         (k + 1) * u * (magnitude + bias.double().abs())),
    ):
        assert got.shape == (m, n) and got.is_contiguous(), name
        assert ((got.double() - exact).abs() <= bound).all(), f"{name} {layout}"


@pytest.mark.parametrize("case", ["small", "float64", "beta", "2-d bias"])
def test_matrix_products_stay_on_aten_where_onednn_does_not_pay(case):
    # 4 Ki multiply-adds, under oneDNN's 1 Mi threshold; b with neither its rows nor its columns contiguous, which the
    # tiled loops leave
    a, b = torch.randn(16, 32), torch.randn(64, 16)[::2, ::2]
    bias, kwargs = torch.randn(8), {}
    if case == "float64":
        a, b, bias = torch.randn(256, 64, dtype=torch.float64), torch.randn(64, 128, dtype=torch.float64), \
            torch.randn(128, dtype=torch.float64)
    elif case == "beta":
        a, b, bias, kwargs = torch.randn(256, 64), torch.randn(64, 128), torch.randn(128), {"beta": 0.5}
    elif case == "2-d bias":
        a, b, bias = torch.randn(256, 64), torch.randn(64, 128), torch.randn(256, 128)
    assert torch.equal(torch.ops.torch_mlu.addmm(bias, a, b, **kwargs), torch.addmm(bias, a, b, **kwargs))
    if case in ("small", "float64"):
        assert torch.equal(torch.ops.torch_mlu.mm(a, b), torch.mm(a, b))


def _conv_nodes(graph: torch.fx.Graph) -> dict[str, torch.fx.Node]:
    """Convolution nodes with example values: a one-channel first layer (forward, and backward without an input
    gradient), a backward with one, a layer of 36 taps, and the cases Catch's kernels leave to ATen."""
    def placeholder(name: str, value: torch.Tensor) -> torch.fx.Node:
        node = graph.placeholder(name)
        node.meta["val"] = value
        return node

    image, rgb36 = placeholder("image", torch.empty(8, 1, 8, 8)), placeholder("rgb36", torch.empty(8, 4, 8, 8))
    w1, w36 = placeholder("w1", torch.empty(16, 1, 3, 3)), placeholder("w36", torch.empty(16, 4, 3, 3))
    wide = placeholder("wide", torch.empty(8, 16, 8, 8))
    strided = placeholder("strided", torch.empty(8, 1, 8, 16)[..., ::2])
    args = ([1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    conv, backward = aten.convolution.default, aten.convolution_backward.default
    return {
        "first layer": graph.call_function(conv, (image, w1, None, *args)),
        "first layer backward": graph.call_function(backward, (wide, image, w1, [16], *args, [False, True, True])),
        "input gradient": graph.call_function(backward, (wide, image, w1, [16], *args, [True, True, True])),
        "36 taps": graph.call_function(conv, (rgb36, w36, None, *args)),
        "stride 2": graph.call_function(conv, (image, w1, None, [2, 2], *args[1:])),
        "dilation 2": graph.call_function(backward, (wide, image, w1, [16], args[0], args[1], [2, 2], *args[3:],
                                                     [True, True, True])),
        "strided input": graph.call_function(conv, (strided, w1, None, *args)),
    }


def test_pass_swaps_in_only_the_calls_the_kernels_handle():
    graph = torch.fx.Graph()
    q, k, v, mask, a, b, c = (graph.placeholder(n) for n in ("q", "k", "v", "mask", "a", "b", "c"))
    plain = graph.call_function(FLASH, (q, k, v), {"scale": 0.5})
    zero_dropout = graph.call_function(FLASH, (q, k, v, 0.0))
    dropout = graph.call_function(FLASH, (q, k, v), {"dropout_p": 0.1})
    causal = graph.call_function(FLASH, (q, k, v, 0.0, True))
    masked = graph.call_function(FLASH, (q, k, v), {"attn_mask": mask})
    out = graph.call_function(operator.getitem, (plain, 0))
    lse = graph.call_function(operator.getitem, (plain, 1))
    backward = graph.call_function(FLASH_BACKWARD, (out, q, k, v, out, lse, 0.0, False), {"scale": 0.5})
    mm = graph.call_function(aten.mm.default, (a, b))
    addmm = graph.call_function(aten.addmm.default, (c, a, b), {"beta": 2})
    relu = graph.call_function(aten.relu.default, (a,))
    convs = _conv_nodes(graph)
    graph.output((zero_dropout, dropout, causal, masked, backward, mm, addmm, relu, *convs.values()))

    used = kernels.use_catch_kernels(graph, "catch")

    assert used == {"torch_mlu.attention.default": 2, "torch_mlu.attention_backward.default": 1,
                    "torch_mlu.mm.default": 1, "torch_mlu.addmm.default": 1,
                    "torch_mlu.convolution.default": 2, "torch_mlu.convolution_backward.default": 2}
    assert {name for name, node in convs.items() if str(node.target).startswith("torch_mlu.")} == {
        "first layer", "first layer backward", "input gradient", "36 taps"}
    assert (plain.target, plain.args, plain.kwargs) == (ATTENTION, (q, k, v), {"scale": 0.5})
    assert (zero_dropout.target, zero_dropout.kwargs) == (ATTENTION, {"scale": None})
    assert (backward.target, backward.args) == (ATTENTION_BACKWARD, (out, q, k, v, out, lse))
    assert [n.target for n in (dropout, causal, masked, relu)] == [FLASH, FLASH, FLASH, aten.relu.default]
    assert (addmm.target, addmm.kwargs) == (torch.ops.torch_mlu.addmm.default, {"beta": 2})


def _block():
    spec = importlib.util.spec_from_file_location("bench_compile", REPO / "benchmarks/bench_compile.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    torch.manual_seed(0)
    return bench.TransformerBlock().to("mlu"), torch.randn(1, 384, 64).to("mlu")  # heads of 2.4 Mi macs


def _train_step(model, x):
    out = model(x)
    out.square().mean().backward()
    return out, [p.grad for p in model.parameters()]


@pytest.mark.parametrize("setting", ["catch", "aten"])
def test_compiled_block_reports_its_kernels_and_matches_eager(monkeypatch, setting):
    monkeypatch.setenv(kernels.KERNELS_ENV, setting)
    torch._dynamo.reset()
    model, x = _block()
    want_out, want_grads = _train_step(model, x)
    compiled = torch.compile(copy.deepcopy(model), backend="mlu")
    got_out, got_grads = _train_step(compiled, x)
    torch.testing.assert_close(got_out.cpu(), want_out.cpu(), rtol=1e-4, atol=1e-5)
    for got, want in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(got.cpu(), want.cpu(), rtol=1e-3, atol=1e-5)
    forward, backward = mlu_compile.last_report().graphs
    used_forward = {op for g in forward.groups for op in g.kernels}
    used_backward = {op for g in backward.groups for op in g.kernels}
    if setting == "catch":
        # the attention keeps P for its backward (saved_probs)
        assert {"torch_mlu.attention_with_probs.default", "torch_mlu.addmm.default"} <= used_forward
        assert {"torch_mlu.attention_backward_with_probs.default", "torch_mlu.mm.default"} <= used_backward
        assert "compiled with Catch kernels: " in mlu_compile.last_report().format()
    else:
        assert not used_forward and not used_backward


def test_compiled_attention_of_a_contiguous_query_runs_on_catchs_kernel(monkeypatch):
    # F.scaled_dot_product_attention on a contiguous q: the flash op (and so the fake kernel Inductor plans with)
    # returns a contiguous output; Catch's kernel returned its usual (B, L, H, D) layout, and the compiled call failed
    # Inductor's stride assertion. Oracle: the same function on CPU.
    def fn(q, k, v):
        return F.scaled_dot_product_attention(q.contiguous(), k, v) * 2

    monkeypatch.setenv(kernels.KERNELS_ENV, "catch")
    torch._dynamo.reset()
    g = torch.Generator().manual_seed(13)
    q, k, v = (torch.randn(1, 4, 256, 16, generator=g) for _ in range(3))
    with torch.no_grad():
        got = torch.compile(fn, backend="mlu")(q.to("mlu"), k.to("mlu"), v.to("mlu"))
    torch.testing.assert_close(got.cpu(), fn(q, k, v), rtol=1e-5, atol=1e-5)
    (graph,) = mlu_compile.last_report().graphs
    assert {op for group in graph.groups for op in group.kernels} == {"torch_mlu.attention.default"}


@pytest.mark.parametrize("case", ["tiled", "head dim 24", "over the size limit", "aten kernels"])
def test_training_keeps_attention_probs_where_the_tiled_kernels_run(monkeypatch, case):
    # The joint-graph pass (saved_probs) gives the backward the forward's P where Catch's tiled kernels run, and
    # leaves the flash ops elsewhere. Either way the gradients are those of the same function on CPU.
    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v).square().sum()

    monkeypatch.setenv(kernels.KERNELS_ENV, "aten" if case == "aten kernels" else "catch")
    if case == "over the size limit":
        monkeypatch.setattr(saved_probs, "MAX_PROBS_BYTES", 2 * 4 * 200 * 208 * 4 - 1)
    torch._dynamo.reset()
    d = 24 if case == "head dim 24" else 16
    g = torch.Generator().manual_seed(17)
    inputs = [torch.randn(2, 4, 200, d, generator=g) for _ in range(3)]
    cpu = [t.clone().requires_grad_() for t in inputs]
    fn(*cpu).backward()
    mlu = [t.to("mlu").requires_grad_() for t in inputs]
    torch.compile(fn, backend="mlu")(*mlu).backward()
    for got, want in zip(mlu, cpu, strict=True):
        torch.testing.assert_close(got.grad.cpu(), want.grad, rtol=1e-4, atol=1e-5)
    forward, backward = mlu_compile.last_report().graphs
    used_forward = {op for group in forward.groups for op in group.kernels}
    used_backward = {op for group in backward.groups for op in group.kernels}
    if case == "tiled":
        assert used_forward == {"torch_mlu.attention_with_probs.default"}
        assert used_backward == {"torch_mlu.attention_backward_with_probs.default"}  # P saved, not formed again
    elif case == "aten kernels":
        assert not used_forward and not used_backward
    else:
        assert used_forward == {"torch_mlu.attention.default"}
        assert used_backward == {"torch_mlu.attention_backward.default"}


@pytest.mark.parametrize("formed_by", ["catch", "inductor"])
def test_compiled_inference_runs_the_attention_on_catchs_kernel(monkeypatch, formed_by):
    # Catch's pass over Dynamo's graph forms the attention before AOTAutograd (attention_pattern); without it,
    # Inductor's own passes form it while they compile the group. Either way the group calls Catch's kernel.
    monkeypatch.setenv(kernels.KERNELS_ENV, "catch")
    if formed_by == "inductor":
        monkeypatch.setattr(mlu_backend, "fuse_attention", lambda gm: 0)
    torch._dynamo.reset()
    model, x = _block()
    model.eval()
    with torch.no_grad():
        want = model(x)
        got = torch.compile(copy.deepcopy(model), backend="mlu")(x)
    torch.testing.assert_close(got.cpu(), want.cpu(), rtol=1e-4, atol=1e-5)
    (graph,) = mlu_compile.last_report().graphs
    assert graph.kind == "inference"
    flash = "aten._scaled_dot_product_flash_attention_for_cpu.default"
    assert (flash in graph.groups[0].ops) == (formed_by == "catch")
    assert graph.groups[0].kernels.get("torch_mlu.attention.default") == 1


def test_invalid_kernels_setting_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(kernels.KERNELS_ENV, "mkl")
    compiled_fn = torch.compile(lambda a: F.gelu(a @ a.t()), backend="mlu")
    with pytest.raises(mlu_compile.FuseConfigError, match="CATCH_FUSE_KERNELS='mkl': expected auto, catch or aten"):
        compiled_fn(torch.ones(3, 3, device="mlu"))


@pytest.mark.parametrize("formed_by", ["catch", "inductor"])
def test_inference_at_batch_sizes_above_one_uses_the_attention_kernel(monkeypatch, formed_by):
    # Heads split as x.view(b, t, heads, d).transpose(1, 2) need clones in the matmuls when b > 1. Catch's pass
    # forms the attention before they appear; without it, Inductor still forms it when it compiles an inference
    # group (its training graphs keep matmul + softmax there: test_compile_attention_pattern.py).
    monkeypatch.setenv(kernels.KERNELS_ENV, "catch")
    if formed_by == "inductor":
        monkeypatch.setattr(mlu_backend, "fuse_attention", lambda gm: 0)
    torch._dynamo.reset()
    model, _ = _block()
    model.eval()
    x = torch.randn(3, 40, 64).to("mlu")
    with torch.no_grad():
        want = model(x)
        got = torch.compile(copy.deepcopy(model), backend="mlu")(x)
    torch.testing.assert_close(got.cpu(), want.cpu(), rtol=1e-4, atol=1e-5)
    (group,) = mlu_compile.last_report().graphs[0].groups
    if formed_by == "inductor":
        assert group.ops.get("aten.bmm.default") == 2 and group.ops.get("aten.clone.default", 0) >= 2
    else:
        assert "aten.bmm.default" not in group.ops
    assert group.kernels.get("torch_mlu.attention.default") == 1


def test_dynamic_recompile_warns_that_nothing_is_fused():
    torch._dynamo.reset()

    def f(a):
        return torch.tanh(a @ a.t()).sum(dim=1)

    dynamic = torch.compile(f, backend="mlu")
    dynamic(torch.randn(6, 4, device="mlu"))
    with pytest.warns(UserWarning, match="dynamic shapes .* pass dynamic=False"):
        got = dynamic(torch.randn(9, 4, device="mlu"))  # Dynamo recompiles with a symbolic size
    assert got.shape == (9,)
    assert all("symbolic shape" in n.reason for n in mlu_compile.last_report().left_out)

    torch._dynamo.reset()
    static = torch.compile(f, backend="mlu", dynamic=False)
    static(torch.randn(6, 4, device="mlu"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        static(torch.randn(9, 4, device="mlu"))
    assert mlu_compile.last_report().groups


def _mm_graph(m: int, k: int, n: int) -> tuple[torch.fx.Graph, torch.fx.Node]:
    from torch._subclasses.fake_tensor import FakeTensorMode

    graph = torch.fx.Graph()
    a, b = graph.placeholder("a"), graph.placeholder("b")
    with FakeTensorMode():
        a.meta["val"], b.meta["val"] = torch.empty(m, k), torch.empty(k, n).t().contiguous().t()
    mm = graph.call_function(aten.mm.default, (a, b))
    graph.output(mm)
    return graph, mm


@pytest.mark.parametrize("catch_faster", [True, False])
def test_auto_keeps_a_catch_kernel_only_where_it_measured_faster(catch_faster):
    # The timer stands in for the clock; what is checked is what the pass does with its answer, and that it ran
    # both kernels on real inputs of the node's sizes and strides, giving the same product.
    calls = []

    def timer(aten_fn, catch_fn):
        results = aten_fn(), catch_fn()
        calls.append(results)
        return (2e-3, 1e-3) if catch_faster else (1e-3, 1e-3)

    kernels._measured.clear()
    graph, mm = _mm_graph(64, 96, 33)
    measurements: list[kernels.Measurement] = []
    used = kernels.use_catch_kernels(graph, "auto", timer=timer, measurements=measurements)
    assert mm.target == (torch.ops.torch_mlu.mm.default if catch_faster else aten.mm.default)
    assert used == ({"torch_mlu.mm.default": 1} if catch_faster else {})
    (aten_out, catch_out), = calls
    assert aten_out.shape == (64, 33) and not aten_out.is_meta
    torch.testing.assert_close(catch_out, aten_out)
    (m,) = measurements
    assert m.shapes == "64x96 96x33" and m.format().endswith("-> catch" if catch_faster else "-> aten")

    # A second graph with the same node is not measured again (one measurement per shape and thread count).
    graph2, mm2 = _mm_graph(64, 96, 33)
    kernels.use_catch_kernels(graph2, "auto", timer=timer)
    assert len(calls) == 1 and mm2.target == mm.target

    # An input without a static example value is not measured: the node keeps its ATen kernel.
    graph3, mm3 = _mm_graph(64, 96, 17)
    del mm3.args[1].meta["val"]
    assert kernels.use_catch_kernels(graph3, "auto", timer=timer) == {}
    assert len(calls) == 1 and mm3.target == aten.mm.default


def test_auto_times_the_kernels_on_the_thread_that_runs_the_group(monkeypatch):
    # Inductor compiles a group on a thread of its own; the timings that choose between ATen's and Catch's kernels
    # must still run where the group will run (a fresh thread made the same GEMM 2-10x slower), without autograd
    # recording and without the Python dispatch mode that AOTAutograd keeps active during a group's first call.
    import threading

    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    from torch_mlu.compile import group

    seen = []

    def recording_timer(aten_fn, catch_fn):
        seen.append((threading.get_ident(), torch.is_grad_enabled(), list(_get_current_dispatch_mode_stack())))
        aten_fn(), catch_fn()
        return 1e-3, 1e-3

    monkeypatch.setenv(kernels.KERNELS_ENV, "auto")
    monkeypatch.setattr(group, "best_times", recording_timer)
    kernels._measured.clear()
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(24, 40), torch.nn.GELU(), torch.nn.Linear(40, 7)).to("mlu")
    x = torch.randn(16, 24, device="mlu")
    torch.compile(model, backend="mlu")(x).square().mean().backward()
    assert seen, "no kernel was timed"
    caller = threading.get_ident()  # the autograd engine runs mlu backward graphs on the calling thread too
    assert [(ident == caller, grad, modes) for ident, grad, modes in seen] == [(True, False, [])] * len(seen)
    forward, backward = mlu_compile.last_report().graphs
    assert forward.groups[0].measured and backward.groups[0].measured


# (input, kernel, stride): the CNN case (2x2 windows after a ReLU: many ties at 0), overlapping and uneven windows,
# sizes that leave rows and columns out, a 3-d input, and planes with fewer outputs than a vector.
# The 2x2 / stride-2 path (even planes): rows of a multiple of eight outputs, and planes of width 2, 4 and 8 whose
# eight-output vectors span several rows; 2x2 planes it does not take (an odd height, a row of nine outputs, twelve
# outputs per plane) go to the general loop.
POOL_CASES = [
    ((64, 32, 8, 8), (2, 2), (2, 2)),
    ((3, 5, 13, 11), (3, 3), (2, 2)),
    ((2, 4, 9, 17), (2, 3), (1, 2)),
    ((4, 7, 10), (3, 2), (3, 1)),
    ((1, 3, 5, 5), (5, 5), (1, 1)),
    ((2, 3, 4, 32), (2, 2), (2, 2)),
    ((3, 4, 8, 4), (2, 2), (2, 2)),
    ((2, 2, 16, 2), (2, 2), (2, 2)),
    ((5, 6, 16), (2, 2), (2, 2)),
    ((2, 3, 9, 8), (2, 2), (2, 2)),
    ((2, 3, 8, 18), (2, 2), (2, 2)),
    ((1, 3, 6, 8), (2, 2), (2, 2)),
]


@pytest.mark.parametrize(("shape", "kernel", "stride"), POOL_CASES)
def test_max_pool_kernel_returns_atens_values_and_indices(shape, kernel, stride):
    # Oracle: ATen's CPU kernel, bit for bit, on ReLU'd data (ties), and with NaN, -inf and +inf planted (ATen keeps
    # the first maximum, any NaN, and the first element of a window of -inf).
    g = torch.Generator().manual_seed(len(shape) * 100 + kernel[0] * 10 + stride[1])
    x = torch.randn(shape, generator=g).relu()
    flat = x.view(-1)
    picks = torch.randperm(flat.numel(), generator=g)
    flat[picks[:7]] = float("nan")
    flat[picks[7:11]] = float("inf")
    flat[picks[11:15]] = float("-inf")
    x[..., : kernel[0], : kernel[1]] = float("-inf")  # one window of -inf per plane
    want = aten.max_pool2d_with_indices(x, list(kernel), list(stride))
    got = torch.ops.torch_mlu.max_pool2d_with_indices(x, list(kernel), list(stride))
    assert got[0].shape == want[0].shape and got[0].stride() == want[0].stride()
    assert torch.equal(got[1], want[1])
    torch.testing.assert_close(got[0], want[0], rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize(("shape", "kernel", "stride"), POOL_CASES)
def test_max_pool_backward_kernel_returns_atens_gradient(shape, kernel, stride):
    # The op compiled groups call instead of Inductor's lowering is ATen's kernel: the same gradient, bit for bit,
    # with the indices of ATen's forward and of a planted -1.
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(shape, generator=g).relu()
    _, indices = aten.max_pool2d_with_indices(x, list(kernel), list(stride))
    indices.view(-1)[0] = -1
    grad = torch.randn(indices.shape, generator=g)
    args = (list(kernel), list(stride), [0, 0], [1, 1], False, indices)
    want = aten.max_pool2d_with_indices_backward(grad, x, *args)
    got = torch.ops.torch_mlu.max_pool2d_with_indices_backward(grad, x, *args)
    assert got.stride() == want.stride() and torch.equal(got, want)


# (input, weight, padding). The direct kernels (at most 32 taps, no input gradient): a one-channel first layer (the
# digits CNN's), an RGB one (27 taps), uneven kernels and padding, rows of a multiple of eight outputs and rows of
# five, and no padding. Winograd F(2x2, 3x3) (3x3 kernels with padding up to 2: the others with more taps, and their
# input gradients): the digits CNN's second layer, odd output sizes with channel counts that are not whole vectors,
# no padding, paddings of 2 and 1, and an image of more than 64 blocks (split into bands of block rows). The im2col
# products (the rest): an uneven kernel with padding beyond it (the input gradient crops) and a 3x3 kernel with
# padding 3.
CONV_CASES = [
    ((64, 1, 8, 8), (16, 1, 3, 3), (1, 1)),
    ((3, 3, 11, 13), (8, 3, 3, 3), (1, 1)),
    ((2, 2, 9, 20), (5, 2, 2, 5), (0, 2)),
    ((4, 1, 5, 5), (3, 1, 5, 5), (2, 2)),
    ((2, 1, 10, 18), (4, 1, 3, 3), (0, 0)),
    ((64, 16, 8, 8), (32, 16, 3, 3), (1, 1)),
    ((3, 5, 11, 13), (7, 5, 3, 3), (1, 1)),
    ((2, 8, 5, 5), (4, 8, 3, 3), (0, 0)),
    ((2, 6, 7, 9), (17, 6, 3, 3), (2, 1)),
    ((2, 4, 21, 39), (5, 4, 3, 3), (1, 1)),
    ((2, 4, 9, 20), (6, 4, 2, 5), (3, 2)),
    ((2, 4, 6, 6), (3, 4, 3, 3), (3, 3)),
]


def _no_worse_than_aten(got: torch.Tensor, want32: torch.Tensor, want64: torch.Tensor, what: str) -> None:
    """got's error against the float64 oracle within twice ATen's float32 error (plus a few ulps of the largest
    value), in ATen's layout: the sums run in another order, so they round differently, not worse."""
    assert got.shape == want32.shape and got.stride() == want32.stride() and got.dtype == want32.dtype, what
    error = (got.double() - want64).abs().max().item()
    aten_error = (want32.double() - want64).abs().max().item()
    assert error <= 2 * aten_error + 4e-7 * want64.abs().max().item(), f"{what}: {error:.3g} vs ATen's {aten_error:.3g}"


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("input_shape", "weight_shape", "padding"), CONV_CASES)
def test_convolution_returns_atens_results(input_shape, weight_shape, padding, bias):
    # Oracle: ATen's convolution and its gradients in float64; Catch's float32 results must be within twice the error
    # of ATen's float32 ones (oneDNN). An inf in the input reaches the outputs whose windows hold it, as in ATen's,
    # and one in grad_out the gradients that sum it (Winograd's transforms would also turn it into NaNs elsewhere, so
    # such calls take the im2col products). The backward runs once without the input gradient (a first layer: the direct
    # kernel where it applies) and once with all three.
    g = torch.Generator().manual_seed(sum(input_shape) + sum(weight_shape))
    x = torch.randn(input_shape, generator=g)
    x[0, 0, 1, -1] = float("inf")
    w = torch.randn(weight_shape, generator=g)
    b = torch.randn(weight_shape[0], generator=g) if bias else None
    conv_args = ([1, 1], list(padding), [1, 1], False, [0, 0], 1)
    want = aten.convolution(x, w, b, *conv_args)
    got = torch.ops.torch_mlu.convolution(x, w, b, *conv_args)
    assert got.shape == want.shape and got.stride() == want.stride()
    for where in (torch.isnan, torch.isposinf, torch.isneginf):
        assert torch.equal(where(got), where(want)), where.__name__
    x[0, 0, 1, -1] = 0.0
    got = torch.ops.torch_mlu.convolution(x, w, b, *conv_args)
    b64 = b.double() if bias else None
    _no_worse_than_aten(got, aten.convolution(x, w, b, *conv_args), aten.convolution(x.double(), w.double(), b64,
                                                                                       *conv_args), "convolution")
    grad = torch.randn(want.shape, generator=g)
    for mask in ([False, True, bias], [True, True, bias]):
        want_grads = aten.convolution_backward(grad, x, w, [weight_shape[0]], *conv_args, mask)
        want64 = aten.convolution_backward(grad.double(), x.double(), w.double(), [weight_shape[0]], *conv_args,
                                           mask)
        got_grads = torch.ops.torch_mlu.convolution_backward(grad, x, w, [weight_shape[0]], *conv_args, mask)
        assert [t is None for t in got_grads] == [not m for m in mask]
        for name, got_grad, want_grad, oracle in zip(("input", "weight", "bias"), got_grads, want_grads, want64,
                                                      strict=True):
            if want_grad is not None:
                _no_worse_than_aten(got_grad, want_grad, oracle, f"convolution_backward {name} {mask}")
    # An inf in grad_out: the gradients that sum it are inf, or NaN where it meets the input's zero padding (inf * 0),
    # as in ATen's native kernels (oneDNN skips the padding and gives inf there).
    grad[0, -1, 0, -1] = float("inf")
    got_grads = torch.ops.torch_mlu.convolution_backward(grad, x, w, [weight_shape[0]], *conv_args, [True] * 3)
    with torch.backends.mkldnn.flags(enabled=False):
        want_grads = aten.convolution_backward(grad, x, w, [weight_shape[0]], *conv_args, [True] * 3)
    for got_grad, want_grad in zip(got_grads, want_grads, strict=True):
        for where in (torch.isnan, torch.isposinf, torch.isneginf):
            assert torch.equal(where(got_grad), where(want_grad)), where.__name__


@pytest.mark.parametrize("case", ["stride", "groups", "channels_last", "double", "dilation"])
def test_convolution_hands_other_cases_to_aten(case):
    x, w, b = torch.randn(2, 2, 9, 9), torch.randn(4, 2, 3, 3), torch.randn(4)
    stride, dilation, groups = [1, 1], [1, 1], 1
    if case == "stride":
        stride = [2, 1]
    elif case == "groups":
        w, groups = torch.randn(4, 1, 3, 3), 2
    elif case == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    elif case == "double":
        x, w, b = x.double(), w.double(), b.double()
    else:
        dilation = [2, 1]
    conv_args = (stride, [1, 1], dilation, False, [0, 0], groups)
    want = aten.convolution(x, w, b, *conv_args)
    got = torch.ops.torch_mlu.convolution(x, w, b, *conv_args)
    assert got.stride() == want.stride() and torch.equal(got, want)
    grad = torch.randn(want.shape, dtype=want.dtype)
    for mask in ([False, True, True], [True, True, True]):
        want_grads = aten.convolution_backward(grad, x, w, [4], *conv_args, mask)
        got_grads = torch.ops.torch_mlu.convolution_backward(grad, x, w, [4], *conv_args, mask)
        for got_grad, want_grad in zip(got_grads, want_grads, strict=True):
            assert (got_grad is None and want_grad is None) or torch.equal(got_grad, want_grad)


@pytest.mark.parametrize("case", ["padding", "dilation", "ceil_mode", "channels_last", "double"])
def test_max_pool_kernel_hands_other_cases_to_aten(case):
    x = torch.randn(2, 3, 9, 9)
    kwargs = {"kernel_size": [3, 3], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1], "ceil_mode": False}
    if case == "padding":
        kwargs["padding"] = [1, 1]
    elif case == "dilation":
        kwargs["dilation"] = [2, 1]
    elif case == "ceil_mode":
        kwargs["ceil_mode"] = True
    elif case == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    else:
        x = x.double()
    want = aten.max_pool2d_with_indices(x, **kwargs)
    got = torch.ops.torch_mlu.max_pool2d_with_indices(x, **kwargs)
    for g_, w_ in zip(got, want, strict=True):
        assert g_.stride() == w_.stride() and torch.equal(g_, w_)


def test_catch_kernels_run_on_torchs_intra_op_threads():
    # Catch's kernels split their work with at::parallel_for, which runs on the intra-op OpenMP threads only in code
    # built with OpenMP; the extension must use torch's own runtime, so the count follows torch.set_num_threads.
    from torch_mlu import _C

    before = torch.get_num_threads()
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            assert _C._parallel_threads() == n
    finally:
        torch.set_num_threads(before)


def test_an_interrupted_caller_does_not_leave_the_compile_thread_waiting():
    # A KeyboardInterrupt while the calling thread serves a timing must end the compile thread too (it waits for
    # that timing's result), or leaving the `with ThreadPoolExecutor` block would hang for ever.
    from concurrent.futures import ThreadPoolExecutor

    from torch_mlu.compile.group import CallerThread

    def interrupted() -> None:
        raise KeyboardInterrupt

    caller = CallerThread()
    with ThreadPoolExecutor(max_workers=1) as pool:
        compiling = pool.submit(lambda: [caller.run(lambda: 1), caller.run(interrupted), caller.run(lambda: 3)])
        with pytest.raises(KeyboardInterrupt):
            caller.serve(compiling)
        assert isinstance(compiling.exception(timeout=10), KeyboardInterrupt)
        # work handed over after the interruption fails at once instead of waiting for a server that is gone
        late = pool.submit(caller.run, lambda: 4)
        with pytest.raises(RuntimeError, match="interrupted"):
            late.result(timeout=10)

    # Exceptions of the work itself go back to the compile thread; serving goes on.
    caller = CallerThread()
    with ThreadPoolExecutor(max_workers=1) as pool:
        def compile_() -> int:
            with pytest.raises(ZeroDivisionError):
                caller.run(lambda: 1 / 0)
            return caller.run(lambda: 5)

        compiling = pool.submit(compile_)
        caller.serve(compiling)
        assert compiling.result(timeout=10) == 5


def test_compiled_cnn_pools_on_catchs_and_atens_kernels_and_trains_like_cpu():
    # Forward: Inductor's own max-pool lowering (int8 offsets, then a scalar index loop) is left out (backend.py) and
    # the forward group calls Catch's kernel. Backward: Inductor decomposes max_pool2d_with_indices_backward into a
    # scatter_add (a serial loop of indirect stores in its C++) and otherwise lowers it to a gather it cannot
    # vectorize; the backward group calls ATen's kernel instead, with every CATCH_FUSE_KERNELS setting. Oracle: the
    # same model's outputs and gradients on CPU.
    trains_like_cpu(lambda: torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
                                                 torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                                 torch.nn.Linear(4 * 4 * 4, 3)), torch.rand(8, 1, 8, 8))
    forward, backward = mlu_compile.last_report().graphs
    (forward_group,) = forward.groups
    assert forward_group.kernels.get("torch_mlu.max_pool2d_with_indices.default") == 1
    assert not any(op.startswith("prims._low_memory_max_pool") for op in forward_group.ops)
    (group,) = backward.groups
    assert "aten.scatter_add.default" not in group.ops
    assert group.kernels.get("torch_mlu.max_pool2d_with_indices_backward.default") == 1


def test_compiled_cnn_runs_catchs_convolutions_andtrains_like_cpu(monkeypatch):
    # The digits CNN's two layers, with CATCH_FUSE_KERNELS=catch (no timing decides): the first layer on the direct
    # kernels (forward, weight gradient), the second on Winograd's (forward and all three gradients).
    # Oracle: the same model's outputs and gradients on CPU.
    monkeypatch.setenv(kernels.KERNELS_ENV, "catch")
    trains_like_cpu(lambda: torch.nn.Sequential(torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
                                                 torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
                                                 torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 3)),
                     torch.rand(16, 1, 8, 8))
    forward, backward = mlu_compile.last_report().graphs
    assert forward.groups[0].kernels.get("torch_mlu.convolution.default") == 2
    assert backward.groups[0].kernels.get("torch_mlu.convolution_backward.default") == 2


def test_bias_add_moves_into_the_pointwise_consumer():
    # addmm whose users are pointwise (gelu here, through a view) becomes mm + add, which Inductor fuses into the
    # consumer's loop; an addmm feeding a matrix product keeps its fused bias. Oracle: the values of the ATen graph.
    from torch._subclasses.fake_tensor import FakeTensorMode

    graph = torch.fx.Graph()
    bias, a, b, c = (graph.placeholder(n) for n in ("bias", "a", "b", "c"))
    fc = graph.call_function(aten.addmm.default, (bias, a, b))
    act = graph.call_function(aten.gelu.default, (graph.call_function(aten.view.default, (fc, [2, 3, 5])),))
    kept = graph.call_function(aten.addmm.default, (bias, a, b))
    product = graph.call_function(aten.mm.default, (kept, c))
    graph.output((act, product))
    values = {"bias": torch.randn(5), "a": torch.randn(6, 4), "b": torch.randn(4, 5), "c": torch.randn(5, 2)}
    mode = FakeTensorMode()
    for node in (bias, a, b, c):
        node.meta["val"] = mode.from_tensor(values[node.target])
    want = torch.fx.GraphModule(torch.nn.Module(), copy.deepcopy(graph))(*values.values())

    assert kernels.unfuse_bias_add(graph) == 1
    targets = [n.target for n in graph.nodes if n.op == "call_function"]
    assert targets.count(aten.addmm.default) == 1 and aten.add.Tensor in targets
    got = torch.fx.GraphModule(torch.nn.Module(), graph)(*values.values())
    torch.testing.assert_close(got, want)
