# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Inductor's C++ wrapper on mlu: ``torch.compile(..., options={"cpp_wrapper": True})`` for an MLP, a CNN and a
graph with a fallback kernel; AOTInductor on mlu raises one clear ``NotImplementedError``.

Oracle: the same model run eagerly on CPU; outputs stay on mlu, as cuda's stay on cuda.
"""

from __future__ import annotations

import copy

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


def test_aotinductor_raises_one_clear_error(tmp_path):
    _, model, x = _expected_and_mlu("mlp")
    ep = torch.export.export(model, (x,))
    with pytest.raises(Exception, match=r"mlu: AOTInductor \(aot_compile / aoti_compile_and_package\) is not"):
        torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path / "m.pt2"))
