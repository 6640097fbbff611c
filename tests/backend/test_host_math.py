# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Differential tests of Catch's hand-written host math against ATen's CPU kernels on adversarial inputs.

A hand-written kernel that re-implements an op ATen runs on the CPU stays only while it is faster than ATen's
(``benchmarks/bench_host_math.py``) and gives ATen's results: these tests are the second condition. The one such
kernel is max pooling's forward (``catch/csrc/kernels/pool.cpp``), reached as ``torch.ops.torch_mlu.
max_pool2d_with_indices`` on CPU tensors (compiled groups) and as ``F.max_pool2d`` on mlu tensors (the eager device
kernel). Oracle: ``aten.max_pool2d_with_indices`` on the same CPU tensors, values bit for bit (NaN where ATen has
NaN), indices equal, the same sizes, strides and dtype -- or the same error.

Inputs: NaN, +-inf, windows of -inf, denormals, magnitudes of 1e30 and beyond, ties, empty batches, non-contiguous
and broadcast (stride-0) views, channels-last, 3-d inputs, float16, bfloat16 and float64.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

aten = torch.ops.aten
CATCH_POOL = torch.ops.torch_mlu.max_pool2d_with_indices

# (kernel, stride): the CNN's 2x2 (the row-loading path), overlapping and uneven windows (the general loop)
WINDOWS = [((2, 2), (2, 2)), ((3, 3), (2, 2)), ((2, 3), (1, 2))]


def _plant(x: torch.Tensor, values: list[float], count: int, g: torch.Generator) -> torch.Tensor:
    flat = x.reshape(-1)
    picks = torch.randperm(flat.numel(), generator=g)
    for i, value in enumerate(values):
        flat[picks[i * count:(i + 1) * count]] = value
    return flat.view(x.shape)


def adversarial(case: str, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """An input of the named kind, (2, 3, 8, 12) unless the kind says otherwise."""
    g = torch.Generator().manual_seed(sum(map(ord, case)))
    x = torch.randn(2, 3, 8, 12, generator=g)
    if case == "nan and inf":
        x = _plant(x, [float("nan"), float("inf"), float("-inf")], 9, g)
    elif case == "windows of -inf":
        x[..., :3, :3] = float("-inf")
    elif case == "all nan":
        x.fill_(float("nan"))
    elif case == "denormals":
        x = x * 1e-40  # float32 subnormals (1e-38 is the smallest normal)
    elif case == "huge":
        x = x * 1e30
        x = _plant(x, [3.0e38, -3.0e38], 5, g)
    elif case == "ties":
        x = x.relu()  # after a ReLU, as in the CNNs: many windows tie at 0
    elif case == "signed zeros":
        x = torch.where(x > 0, torch.tensor(0.0), torch.tensor(-0.0))
    elif case == "empty batch":
        x = x[:0]
    elif case == "strided":
        x = torch.randn(2, 3, 8, 24, generator=g)[..., ::2]
    elif case == "transposed planes":
        x = torch.randn(2, 3, 12, 8, generator=g).transpose(-2, -1)
    elif case == "broadcast":
        x = torch.randn(1, 1, 8, 12, generator=g).expand(2, 3, 8, 12)
    elif case == "channels last":
        x = x.contiguous(memory_format=torch.channels_last)
    elif case == "3-d":
        x = x[0]
    return x.to(dtype)


CASES = ["nan and inf", "windows of -inf", "all nan", "denormals", "huge", "ties", "signed zeros", "empty batch",
         "strided", "transposed planes", "broadcast", "channels last", "3-d"]
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


def _call(fn, *args):
    try:
        return fn(*args), None
    except (RuntimeError, ValueError) as exc:
        return None, type(exc)


def _same(got: tuple[torch.Tensor, torch.Tensor], want: tuple[torch.Tensor, torch.Tensor]) -> None:
    for g, w, what in ((got[0], want[0], "values"), (got[1], want[1], "indices")):
        assert g.shape == w.shape and g.dtype == w.dtype, what
        assert g.stride() == w.stride(), f"{what}: strides {g.stride()} != {w.stride()}"
    assert torch.equal(got[1], want[1])
    # bit for bit, NaN where ATen has NaN (and the sign of a zero)
    assert torch.equal(got[0].isnan(), want[0].isnan())
    ok = ~want[0].isnan()
    assert torch.equal(got[0][ok], want[0][ok])
    assert torch.equal(got[0][ok].signbit(), want[0][ok].signbit())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(("kernel", "stride"), WINDOWS, ids=["2x2", "3x3 s2", "2x3 s1x2"])
def test_max_pool_forward_matches_aten_on_cpu_tensors(case, dtype, kernel, stride):
    x = adversarial(case, dtype)
    want, want_error = _call(lambda: aten.max_pool2d_with_indices(x, list(kernel), list(stride)))
    got, got_error = _call(lambda: CATCH_POOL(x, list(kernel), list(stride)))
    assert got_error == want_error
    if want is not None:
        _same(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", CASES)
def test_max_pool_forward_on_mlu_matches_cpu(case, dtype):
    # The eager device kernel (ops/redirects.h) runs Catch's kernel on the host views of the mlu tensors.
    x = adversarial(case, dtype)
    want, want_error = _call(lambda: F.max_pool2d(x, 2, return_indices=True))
    got, got_error = _call(lambda: F.max_pool2d(x.to("mlu"), 2, return_indices=True))
    assert got_error == want_error
    if want is not None:
        assert got[0].device.type == "mlu"
        _same((got[0].cpu(), got[1].cpu()), want)


@pytest.mark.parametrize("case", ["nan and inf", "ties", "huge"])
def test_max_pool_gradient_on_mlu_matches_cpu(case):
    # The backward is ATen's kernel; the gradient flows through the indices Catch's forward returned.
    x = adversarial(case)
    cpu = x.clone().requires_grad_()
    mlu = x.to("mlu").requires_grad_()
    grad = torch.randn(2, 3, 4, 6, generator=torch.Generator().manual_seed(1))
    F.max_pool2d(cpu, 2).backward(grad)
    F.max_pool2d(mlu, 2).backward(grad.to("mlu"))
    assert torch.equal(mlu.grad.cpu(), cpu.grad)
