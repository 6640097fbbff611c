# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The device-generic test framework (``torch.testing._internal.common_device_type``) on ``mlu``.

``instantiate_device_type_tests`` is how PyTorch's own test suite (and a backend's copy of it) runs one test body on
every device. With a PrivateUse1 backend it must produce ``TestFooMLU`` (like ``TestFooCUDA``) and its memory guard
``largeTensorTest`` must ask the device how much memory it has instead of skipping every such test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

RunProbe = Callable[[str], Any]

_PROBE = r"""
import unittest
from torch.testing._internal.common_utils import TestCase
from torch.testing._internal.common_device_type import instantiate_device_type_tests, largeTensorTest

free_bytes = torch.accelerator.get_memory_info(torch.device("mlu", 0))[0]
fits_gb = max(1, free_bytes // 2**30 // 4)   # a quarter of the free device memory, at least 1 GB
too_big_gb = free_bytes // 2**30 * 4 + 1     # more than the device has

class TestProbe(TestCase):
    def test_add(self, device):
        x = torch.ones(3, device=device)
        self.assertEqual((x + x).cpu(), torch.full((3,), 2.0))

    @largeTensorTest(f"{fits_gb}GB")
    def test_fits(self, device):
        pass

    @largeTensorTest(f"{too_big_gb}GB")
    def test_too_big(self, device):
        pass

scope = {"TestProbe": TestProbe}
instantiate_device_type_tests(TestProbe, scope, only_for=["cpu", "privateuse1"])
classes = sorted(scope)
mlu_classes = [name for name, cls in scope.items() if getattr(cls, "device_type", None) in ("privateuse1", "mlu")]
outcome = {}
if mlu_classes:
    suite = unittest.TestLoader().loadTestsFromTestCase(scope[mlu_classes[0]])
    names = [test.id().rsplit(".", 1)[1] for test in suite]
    result = unittest.TestResult()
    suite.run(result)
    for test, reason in result.skipped:
        outcome[test.id().rsplit(".", 1)[1]] = "skipped: " + reason
    for test, _ in result.failures + result.errors:
        outcome[test.id().rsplit(".", 1)[1]] = "failed"
    for name in names:
        outcome.setdefault(name, "passed")
emit({"classes": classes, "mlu_classes": mlu_classes, "outcome": outcome})
"""


def test_privateuse1_test_class_named_after_backend(run_probe: RunProbe) -> None:
    r = run_probe(_PROBE)
    assert r["mlu_classes"] == ["TestProbeMLU"], r["classes"]
    assert "TestProbeCPU" in r["classes"]
    assert r["outcome"]["test_add_mlu"] == "passed"


def test_large_tensor_test_queries_mlu_memory(run_probe: RunProbe) -> None:
    r = run_probe(_PROBE)
    outcome = r["outcome"]
    assert outcome["test_fits_mlu"] == "passed", outcome
    assert outcome["test_too_big_mlu"] == "skipped: Insufficient mlu:0 memory", outcome
