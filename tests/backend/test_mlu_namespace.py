# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The rest of torch.mlu's torch.cuda surface: typed tensor classes, torch.is_mlu_available / torch.version.mlu /
torch.backends.mlu, cnpx ranges in the profiler, MLU_VISIBLE_DEVICES parsed like CUDA_VISIBLE_DEVICES (PyTorch's
own parser is the oracle), _lazy_call, ExternalStream, the single-process cncl collectives, errors, and
torch.ops.torch_mlu.fused_adam against torch.optim.Adam/AdamW."""

from __future__ import annotations

import pytest
import torch
from mlu_helpers import run_python


def test_typed_tensor_classes():
    t = torch.mlu.FloatTensor(2, 3)
    assert t.shape == (2, 3) and t.dtype == torch.float32 and t.device.type == "mlu"
    assert isinstance(t, torch.mlu.FloatTensor) and not isinstance(t, torch.mlu.LongTensor)
    assert not isinstance(torch.zeros(2), torch.mlu.FloatTensor)  # CPU tensor
    b = torch.mlu.BoolTensor([True, False])
    assert b.dtype == torch.bool and b.cpu().tolist() == [True, False]
    assert torch.mlu.LongTensor().numel() == 0
    assert torch.mlu.IntTensor(torch.Size([4])).shape == (4,)
    for name, dtype in (("HalfTensor", torch.float16), ("BFloat16Tensor", torch.bfloat16), ("ByteTensor", torch.uint8),
                        ("CharTensor", torch.int8), ("ShortTensor", torch.int16), ("DoubleTensor", torch.float64)):
        assert getattr(torch.mlu, name)([1]).dtype == dtype
    # mmengine.structures' annotations: Union[torch.BoolTensor, torch.mlu.BoolTensor] must be a valid type union
    from typing import Union

    Union[torch.BoolTensor, torch.mlu.BoolTensor]  # noqa: B018, UP007 (the spelling mmengine uses)
    with pytest.raises(RuntimeError, match="device type: mlu"):
        torch.mlu.FloatTensor(2, device="cpu")


def test_torch_level_names_and_backend_switches():
    assert torch.is_mlu_available() is True
    assert isinstance(torch.version.mlu, str) and torch.version.mlu
    import importlib

    assert importlib.import_module("torch.backends.mlu") is torch.backends.mlu
    assert importlib.import_module("torch.backends.cnnl") is torch.backends.cnnl
    assert torch.backends.mlu.is_built()
    assert torch.backends.mlu.matmul.allow_tf32 is False
    torch.backends.mlu.matmul.allow_tf32 = True
    assert torch.backends.mlu.matmul.allow_tf32 is True
    torch.backends.mlu.matmul.allow_tf32 = False
    with pytest.raises(TypeError):
        torch.backends.mlu.matmul.allow_tf32 = 1
    assert torch.backends.cnnl is torch.backends.mlu.cnnl
    assert torch.backends.cnnl.allow_tf32 is True
    assert torch.mlu.is_tf32_supported() is False


def test_cnpx_ranges_show_in_profiler():
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        assert torch.mlu.cnpx.range_push("catch_outer") == 0
        assert torch.mlu.cnpx.range_push("catch_inner") == 1
        torch.ones(4, device="mlu").sum()
        assert torch.mlu.cnpx.range_pop() == 1
        assert torch.mlu.cnpx.range_pop() == 0
        with torch.mlu.cnpx.range("catch_ctx {}", 7):
            pass
        rid = torch.mlu.cnpx.range_start("catch_started")
        torch.mlu.cnpx.range_end(rid)
        torch.mlu.cnpx.mark("catch_mark")
    names = {e.name for e in prof.events()}
    assert {"catch_outer", "catch_inner", "catch_ctx 7", "catch_started", "catch_mark"} <= names
    assert torch.mlu.cnpx.range_pop() == -1


_VISIBLE_VALUES = ["", "0", "1", "1,0", "0,1,2,3", "0,0", "1,junk,0", "0,-1,1", " 1 , 0", "2", "1a,0", "3,1", "+1",
                   "-0", "00,1", "1,,0", "junk", "0, 1"]


def test_mlu_visible_devices_parsed_like_cuda_visible_devices(monkeypatch):
    """PyTorch's own CUDA_VISIBLE_DEVICES parser (and _device_count_nvml's trimming) is the oracle."""
    import torch_mlu

    physical = 3
    for value in _VISIBLE_VALUES:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", value)
        ids = torch.cuda._parse_visible_devices()
        cuda = next((i for i, d in enumerate(ids) if d >= physical), len(ids))
        assert torch_mlu._C._visible_device_count(value, physical) == cuda, value
    assert torch_mlu._C._visible_device_count(None, physical) == physical


def test_mlu_visible_devices_takes_precedence_end_to_end():
    code = "import torch; print(torch.mlu.device_count())"
    r = run_python(code, env={"MLU_VISIBLE_DEVICES": "2,0", "MLU_VISIBLE_DEVICE_COUNT": "3"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "2"


def test_lazy_call_and_lazy_init():
    torch.ones(1, device="mlu")  # the first mlu tensor initializes the device (test_lazy_init.py: before it)
    seen = []
    torch.mlu._lazy_call(lambda: seen.append(1))
    assert seen == [1]  # initialized: runs at once, as torch.cuda._lazy_call does
    torch.mlu._lazy_init()
    torch.mlu.init()


def test_external_stream_wraps_an_existing_queue():
    s = torch.mlu.Stream()
    e = torch.mlu.ExternalStream(s.stream_id)
    assert e == s
    with torch.mlu.stream(e):
        assert torch.mlu.current_stream() == s
        x = torch.ones(3, device="mlu") * 2
    e.synchronize()
    assert x.cpu().tolist() == [2.0, 2.0, 2.0]
    assert torch.mlu.get_stream_from_external(s.stream_id) == s


def test_errors_and_misc():
    assert torch.mlu.OutOfMemoryError is torch.OutOfMemoryError
    with pytest.raises(torch.mlu.MLUError, match=r"not ready \(5\)"):
        torch.mlu.check_error(torch.mlu.mluStatus.ERROR_NOT_READY)
    torch.mlu.check_error(torch.mlu.mluStatus.SUCCESS)
    assert torch.mlu.can_device_access_peer(0, torch.mlu.device_count() - 1)
    with pytest.raises(AssertionError):
        torch.mlu.can_device_access_peer(0, 99)
    torch.mlu.set_sync_debug_mode("warn")
    assert torch.mlu.get_sync_debug_mode() == 1
    torch.mlu.set_sync_debug_mode(0)
    with pytest.raises(RuntimeError):
        torch.mlu.set_sync_debug_mode("loud")
    from torch.mlu.amp import GradScaler  # mmengine's AmpOptimWrapper import

    assert GradScaler().is_enabled()


def test_runtime_failures_raise_accelerator_error_with_the_status():
    # torch.cuda.AcceleratorError is torch's class; C10_CUDA_CHECK raises it with the cudaError_t as error_code.
    assert torch.mlu.AcceleratorError is torch.AcceleratorError is torch.cuda.AcceleratorError
    import torch_mlu._C

    with pytest.raises(torch.mlu.AcceleratorError, match="MLU runtime error in free: ") as info:
        torch_mlu._C._rt_free(0x1000)  # not a device pointer
    assert info.value.error_code != torch.mlu.mluStatus.SUCCESS
    assert str(torch.mlu.MLUError(info.value.error_code)).split(" (")[0] in str(info.value)


def test_current_blas_handle_is_per_thread_and_device():
    # torch.cuda.current_blas_handle: the calling thread's handle of the current device (an int address), the same
    # handle whatever the current stream (cuda rebinds it to the stream).
    import threading

    h = torch.mlu.current_blas_handle()
    assert isinstance(h, int) and h != 0
    assert torch.mlu.current_blas_handle() == h
    with torch.mlu.stream(torch.mlu.Stream()):
        assert torch.mlu.current_blas_handle() == h
    other: list[int] = []
    t = threading.Thread(target=lambda: other.append(torch.mlu.current_blas_handle()))
    t.start()
    t.join()
    assert other[0] not in (0, h)
    if torch.mlu.device_count() > 1:
        with torch.mlu.device(1):
            assert torch.mlu.current_blas_handle() not in (0, h)


@pytest.mark.skipif(torch.mlu.device_count() < 2, reason="needs two devices")
def test_cncl_single_process_collectives():
    a, b = torch.tensor([1.0, 2.0], device="mlu:0"), torch.tensor([10.0, 20.0], device="mlu:1")
    assert torch.mlu.cncl.is_available([a, b])
    torch.mlu.cncl.all_reduce([a, b])
    assert a.cpu().tolist() == b.cpu().tolist() == [11.0, 22.0]
    torch.mlu.cncl.broadcast([a, b.fill_(0)], root=0)
    assert b.cpu().tolist() == [11.0, 22.0]
    outs = [torch.empty(4, device="mlu:0"), torch.empty(4, device="mlu:1")]
    torch.mlu.cncl.all_gather([a, b], outs)
    assert outs[1].cpu().tolist() == [11.0, 22.0, 11.0, 22.0]
    rs = [torch.empty(1, device="mlu:0"), torch.empty(1, device="mlu:1")]
    torch.mlu.cncl.reduce_scatter([a, b], rs, op=torch.mlu.cncl.MAX)
    assert [r.item() for r in rs] == [11.0, 22.0]


@pytest.mark.parametrize(("adam_w_mode", "weight_decay", "dtype"),
                         [(0, 0.0, torch.float32), (0, 0.01, torch.float32), (1, 0.01, torch.float32),
                          (1, 0.01, torch.bfloat16)])
def test_fused_adam_equals_torch_optim_step_for_step(adam_w_mode, weight_decay, dtype):
    """DeepSpeed's MLUFusedAdam call shape (op_builder/mlu/fused_adam.py) against torch.optim.Adam/AdamW on CPU."""
    torch.manual_seed(0)
    shapes = [(7, 3), (5,), (2, 2, 2)]
    ref = [torch.randn(s, dtype=dtype) for s in shapes]
    params = [p.to("mlu") for p in ref]
    ref32 = [p.float().requires_grad_() for p in ref]
    opt_cls = torch.optim.AdamW if adam_w_mode else torch.optim.Adam
    opt = opt_cls(ref32, lr=1e-2, betas=(0.9, 0.99), eps=1e-8, weight_decay=weight_decay, foreach=False)
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    noop = torch.tensor([0], dtype=torch.int32, device="mlu")
    for step in range(1, 6):
        grads = [torch.randn(s, dtype=dtype) for s in shapes]
        for r, g in zip(ref32, grads, strict=True):
            r.grad = g.float()
        opt.step()
        torch.ops.torch_mlu.fused_adam(noop, [g.to("mlu") for g in grads], params, m, v, 1e-2, 0.9, 0.99, 1e-8, step,
                                       adam_w_mode, 1, weight_decay)
        for p, r in zip(params, ref32, strict=True):
            if dtype == torch.float32:
                torch.testing.assert_close(p.cpu(), r.detach(), rtol=0, atol=0)
            else:
                torch.testing.assert_close(p.cpu(), r.detach().to(dtype), rtol=1e-2, atol=1e-2)
            if dtype != torch.float32:
                r.data.copy_(p.cpu().float())  # the bf16 copy is the state both continue from
    before = [p.clone() for p in params]
    torch.ops.torch_mlu.fused_adam(noop.fill_(1), [torch.ones_like(p) for p in params], params, m, v, 1e-2, 0.9,
                                   0.99, 1e-8, 6, adam_w_mode, 1, weight_decay)
    assert all(torch.equal(a, b) for a, b in zip(before, params, strict=True))  # noop_flag set: nothing changes


def test_profiler_session_records_mlu_work():
    torch.mlu.profiler.start()
    with pytest.raises(RuntimeError, match="already running"):
        torch.mlu.profiler.start()
    torch.ones(3, device="mlu").add(1)
    prof = torch.mlu.profiler.stop()
    assert any(e.name == "aten::add" for e in prof.events())
    assert torch.mlu.profiler.stop() is None
