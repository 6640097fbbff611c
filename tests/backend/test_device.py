# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Device plumbing and device kernels: torch.cuda-like device API, and op results equal to the CPU's."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from mlu_helpers import run_python


def test_device_module_mirrors_cuda():
    assert torch.mlu.is_available()
    assert torch.mlu.device_count() == 2  # default of MLU_VISIBLE_DEVICE_COUNT
    for name in ["current_device", "set_device", "device", "synchronize", "Stream", "Event", "current_stream",
                 "stream", "memory_allocated", "max_memory_allocated", "memory_reserved", "empty_cache",
                 "memory_stats", "manual_seed", "manual_seed_all", "get_rng_state", "set_rng_state",
                 "get_device_name", "get_device_properties"]:
        assert hasattr(torch.mlu, name), name


def test_device_count_from_env():
    out = run_python("import torch; print(torch.mlu.device_count())", env={"MLU_VISIBLE_DEVICE_COUNT": "3"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"


def test_set_device_and_context_manager():
    assert torch.mlu.current_device() == 0
    with torch.mlu.device(1):
        assert torch.mlu.current_device() == 1
        assert torch.empty(2, device="mlu").device == torch.device("mlu:1")
    assert torch.mlu.current_device() == 0
    torch.mlu.set_device("mlu:1")
    try:
        assert torch.tensor([1.0], device="mlu").device.index == 1
    finally:
        torch.mlu.set_device(0)


def test_tensor_and_module_methods():
    t = torch.arange(4.0)
    m = t.mlu()
    assert m.is_mlu and not t.is_mlu
    assert m.device == torch.device("mlu:0")
    assert t.mlu(1).device == torch.device("mlu:1")
    mod = torch.nn.Linear(3, 2).mlu()
    assert all(p.device.type == "mlu" for p in mod.parameters())
    assert torch.equal(m.cpu(), t)


def test_properties():
    p = torch.mlu.get_device_properties(0)
    assert p.total_memory > 0
    assert isinstance(torch.mlu.get_device_name(), str)
    free, total = torch.mlu.mem_get_info(0)
    assert 0 <= free <= total == p.total_memory


def _cmp(fn, *tensors, atol=1e-5, rtol=1e-5):
    cpu = fn(*tensors)
    dev = fn(*[t.to("mlu") for t in tensors])
    if isinstance(cpu, tuple):
        for c, d in zip(cpu, dev, strict=True):
            assert d.device.type == "mlu"
            torch.testing.assert_close(d.cpu(), c, atol=atol, rtol=rtol)
    else:
        assert dev.device.type == "mlu"
        torch.testing.assert_close(dev.cpu(), cpu, atol=atol, rtol=rtol)


@pytest.mark.parametrize("fn", [
    lambda a, b: a + b, lambda a, b: a * b - b / 3, lambda a, b: torch.maximum(a, b), lambda a, b: a.pow(2) + b.exp(),
    lambda a, b: torch.where(a > 0, a, b), lambda a, b: (a > b).float(), lambda a, b: torch.addcmul(a, a, b, value=.5),
    lambda a, b: a.relu() + F.gelu(b), lambda a, b: torch.sigmoid(a) * torch.tanh(b),
])
def test_elementwise(fn):
    g = torch.Generator().manual_seed(0)
    _cmp(fn, torch.randn(5, 7, generator=g), torch.randn(5, 7, generator=g))


@pytest.mark.parametrize("fn", [
    lambda a: a.sum(), lambda a: a.mean(dim=1), lambda a: a.max(dim=0), lambda a: a.argmax(),
    lambda a: a.std(dim=1), lambda a: torch.softmax(a, 1), lambda a: torch.log_softmax(a, 0),
    lambda a: a.cumsum(1), lambda a: a.norm(), lambda a: torch.topk(a, 2, dim=1), lambda a: torch.sort(a, dim=1),
])
def test_reductions(fn):
    _cmp(fn, torch.randn(6, 9, generator=torch.Generator().manual_seed(1)))


def test_matmul_family():
    g = torch.Generator().manual_seed(2)
    a, b, c = torch.randn(4, 5, generator=g), torch.randn(5, 3, generator=g), torch.randn(4, 3, generator=g)
    _cmp(torch.mm, a, b)
    _cmp(lambda x, y, z: torch.addmm(z, x, y, beta=0.5), a, b, c)
    _cmp(torch.bmm, torch.randn(2, 4, 5, generator=g), torch.randn(2, 5, 3, generator=g))
    _cmp(lambda x, y: x @ y.t(), a, torch.randn(3, 5, generator=g))  # non-contiguous operand


def _grads(device, x, w, b, fn):
    x, w, b = (t.detach().to(device).requires_grad_() for t in (x, w, b))
    out = fn(x, w, b)
    out.square().sum().backward()
    return [t.cpu() for t in (out, x.grad, w.grad, b.grad)]


@pytest.mark.parametrize("fn", [
    lambda x, w, b: F.conv2d(x, w, b, padding=1),
    lambda x, w, b: F.max_pool2d(F.relu(F.conv2d(x, w, b, stride=2)), 2, ceil_mode=True),
    lambda x, w, b: F.avg_pool2d(F.conv2d(x, w, b, dilation=2, padding=2), 2),
    lambda x, w, b: F.adaptive_avg_pool2d(F.conv2d(x, w, b), 1),
])
def test_conv_and_pool_forward_backward(fn):
    g = torch.Generator().manual_seed(3)
    x, w, b = torch.randn(2, 3, 9, 9, generator=g), torch.randn(4, 3, 3, 3, generator=g), torch.randn(4, generator=g)
    for c, d in zip(_grads("cpu", x, w, b, fn), _grads("mlu", x, w, b, fn), strict=True):
        torch.testing.assert_close(d, c, atol=1e-4, rtol=1e-4)


def test_losses_embedding_norms_backward():
    g = torch.Generator().manual_seed(4)
    idx = torch.randint(0, 10, (6,), generator=g)
    target = torch.randint(0, 5, (6,), generator=g)
    emb_w = torch.randn(10, 8, generator=g)
    ln_w, ln_b = torch.randn(8, generator=g), torch.randn(8, generator=g)

    def run(device):
        e = emb_w.detach().to(device).requires_grad_()
        lw, lb = ln_w.detach().to(device).requires_grad_(), ln_b.detach().to(device).requires_grad_()
        bn = torch.nn.BatchNorm1d(8).to(device)
        h = F.embedding(idx.to(device), e)
        h = F.layer_norm(h, (8,), lw, lb)
        h = bn(h)
        logits = h[:, :5]
        loss = F.cross_entropy(logits, target.to(device)) + F.mse_loss(h, torch.zeros_like(h))
        loss.backward()
        return [t.detach().cpu() for t in (loss, e.grad, lw.grad, lb.grad, bn.running_mean, bn.running_var)]

    for c, d in zip(run("cpu"), run("mlu"), strict=True):
        torch.testing.assert_close(d, c, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("opt_cls", [torch.optim.SGD, torch.optim.AdamW])
def test_optimizer_foreach_matches_cpu(opt_cls):
    torch.manual_seed(0)
    ref = torch.nn.Linear(6, 3)
    kwargs = {"lr": 0.1, "momentum": 0.9} if opt_cls is torch.optim.SGD else {"lr": 0.01}
    results = []
    for device in ("cpu", "mlu"):
        model = torch.nn.Linear(6, 3).to(device)
        model.load_state_dict(ref.state_dict())
        opt = opt_cls(model.parameters(), foreach=True, **kwargs) if device == "mlu" else opt_cls(
            model.parameters(), foreach=False, **kwargs)
        for step in range(3):
            x = torch.full((4, 6), float(step + 1), device=device)
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
        results.append([p.detach().cpu() for p in model.parameters()])
    for c, d in zip(*results, strict=True):
        torch.testing.assert_close(d, c, atol=1e-6, rtol=1e-5)


def test_copies_non_contiguous_and_cross_device():
    base = torch.arange(24.0).reshape(4, 6)
    m = base.to("mlu")
    torch.testing.assert_close(m.t().cpu(), base.t())                        # D2H of a non-contiguous view
    dst = torch.zeros(6, 4, device="mlu")
    dst.copy_(base.t())                                                       # H2D from a non-contiguous source
    torch.testing.assert_close(dst.cpu(), base.t())
    other = m[:, ::2].to("mlu:1")                                             # D2D across devices, strided
    assert other.device == torch.device("mlu:1")
    torch.testing.assert_close(other.cpu(), base[:, ::2])
    assert m.to(torch.float64).dtype == torch.float64
    torch.testing.assert_close(m.to(torch.int32).cpu(), base.to(torch.int32))


def test_views_share_storage_and_inplace():
    m = torch.zeros(3, 4, device="mlu")
    v = m[1]
    v.add_(5)
    m.view(12)[0] = 7
    expected = torch.zeros(3, 4)
    expected[1] += 5
    expected.view(12)[0] = 7
    torch.testing.assert_close(m.cpu(), expected)
    assert v.untyped_storage().data_ptr() == m.untyped_storage().data_ptr()
    assert m.as_strided((2, 2), (1, 4), 1).cpu().tolist() == expected.as_strided((2, 2), (1, 4), 1).tolist()


def test_resize_and_out_variants():
    m = torch.arange(4.0, device="mlu")
    m.resize_(2, 5)
    assert m.shape == (2, 5)
    torch.testing.assert_close(m.cpu().flatten()[:4], torch.arange(4.0))
    out = torch.empty(0, device="mlu")
    torch.add(torch.ones(3, device="mlu"), 2, out=out)
    torch.testing.assert_close(out.cpu(), torch.full((3,), 3.0))
    s = torch.empty(0, device="mlu")
    s.set_(m.untyped_storage(), 0, (4,), (1,))
    torch.testing.assert_close(s.cpu(), torch.arange(4.0))


def test_item_and_printing():
    m = torch.tensor([1.5, -2.0], device="mlu")
    assert m[0].item() == 1.5
    assert "device='mlu:0'" in repr(m)
    assert bool((m > 0).any())


def test_cpu_scalar_operand_allowed_like_cuda():
    m = torch.ones(3, device="mlu")
    out = m * torch.tensor(2.0)  # 0-dim CPU tensors are scalars, as on CUDA
    assert out.device.type == "mlu"
    torch.testing.assert_close(out.cpu(), torch.full((3,), 2.0))


def test_backward_runs_on_the_calling_thread():
    # import torch_mlu turns autograd multithreading off for the importing thread: the backward of mlu tensors runs
    # where it is called (as for CPU tensors), not on the engine's device thread; other threads keep the default,
    # and set_multithreading_enabled(True) brings the device thread back.
    import threading

    def backward_thread(x: torch.Tensor) -> int:
        seen: list[int] = []
        x.register_hook(lambda g: seen.append(threading.get_ident()))
        (x * x).sum().backward()
        return seen[0]

    x = torch.ones(4, device="mlu", requires_grad=True)
    assert not torch.autograd.is_multithreading_enabled()
    assert backward_thread(x) == threading.get_ident()
    with torch.autograd.set_multithreading_enabled(True):
        assert backward_thread(x) != threading.get_ident()
    assert torch.equal(x.grad.cpu(), torch.full((4,), 4.0))


def _pool_input(shape, special: bool, generator):
    x = torch.randn(*shape, generator=generator).relu()  # ties at 0, as after a ReLU
    if special:
        flat = x.view(-1)
        flat[::7] = float("nan")
        flat[3::11] = float("-inf")
    return x


@pytest.mark.parametrize("shape, kwargs", [
    ((64, 32, 8, 8), {"kernel_size": 2}),  # the digits CNN: Catch's 2x2 kernel (narrow planes)
    ((2, 3, 6, 32), {"kernel_size": 2}),  # 2x2, sixteen outputs per row
    ((3, 10, 12), {"kernel_size": 2}),  # 3-d input
    ((2, 3, 9, 9), {"kernel_size": 3, "stride": 2}),  # Catch's general kernel; overlapping windows (ATen's backward)
    ((2, 3, 9, 9), {"kernel_size": 2, "ceil_mode": True}),  # ATen's kernel
    ((2, 3, 8, 8), {"kernel_size": 2, "padding": 1}),  # ATen's kernel
])
@pytest.mark.parametrize("special", [False, True])
def test_max_pool_values_indices_and_gradient_equal_cpus(shape, kwargs, special):
    x = _pool_input(shape, special, torch.Generator().manual_seed(5))
    grad = torch.randn(F.max_pool2d(x, **kwargs).shape, generator=torch.Generator().manual_seed(6))
    results = {}
    for device in ("cpu", "mlu"):
        xd = x.detach().to(device).requires_grad_()
        values, indices = F.max_pool2d(xd, return_indices=True, **kwargs)
        values.backward(grad.to(device))
        results[device] = (values.detach().cpu(), indices.cpu(), xd.grad.cpu(), values.stride())
    (cv, ci, cg, cs), (mv, mi, mg, ms) = results["cpu"], results["mlu"]
    torch.testing.assert_close(mv, cv, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(mi, ci)
    torch.testing.assert_close(mg, cg, rtol=0, atol=0, equal_nan=True)
    assert ms == cs


def test_max_pool_of_channels_last_and_double_input_equals_cpus():
    g = torch.Generator().manual_seed(7)
    for x in (torch.randn(4, 6, 8, 8, generator=g).contiguous(memory_format=torch.channels_last),
              torch.randn(4, 6, 8, 8, generator=g, dtype=torch.float64)):
        want = F.max_pool2d(x, 2, return_indices=True)
        got = F.max_pool2d(x.to("mlu"), 2, return_indices=True)
        for w, d in zip(want, got, strict=True):
            assert torch.equal(d.cpu(), w) and d.stride() == w.stride() and d.dtype == w.dtype


def test_eager_max_pool_runs_catchs_kernel_forward_and_atens_backward():
    # ATen's NCHW CPU forward kernel is a scalar loop, several times slower; the mlu op calls Catch's, which the
    # profiler records inside it. The backward is ATen's kernel on the host views (the generic device kernel).
    x = torch.randn(8, 4, 8, 8, device="mlu", requires_grad=True)
    with torch.profiler.profile() as prof:
        F.max_pool2d(x, 2).sum().backward()
    names = {e.name for e in prof.events()}
    assert "torch_mlu::max_pool2d_with_indices" in names
    assert "aten::max_pool2d_with_indices_backward" in names
    assert "torch_mlu::max_pool2d_with_indices_backward" not in names
