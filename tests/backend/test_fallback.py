# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""CPU fallback: ops without an mlu kernel still work, warn once per op, are counted, and strict mode refuses them."""

from __future__ import annotations

import pytest
import torch
from mlu_helpers import REPO, run_python


def test_fallback_result_matches_cpu_and_is_counted():
    torch.mlu.reset_fallback_report()
    x = torch.linspace(-2, 2, 50)
    out = torch.histc(x.to("mlu"), bins=7, min=-2, max=2)
    assert out.device.type == "mlu"
    torch.testing.assert_close(out.cpu(), torch.histc(x, bins=7, min=-2, max=2))
    torch.histc(x.to("mlu"), bins=3)
    assert torch.mlu.fallback_report() == {"aten::histc": 2}


def test_native_ops_are_not_counted():
    torch.mlu.reset_fallback_report()
    a = torch.randn(4, 4, device="mlu")
    (a @ a).relu().sum().item()
    assert torch.mlu.fallback_report() == {}
    assert "aten::mm" in torch.mlu.device_kernel_ops()
    assert "aten::histc" not in torch.mlu.device_kernel_ops()


def test_fallback_handles_inplace_and_out_arguments():
    sorted_cpu = torch.tensor([1.0, 3.0, 5.0, 7.0])
    values = torch.tensor([0.0, 4.0, 8.0])
    out = torch.empty(0, dtype=torch.int64, device="mlu")
    torch.searchsorted(sorted_cpu.to("mlu"), values.to("mlu"), out=out)
    assert out.device.type == "mlu"
    torch.testing.assert_close(out.cpu(), torch.searchsorted(sorted_cpu, values))


def test_warns_once_per_op():
    code = (
        "import warnings, torch\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    x = torch.randn(8, device='mlu')\n"
        "    for _ in range(3):\n"
        "        torch.histc(x, bins=4)\n"
        "    torch.bucketize(x, torch.tensor([0.0, 1.0], device='mlu'))\n"
        "msgs = [str(m.message) for m in w if 'falls back to the CPU' in str(m.message)]\n"
        "print(len(msgs)); print(sorted(m.split(\"'\")[1] for m in msgs))\n"
        "print(torch.mlu.fallback_report()['aten::histc'])\n"
        "print(repr(str(w[0].message)))\n"
    )
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "2"
    assert lines[1] == "['aten::bucketize.Tensor', 'aten::histc']"
    assert lines[2] == "3"
    # the message a user reads names the source relative to the project, not the build machine's directory
    assert "make it an error. (Triggered internally at catch/csrc/ops/" in lines[3], lines[3]
    assert str(REPO) not in lines[3]


def test_strict_mode_env_names_the_op():
    code = (
        "import torch\n"
        "x = torch.randn(8, device='mlu')\n"
        "print((x + 1).sum().item() == (x.cpu() + 1).sum().item())\n"  # native ops still work
        "try:\n"
        "    torch.histc(x, bins=4)\n"
        "except NotImplementedError as e:\n"
        "    print('refused:', str(e).splitlines()[0])\n"
    )
    out = run_python(code, env={"CATCH_FALLBACK_STRICT": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "True"
    assert "refused: The operator 'aten::histc' has no mlu device kernel" in out.stdout


def test_strict_mode_switch():
    torch.mlu.set_fallback_strict(True)
    try:
        with pytest.raises(NotImplementedError, match="aten::histc"):
            torch.histc(torch.ones(3, device="mlu"))
    finally:
        torch.mlu.set_fallback_strict(False)


def test_fallback_refuses_mixed_devices():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.bucketize(torch.ones(3, device="mlu"), torch.tensor([0.0, 2.0]))
