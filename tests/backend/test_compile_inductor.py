# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Plain ``torch.compile(model)`` (default Inductor) on mlu models, and ``torch.compile`` inside
``with torch.device("mlu")`` -- behaviours torch_openreg's test_compile.py checks for its backend.

Without torch_mlu/inductor/, default Inductor fails with ``InductorError: KeyError: 'mlu'``; inside a
``torch.device("mlu")`` block, ``backend="mlu"`` failed with ``FakeTensorDeviceMismatchError``. Oracle: the same
model run eagerly on CPU.
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys

import pytest
import torch
from torch import nn


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.norm = nn.LayerNorm(144)
        self.fc = nn.Linear(144, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn(self.conv(x))).flatten(1)
        return self.fc(nn.functional.gelu(self.norm(h))).log_softmax(-1)


def test_default_inductor_trains_like_cpu():
    torch.manual_seed(0)
    ref = ConvNet()
    model = copy.deepcopy(ref)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    compiled = torch.compile(model.to("mlu"))  # default backend: Inductor
    g = torch.Generator().manual_seed(3)
    for step in range(3):
        x, y = torch.randn(8, 1, 8, 8, generator=g), torch.randint(0, 10, (8,), generator=g)
        losses = []
        for m, o, d in ((ref, ref_opt, "cpu"), (compiled, opt, "mlu")):
            loss = nn.functional.nll_loss(m(x.to(d)), y.to(d))
            o.zero_grad()
            loss.backward()
            o.step()
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-5, abs=1e-6), f"step {step}"
    for p_ref, p in zip(ref.parameters(), model.parameters(), strict=True):
        assert p.device.type == "mlu"
        torch.testing.assert_close(p.detach().cpu(), p_ref.detach(), rtol=1e-4, atol=1e-5)


def test_default_inductor_device_transfer_and_recompile_on_shape_change():
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend("inductor")

    @torch.compile(backend=counter, fullgraph=True)
    def fn(x: torch.Tensor) -> torch.Tensor:
        return (torch.sin(x) + 1).cpu() * 2

    for n in (4, 4, 8):
        x = torch.randn(n, device="mlu")
        out = fn(x)
        assert out.device.type == "cpu"
        torch.testing.assert_close(out, (torch.sin(x.cpu()) + 1) * 2)
    assert counter.frame_count == 2


@pytest.mark.parametrize("backend", ["inductor", "mlu"])
def test_compile_inside_device_context(backend):
    with torch.device("mlu"):
        @torch.compile(backend=backend)
        def fn(x: torch.Tensor) -> torch.Tensor:
            return x * 2 + torch.ones(4)

        x = torch.randn(4)
        assert x.device.type == "mlu"
        out = fn(x)
    assert out.device.type == "mlu"
    torch.testing.assert_close(out.cpu(), x.cpu() * 2 + 1)


@pytest.mark.parametrize("channels_last", [False, True], ids=["contiguous", "channels_last"])
def test_convolution_results_have_the_layout_fake_tensors_promise(channels_last):
    """Inductor trusts FakeTensor's strides for an mlu convolution (its generated code asserts them on the real
    results); FakeTensor asks ATen's rule for PrivateUse1 (``_conv_determine_backend_memory_format``, Overrideable).
    Oracle: FakeTensor itself, for the forward and both gradients."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x = torch.randn(4, 8, 6, 6).contiguous(memory_format=fmt).to("mlu")
    w = torch.randn(16, 8, 3, 3).contiguous(memory_format=fmt).to("mlu")
    conv = torch.ops.aten.convolution.default
    bwd = torch.ops.aten.convolution_backward.default
    conv_args = ([1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    y = conv(x, w, None, *conv_args)
    grads = bwd(y, x, w, [16], *conv_args, [True, True, False])
    with FakeTensorMode(allow_non_fake_inputs=False) as mode:
        fx, fw = mode.from_tensor(x), mode.from_tensor(w)
        fy = conv(fx, fw, None, *conv_args)
        fgrads = bwd(mode.from_tensor(y), fx, fw, [16], *conv_args, [True, True, False])
    assert y.stride() == fy.stride()
    assert [g.stride() for g in grads[:2]] == [g.stride() for g in fgrads[:2]]
    x_cpu, w_cpu = x.cpu(), w.cpu()
    torch.testing.assert_close(y.cpu(), conv(x_cpu, w_cpu, None, *conv_args))


def test_default_inductor_trains_a_cnn_with_channels_last_intermediates_like_cpu():
    """Two convolutions and a max-pool (the digits CNN of examples/train_digits.py): Inductor lays the second
    convolution's input out channels-last, and asserted contiguous strides on its mlu result (AssertionError in
    the generated code) before the kernel kept ATen's layout rule. Oracle: the model on CPU."""
    torch.manual_seed(0)
    ref = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4 * 4, 10))
    model = copy.deepcopy(ref).to("mlu")
    compiled = torch.compile(model)
    x = torch.rand(16, 1, 8, 8)
    loss_ref = ref(x).square().mean()
    loss_ref.backward()
    loss = compiled(x.to("mlu")).square().mean()
    loss.backward()
    assert loss.item() == pytest.approx(loss_ref.item(), rel=1e-5)
    for p_ref, p in zip(ref.parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(p.grad.cpu(), p_ref.grad, rtol=1e-4, atol=1e-5)


def test_default_inductor_calls_mlus_max_pool_kernels_and_trains_like_cpu():
    """Plain ``torch.compile`` on mlu calls ``max_pool2d_with_indices`` and its backward as mlu kernels instead of
    generating C++ for them (``torch_mlu.inductor.fallbacks``), while a CPU graph compiled in the same process keeps
    Inductor's own code for both. Inputs with ties in every pooling window make the backward depend on which index
    each window chose. Oracle: the model on CPU, eager."""
    from torch._inductor.utils import fresh_cache, run_and_get_code

    torch.manual_seed(0)
    ref = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 3))
    with torch.no_grad():
        # integer outputs, exact in any summation order (no bias: oneDNN may add it first): ties after the ReLU
        ref[0].weight.copy_(torch.randint(-2, 3, ref[0].weight.shape))
        ref[0].bias.zero_()
    x = torch.randint(0, 3, (8, 1, 8, 8)).float()

    def step(model: nn.Module, inp: torch.Tensor) -> torch.Tensor:
        loss = model(inp).square().mean()
        loss.backward()
        return loss

    loss_ref = step(ref, x)
    codes = {}
    for device in ("mlu", "cpu"):
        model = copy.deepcopy(ref).to(device)
        model.zero_grad()
        with fresh_cache():
            loss, code = run_and_get_code(step, torch.compile(model), x.to(device))
        codes[device] = "\n".join(code)
        assert loss.item() == pytest.approx(loss_ref.item(), rel=1e-5), device
        for p_ref, p in zip(ref.parameters(), model.parameters(), strict=True):
            torch.testing.assert_close(p.grad.cpu(), p_ref.grad, rtol=1e-5, atol=1e-6)
    for op in ("max_pool2d_with_indices", "max_pool2d_with_indices_backward"):
        assert f"torch.ops.aten.{op}.default(" in codes["mlu"], codes["mlu"]
        assert f"torch.ops.aten.{op}.default(" not in codes["cpu"], codes["cpu"]


def _cpp_kernels(code: str) -> list[tuple[str, str]]:
    """Each C++ kernel in Inductor's generated Python wrapper ``code``: its argument types and its source."""
    return re.findall(r"cpp_pybinding\((\[.*?\]), r'''(.*?)'''", code, re.S)


def _layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return nn.functional.layer_norm(x, (64,), w, b)


def _cat(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.cat([x.sin(), y.cos()], 1)


def _pad(x: torch.Tensor) -> torch.Tensor:
    return nn.functional.pad(x.sin(), (0, 3))


def _divide(x: torch.Tensor) -> torch.Tensor:
    return x / 3.0


@pytest.mark.parametrize(("fn", "shapes"), [
    (_layer_norm, [(512, 64), (64,), (64,)]),  # variance and mean by two sums, not Welford's update
    (_cat, [(64, 32), (64, 16)]),  # one copy per input, not a masked loop over the output
    (_pad, [(8, 13)]),  # one kernel, not a cat of the input and a fill
    (_divide, [(4096,)]),  # a division, not a multiplication by the reciprocal
], ids=["layer_norm", "cat", "pad", "divide_by_constant"])
def test_mlu_graphs_get_the_cpu_graphs_kernels(fn, shapes):
    """Inductor makes these choices for its C++ backend by asking whether a device is cpu
    (``torch_mlu.inductor.cpu_choices``). mlu graphs are generated by the same backend, so the same graph on mlu
    gets the same C++ kernels and the same values. Oracle: Inductor's code and results for the graph on CPU, and
    eager CPU for the division (a multiplication by the reciprocal differs from it in the last bit)."""
    from torch._inductor.utils import fresh_cache, run_and_get_code

    g = torch.Generator().manual_seed(0)
    args = [torch.randn(s, generator=g) for s in shapes]
    kernels, outs = {}, {}
    for device in ("cpu", "mlu"):
        torch._dynamo.reset()
        with fresh_cache():
            outs[device], code = run_and_get_code(torch.compile(fn), *(a.to(device) for a in args))
        kernels[device] = _cpp_kernels("\n".join(code))
    assert kernels["cpu"], "no C++ kernel found in the CPU code"
    assert kernels["mlu"] == kernels["cpu"]
    assert torch.equal(outs["mlu"].cpu(), outs["cpu"])
    if fn is _divide:
        assert torch.equal(outs["mlu"].cpu(), fn(*args))


_FIRST_GRAPH_POOLS = """
import sys
import torch
from torch._inductor.utils import fresh_cache, run_and_get_code
assert "torch._inductor.decomposition" not in sys.modules
f = torch.compile(lambda x: torch.nn.functional.max_pool2d(x, 2, return_indices=True))
with fresh_cache():
    (out, idx), code = run_and_get_code(f, torch.arange(16.0, device="mlu").view(1, 1, 4, 4))
print(out.flatten().tolist(), idx.flatten().tolist(), "torch.ops.aten.max_pool2d_with_indices.default(" in code[0])
"""


def test_the_first_graph_of_a_process_calls_mlus_max_pool_kernel():
    """Inductor traces a graph with its decomposition table before it lowers the graph, when the code generators are
    registered; the decomposition that leaves max pooling to mlu's kernel is registered as soon as that table is
    imported, so the first graph of a fresh process already calls the kernel."""
    proc = subprocess.run([sys.executable, "-c", _FIRST_GRAPH_POOLS], capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[-2] == "[5.0, 7.0, 13.0, 15.0] [5, 7, 13, 15] True"


class AttentionBlock(nn.Module):
    """Attention written out (one qkv projection, split into heads): its backward concatenates the three gradients
    with masked loads."""

    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in self.qkv(x).split(d, dim=-1))
        att = ((q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5).softmax(dim=-1)
        return x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))


def test_default_inductor_trains_attention_like_cpu():
    """Inductor generated the backward's masked ``cat`` for mlu as if it were Triton (``AttributeError: 'str' object
    has no attribute 'dtype'``) before mlu answered ``get_current_backend`` as cpu does. Oracle: CPU eager."""
    torch.manual_seed(0)
    ref = AttentionBlock()
    model = copy.deepcopy(ref).to("mlu")
    x = torch.randn(2, 16, 32)
    loss_ref = ref(x).square().mean()
    loss_ref.backward()
    loss = torch.compile(model)(x.to("mlu")).square().mean()
    loss.backward()
    assert loss.item() == pytest.approx(loss_ref.item(), rel=1e-5)
    for p_ref, p in zip(ref.parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(p.grad.cpu(), p_ref.grad, rtol=1e-4, atol=1e-5)


def test_generated_kernels_run_only_after_host_views_are_checked(monkeypatch):
    """``call_host`` runs ``check_host_view`` before the first generated kernel of a process: with host views that
    copy instead of aliasing device memory, the compiled code stops with the guard's error, and no kernel runs.
    Oracle: the guard's documented message."""
    from torch_mlu import host_view as host_view_module
    from torch_mlu.inductor import runtime

    monkeypatch.setattr(runtime, "_host_views_checked", False)
    monkeypatch.setattr(host_view_module, "host_view", lambda t: t.cpu())

    def add_sin(x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) + 1

    with pytest.raises(RuntimeError, match="host views do not write mlu memory"):
        torch.compile(add_sin)(torch.ones(4, device="mlu"))
    assert runtime._host_views_checked is False


def test_host_views_pass_their_check_and_are_checked_once(monkeypatch):
    from torch_mlu import host_view as host_view_module
    from torch_mlu.inductor import runtime

    real_check = host_view_module.check_host_view
    checks: list[int] = []

    def counted_check() -> None:
        checks.append(1)
        real_check()

    monkeypatch.setattr(runtime, "_host_views_checked", False)
    monkeypatch.setattr(host_view_module, "check_host_view", counted_check)
    x = torch.arange(4, dtype=torch.float32, device="mlu")
    out = torch.empty(4, device="mlu")

    def kernel(src: torch.Tensor, dst: torch.Tensor) -> None:
        dst.copy_(src * 2)

    runtime.call_host(kernel, x, out)
    runtime.call_host(kernel, x, out)
    assert len(checks) == 1
    assert out.cpu().tolist() == [0.0, 2.0, 4.0, 6.0]


def test_generated_wrapper_allocates_mlu_buffers_with_empty_strided_mlu():
    """The wrapper allocates its mlu buffers through ``empty_strided_mlu``, as it does cpu buffers through
    ``empty_strided_cpu``, not through ``torch.empty_strided(..., device='mlu')``; results equal the CPU's."""
    from torch._inductor.utils import run_and_get_code

    def f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ w).sum(0) + x.mean()  # extern mm output and a reduction buffer

    x, w = torch.randn(16, 8), torch.randn(8, 4)
    out, (code, *_) = run_and_get_code(torch.compile(f), x.to("mlu"), w.to("mlu"))
    torch.testing.assert_close(out.cpu(), f(x, w), rtol=1e-5, atol=1e-5)
    assert "= empty_strided_mlu((" in code and "= empty_strided(" not in code, code


@pytest.mark.parametrize(("size", "stride", "dtype"), [
    ((), (), torch.float32), ((0, 3), (3, 1), torch.float16), ((4, 5), (1, 4), torch.int64),
    ((2, 3, 4), (12, 1, 3), torch.bfloat16), ((3, 2), (0, 1), torch.bool)])
def test_empty_strided_mlu_is_torch_empty_strided(size, stride, dtype):
    """``empty_strided_mlu`` gives what ``torch.empty_strided(size, stride, dtype=dtype, device="mlu")`` gives:
    geometry, dtype, device and storage size (including a 0-dim, an empty and a broadcast-strided tensor)."""
    from torch_mlu.inductor.runtime import empty_strided_mlu

    got = empty_strided_mlu(size, stride, dtype)
    want = torch.empty_strided(size, stride, dtype=dtype, device="mlu")
    assert (got.device, got.dtype, got.shape, got.stride()) == (want.device, want.dtype, want.shape, want.stride())
    assert got.untyped_storage().nbytes() == want.untyped_storage().nbytes()


@pytest.mark.parametrize(("args", "message"), [
    (((4,), (1,)), "expected 3 arguments, got 2"),
    (([4], (1,), torch.float32), "size must be a tuple of ints, not list"),
    (((4,), (1,), "float32"), "dtype must be a torch.dtype, not str"),
    ((("a",), (1,), torch.float32), "cannot be interpreted as an integer")])
def test_empty_strided_mlu_refuses_bad_arguments_with_a_type_error(args, message):
    from torch_mlu.inductor.runtime import empty_strided_mlu

    with pytest.raises(TypeError, match=message):
        empty_strided_mlu(*args)


def test_host_caller_passes_host_views_that_alias_device_memory():
    """``host_caller()`` (what the wrapper binds) calls the kernel with host views of the mlu tensors: two views of
    one storage (an offset, a transposed one) alias each other and the device memory; other arguments arrive as
    they are; an error of the kernel reaches the caller with its type."""
    from torch_mlu.inductor.runtime import host_caller

    base = torch.arange(12, dtype=torch.float32, device="mlu")
    a, b = base[2:8], base.view(3, 4).t()
    seen: list[object] = []

    def kernel(x: torch.Tensor, y: torch.Tensor, scale: float, none: None) -> None:
        seen.extend([x.device, y.stride(), scale, none, x.untyped_storage().data_ptr() ==
                     y.untyped_storage().data_ptr()])
        x.mul_(scale)

    host_caller()(kernel, a, b, 10.0, None)
    assert seen == [torch.device("cpu"), (1, 4), 10.0, None, True]
    expected = torch.arange(12, dtype=torch.float32)
    expected[2:8] *= 10
    assert torch.equal(base.cpu(), expected) and torch.equal(b.cpu(), expected.view(3, 4).t())

    def failing(*_args: object) -> None:
        raise KeyError("from the kernel")

    with pytest.raises(KeyError, match="from the kernel"):
        host_caller()(failing, a)
    with pytest.raises(TypeError, match="expected the kernel"):
        host_caller()()


_CACHED_COMPILE = """
import sys
import torch, torch_mlu
from torch._dynamo.utils import counters
from torch_mlu.inductor import codegen
if sys.argv[1] == "other":
    codegen.CodegenVersion.uuid = lambda self: b"other code generators"
torch.compile(lambda x: torch.sin(x) * 2 + 1)(torch.ones(8, device="mlu"))
print(sorted(k for k in counters["inductor"] if k.startswith("fxgraph_cache_")))
"""


def test_fx_graph_cache_keys_mlu_graphs_by_the_code_generators(tmp_path):
    """Inductor's FX graph cache holds the generated wrapper code, which imports ``torch_mlu.inductor.runtime``: a
    graph is reused by the same code generators (a hit in a second process) and by no others (a miss once the
    device pass's hash differs)."""
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path)}

    def run(version: str) -> str:
        proc = subprocess.run([sys.executable, "-c", _CACHED_COMPILE, version], capture_output=True, text=True,
                              env=env, timeout=600, check=False)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip().splitlines()[-1]

    assert run("this") == "['fxgraph_cache_miss']"
    assert run("this") == "['fxgraph_cache_hit']"
    assert run("other") == "['fxgraph_cache_miss']"


def test_flex_attention_lowers_on_mlu_with_the_cpu_template(monkeypatch):
    """Inductor lowers ``flex_attention`` by device type and gave mlu Triton's template (``No module named
    'triton'``); :mod:`torch_mlu.inductor.flex_attention` routes mlu to the CPU's C++ template. Upstream torch refuses
    mlu before lowering (the series' patch lets it through), so its device allow-list is bypassed here. A score_mod
    with a captured mlu tensor and a sliding-window block mask; oracle: the same compiled on CPU."""
    from torch.nn.attention import flex_attention as flex

    monkeypatch.setattr(flex, "_validate_device", lambda query, key, value: None)
    torch._dynamo.reset()

    def sliding_window(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < 64)

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 256, 16) for _ in range(3))
    bias = torch.randn(2)
    outs = {}
    for device in ("cpu", "mlu"):
        head_bias = bias.to(device)

        def score_mod(score, b, h, q_idx, kv_idx, head_bias=head_bias):
            return score + head_bias[h] * (q_idx - kv_idx)

        block_mask = flex.create_block_mask(sliding_window, 1, 2, 256, 256, device=device)
        with torch.no_grad():
            outs[device] = torch.compile(flex.flex_attention)(q.to(device), k.to(device), v.to(device),
                                                              score_mod=score_mod, block_mask=block_mask)
    assert outs["mlu"].device.type == "mlu"
    torch.testing.assert_close(outs["mlu"].cpu(), outs["cpu"])
    torch._dynamo.reset()


_DEVICE_INTERFACE_AFTER_IMPORT = """
import sys
import torch
assert "torch._dynamo" not in sys.modules and "torch._inductor" not in sys.modules, "import torch imported Dynamo"
from torch._dynamo.device_interface import get_interface_for_device
interface = get_interface_for_device("mlu")
assert "torch._inductor.codegen" not in sys.modules, "the device interface imported Inductor's code generators"
print(interface.__name__, interface.device_count(), get_interface_for_device("mlu:1").__name__)
"""


def test_dynamos_device_interface_is_registered_when_dynamo_is_imported():
    """A process that only loads an AOTInductor package asks Dynamo for mlu's device interface without lowering a
    graph: importing Dynamo's registry registers it, and ``import torch`` imports neither Dynamo nor Inductor."""
    proc = subprocess.run([sys.executable, "-c", _DEVICE_INTERFACE_AFTER_IMPORT], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["MluInterface", str(torch.mlu.device_count()), "MluInterface"]
