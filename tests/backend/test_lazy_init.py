# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The device initializes lazily, as CUDA does: ``import torch`` (autoload) leaves it uninitialized -- the device
kernels of the device-op list are not registered yet and ``torch.mlu.is_initialized()`` is False -- and the first
device use (an mlu tensor, ``torch.mlu.init()``, a device query CUDA initializes for) runs ``torch.mlu._lazy_init``
once: ``torch_mlu._C._init()`` (``MLUHooks::init``), then the calls ``torch.mlu._lazy_call`` queued, each exactly
once. ``torch.mlu.device_count()`` answers without initializing, as ``torch.cuda.device_count()`` does. Each case runs
in a fresh interpreter: the test process itself is initialized by its other tests.
"""

from __future__ import annotations

import textwrap

from mlu_helpers import run_python


def run(code: str) -> list[str]:
    r = run_python(textwrap.dedent(code), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.splitlines()


def test_import_leaves_the_device_uninitialized_until_the_first_tensor():
    lines = run("""
        import torch
        has_mm = lambda: torch._C._dispatch_has_kernel_for_dispatch_key("aten::mm", "PrivateUse1")
        print("after-import", torch.mlu.is_initialized(), torch.mlu._C._is_initialized(), has_mm())
        print("count", torch.mlu.device_count(), torch.mlu.is_available(), torch.mlu.is_initialized())
        x = torch.ones(2, device="mlu")
        print("after-tensor", torch.mlu.is_initialized(), torch.mlu._C._is_initialized(), has_mm())
        print("result", (x * 3).sum().item(), "aten::mm" in torch.mlu.device_kernel_ops())
    """)
    assert lines == ["after-import False False False", "count 2 True False", "after-tensor True True True",
                     "result 6.0 True"]


def test_a_call_queued_before_init_runs_exactly_once_at_init():
    lines = run("""
        import torch
        calls = []
        torch.mlu._lazy_call(lambda: calls.append("queued"))
        torch.mlu._lazy_call(lambda: torch.mlu._lazy_call(lambda: calls.append("queued by a queued call")))
        print("before", calls, torch.mlu.is_initialized())
        torch.zeros(2).to("mlu")
        print("at-init", calls, torch.mlu.is_initialized())
        torch.ones(1, device="mlu")
        torch.mlu.init()
        torch.mlu._lazy_init()
        print("later", calls)
        torch.mlu._lazy_call(lambda: calls.append("after init"))
        print("immediate", calls)
    """)
    assert lines == [
        "before [] False",
        "at-init ['queued', 'queued by a queued call'] True",
        "later ['queued', 'queued by a queued call']",
        "immediate ['queued', 'queued by a queued call', 'after init']",
    ]


def test_device_queries_initialize_as_cuda_does():
    lines = run("""
        import torch
        print("queries", torch.mlu.device_count(), torch.mlu.is_available(), torch.mlu.is_initialized())
        print("current_device", torch.mlu.current_device(), torch.mlu.is_initialized())
    """)
    assert lines == ["queries 2 True False", "current_device 0 True"]


def test_a_failing_queued_call_raises_at_init_with_where_it_was_queued():
    lines = run("""
        import torch
        def boom():
            raise ValueError("seeding failed")
        torch.mlu._lazy_call(boom)
        try:
            torch.ones(1, device="mlu")
        except Exception as e:
            print(type(e).__name__, "seeding failed" in str(e), "originally invoked at" in str(e))
    """)
    assert lines == ["DeferredMluCallError True True"]
