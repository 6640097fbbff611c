# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Graph mode: ``torch.compile(model, backend="mlu")`` equals eager mlu for inference and a training step
on the digits CNN and a transformer block, in every ``FUSE_GROUP_DEBUG_MODE``; the fusion report lists the groups
and the nodes left out; the backend is reachable through Dynamo's registry and device interface; compiled groups
write their outputs to device memory (adopted, not copied); scaled dot-product attention on mlu runs CPU's fused
flash kernel, eagerly (bitwise equal to CPU) and inside fusion groups."""

from __future__ import annotations

import copy
import importlib.util
import json
from importlib.metadata import entry_points
from types import ModuleType

import pytest
import torch
import torch.nn.functional as F
from mlu_helpers import REPO, run_python
from torch import nn

import torch_mlu.compile as mlu_compile

# Float32 results of fused kernels differ from eager ones by summation order only.
RTOL, ATOL = 1e-4, 1e-5


def _load(name: str, path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load("bench_compile", "benchmarks/bench_compile.py")
digits = _load("train_digits", "examples/train_digits.py")


def _digits_case() -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    x_train, y_train, _, _ = digits.load_data(0)
    return digits.DigitsCNN().to("mlu"), x_train[:32].to("mlu"), y_train[:32].to("mlu")


def _block_case() -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    x = torch.randn(2, 16, 64)
    return bench.TransformerBlock().to("mlu"), x.to("mlu"), torch.randn(2, 16, 64).to("mlu")


CASES = {"digits": _digits_case, "block": _block_case}


def _loss(name: str, out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(out, target) if name == "digits" else F.mse_loss(out, target)


def _close(got: torch.Tensor, want: torch.Tensor, what: str, rtol: float = RTOL) -> None:
    assert got.device.type == "mlu", what
    scale = want.abs().max().item()
    torch.testing.assert_close(got.cpu(), want.cpu(), rtol=rtol, atol=ATOL + rtol * scale, msg=what)


@pytest.fixture(scope="module")
def compiled() -> dict[str, tuple[nn.Module, nn.Module, torch.Tensor, torch.Tensor]]:
    """name -> (eager model, compiled copy, input, target); the compiled copy is shared so debug modes reuse it."""
    torch._dynamo.reset()
    out = {}
    for name, make in CASES.items():
        model, x, target = make()
        out[name] = (model, torch.compile(copy.deepcopy(model), backend="mlu"), x, target)
    return out


def test_benchmark_times_each_step_right_after_a_step_of_its_own(monkeypatch):
    # bench_compile.median_ms times eager and compiled steps taking turns. A timed call must follow a call of the same
    # function, as in a training loop: timed right after the other one, a step pays for the caches that the other
    # filled (two copies of one compiled model read several percent apart by position alone).
    events: list[str] = []
    reads = iter(range(10**6))

    def clock() -> float:  # median_ms reads it right before and right after each timed call
        n = next(reads)
        events.append("end" if n % 2 else "start")
        return float(n)

    monkeypatch.setattr(bench.time, "perf_counter", clock)
    fns = {name: (lambda name=name: events.append(name)) for name in ("eager", "compiled")}
    result = bench.median_ms(fns, reps=7, block=3)
    timed: dict[str, int] = {"eager": 0, "compiled": 0}
    last_call = None
    for i, event in enumerate(events):
        if event == "start":
            assert events[i + 1] == last_call, f"{events[i + 1]} timed right after {last_call}"
            assert events[i + 2] == "end"
            timed[events[i + 1]] += 1
        elif event != "end":
            last_call = event
    assert timed == {"eager": 7, "compiled": 7}
    assert result["eager"][0] == result["compiled"][0] == 1e3  # every timed call spans 1 tick of the fake clock


def test_registered_through_entry_points_and_registry():
    eps = entry_points(group="torch_dynamo_backends")
    assert {"mlu", "catch"} <= set(eps.names)
    assert "mlu" in torch._dynamo.list_backends() and "catch" in torch._dynamo.list_backends()
    from torch._dynamo.backends.registry import lookup_backend

    assert lookup_backend("mlu") is mlu_compile.mlu_backend
    assert lookup_backend("catch") is mlu_compile.mlu_backend


def test_fresh_process_compiles_a_cnn_with_max_pool():
    """In a new interpreter (nothing imported Inductor before), a CNN with max-pool compiles with backend="mlu" for
    inference and a training step and equals eager CPU. Inductor's max-pool decomposition calls
    ``torch._inductor.lowering``, which is an attribute only once some module imported it (the benchmark found it)."""
    code = (
        "import torch\n"
        "from torch import nn\n"
        "torch.manual_seed(0)\n"
        "m = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 2))\n"
        "x = torch.randn(5, 1, 8, 8)\n"
        "ref = m(x); ref.sum().backward(); gref = m[0].weight.grad.clone(); m.zero_grad()\n"
        "m.to('mlu'); c = torch.compile(m, backend='mlu')\n"
        "with torch.no_grad():\n"
        "    inf = c(x.to('mlu')).cpu()\n"
        "out = c(x.to('mlu')); out.sum().backward()\n"
        "torch.testing.assert_close(inf, ref.detach(), rtol=1e-4, atol=1e-5)\n"
        "torch.testing.assert_close(out.detach().cpu(), ref.detach(), rtol=1e-4, atol=1e-5)\n"
        "torch.testing.assert_close(m[0].weight.grad.cpu(), gref, rtol=1e-4, atol=1e-5)\n"
        "print('ok')\n"
    )
    proc = run_python(code)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


def test_device_interface_is_backed_by_torch_mlu():
    from torch._dynamo.device_interface import get_interface_for_device

    iface = get_interface_for_device("mlu")
    assert get_interface_for_device(torch.device("mlu", 1)) is iface
    assert iface.is_available() and iface.device_count() == torch.mlu.device_count()
    assert issubclass(iface.Stream, torch.Stream) and issubclass(iface.Event, torch.Event)
    previous = iface.exchange_device(1)
    try:
        assert iface.current_device() == 1 == torch.mlu.current_device()
        stream = torch.mlu.Stream()
        iface._set_stream_by_id(stream.stream_id, stream.device_index, stream.device_type)
        assert iface.current_stream() == stream
        assert iface.get_raw_stream(1) == stream.stream_id
        iface.set_stream(torch.mlu.default_stream(1))
        assert iface.get_raw_stream(1) == 0
    finally:
        iface.set_device(previous)
    assert iface.get_device_properties(0).name == torch.mlu.get_device_properties(0).name
    iface.synchronize()


def test_host_view_aliases_device_memory():
    base = torch.arange(24, dtype=torch.float32, device="mlu").view(4, 6)
    sub = base[1:, 2:5]
    view = mlu_compile.host_view(sub)
    assert view.device.type == "cpu" and view.stride() == sub.stride()
    assert torch.equal(view, sub.cpu())
    view.fill_(-1)
    assert (base.cpu()[1:, 2:5] == -1).all() and (base.cpu()[0] >= 0).all()
    with pytest.raises(ValueError, match="expected an mlu tensor"):
        mlu_compile.host_view(torch.ones(2))


@pytest.mark.parametrize("name", list(CASES))
def test_inference_matches_eager(compiled, name):
    model, compiled_model, x, _ = compiled[name]
    model.eval(), compiled_model.eval()
    with torch.no_grad():
        want = model(x)
        got = compiled_model(x)
        again = compiled_model(x)
    model.train(), compiled_model.train()
    _close(got, want, f"{name} inference")
    assert torch.equal(got.cpu(), again.cpu())
    report = mlu_compile.last_report()
    assert [g.kind for g in report.graphs] == ["inference"]
    assert report.groups and report.groups[0].ops


@pytest.mark.parametrize("name", list(CASES))
def test_training_step_matches_eager(compiled, name):
    model, compiled_model, x, target = compiled[name]
    eager_model, step_model = copy.deepcopy(model), copy.deepcopy(compiled_model)
    results = []
    for net in (eager_model, step_model):
        # SGD: the update is linear in the gradient (Adam's first step is ~sign(grad), which amplifies rounding).
        opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        loss = _loss(name, net(x), target)
        loss.backward()
        grads = [p.grad.clone() for p in net.parameters()]
        opt.step()
        results.append((loss.detach(), grads, [p.detach().clone() for p in net.parameters()]))
    (loss_e, grads_e, params_e), (loss_c, grads_c, params_c) = results
    _close(loss_c, loss_e, f"{name} loss")
    for i, (gc, ge) in enumerate(zip(grads_c, grads_e, strict=True)):
        _close(gc, ge, f"{name} grad {i}", rtol=1e-3)
    for i, (pc, pe) in enumerate(zip(params_c, params_e, strict=True)):
        _close(pc, pe, f"{name} param {i} after the step", rtol=1e-3)
    kinds = [g.kind for g in mlu_compile.last_report().graphs]
    assert kinds == ["forward", "backward"]


@pytest.mark.parametrize("mode", ["cpu", "eager", "layerwise"])
@pytest.mark.parametrize("name", list(CASES))
def test_debug_modes_match_eager(compiled, monkeypatch, name, mode):
    model, compiled_model, x, target = compiled[name]
    monkeypatch.setenv(mlu_compile.MODE_ENV, mode)
    assert mlu_compile.debug_mode() == mode
    want_loss = _loss(name, model(x), target)
    want_loss.backward()
    got_loss = _loss(name, compiled_model(x), target)
    got_loss.backward()
    _close(got_loss, want_loss, f"{name} loss, {mode}")
    for (pname, p), q in zip(model.named_parameters(), compiled_model.parameters(), strict=True):
        _close(q.grad, p.grad, f"{name} grad of {pname}, {mode}", rtol=1e-3)
        p.grad = q.grad = None
    if mode == "layerwise":
        groups = [g for r in mlu_compile.all_reports() for g in r.groups]
        assert groups and not any(g.mismatches for g in groups)


@torch.library.custom_op("catch_compile_test::double", mutates_args=())
def _double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_double.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@_double.register_kernel("mlu")
def _(x: torch.Tensor) -> torch.Tensor:
    return x * 2 + 1e-3  # a deliberately wrong device kernel, for layerwise mode to find


def test_layerwise_reports_first_mismatch(monkeypatch):
    def f(a, b):
        return torch.ops.catch_compile_test.double(torch.relu(a @ b)).exp()

    monkeypatch.setenv(mlu_compile.MODE_ENV, "layerwise")
    a, b = torch.randn(4, 5, device="mlu"), torch.randn(5, 3, device="mlu")
    with pytest.warns(UserWarning, match="first mismatch: double"):
        out = torch.compile(f, backend="mlu")(a, b)
    _close(out, f(a, b), "layerwise output equals eager (both use the mlu kernel)")
    (group,) = mlu_compile.last_report().groups
    assert group.ops["catch_compile_test.double.default"] == 1 and group.ops["aten.mm.default"] == 1
    assert len(group.mismatches) == 1 and group.mismatches[0].startswith("double (catch_compile_test.double.default)")
    assert "max abs difference 0.001" in group.mismatches[0]


def test_bad_tolerance_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(mlu_compile.MODE_ENV, "layerwise")
    monkeypatch.setenv("FUSE_GROUP_DEBUG_ATOL", "-1")
    compiled_fn = torch.compile(lambda a: (a.sin() + 1).cos(), backend="mlu")
    with pytest.raises(mlu_compile.FuseConfigError, match="must be >= 0"):
        compiled_fn(torch.ones(3, device="mlu"))


def test_invalid_debug_mode_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(mlu_compile.MODE_ENV, "gpu")
    compiled_fn = torch.compile(lambda a: (a.sin() + 1).cos(), backend="mlu")
    with pytest.raises(mlu_compile.FuseConfigError, match="FUSE_GROUP_DEBUG_MODE='gpu'"):
        compiled_fn(torch.ones(3, device="mlu"))


def test_report_lists_groups_and_left_out_nodes(tmp_path, monkeypatch):
    path = tmp_path / "fuse.json"
    monkeypatch.setenv(mlu_compile.REPORT_ENV, str(path))

    def f(a, b):
        h = torch.tanh(a @ b + 1).sum(dim=1)
        h = h.to("cpu").to(a.device)        # device round trip: stays eager, splits the groups
        noise = torch.rand_like(h)          # random: stays eager
        h = (h * noise).exp() - 1
        return h.cpu() * 2, h + 1           # device copy and an op on cpu: stay eager

    a, b = torch.randn(4, 5, device="mlu"), torch.randn(5, 3, device="mlu")
    torch.manual_seed(1)
    got_cpu, got_mlu = torch.compile(f, backend="mlu")(a, b)
    torch.manual_seed(1)
    want_cpu, want_mlu = f(a, b)
    _close(got_mlu, want_mlu, "mlu output")
    torch.testing.assert_close(got_cpu, want_cpu, rtol=RTOL, atol=ATOL)

    report = mlu_compile.last_report()
    assert len(report.groups) == 2
    first, second = report.groups
    assert {"aten.mm.default", "aten.tanh.default", "aten.sum.dim_IntList"} <= set(first.ops)
    assert {"aten.mul.Tensor", "aten.exp.default"} <= set(second.ops)
    reasons = [(n.op, n.reason) for n in report.left_out]
    assert sum("random" in reason for _, reason in reasons) == 1
    # Three device copies (Inductor's decompositions spell them prims.device_put) and the multiply on cpu.
    assert len([op for op, reason in reasons if "cpu" in reason]) == 4
    assert ("aten.mul.Tensor", "touches a cpu tensor (copy between devices)") in reasons
    text = report.format()
    assert "fused_0" in text and "fused_1" in text and "left out" in text and "random operator" in text

    written = json.loads(path.read_text())
    assert written[-1] == report.to_dict()


def test_outputs_keep_aliasing_with_inputs_and_each_other():
    from torch_mlu.compile.group import adopt_outputs
    from torch_mlu.compile.report import GroupReport

    x = torch.arange(12.0, device="mlu").view(3, 4)
    hx = mlu_compile.host_view(x)
    base = torch.arange(100.0, 120.0)  # plain CPU memory: cannot be adopted, so copied (once)
    report = GroupReport(name="g", num_nodes=0, ops={})
    outs = adopt_outputs((hx[1:, ::2], base[4:10].view(2, 3), base[10:], 7), {hx.untyped_storage().data_ptr(): x},
                         torch.device("mlu", 0), report)
    assert report.copied_outputs == 1
    view_of_x, a, b, scalar = outs
    assert scalar == 7 and all(t.device.type == "mlu" for t in (view_of_x, a, b))
    assert view_of_x.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert torch.equal(view_of_x.cpu(), x.cpu()[1:, ::2])
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()  # one copy of the shared storage
    assert (a.storage_offset(), b.storage_offset(), a.stride()) == (4, 10, (3, 1))
    assert torch.equal(a.cpu(), base[4:10].view(2, 3)) and torch.equal(b.cpu(), base[10:])


@pytest.mark.parametrize(("value", "expected"), [("1", "True"), ("0", "False")])
def test_host_buffer_reuse_can_be_switched_off(value, expected):
    out = run_python("from torch_mlu.compile.host_malloc import keep_host_buffers; print(keep_host_buffers())",
                     env={"CATCH_FUSE_KEEP_HOST_BUFFERS": value})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [expected]


def test_second_device_keeps_outputs_and_grads_there():
    torch.manual_seed(0)
    model = bench.TransformerBlock(dim=32, heads=2, hidden=64).to("mlu:1")
    x = torch.randn(2, 8, 32, device="mlu:1")
    compiled_model = torch.compile(copy.deepcopy(model), backend="mlu")
    got = compiled_model(x)
    got.square().mean().backward()
    want = model(x)
    want.square().mean().backward()
    assert got.device == torch.device("mlu", 1) and torch.mlu.current_device() == 0
    _close(got, want, "mlu:1 output")
    for p, q in zip(model.parameters(), compiled_model.parameters(), strict=True):
        assert q.grad.device == torch.device("mlu", 1)
        _close(q.grad, p.grad, "mlu:1 grad", rtol=1e-3)


def test_host_kernel_outputs_are_adopted_without_a_copy():
    from torch_mlu import _C
    from torch_mlu.compile.group import adopt_outputs
    from torch_mlu.compile.report import GroupReport

    with _C._HostKernelScope(1):  # CPU allocations here are blocks of mlu:1 memory
        buf = torch.arange(24.0)
        other = torch.arange(4, dtype=torch.int64)
    host_ptr = buf.data_ptr()
    report = GroupReport(name="g", num_nodes=0, ops={})
    view_a, view_b, ints = adopt_outputs((buf[2:8].view(2, 3), buf.view(4, 6).t(), other), {},
                                         torch.device("mlu", 1), report)
    assert report.copied_outputs == 0
    assert {t.device for t in (view_a, view_b, ints)} == {torch.device("mlu", 1)}
    # Same memory as the host buffer the code wrote: a host view of the adopted tensor starts at its address.
    assert mlu_compile.host_view(view_a).data_ptr() == host_ptr + 2 * 4
    assert view_a.untyped_storage().data_ptr() == view_b.untyped_storage().data_ptr()  # still aliased
    assert view_b.stride() == (1, 6)
    want = torch.arange(24.0)
    assert torch.equal(view_a.cpu(), want[2:8].view(2, 3)) and torch.equal(view_b.cpu(), want.view(4, 6).t())
    assert torch.equal(ints.cpu(), torch.arange(4)) and buf.untyped_storage().nbytes() == 0  # ownership moved
    # Memory allocated outside host-kernel mode, or for another device, is not adopted.
    with _C._HostKernelScope(0):
        on_dev0 = torch.ones(3)
    assert _C._wrap_host_outputs([torch.ones(3), on_dev0], 1) == [None, None]


def test_compiled_training_writes_outputs_to_device_memory():
    torch.manual_seed(0)
    model = bench.TransformerBlock(dim=32, heads=2, hidden=64).to("mlu")
    compiled_model = torch.compile(copy.deepcopy(model), backend="mlu")
    x = torch.randn(2, 8, 32, device="mlu")
    for _ in range(2):
        compiled_model(x).square().mean().backward()
    groups = mlu_compile.last_report().groups
    assert groups and all(g.copied_outputs == 0 for g in groups)
    assert all(p.grad.device.type == "mlu" for p in compiled_model.parameters())


def _attention_inputs(requires_grad: bool) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    torch.manual_seed(0)
    cpu = [torch.randn(2, 3, 40, 16) for _ in range(3)]
    mlu = [t.to("mlu") for t in cpu]
    return [t.requires_grad_(requires_grad) for t in cpu], [t.requires_grad_(requires_grad) for t in mlu]


@pytest.mark.parametrize("variant", ["plain", "causal", "float mask", "bool mask"])
def test_eager_sdpa_runs_cpu_fused_kernel_bitwise(variant):
    cpu, mlu = _attention_inputs(requires_grad=True)
    mask = None
    if variant == "float mask":
        mask = torch.randn(40, 40)
    elif variant == "bool mask":
        mask = torch.rand(40, 40) > 0.3
    kwargs = {"is_causal": variant == "causal"}
    want = F.scaled_dot_product_attention(*cpu, attn_mask=mask, **kwargs)
    got = F.scaled_dot_product_attention(*mlu, attn_mask=None if mask is None else mask.to("mlu"), **kwargs)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert got.device.type == "mlu" and torch.equal(got.detach().cpu(), want.detach())
    grad = torch.randn_like(want)
    want.backward(grad)
    got.backward(grad.to("mlu"))
    for i, (c, m) in enumerate(zip(cpu, mlu, strict=True)):
        assert torch.equal(m.grad.cpu(), c.grad), f"grad {i}"


def test_eager_sdpa_with_dropout_takes_math_path_on_the_mlu_generator():
    _, mlu = _attention_inputs(requires_grad=True)
    torch.mlu.manual_seed(3)
    first = F.scaled_dot_product_attention(*mlu, dropout_p=0.5)
    torch.mlu.manual_seed(3)
    again = F.scaled_dot_product_attention(*mlu, dropout_p=0.5)
    assert "FlashAttention" not in type(first.grad_fn).__name__  # the fused CPU kernel does no dropout
    assert torch.equal(first.detach().cpu(), again.detach().cpu())
    no_drop = F.scaled_dot_product_attention(*mlu)
    assert not torch.equal(first.detach().cpu(), no_drop.detach().cpu())


class _SdpaBlock(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in self.qkv(x).split(d, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.proj(y.transpose(1, 2).reshape(b, t, d))


def test_compiled_sdpa_fuses_the_flash_kernel_into_groups():
    torch.manual_seed(0)
    model = _SdpaBlock().to("mlu")
    compiled_model = torch.compile(copy.deepcopy(model), backend="mlu")
    x = torch.randn(2, 24, 32, device="mlu")
    want = model(x)
    want.square().mean().backward()
    got = compiled_model(x)
    got.square().mean().backward()
    _close(got, want, "sdpa block output")
    for (name, p), q in zip(model.named_parameters(), compiled_model.parameters(), strict=True):
        _close(q.grad, p.grad, f"sdpa block grad of {name}", rtol=1e-3)
    forward, backward = mlu_compile.last_report().graphs
    assert any("aten._scaled_dot_product_flash_attention_for_cpu.default" in g.ops for g in forward.groups)
    assert any("aten._scaled_dot_product_flash_attention_for_cpu_backward.default" in g.ops for g in backward.groups)
    assert not any("flash_attention" in left.op for left in forward.left_out + backward.left_out)


def test_attention_with_dropout_stays_out_of_fusion_groups():
    from torch_mlu.compile.support import draws_random

    graph = torch.fx.Graph()
    q, k, v = (graph.placeholder(n) for n in "qkv")
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    no_dropout = graph.call_function(flash, (q, k, v))
    zero = graph.call_function(flash, (q, k, v, 0.0))
    dropout = graph.call_function(flash, (q, k, v), {"dropout_p": 0.1})
    rand = graph.call_function(torch.ops.aten.rand_like.default, (q,))
    relu = graph.call_function(torch.ops.aten.relu.default, (q,))
    got = {n.name: draws_random(n, n.target) for n in (no_dropout, zero, dropout, rand, relu)}
    assert got == {no_dropout.name: False, zero.name: False, dropout.name: True, rand.name: True, relu.name: False}


def test_inplace_change_of_a_saved_input_is_detected_as_in_eager():
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4)).to("mlu")
    x = torch.randn(3, 8, device="mlu")
    for net in (model, torch.compile(copy.deepcopy(model), backend="mlu")):
        out = net(x)
        with torch.no_grad():
            list(net.parameters())[2].mul_(2)  # the second weight, needed for the gradient of the first layer
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
