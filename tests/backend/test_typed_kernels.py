# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The typed device kernels of add, sub, mul and div (.Tensor and in-place) and of mm, bmm and addmm (and their .out
forms; catch/csrc/ops/typed_kernels.cpp) give the CPU's results, dtypes and errors (the oracle: the same call on CPU
tensors; device errors: CUDA's message).

``torch_mlu._C._typed_kernel_calls()`` counts the calls of this thread that took the typed common path, so each test
also shows which path it exercised: mlu tensors on one device and 0-dim CPU operands take it, other device mixes (and
an out= tensor the CPU kernel must resize) go to the generic kernel.
"""

from __future__ import annotations

import gc
import re
import textwrap

import pytest
import torch
from mlu_helpers import run_python

import torch_mlu

FUNCTIONAL = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}
INPLACE = ["add_", "sub_", "mul_", "div_"]


def typed_calls() -> int:
    return torch_mlu._C._typed_kernel_calls()


def to_mlu(x, device="mlu"):
    """mlu copy of a CPU tensor; 0-dim CPU tensors marked by ``keep_cpu`` and Python numbers stay as they are."""
    if isinstance(x, torch.Tensor) and not getattr(x, "keep_cpu", False):
        return x.to(device)
    return x


def cpu_scalar(value):
    t = torch.tensor(value)
    t.keep_cpu = True
    return t


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def cases():
    g = gen()
    x = torch.randn(7, 5, generator=g)
    y = torch.randn(5, 14, generator=g)
    return {
        "same-shape": (torch.randn(5, 7, generator=g), torch.randn(5, 7, generator=g)),
        "broadcast": (torch.randn(5, 1, generator=g), torch.randn(1, 7, generator=g)),
        "cpu-0dim": (torch.randn(5, 7, generator=g), cpu_scalar(2.5)),
        "cpu-0dim-int": (torch.randn(5, 7, generator=g), cpu_scalar(3)),
        "python-float": (torch.randn(5, 7, generator=g), 0.75),
        "python-int-on-int": (torch.arange(-6, 6).reshape(3, 4), 4),
        "int+float": (torch.arange(12).reshape(3, 4), torch.randn(3, 4, generator=g)),
        "int+int": (torch.arange(12).reshape(3, 4), torch.arange(1, 13).reshape(3, 4)),
        "uint8+int8": (torch.arange(12, dtype=torch.uint8), torch.arange(-6, 6, dtype=torch.int8)),
        "half+float-0dim": (torch.randn(6, generator=g).half(), cpu_scalar(1.5)),
        "half+float": (torch.randn(6, generator=g).half(), torch.randn(6, generator=g)),
        "transposed+strided": (x.t(), y[:, ::2]),
        "expanded+offset": (torch.randn(1, 7, generator=g).expand(5, 7), torch.randn(6, 7, generator=g)[1:]),
        "0-dim mlu": (torch.tensor(3.0), torch.randn(4, generator=g)),
    }


CASES = cases()


def check_same(dev: torch.Tensor, cpu: torch.Tensor, device="mlu:0"):
    assert dev.device == torch.device(device)
    assert dev.dtype == cpu.dtype and dev.shape == cpu.shape
    torch.testing.assert_close(dev.cpu(), cpu, equal_nan=True)


@pytest.mark.parametrize("op", FUNCTIONAL)
@pytest.mark.parametrize("case", CASES)
def test_functional_matches_cpu(op, case):
    a, b = CASES[case]
    fn = FUNCTIONAL[op]
    expected = fn(a, b)
    am, bm = to_mlu(a), to_mlu(b)
    before = typed_calls()
    got = fn(am, bm)
    assert typed_calls() - before == 1, "the typed common path was not taken"
    check_same(got, expected)
    # the result is an mlu tensor like any other: dispatch keys, storage, device memory
    assert torch._C._dispatch_keys(got) == torch._C._dispatch_keys(torch.empty(1, device="mlu"))
    assert got.untyped_storage().device.type == "mlu"


@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha(op):
    a, b = CASES["same-shape"]
    fn = FUNCTIONAL[op]
    check_same(fn(to_mlu(a), to_mlu(b), alpha=2.5), fn(a, b, alpha=2.5))
    ia, ib = CASES["int+int"]
    check_same(fn(to_mlu(ia), to_mlu(ib), alpha=3), fn(ia, ib, alpha=3))
    with pytest.raises(RuntimeError) as cpu_err:
        fn(ia, ib, alpha=2.5)
    with pytest.raises(RuntimeError) as mlu_err:
        fn(to_mlu(ia), to_mlu(ib), alpha=2.5)
    assert str(mlu_err.value) == str(cpu_err.value)


def test_cpu_scalar_as_self_takes_the_generic_kernel():
    b = torch.randn(5, generator=gen(3))
    before = typed_calls()
    got = torch.mul(torch.tensor(2.0), to_mlu(b))
    assert typed_calls() == before
    check_same(got, torch.mul(torch.tensor(2.0), b))


@pytest.mark.parametrize("op", INPLACE)
@pytest.mark.parametrize("case", ["same-shape", "cpu-0dim", "python-float", "int+int", "half+float",
                                  "transposed+strided"])
def test_inplace_matches_cpu(op, case):
    a, b = CASES[case]
    if op == "div_" and case == "int+int":
        pytest.skip("int / int is float: covered by test_inplace_errors_match_cpu")
    a_cpu = a.clone() if a.is_contiguous() else a.t().clone().t()  # keeps the transposed layout
    a_mlu = to_mlu(a_cpu)
    assert a_mlu.stride() == a_cpu.stride()
    bm = to_mlu(b)
    v_cpu, v_mlu = a_cpu._version, a_mlu._version
    before = typed_calls()
    out_cpu = getattr(a_cpu, op)(b)
    out_mlu = getattr(a_mlu, op)(bm)
    assert typed_calls() - before == 1
    assert out_mlu is a_mlu and out_cpu is a_cpu
    assert a_mlu._version - v_mlu == a_cpu._version - v_cpu == 1
    check_same(a_mlu, a_cpu)


@pytest.mark.parametrize("op", INPLACE)
def test_alias_inplace(op):
    a = torch.randn(4, 3, generator=gen(5)) + 3.0
    am = to_mlu(a)
    getattr(a, op)(a)
    before = typed_calls()
    getattr(am, op)(am)
    assert typed_calls() - before == 1
    check_same(am, a)


@pytest.mark.parametrize("call", [
    lambda a, b: a.add_(b),  # int self, float other: result type Float can't be cast to Long
    lambda a, b: a.div_(2),  # int / int is float
    lambda a, b: a[:1].mul_(a),  # in-place output cannot broadcast
    lambda a, b: a[1:].add_(a[:-1]),  # partial overlap of input and written tensor
    lambda a, b: (a > 2).sub(a < 5),  # bool subtraction
])
def test_errors_match_cpu(call):
    a = torch.arange(12).reshape(4, 3)
    b = torch.randn(4, 3, generator=gen(6))
    with pytest.raises(RuntimeError) as cpu_err:
        call(a.clone(), b)
    with pytest.raises(RuntimeError) as mlu_err:
        call(to_mlu(a), to_mlu(b))
    assert str(mlu_err.value) == str(cpu_err.value)
    # the thread's reused host views are free again after the error
    before = typed_calls()
    check_same(to_mlu(b) * to_mlu(b), b * b)
    assert typed_calls() - before == 1


def test_views_of_one_storage_read_as_on_cpu():
    x = torch.randn(10, generator=gen(7))
    xm = to_mlu(x)
    check_same(xm[1:] - xm[:-1], x[1:] - x[:-1])
    check_same(xm[::2] * xm[1::2], x[::2] * x[1::2])
    y, ym = x.clone(), to_mlu(x)
    y[:5].add_(y[5:])
    ym[:5].add_(ym[5:])  # disjoint halves of one storage: allowed, as on CPU
    check_same(ym, y)


def test_conj_and_neg_views():
    g = gen(8)
    z = torch.randn(6, dtype=torch.cfloat, generator=g)
    w = torch.randn(6, dtype=torch.cfloat, generator=g)
    zm, wm = to_mlu(z), to_mlu(w)
    assert zm.conj().is_conj()
    check_same(zm.conj() * wm, z.conj() * w)
    check_same(zm.conj().imag + wm.real, z.conj().imag + w.real)  # .imag of a conj view has the neg bit


@pytest.mark.parametrize("op", ["add", "mul", "add_", "mul_", "mm"])
def test_device_mixes_raise_like_cuda(op):
    a = torch.randn(3, 4, device="mlu")
    shape = (4, 2) if op == "mm" else (3, 4)
    mixes = ((torch.randn(shape), "mlu:0 and cpu"), (torch.randn(shape, device="mlu:1"), "mlu:0 and mlu:1"))
    for other, devices in mixes:
        before = typed_calls()
        # CUDA's message (TensorIterator / c10::impl::check_and_update_common_device), device names ours
        with pytest.raises(RuntimeError, match=re.escape(
                f"Expected all tensors to be on the same device, but found at least two devices, {devices}!")):
            getattr(a, op)(other)
        assert typed_calls() == before


def test_other_device_than_current():
    a, b = CASES["broadcast"]
    before = typed_calls()
    got = to_mlu(a, "mlu:1") * to_mlu(b, "mlu:1")
    assert typed_calls() - before == 1
    assert torch.mlu.current_device() == 0
    check_same(got, a * b, device="mlu:1")
    c = to_mlu(a, "mlu:1")
    c.add_(1.5)
    check_same(c, a + 1.5, device="mlu:1")


def test_autograd_through_typed_kernels():
    g = gen(9)
    a, b, c = torch.randn(4, 5, generator=g), torch.randn(4, 5, generator=g), torch.randn(1, 5, generator=g)

    def loss(a, b, c):
        return ((a * b + a / (b * b + 1) - 2 * c) * (c - 0.5)).sum()

    leaves_cpu = [t.clone().requires_grad_() for t in (a, b, c)]
    leaves_mlu = [t.to("mlu").requires_grad_() for t in (a, b, c)]
    before = typed_calls()
    loss(*leaves_cpu).backward()
    lm = loss(*leaves_mlu)
    lm.backward()
    assert typed_calls() - before >= 7  # forward ops at least; backward's mul/div/add too
    for tc, tm in zip(leaves_cpu, leaves_mlu, strict=True):
        check_same(tm.grad, tc.grad)


def test_inference_mode_result_is_an_inference_tensor():
    a, b = CASES["same-shape"]
    with torch.inference_mode():
        got = to_mlu(a) + to_mlu(b)
        fresh = torch.empty(1, device="mlu")
    assert got.is_inference()
    assert torch._C._dispatch_keys(got) == torch._C._dispatch_keys(fresh)
    check_same(got, a + b)


def test_result_is_device_memory():
    a = torch.randn(1 << 16, device="mlu")
    torch.mlu.synchronize()
    # Garbage of earlier tests (reference cycles holding mlu tensors) must not be freed in between.
    gc.collect()
    gc.disable()
    try:
        before = torch.mlu.memory_allocated()
        got = a * 2
        assert torch.mlu.memory_allocated() - before >= got.nbytes
        del got
        assert torch.mlu.memory_allocated() == before
    finally:
        gc.enable()


def product_cases():
    g = gen(10)
    r = lambda *shape, dtype=torch.float32: torch.randn(*shape, generator=g).to(dtype)  # noqa: E731
    w = r(12, 7)
    big = r(24, 9)
    return {
        "mm": (torch.mm, (r(5, 7), r(7, 3)), {}),
        "mm transposed+strided": (torch.mm, (w.t(), big[::2, 1:7]), {}),
        "mm int64": (torch.mm, (torch.arange(12).reshape(3, 4), torch.arange(8).reshape(4, 2)), {}),
        "mm bf16": (torch.mm, (r(4, 6, dtype=torch.bfloat16), r(6, 5, dtype=torch.bfloat16)), {}),
        "mm empty": (torch.mm, (r(0, 4), r(4, 3)), {}),
        "mm nan+inf": (torch.mm, (torch.tensor([[float("nan"), 1.0], [float("inf"), -1e30]]), r(2, 2)), {}),
        "bmm": (torch.bmm, (r(3, 4, 5), r(3, 5, 2)), {}),
        "bmm transposed": (torch.bmm, (r(3, 5, 4).transpose(1, 2), r(3, 5, 2)), {}),
        "addmm bias": (torch.addmm, (r(3), r(5, 7), w[:3].t()), {}),
        "addmm beta alpha": (torch.addmm, (r(5, 1).expand(5, 3), r(5, 7), r(7, 3)), {"beta": 0.5, "alpha": -2.0}),
        "addmm beta 0 ignores nan": (torch.addmm, (torch.full((2, 2), float("nan")), r(2, 3), r(3, 2)), {"beta": 0}),
    }


PRODUCTS = product_cases()


def check_equal(dev: torch.Tensor, cpu: torch.Tensor):
    """The CPU kernel ran on the host views: the result is bitwise the CPU result."""
    assert dev.device.type == "mlu" and dev.dtype == cpu.dtype and dev.shape == cpu.shape
    assert torch.equal(dev.cpu().nan_to_num(), cpu.nan_to_num())
    assert torch.equal(dev.cpu().isnan(), cpu.isnan())


@pytest.mark.parametrize("case", PRODUCTS)
def test_products_match_cpu(case):
    fn, args, kw = PRODUCTS[case]
    expected = fn(*args, **kw)
    margs = [to_mlu(a) for a in args]
    before = typed_calls()
    got = fn(*margs, **kw)
    assert typed_calls() - before == 1, "the typed common path was not taken"
    check_equal(got, expected)
    out = torch.empty_like(expected, device="mlu")
    storage = out.untyped_storage().data_ptr()
    before = typed_calls()
    assert fn(*margs, **kw, out=out) is out
    assert typed_calls() - before == 1
    assert out.untyped_storage().data_ptr() == storage  # written in place, not resized
    check_equal(out, expected)


def test_product_out_of_other_sizes_is_resized_as_on_cpu():
    a, b = torch.randn(4, 3, generator=gen(11)), torch.randn(3, 6, generator=gen(12))
    out_cpu, out_mlu = torch.empty(2, 2), torch.empty(2, 2, device="mlu")
    with pytest.warns(UserWarning, match=r"output with one or more elements was resized"):
        torch.mm(a, b, out=out_cpu)
    before = typed_calls()
    with pytest.warns(UserWarning, match=r"output with one or more elements was resized"):
        torch.mm(to_mlu(a), to_mlu(b), out=out_mlu)
    assert typed_calls() == before  # the generic kernel mirrors the resize onto the device tensor
    check_equal(out_mlu, out_cpu)
    bias = torch.randn(6, generator=gen(13))
    out_cpu, out_mlu = torch.empty(0), torch.empty(0, device="mlu")
    torch.addmm(bias, a, b, out=out_cpu)
    torch.addmm(to_mlu(bias), to_mlu(a), to_mlu(b), out=out_mlu)
    check_equal(out_mlu, out_cpu)


def test_product_out_sharing_a_storage_with_an_input():
    buf = torch.randn(40, generator=gen(14))
    bm = to_mlu(buf)
    # out is the second half of the storage that holds the first operand
    torch.mm(buf[:12].view(3, 4), buf[12:28].view(4, 4), out=buf[24:].view(4, 4)[:3])
    before = typed_calls()
    torch.mm(bm[:12].view(3, 4), bm[12:28].view(4, 4), out=bm[24:].view(4, 4)[:3])
    assert typed_calls() - before == 1
    check_equal(bm, buf)
    s = torch.randn(3, 3, generator=gen(15))
    sm = to_mlu(s)
    before = typed_calls()
    check_equal(torch.addmm(sm, sm, sm, beta=2), torch.addmm(s, s, s, beta=2))  # one tensor three times
    assert typed_calls() - before == 1


@pytest.mark.parametrize("call", [
    lambda a, b, o: torch.mm(a, b),  # sizes cannot be multiplied
    lambda a, b, o: torch.mm(a[0], b),  # 1-D operand
    lambda a, b, o: torch.bmm(a, b),  # 2-D operands
    lambda a, b, o: torch.mm(a, a.t(), out=o.int()),  # out of another dtype
    lambda a, b, o: torch.addmm(b, a, a.t()),  # bias that does not broadcast
])
def test_product_errors_match_cpu(call):
    a, b, o = torch.randn(4, 3, generator=gen(16)), torch.randn(5, 2, generator=gen(17)), torch.empty(4, 4)
    with pytest.raises(RuntimeError) as cpu_err:
        call(a, b, o)
    with pytest.raises(RuntimeError) as mlu_err:
        call(to_mlu(a), to_mlu(b), to_mlu(o))
    assert str(mlu_err.value) == str(cpu_err.value)
    # the thread's reused host views are free again after the error
    before = typed_calls()
    check_equal(torch.mm(to_mlu(a), to_mlu(a).t()), torch.mm(a, a.t()))
    assert typed_calls() - before == 1


def test_compiled_linear_calls_the_typed_addmm():
    """Inductor's generated code calls ``extern_kernels.addmm(..., out=buf)`` for a Linear layer on mlu."""
    lin = torch.nn.Linear(7, 3)
    x = torch.randn(5, 7, generator=gen(18))
    expected = torch.compile(lin)(x)
    lin_m, xm = lin.to("mlu"), to_mlu(x)
    compiled = torch.compile(lin_m)
    compiled(xm)
    before = typed_calls()
    got = compiled(xm)
    assert typed_calls() - before == 1
    torch.testing.assert_close(got.cpu(), expected)


PROFILE_SCRIPT = textwrap.dedent("""
    import torch
    from torch.profiler import ProfilerActivity, profile
    a = torch.randn(256, 256, device="mlu")
    b = torch.randn(256, 256, device="mlu")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        c = a + b
        c.mul_(b)
        torch.mlu.synchronize()
    by_name = {e.key: e for e in prof.key_averages()}
    print("kineto", by_name["aten::add"].self_device_time_total, by_name["aten::mul_"].self_device_time_total)
    with torch.autograd.profiler.profile(use_device="mlu", use_kineto=False) as prof:
        c = a + b
        torch.mlu.synchronize()
    print("legacy", {e.key: e for e in prof.key_averages()}["aten::add"].self_device_time_total)
""")


def test_profilers_record_typed_kernels():
    r = run_python(PROFILE_SCRIPT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    add_us, mul_us = (float(v) for v in out["kineto"].split())
    assert add_us > 0 and mul_us > 0, out  # each kernel is an mlu kernel activity linked to its op
    assert float(out["legacy"]) > 0  # the legacy profiler's device time (notifiers around the op)
