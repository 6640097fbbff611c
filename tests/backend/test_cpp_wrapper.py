# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Inductor's C++ wrapper on mlu: ``torch.compile(..., options={"cpp_wrapper": True})`` and AOTInductor
(``aoti_compile_and_package`` of an exported mlu model -> ``aoti_load_package``, with Inductor's default options, as
on cuda), for an MLP, a CNN and a graph with a fallback kernel.

Oracle: the same model run eagerly on CPU; outputs stay on mlu, as cuda's stay on cuda. A package loads in a fresh
process, where nothing was compiled.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torch import nn


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4))


class _CNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2)
        self.fc = nn.Linear(8 * 3 * 3, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.max_pool2d(torch.relu(self.bn(self.conv1(x))), 2)
        return self.fc(torch.relu(self.conv2(h)).flatten(1)).softmax(-1)


def _model_and_input(name: str) -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    if name == "mlp":
        return _mlp().eval(), torch.randn(8, 16)
    model = _CNN().eval()
    with torch.no_grad():  # non-trivial running statistics for the eval-mode batch norm
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    return model, torch.randn(4, 3, 16, 16)


def _expected_and_mlu(name: str) -> tuple[torch.Tensor, nn.Module, torch.Tensor]:
    model, x = _model_and_input(name)
    with torch.no_grad():
        expected = model(x)
    return expected, copy.deepcopy(model).to("mlu"), x.to("mlu")


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_cpp_wrapper_matches_cpu_eager(name):
    expected, model, x = _expected_and_mlu(name)
    torch._dynamo.reset()
    compiled = torch.compile(model, options={"cpp_wrapper": True})
    with torch.no_grad():
        for _ in range(2):
            out = compiled(x)
            assert out.device.type == "mlu"
            torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5)


def test_cpp_wrapper_waits_for_a_non_blocking_input_copy():
    @torch.compile(options={"cpp_wrapper": True})
    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) * 2 + 1

    host = torch.randn(1 << 16).pin_memory()
    out = fn(host.to("mlu", non_blocking=True))
    torch.testing.assert_close(out.cpu(), torch.sin(host) * 2 + 1)


def _topk_model() -> nn.Module:
    class TopK(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.topk(x * 2, 3).values + 1  # topk: one of Inductor's fallback kernels

    return TopK()


def test_cpp_wrapper_runs_fallback_kernels_with_mlus_kernels():
    x = torch.randn(4, 16)
    compiled = torch.compile(_topk_model(), options={"cpp_wrapper": True})
    out = compiled(x.to("mlu"))
    assert out.device.type == "mlu"
    torch.testing.assert_close(out.cpu(), _topk_model()(x))


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, torch.Tensor, torch.Tensor]]:
    """name -> (AOTInductor package path, CPU input, CPU eager output), packaged once per module."""
    out = {}
    for name in ("mlp", "cnn"):
        expected, model, x = _expected_and_mlu(name)
        path = str(tmp_path_factory.mktemp("aoti") / f"{name}.pt2")
        torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)), package_path=path)
        out[name] = (path, x.cpu(), expected)
    return out


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_aoti_package_matches_cpu_eager(packages, name):
    path, x, expected = packages[name]
    runner = torch._inductor.aoti_load_package(path)
    assert runner.get_metadata()["AOTI_DEVICE_KEY"] == "mlu"
    for _ in range(2):
        out = runner(x.to("mlu"))
        assert out.device.type == "mlu"
        torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5)


def test_aoti_package_loads_new_weights_from_cpu_tensors(packages):
    """``load_constants`` replaces a package's weights: they are host constants of the mlu model, so it takes CPU
    tensors (a ``state_dict()`` on CPU) and refuses mlu ones with the runtime's device-type error."""
    path, x, _ = packages["mlp"]
    runner = torch._inductor.aoti_load_package(path)
    model, _ = _model_and_input("mlp")
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name in runner.get_constant_fqns():
                p.mul_(-2.0)
        expected = model(x)
    state = {name: t.detach() for name, t in model.state_dict().items() if name in runner.get_constant_fqns()}
    with pytest.raises(RuntimeError, match="update_constant_buffer"):
        runner.load_constants({k: v.to("mlu") for k, v in state.items()}, check_full_update=True)
    runner.load_constants(state, check_full_update=True)
    torch.testing.assert_close(runner(x.to("mlu")).cpu(), expected, rtol=1e-4, atol=1e-5)


def test_aoti_package_waits_for_a_non_blocking_input_copy(packages):
    path, x, expected = packages["mlp"]
    runner = torch._inductor.aoti_load_package(path)
    out = runner(x.pin_memory().to("mlu", non_blocking=True))
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5)


def test_aoti_package_runs_fallback_kernels_with_mlus_kernels(tmp_path):
    x = torch.randn(4, 16)
    ep = torch.export.export(_topk_model(), (x.to("mlu"),))
    path = torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path / "topk.pt2"))
    out = torch._inductor.aoti_load_package(path)(x.to("mlu"))
    assert out.device.type == "mlu"
    torch.testing.assert_close(out.cpu(), _topk_model()(x))


def test_aoti_package_passes_weights_to_mlus_kernels_on_mlu(tmp_path):
    """``linalg.solve`` of a parameter runs through the package's proxy executor on mlu's kernel: the weight, kept
    in host memory by the model library, reaches it as an mlu tensor, as when the model was exported."""

    class Solve(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Parameter(torch.randn(16, 16) + 8 * torch.eye(16))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.linalg.solve(self.a, x.t()).t() + 1

    torch.manual_seed(0)
    model, x = Solve(), torch.randn(4, 16)
    with torch.no_grad():
        expected = model(x)
    ep = torch.export.export(model.to("mlu"), (x.to("mlu"),))
    path = torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path / "solve.pt2"))
    out = torch._inductor.aoti_load_package(path)(x.to("mlu"))
    assert out.device.type == "mlu"
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5)


def test_aoti_package_runs_on_the_second_device(packages):
    path, x, expected = packages["mlp"]
    runner = torch._inductor.aoti_load_package(path, device_index=1)
    with torch.mlu.device(1):
        out = runner(x.to("mlu:1"))
    assert out.device == torch.device("mlu:1")
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5)


def test_aoti_package_loads_in_a_fresh_process(packages, tmp_path):
    path, x, expected = packages["cnn"]
    torch.save(x, tmp_path / "x.pt")
    script = textwrap.dedent(f"""
        import sys
        import torch
        runner = torch._inductor.aoti_load_package({path!r})
        out = runner(torch.load({str(tmp_path / "x.pt")!r}).to("mlu"))
        assert out.device.type == "mlu", out.device
        assert "torch._inductor.codegen.cpp_wrapper_cpu" not in sys.modules  # nothing was compiled here
        torch.save(out.cpu(), {str(tmp_path / "out.pt")!r})
    """)
    env = {k: v for k, v in os.environ.items() if k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    torch.testing.assert_close(torch.load(tmp_path / "out.pt"), expected, rtol=1e-4, atol=1e-5)

