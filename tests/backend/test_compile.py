# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Graph mode (issue 10): ``torch.compile(model, backend="mlu")`` equals eager mlu for inference and a training step
on the digits CNN and a transformer block, in every ``FUSE_GROUP_DEBUG_MODE``; the fusion report lists the groups
and the nodes left out; the backend is reachable through Dynamo's registry and device interface."""

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


def test_registered_through_entry_points_and_registry():
    eps = entry_points(group="torch_dynamo_backends")
    assert {"mlu", "catch"} <= set(eps.names)
    assert "mlu" in torch._dynamo.list_backends() and "catch" in torch._dynamo.list_backends()
    from torch._dynamo.backends.registry import lookup_backend

    assert lookup_backend("mlu") is mlu_compile.mlu_backend
    assert lookup_backend("catch") is mlu_compile.mlu_backend


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

    x = torch.arange(12.0, device="mlu").view(3, 4)
    hx = mlu_compile.host_view(x)
    base = torch.arange(100.0, 120.0)
    outs = adopt_outputs((hx[1:, ::2], base[4:10].view(2, 3), base[10:], 7), {hx.untyped_storage().data_ptr(): x},
                         torch.device("mlu", 0))
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
