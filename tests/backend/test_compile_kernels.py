# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The post-grad pass of compiled fusion groups and the ops it puts in: the max-pooling ops return ATen's values,
indices and gradients bit for bit; compiled models (transformer block, attention, CNNs) match eager and CPU with
every ``CATCH_FUSE_KERNELS`` setting; the bias add of a linear moves into its pointwise consumer."""

from __future__ import annotations

import copy
import importlib.util
import warnings

import pytest
import torch
import torch.nn.functional as F
from mlu_helpers import REPO, trains_like_cpu

import torch_mlu.compile as mlu_compile
from torch_mlu.compile import backend as mlu_backend
from torch_mlu.compile import kernels

aten = torch.ops.aten


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


@pytest.mark.parametrize("setting", ["auto", "aten"])
def test_compiled_block_matches_eager(monkeypatch, setting):
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
    assert forward.groups and backward.groups


def test_compiled_attention_of_a_contiguous_query_matches_cpu():
    # F.scaled_dot_product_attention on a contiguous q runs ATen's flash kernel inside the group. Oracle: the same
    # function on CPU.
    def fn(q, k, v):
        return F.scaled_dot_product_attention(q.contiguous(), k, v) * 2

    torch._dynamo.reset()
    g = torch.Generator().manual_seed(13)
    q, k, v = (torch.randn(1, 4, 256, 16, generator=g) for _ in range(3))
    with torch.no_grad():
        got = torch.compile(fn, backend="mlu")(q.to("mlu"), k.to("mlu"), v.to("mlu"))
    torch.testing.assert_close(got.cpu(), fn(q, k, v), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("d", [16, 24])
def test_compiled_attention_training_matches_cpu(d):
    # Oracle: the gradients of the same function on CPU.
    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v).square().sum()

    torch._dynamo.reset()
    g = torch.Generator().manual_seed(17)
    inputs = [torch.randn(2, 4, 200, d, generator=g) for _ in range(3)]
    cpu = [t.clone().requires_grad_() for t in inputs]
    fn(*cpu).backward()
    mlu = [t.to("mlu").requires_grad_() for t in inputs]
    torch.compile(fn, backend="mlu")(*mlu).backward()
    for got, want in zip(mlu, cpu, strict=True):
        torch.testing.assert_close(got.grad.cpu(), want.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("formed_by", ["catch", "inductor"])
def test_compiled_inference_forms_the_attention(monkeypatch, formed_by):
    # Catch's pass over Dynamo's graph forms the attention before AOTAutograd (attention_pattern); without it,
    # Inductor's own passes form it while they compile the group. Either way the output is eager's.
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


def test_invalid_kernels_setting_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(kernels.KERNELS_ENV, "mkl")
    compiled_fn = torch.compile(lambda a: F.gelu(a @ a.t()), backend="mlu")
    with pytest.raises(mlu_compile.FuseConfigError, match="CATCH_FUSE_KERNELS='mkl': expected auto, catch or aten"):
        compiled_fn(torch.ones(3, 3, device="mlu"))


@pytest.mark.parametrize("formed_by", ["catch", "inductor"])
def test_inference_at_batch_sizes_above_one_forms_the_attention(monkeypatch, formed_by):
    # Heads split as x.view(b, t, heads, d).transpose(1, 2) need clones in the matmuls when b > 1. Catch's pass
    # forms the attention before they appear; without it, the group keeps the batched products.
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
    if formed_by == "catch":
        assert "aten.bmm.default" not in group.ops


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
    # Catch's kernels (max pooling) split their work with at::parallel_for, which runs on the intra-op OpenMP threads
    # only in code built with OpenMP; the extension must use torch's own runtime, so the count follows
    # torch.set_num_threads.
    from torch_mlu import _C

    before = torch.get_num_threads()
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            assert _C._parallel_threads() == n
    finally:
        torch.set_num_threads(before)


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


def test_compiled_cnn_trains_like_cpu():
    # The digits CNN's two layers: convolutions are ATen's kernels (Inductor's extern calls) in the groups. Oracle: the
    # same model's outputs and gradients on CPU.
    trains_like_cpu(lambda: torch.nn.Sequential(torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
                                                 torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
                                                 torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 3)),
                     torch.rand(16, 1, 8, 8))


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
