# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The facts PyTorch's reference PrivateUse1 backend checks for its own device, checked on mlu.

Oracle: torch_openreg's tests in upstream PyTorch (test/cpp_extensions/open_registration_extension/torch_openreg/
tests/test_<area>.py; one class here per file there, named after it), rewritten for mlu, not copied. Where mlu
deliberately answers as cuda does rather than as openreg, the test checks cuda's answer and names the upstream
source of it; docs/support.md ("Where mlu answers as cuda, not as torch_openreg") lists these differences.
Stricter checks of several areas live in their own modules (test_sdpa.py, test_serialization_backend_meta.py,
test_out_argument.py, test_device_capability.py, test_streams_events.py, test_rng.py, test_ipc.py, test_rnn.py,
test_compile.py, test_profiler.py, test_distributed_collectives.py).
"""

from __future__ import annotations

import copy
import json
import multiprocessing
import os
import socket
import tempfile
import time
import types
import unittest
import warnings
from unittest import mock

import pytest
import torch
from mlu_helpers import run_python
from torch.autograd.profiler import profile
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import record_function
from torch.testing._internal.common_dtype import get_all_dtypes
from torch.testing._internal.common_utils import noncontiguous_like


class TestDevice:
    """test_device.py: two devices, index switching, capability, properties."""

    def test_device_count(self):
        assert torch.accelerator.device_count() == torch.mlu.device_count() == 2

    def test_set_device_index_and_restore(self):
        old = torch.accelerator.current_device_index()
        try:
            for i in range(torch.accelerator.device_count()):
                torch.accelerator.set_device_index(i)
                assert torch.accelerator.current_device_index() == i
                assert torch.randn(2, device="mlu").device.index == i
        finally:
            torch.accelerator.set_device_index(old)

    def test_device_index_context_restores_after_an_exception(self):
        old = torch.accelerator.current_device_index()
        with torch.accelerator.device_index(None):
            assert torch.accelerator.current_device_index() == old
        with pytest.raises(ValueError), torch.accelerator.device_index(1):
            assert torch.ones(1, device="mlu").device.index == 1
            with torch.accelerator.device_index(0):
                assert torch.accelerator.current_device_index() == 0
            raise ValueError
        assert torch.accelerator.current_device_index() == old

    def test_invalid_device_index_raises_cudas_error(self):
        # openreg: "The device index is out of range"; cuda: cudaSetDevice's "invalid device ordinal"
        # (c10/cuda/CUDAFunctions.cpp set_device -> C10_CUDA_CHECK), which mlu follows.
        with pytest.raises(RuntimeError, match="invalid device ordinal"):
            torch.accelerator.set_device_index(torch.accelerator.device_count())

    def test_capability_claims_every_dtype_openreg_claims(self):
        supported = torch.accelerator.get_device_capability("mlu:0")["supported_dtypes"]
        missing = [d for d in get_all_dtypes(include_complex32=True, include_qint=True) if d not in supported]
        assert missing == []

    def test_capability_is_a_dict_with_a_set_equal_on_both_devices(self):
        cap0 = torch.accelerator.get_device_capability("mlu:0")
        cap1 = torch.accelerator.get_device_capability("mlu:1")
        assert isinstance(cap0, dict) and isinstance(cap0["supported_dtypes"], set)
        assert cap0["supported_dtypes"] == cap1["supported_dtypes"] and cap0["supported_dtypes"]
        free, total = torch.accelerator.get_memory_info()
        assert 0 <= free <= total

    def test_error_leaves_the_device_usable(self):
        old = torch.accelerator.current_device_index()
        with pytest.raises(RuntimeError):
            torch.matmul(torch.randn(5, 5, device="mlu"), torch.randn(3, 3, device="mlu"))
        assert torch.accelerator.current_device_index() == old
        a = torch.randn(5, 5)
        torch.testing.assert_close(torch.matmul(a.to("mlu"), a.to("mlu")).cpu(), a @ a)


class TestStreams:
    """test_streams.py / test_event.py: torch.Stream and torch.Event on mlu."""

    def test_stream_device_and_identity(self):
        s = torch.Stream(device="mlu:1")
        assert (s.device.type, s.device_index) == ("mlu", 1)
        assert torch.Stream(stream_id=s.stream_id, device_type=s.device_type, device_index=s.device_index) == s
        assert "torch.Stream device_type=mlu, device_index=1" in repr(s)

    def test_stream_context_sets_the_current_stream(self):
        with torch.Stream(device="mlu:1") as s:
            assert torch.accelerator.current_stream() == s

    def test_record_wait_and_synchronize(self):
        s1, s2 = torch.Stream(device="mlu"), torch.Stream(device="mlu")
        e = s1.record_event()
        s2.wait_event(e)
        s2.wait_stream(s1)
        s2.synchronize()
        assert s1.query() and s2.query() and e.query()


class TestEvent:
    """test_event.py: torch.Event on mlu."""

    def test_an_unrecorded_event_has_no_device_index_and_is_complete(self):
        e = torch.Event(device="mlu:1")
        assert (e.device.type, e.device.index, e.event_id) == ("mlu", None, 0)
        assert e.query()

    def test_recording_gives_distinct_ids_on_the_streams_device(self):
        s = torch.Stream(device="mlu:1")
        e1, e2 = s.record_event(), s.record_event()
        assert e1.device.index == 1 and 0 != e1.event_id != e2.event_id != 0
        e2.synchronize()
        assert e1.query() and e2.query()

    def test_elapsed_time_needs_timing_events(self):
        s = torch.Stream(device="mlu:1")
        timed = [torch.Event(device="mlu:1", enable_timing=True) for _ in range(2)]
        untimed = [torch.Event(device="mlu:1") for _ in range(2)]
        for e in (*timed, *untimed):
            e.record(s)
        s.synchronize()
        assert timed[0].elapsed_time(timed[1]) >= 0
        with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'"):
            untimed[0].elapsed_time(untimed[1])

    def test_streams_waiting_on_one_event_compute_the_same(self):
        s1, s2, s3 = (torch.Stream(device="mlu:0") for _ in range(3))
        assert len({s1.stream_id, s2.stream_id, s3.stream_id}) == 3
        x = torch.randn(30, 30, device="mlu:0")
        e = s1.record_event()
        s2.wait_event(e)
        s3.wait_event(e)
        with s2:
            z2 = x @ x
        with s3:
            z3 = x @ x
        torch.accelerator.synchronize()
        assert torch.equal(z2.cpu(), z3.cpu())


class TestMemory:
    """test_memory.py: the device allocator, shallow copies across devices, pinned memory, two devices."""

    def test_allocations_formats_and_in_place_ops_keep_their_memory(self):
        x = torch.ones(100, device="mlu")
        ptr = x.data_ptr()
        x.add_(1).mul_(2)
        assert x.data_ptr() == ptr and bool((x == 4).all()) and x.view(10, 10).data_ptr() == ptr
        assert torch.empty(2, 3, 4, 4, device="mlu", memory_format=torch.channels_last).is_contiguous(
            memory_format=torch.channels_last)
        x.resize_(50)
        assert x.numel() == 50 and x.untyped_storage().device.type == "mlu"

    @pytest.mark.parametrize("direction", ["cpu-from-mlu", "mlu-from-cpu"])
    def test_set_data_across_cpu_and_mlu(self, direction):
        a, b = torch.randn(4, 4), torch.randn(4, 4, device="mlu")
        self_t, from_t = (a, b) if direction == "cpu-from-mlu" else (b, a)
        assert torch._has_compatible_shallow_copy_type(self_t, from_t)
        self_t.data = from_t
        assert self_t.device == from_t.device and self_t.data_ptr() == from_t.data_ptr()

    def test_pin_memory_for_mlu(self):
        pinned = torch.randn(10).pin_memory()
        assert pinned.is_pinned() and pinned[2:5].is_pinned()
        storage = torch.randn(10).untyped_storage()
        assert not storage.is_pinned("mlu") and storage.pin_memory("mlu").is_pinned("mlu")

    def test_devices_do_not_share_memory(self):
        on0 = [torch.empty(1000, device="mlu:0") for _ in range(10)]
        on1 = [torch.empty(1000, device="mlu:1") for _ in range(10)]
        assert {t.device.index for t in on0} == {0} and {t.device.index for t in on1} == {1}
        assert not {t.data_ptr() for t in on0} & {t.data_ptr() for t in on1}


class TestRNG:
    """test_rng.py: generators and seeds of torch.mlu."""

    def test_generator_on_a_device(self):
        g = torch.Generator(device="mlu:1")
        assert (g.device.type, g.device.index) == ("mlu", 1)
        g.manual_seed(42)
        assert g.initial_seed() == 42

    def test_rng_state_round_trip_reproduces_draws(self):
        state = torch.mlu.get_rng_state(0)
        a = torch.rand(4, device="mlu:0")
        torch.mlu.set_rng_state(state, 0)
        assert torch.equal(a, torch.rand(4, device="mlu:0"))
        torch.mlu.set_rng_state_all(torch.mlu.get_rng_state_all())

    def test_seeds(self):
        torch.mlu.manual_seed_all(42)
        assert torch.mlu.initial_seed() == 42
        torch.mlu.seed_all()
        first = torch.mlu.initial_seed()
        torch.mlu.seed_all()
        assert torch.mlu.initial_seed() != first


class TestStorage:
    """test_storage.py: location tags, restore locations, backend metadata through torch.save / torch.load."""

    def test_location_tag_and_default_restore_location(self):
        assert torch.serialization.location_tag(torch.UntypedStorage(4, device="mlu")) == "mlu:0"
        assert torch.serialization.location_tag(torch.UntypedStorage(4, device="mlu:1")) == "mlu:1"
        cpu = torch.empty(4, 4).storage()
        for tag in ("mlu:0", "mlu:1"):
            assert torch.serialization.default_restore_location(cpu, tag).is_mlu

    def test_backend_metadata_round_trip(self):
        # openreg's keys name its own BackendMeta fields ("version_number", "format_number"); mlu's is its layout tag
        meta = {"mlu_layout_NHWC": True}
        t = torch.empty(3, 3, device="mlu")
        assert torch._utils.get_tensor_metadata(t) == {}
        torch._utils.set_tensor_metadata(t, meta)
        assert torch._utils.get_tensor_metadata(t) == meta
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.pt")
            torch.save(t, path)
            assert torch._utils.get_tensor_metadata(torch.load(path)) == meta
            on_cpu = torch.load(path, map_location="cpu")
            assert on_cpu.is_cpu and torch._utils.get_tensor_metadata(on_cpu) == {}

    def test_keys_of_another_backend_are_ignored_as_on_cuda(self):
        # torch/csrc/jit/serialization/pickler_helper.h setTensorMetadata hands the map only to the device's
        # registered deserializer; cuda registers none, so there any key is dropped. mlu's takes its layout keys.
        t = torch.empty(3, 3, device="mlu")
        torch._utils.set_tensor_metadata(t, {"version_number": True, "format_number": True})
        assert torch._utils.get_tensor_metadata(t) == {}

    def test_map_location_moves_between_devices(self):
        x = torch.randn(3, 3, device="mlu:0")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.pt")
            torch.save(x, path)
            assert torch.equal(torch.load(path, map_location="cpu"), x.cpu())
            on1 = torch.load(path, map_location="mlu:1")
            assert on1.device.index == 1 and torch.equal(on1.cpu(), x.cpu())

    def test_storage_less_rebuild_through_cpu(self, tmp_path):
        x = torch.randn(2, 3)
        with mock.patch.object(torch._C, "_has_storage", return_value=False):
            xm = x.to("mlu")
            rebuild = xm._reduce_ex_internal(torch.serialization.DEFAULT_PROTOCOL)[0]
            assert rebuild is torch._utils._rebuild_device_tensor_from_cpu_tensor
            torch.save({"x": xm}, tmp_path / "sd.pt")
            loaded = torch.load(tmp_path / "sd.pt", weights_only=True)
            assert loaded["x"].is_mlu and torch.equal(loaded["x"].cpu(), x)


class TestAutocast:
    """test_autocast.py: torch.autocast("mlu")."""

    def test_fast_dtype_is_half(self):
        assert torch.get_autocast_dtype("mlu") == torch.float16

    def test_matmul_runs_in_float16(self):
        with torch.autocast("mlu", dtype=torch.float16):
            assert torch.mm(torch.randn(2, 3, device="mlu"), torch.randn(3, 3, device="mlu")).dtype == torch.float16

    def test_float32_target_is_refused_with_a_warning(self):
        with (pytest.warns(UserWarning, match="In mlu autocast, but the target dtype is not supported"),
              torch.autocast("mlu", dtype=torch.float32)):
            pass

    def test_dot_promotes_as_on_cuda(self):
        # openreg lists dot as an fp32 op; CUDA's policy puts it under "promote" (aten/src/ATen/autocast_mode.h,
        # AT_FORALL_PROMOTE, registered for Autocast in autocast_mode.cpp): widest input type, no cast to fp32.
        h = torch.randn(2, device="mlu", dtype=torch.float16)
        with torch.autocast("mlu"):
            assert torch.dot(h, h).dtype == torch.float16
            assert torch.dot(h, h.float()).dtype == torch.float32


class TestAutograd:
    """test_autograd.py: the autograd engine's device threads."""

    def test_device_threads_are_named_per_device(self):
        # mlu turns the engine's multithreading off at import (catch/torch_mlu/__init__.py: backward on the calling
        # thread); with it on, as on cuda, the engine starts one pt_autograd_<i> thread per device.
        code = (
            "import os, torch, torch_mlu\n"
            "torch.autograd.set_multithreading_enabled(True)\n"
            "torch.ones(2, requires_grad=True, device='mlu').sum().backward()\n"
            "task = f'/proc/{os.getpid()}/task'\n"
            "names = {open(f'{task}/{t}/comm').read().strip() for t in os.listdir(task)}\n"
            "print(sorted(n for n in names if n.startswith('pt_autograd')), flush=True)\n"
            "os._exit(0)\n"
        )
        r = run_python(code)
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout.strip() == str([f"pt_autograd_{i}" for i in range(torch.mlu.device_count())])


class TestSDPA:
    """test_sdpa.py: the fused-attention choice and the Overrideable pair."""

    @staticmethod
    def _qkv(dtype=torch.float16, shape=(4, 2, 256, 128)):
        g = torch.Generator().manual_seed(0)
        return [torch.rand(shape, generator=g, dtype=dtype) for _ in range(3)]

    def test_fused_sdp_choice_is_the_kernel_sdpa_runs_as_on_cuda(self):
        # openreg answers OVERRIDEABLE; cuda answers the kernel it will run (FLASH_ATTENTION for these inputs,
        # aten/src/ATen/native/transformers/cuda/sdp_utils.cpp select_sdp_backend), and mlu answers with CPU's rules.
        q, k, v = self._qkv()
        qm, km, vm = (t.to("mlu") for t in (q, k, v))
        torch.mlu.reset_fallback_report()
        flash = SDPBackend.FLASH_ATTENTION.value
        assert torch._fused_sdp_choice(qm, km, vm) == torch._fused_sdp_choice(q, k, v) == flash
        assert torch._fused_sdp_choice(qm, km, vm, dropout_p=0.5) == SDPBackend.MATH.value
        with sdpa_kernel(SDPBackend.MATH):
            assert torch._fused_sdp_choice(qm, km, vm) == SDPBackend.MATH.value
        assert not torch.mlu.fallback_report()  # a kernel of its own, as CUDA's _fused_sdp_choice_cuda

    def test_sdpa_forward(self):
        q, k, v = self._qkv()
        out = torch.nn.functional.scaled_dot_product_attention(*(t.to("mlu") for t in (q, k, v)))
        torch.testing.assert_close(out.cpu(), torch.nn.functional.scaled_dot_product_attention(q, k, v))

    def test_overrideable_pair_with_a_bias(self):
        q, k, v = self._qkv()
        bias = torch.rand(4, 2, 256, 256, dtype=torch.float16)
        qm, km, vm, bm = (t.to("mlu") for t in (q, k, v, bias))
        fwd = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(qm, km, vm, attn_bias=bm)
        grad_out = torch.rand(q.shape, dtype=torch.float16).to("mlu")
        grads = torch.ops.aten._scaled_dot_product_fused_attention_overrideable_backward(
            grad_out, qm, km, vm, bm, [True] * 4, *fwd[:6], dropout_p=0.0, is_causal=False, philox_seed=fwd[6],
            philox_offset=fwd[7])
        assert [g.shape for g in grads] == [q.shape, k.shape, v.shape, bias.shape]
        assert all(g.device.type == "mlu" for g in grads)


OPS = ("add", "mul", "zeros", "ones", "empty")


def _op(name):
    from torch.testing._internal.common_methods_invocations import op_db
    return next(op for op in op_db if op.name == name and not op.variant_test_name)


def _first_sample(op, device):
    return next(iter(op.sample_inputs(device, torch.float32)))


class TestOpinfo:
    """test_opinfo.py: OpInfo's first samples of its ops on mlu: device of results, out=, non-contiguous inputs."""

    @pytest.mark.parametrize("name", OPS)
    def test_result_is_on_mlu(self, name):
        op = _op(name)
        s = _first_sample(op, "mlu")
        assert op(s.input, *s.args, **s.kwargs).device.type == "mlu"

    @pytest.mark.parametrize("name", [n for n in OPS if _op(n).supports_out])
    def test_out_argument(self, name):
        op = _op(name)
        s = _first_sample(op, "mlu")
        expected = op(s.input, *s.args, **s.kwargs)
        out = torch.empty_like(expected)
        ptr = out.data_ptr()
        assert op(s.input, *s.args, **s.kwargs, out=out) is out
        assert out.device.type == "mlu" and out.data_ptr() == ptr and out.shape == expected.shape
        if name != "empty":  # torch.empty's values are uninitialized memory, on CPU as on mlu
            torch.testing.assert_close(out, expected)

    @pytest.mark.parametrize("name", ["add", "mul"])
    def test_noncontiguous_samples_match_contiguous(self, name):
        op = _op(name)
        for s in op.sample_inputs("mlu", torch.float32, requires_grad=True):
            n = s.noncontiguous()
            expected, actual = op(s.input, *s.args, **s.kwargs), op(n.input, *n.args, **n.kwargs)
            torch.testing.assert_close(actual, expected)
            grad = torch.randn_like(expected)
            inputs_t = [t for t in (s.input, *s.args) if isinstance(t, torch.Tensor) and t.requires_grad]
            inputs_n = [t for t in (n.input, *n.args) if isinstance(t, torch.Tensor) and t.requires_grad]
            gt = torch.autograd.grad(expected, inputs_t, grad, allow_unused=True)
            gn = torch.autograd.grad(actual, inputs_n, noncontiguous_like(grad), allow_unused=True)
            for a, b in zip(gt, gn, strict=True):
                torch.testing.assert_close(a, b)


# ---------------------------------------------------------------------------------------------------------------
# code of the spawned processes of TestIPC and TestDistributed

MP_TIMEOUT = 120  # seconds for a spawned process (it imports torch and torch_mlu)

IPC_RECEIVE_VIEWS = """
import torch
from multiprocessing.reduction import ForkingPickler
got = []
for _ in range(3):
    t = inbox.get(timeout=timeout)
    got.append((t.device.type, t.cpu().tolist(), list(t.shape), list(t.stride()), t.storage_offset()))
try:
    ForkingPickler.dumps(t)  # send the last one on
    got.append(None)
except RuntimeError as e:
    got.append(str(e))
del t
out.put(got)
"""

IPC_PRODUCE_AND_FREE = """
import torch
t = torch.arange(1.0, 5.0, device="mlu:0")
out.put(t)
assert done.wait(timeout=timeout)
del t  # the consumer may still hold it: what was sent waits in limbo until this process exits
"""

DIST_WORKER = """
import datetime, json, os
import torch
import torch.distributed as dist
import torch_mlu.distributed  # registers "cncl"
from torch.distributed.distributed_c10d import _get_default_group
dist.init_process_group("cncl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=60))
pg = _get_default_group()
report = {"initialized": dist.is_initialized(), "backend": dist.get_backend(), "pg_backend": dist.get_backend(pg),
          "world": dist.get_world_size(), "rank": dist.get_rank(), "listed": "cncl" in dist.Backend.backend_list}
t = torch.full((3,), float(rank + 1), device=f"mlu:{rank}")
fut = pg.allreduce([t]).get_future()
value = fut.wait()
report["done"] = fut.done()
report["value"] = [[v.device.type, v.cpu().tolist()] for v in value]
report["tensor"] = t.cpu().tolist()
dist.destroy_process_group()
with open(os.path.join(out_dir, f"{rank}.json"), "w") as f:
    json.dump(report, f)
"""


def _spawn(code: str, **names):
    """Start ``exec(code)`` in a spawned process with ``names`` (queues, events, values) as its globals.

    exec, not a function of this module, so the child imports only what ``code`` imports: this module's imports
    (OpInfo's op_db among them) take several seconds more.
    """
    child = multiprocessing.get_context("spawn").Process(target=exec, args=(code, {"timeout": MP_TIMEOUT, **names}))
    child.start()
    return child



class TestIPC:
    """test_ipc.py: mlu tensors sent to a spawned process through torch.multiprocessing queues."""

    def test_values_offsets_and_strides_arrive_and_cannot_be_sent_on(self):
        base = torch.arange(0.0, 8.0, device="mlu:0")
        ctx = multiprocessing.get_context("spawn")
        inbox, out = ctx.Queue(), ctx.Queue()
        child = _spawn(IPC_RECEIVE_VIEWS, inbox=inbox, out=out)
        for t in (base[:4], base[4:], base[::2]):
            inbox.put(t)
        *got, error = out.get(timeout=MP_TIMEOUT)
        child.join(MP_TIMEOUT)
        assert child.exitcode == 0
        assert got == [("mlu", [0.0, 1.0, 2.0, 3.0], [4], [1], 0), ("mlu", [4.0, 5.0, 6.0, 7.0], [4], [1], 4),
                       ("mlu", [0.0, 2.0, 4.0, 6.0], [4], [2], 0)]
        # openreg's storage guard says "received from another process" too; mlu words it as cuda
        # (torch/csrc/StorageSharing.cpp: "Attempted to send CUDA tensor received from another process").
        assert error is not None and "Attempted to send MLU tensor received from another process" in error

    def test_producer_exits_cleanly_while_the_consumer_holds_its_tensor(self):
        ctx = multiprocessing.get_context("spawn")
        queue, done = ctx.Queue(), ctx.Event()
        producer = _spawn(IPC_PRODUCE_AND_FREE, out=queue, done=done)
        t = queue.get(timeout=MP_TIMEOUT)
        values = t.cpu().tolist()
        done.set()  # the producer frees its tensor while this process still holds it
        producer.join(MP_TIMEOUT)
        del t
        assert not producer.is_alive() and producer.exitcode == 0
        assert values == [1.0, 2.0, 3.0, 4.0]


class TestMisc:
    """test_misc.py: the PrivateUse1 name, enum aliases, the device module, generated methods, legacy type names."""

    def test_backend_name_is_fixed(self):
        assert torch._C._get_privateuse1_backend_name() == "mlu"
        torch.utils.rename_privateuse1_backend("mlu")  # the same name again is accepted
        with pytest.raises(RuntimeError, match="has already been set"):
            torch.utils.rename_privateuse1_backend("dev")

    def test_profiler_activity_and_device_type_aliases(self):
        from torch._C._autograd import DeviceType
        from torch._C._profiler import ProfilerActivity
        assert ProfilerActivity.PrivateUse1 == ProfilerActivity.MLU
        assert (repr(ProfilerActivity.MLU), str(ProfilerActivity.MLU), ProfilerActivity.MLU.name) == (
            "<ProfilerActivity.MLU: 5>", "ProfilerActivity.MLU", "MLU")
        assert DeviceType.PrivateUse1 == DeviceType.MLU
        assert (repr(DeviceType.MLU), str(DeviceType.MLU), DeviceType.MLU.name) == (
            "<DeviceType.MLU: 20>", "DeviceType.MLU", "MLU")

    def test_device_module_registration_and_lookup(self):
        with pytest.raises(RuntimeError, match="Expected one of cpu"):
            torch._register_device_module("dev", types.ModuleType("fake_module"))
        with pytest.raises(RuntimeError, match="The runtime module of"):
            torch._register_device_module("mlu", types.ModuleType("fake_module"))
        get = torch.utils.backend_registration._get_custom_mod_func
        with pytest.raises(RuntimeError, match="Try to call torch.mlu.non_existent_func"):
            get("non_existent_func")
        assert get("device_count")() == 2

    def test_generated_methods(self):
        with pytest.raises(RuntimeError, match="The custom device module of"):
            torch.utils.generate_methods_for_privateuse1_backend()
        x = torch.empty(4, 4)
        assert not x.is_mlu
        assert [x.mlu(d).device for d in (torch.device("mlu"), 0, 1)] == [torch.device("mlu", i) for i in (0, 0, 1)]
        packed = torch.nn.utils.rnn.PackedSequence(torch.rand(5, 3), torch.tensor([1, 1, 1, 1, 1]))
        assert not packed.is_mlu and packed.mlu().is_mlu and packed.mlu().data.is_mlu
        assert all(hasattr(c, "mlu") for c in (torch.nn.Module, torch.TypedStorage, torch.UntypedStorage))

    @pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
    def test_legacy_type_names(self):
        names = {torch.bool: "Bool", torch.double: "Double", torch.float32: "Float", torch.half: "Half",
                 torch.int32: "Int", torch.int64: "Long", torch.int8: "Char", torch.short: "Short", torch.uint8: "Byte"}
        assert {d: torch.empty(2, dtype=d, device="mlu").type() for d in names} == {
            d: f"torch.mlu.{n}Tensor" for d, n in names.items()}
        t = torch.randn(4, 4, device="mlu")
        storage = t.storage()
        assert storage.is_mlu and storage.size() == 16 and storage.type() == "torch.storage.TypedStorage"


class TestUtils:
    """test_utils.py: DLPack capsules of mlu tensors."""

    @pytest.mark.parametrize("device", ["mlu:0", "mlu:1"])
    def test_dlpack_capsule_round_trip(self, device):
        x = torch.randn(2, 3)
        x_in = x.to(device)
        x_out = torch.from_dlpack(torch.utils.dlpack.to_dlpack(x_in))
        assert x_out.device == x_in.device and x_out.data_ptr() == x_in.data_ptr()  # shared memory, as on cuda
        assert torch.equal(x_out.cpu(), x)


class TestRNN:
    """test_rnn.py: nn.LSTM on mlu against the same module on CPU."""

    @staticmethod
    def _pair(**kwargs):
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(input_size=8, hidden_size=16, **kwargs)
        return lstm, copy.deepcopy(lstm).to("mlu")

    @staticmethod
    def _assert_close(got, want):
        for g, w in zip(torch.utils._pytree.tree_leaves(got), torch.utils._pytree.tree_leaves(want), strict=True):
            assert g.device.type == "mlu"
            torch.testing.assert_close(g.cpu(), w)

    def test_multi_layer_bidirectional_matches_cpu(self):
        cpu, mlu = self._pair(num_layers=2, bidirectional=True)
        x = torch.randn(4, 3, 8, requires_grad=True)
        xm = x.detach().to("mlu").requires_grad_()
        want, got = cpu(x), mlu(xm)
        assert got[0].shape == (4, 3, 32) and got[1][0].shape == got[1][1].shape == (4, 3, 16)
        self._assert_close(got, want)
        want[0].sum().backward()
        got[0].sum().backward()
        torch.testing.assert_close(xm.grad.cpu(), x.grad)
        for p, q in zip(cpu.parameters(), mlu.parameters(), strict=True):
            torch.testing.assert_close(q.grad.cpu(), p.grad)

    def test_batch_first_with_initial_state_matches_cpu(self):
        cpu, mlu = self._pair(batch_first=True)
        x, h0, c0 = torch.randn(2, 5, 8), torch.randn(1, 2, 16), torch.randn(1, 2, 16)
        got = mlu(x.to("mlu"), (h0.to("mlu"), c0.to("mlu")))
        assert got[0].shape == (2, 5, 16)
        self._assert_close(got, cpu(x, (h0, c0)))

    def test_packed_sequence_matches_cpu(self):
        cpu, mlu = self._pair()
        packed = torch.nn.utils.rnn.pack_sequence([torch.randn(n, 8) for n in (5, 3, 1)], enforce_sorted=True)
        want_packed, want_state = cpu(packed)
        got_packed, got_state = mlu(packed.to("mlu"))
        assert torch.equal(got_packed.batch_sizes, want_packed.batch_sizes)
        self._assert_close((got_packed.data, got_state), (want_packed.data, want_state))


class TestCompile:
    """test_compile.py: torch.compile with backend="mlu": registration, guards, fake tensors, autograd, breaks."""

    @pytest.fixture(autouse=True)
    def _fresh_dynamo(self):
        torch._dynamo.reset()
        yield
        torch._dynamo.reset()

    def test_backend_and_device_interface_are_registered(self):
        from torch._dynamo.backends.registry import list_backends
        from torch._dynamo.device_interface import get_interface_for_device
        assert "mlu" in list_backends(exclude_tags=())
        iface = get_interface_for_device("mlu")
        assert iface.device_count() == 2 and iface.current_device() == torch.accelerator.current_device_index()

    def test_results_and_recompilation_guards(self):
        from torch._dynamo.testing import CompileCounterWithBackend
        counter = CompileCounterWithBackend("mlu")
        fn = torch.compile(lambda x: torch.relu((x + 1) * 2), backend=counter, fullgraph=True)
        x4, x8 = torch.randn(4), torch.randn(8)
        torch.testing.assert_close(fn(x4.to("mlu")).cpu(), torch.relu((x4 + 1) * 2))
        fn(x4.to("mlu"))
        assert counter.frame_count == 1
        torch.testing.assert_close(fn(x8.to("mlu")).cpu(), torch.relu((x8 + 1) * 2))
        assert counter.frame_count == 2

    def test_fake_tensors_keep_the_device(self):
        seen = []

        def capture(gm, example_inputs):
            seen.extend(n.meta["example_value"] for n in gm.graph.nodes if n.op == "placeholder")
            return gm.forward

        torch.compile(lambda t: t + 1, backend=capture, fullgraph=True)(torch.empty(3, 3, device="mlu:1"))
        assert [f.device for f in seen] == [torch.device("mlu:1")]
        with torch._subclasses.fake_tensor.FakeTensorMode():
            y = torch.empty(3, 3, device="mlu") + torch.empty(3, 3, device="mlu:0")
            assert y.device == torch.device("mlu:0") and y.shape == (3, 3)

    def test_autograd_graph_breaks_and_device_transfer(self):
        from torch._dynamo.testing import CompileCounterWithBackend
        x = torch.randn(4, device="mlu", requires_grad=True)
        torch.compile(lambda t: (t * 2).sum(), backend="mlu")(x).backward()
        assert torch.equal(x.grad.cpu(), torch.full((4,), 2.0))

        counter = CompileCounterWithBackend("mlu")

        def broken(t):
            y = t + 1
            torch._dynamo.graph_break()
            return y * 2

        v = torch.randn(4)
        torch.testing.assert_close(torch.compile(broken, backend=counter)(v.to("mlu")).cpu(), (v + 1) * 2)
        assert counter.frame_count == 2
        moved = torch.compile(lambda t: (t + 1).cpu() * 2, backend="mlu", fullgraph=True)(v.to("mlu"))
        assert moved.device.type == "cpu"
        torch.testing.assert_close(moved, (v + 1) * 2)

    def test_autocast_default_device_and_modules(self):
        @torch.compile(backend="mlu")
        def mm(a, b):
            with torch.autocast(device_type="mlu", dtype=torch.float16):
                return torch.mm(a, b)

        assert mm(torch.randn(2, 3, device="mlu"), torch.randn(3, 3, device="mlu")).dtype == torch.float16
        with torch.device("mlu"):
            out = torch.compile(lambda t: t + torch.ones(4), backend="mlu")(torch.zeros(4, device="mlu"))
        assert out.device.type == "mlu" and torch.equal(out.cpu(), torch.ones(4))
        torch.manual_seed(0)
        linear = torch.nn.Linear(4, 4)
        x = torch.randn(2, 4)
        got = torch.compile(copy.deepcopy(linear).to("mlu"), backend="mlu")(x.to("mlu"))
        torch.testing.assert_close(got.cpu(), linear(x))


def _run_device_type_tests(generic, bypass=False, **kwargs):
    """Instantiate ``generic`` with PyTorch's device-type framework; run the one class made; return its result."""
    from torch.testing._internal.common_device_type import instantiate_device_type_tests
    scope = {generic.__name__: generic}
    instantiate_device_type_tests(generic, scope, **kwargs)
    (made,) = scope.values()
    run = made
    if bypass:
        class OptedIn(made):
            def setUp(self):
                self.bypass_device_restrictions = True  # shadows PrivateUse1TestBase's False
                super().setUp()

        run = OptedIn
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(run).run(result)
    assert not result.errors and not result.failures, result.errors + result.failures
    return made, result


class TestDeviceType:
    """test_device_type.py: transfers between CPU and mlu, dtypes, and the device-type test framework on mlu."""

    def test_transfers_keep_values_and_memory_rules(self):
        x = torch.randn(3, 4)
        m = x.to("mlu")
        assert m.device.type == "mlu" and torch.equal(m.cpu(), x) and torch.equal(m.to("cpu"), x)
        assert m.to("mlu").data_ptr() == m.data_ptr()
        for dup in (m.to("mlu", copy=True), m.clone(), torch.empty(3, 4, device="mlu").copy_(m)):
            assert dup.device.type == "mlu" and dup.data_ptr() != m.data_ptr() and torch.equal(dup.cpu(), x)
        assert torch.equal(torch.empty(3, 4, device="mlu").copy_(x).cpu(), x)
        assert torch.equal(torch.empty(3, 4).copy_(m), x)

    def test_factories_arithmetic_and_dtypes(self):
        a, b = torch.randn(3, 4), torch.randn(3, 4)
        am, bm = a.to("mlu"), b.to("mlu")
        for op in (torch.add, torch.mul, torch.sub, torch.div):
            torch.testing.assert_close(op(am, bm).cpu(), op(a, b))
        x = torch.randn(3, 4, device="mlu")
        assert (x + x).dtype == torch.float32 and (x.double() * 2).dtype == torch.float64
        z = x.to(dtype=torch.float64)
        assert z.device.type == "mlu" and torch.equal(z.cpu(), x.cpu().double())
        assert torch.randint(0, 100, (3, 4), device="mlu").dtype == torch.int64
        assert not torch.zeros(3, 4, device="mlu", dtype=torch.bool).any()
        assert (torch.zeros(3, 4, device="mlu") == 0).all() and (torch.ones(3, 4, device="mlu") == 1).all()

    def test_device_type_framework_instantiates_for_mlu(self):
        from torch.testing._internal.common_device_type import (
            onlyCPU,
            onlyCUDA,
            onlyNativeDeviceTypes,
            onlyPRIVATEUSE1,
            skipPRIVATEUSE1If,
        )
        from torch.testing._internal.common_utils import TestCase
        ran = []

        class Generic(TestCase):
            @onlyCPU
            def test_cpu(self, device):
                ran.append("cpu")

            @onlyCUDA
            def test_cuda(self, device):
                ran.append("cuda")

            @onlyNativeDeviceTypes
            def test_native(self, device):
                ran.append(("native", device))

            @onlyPRIVATEUSE1
            def test_privateuse1(self, device):
                ran.append(("privateuse1", device, torch._C._get_privateuse1_backend_name()))

            @skipPRIVATEUSE1If(True, "skipped on PrivateUse1")
            def test_skipped(self, device):
                ran.append("skipped")

        made, result = _run_device_type_tests(Generic, except_for=("cpu", "cuda"))
        assert made.device_type == "mlu"
        assert sorted(ran) == [("native", "mlu:0"), ("privateuse1", "mlu:0", "mlu")]
        assert sorted(t.id().rsplit(".", 1)[1] for t, _ in result.skipped) == [
            "test_cpu_mlu", "test_cuda_mlu", "test_skipped_mlu"]


class TestProfiler:
    """test_profiler.py: the autograd profiler with use_device="mlu"."""

    @staticmethod
    def _profile(fn, **kwargs):
        with profile(use_device="mlu", **kwargs) as prof:
            fn()
        return prof

    def test_ops_and_nested_ranges_are_recorded(self):

        def run():
            with record_function("outer_operation"):
                x = torch.randn(10, 10, device="mlu")
                with record_function("inner_operation_1"):
                    x + x
                with record_function("inner_operation_2"):
                    x @ x

        events = self._profile(run).function_events
        names = {e.name for e in events}
        assert {"aten::randn", "aten::add", "aten::mm", "outer_operation"} <= names
        parents = {e.name: e.cpu_parent.name for e in events if e.name.startswith("inner_operation")}
        assert parents == {"inner_operation_1": "outer_operation", "inner_operation_2": "outer_operation"}

    def test_training_step_forward_and_backward(self):
        model = torch.nn.Sequential(torch.nn.Linear(10, 20), torch.nn.ReLU(), torch.nn.Linear(20, 10)).to("mlu")
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x, target = torch.randn(32, 10, device="mlu"), torch.randn(32, 10, device="mlu")

        def step():
            for stage, fn in (("forward", lambda: model(x)), ("loss", None), ("backward", None),
                              ("optimizer_step", None)):
                with record_function(stage):
                    if stage == "forward":
                        out = fn()
                    elif stage == "loss":
                        loss = torch.nn.functional.mse_loss(out, target)
                    elif stage == "backward":
                        loss.backward()
                    else:
                        opt.step()
                        opt.zero_grad()

        names = {e.name for e in self._profile(step, record_shapes=True).function_events}
        assert {"forward", "loss", "backward", "optimizer_step", "aten::addmm"} <= names
        assert "autograd::engine::evaluate_function: AddmmBackward0" in names

    def test_key_averages_shapes_table_and_chrome_trace(self, tmp_path):

        def run():
            x, y = torch.randn(10, 20, device="mlu"), torch.randn(20, 30, device="mlu")
            x @ y
            for _ in range(10):
                x + x

        prof = self._profile(run, record_shapes=True)
        counts = {a.key: a.count for a in prof.key_averages()}
        assert counts["aten::mm"] == 1 and counts["aten::add"] == 10
        shapes = [a.input_shapes for a in prof.key_averages(group_by_input_shape=True) if a.key == "aten::mm"]
        assert shapes == [[[10, 20], [20, 30]]]
        assert "aten::mm" in prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
        prof.export_chrome_trace(str(tmp_path / "trace.json"))
        trace = json.loads((tmp_path / "trace.json").read_text())
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        assert "aten::mm" in {e.get("name") for e in events}

    def test_streams_devices_and_many_ranges(self):
        s1, s2 = torch.Stream(device="mlu"), torch.Stream(device="mlu")

        def run():
            with s1:
                torch.randn(10, 10, device="mlu:0") * 2
            with s2:
                torch.randn(10, 10, device="mlu:1") + 1
            x = torch.zeros(10, device="mlu")
            for i in range(100):
                with record_function(f"op_{i}"):
                    x = x + 1
            torch.accelerator.synchronize()
            assert torch.equal(x.cpu(), torch.full((10,), 100.0))

        names = [e.name for e in self._profile(run).function_events]
        assert {"aten::mul", "aten::add"} <= set(names) and {f"op_{i}" for i in range(100)} <= set(names)

    def test_an_exception_inside_leaves_the_events(self):
        with pytest.raises(RuntimeError, match="inside the profiler"), profile(use_device="mlu") as prof:
            torch.randn(10, 10, device="mlu") * 2
            raise RuntimeError("inside the profiler")
        assert {"aten::randn", "aten::mul"} <= {e.name for e in prof.function_events}


class TestOps:
    """test_ops.py: factories, copies, view and stub ops, CPU fallbacks, quantization, structured out= ops."""

    def test_factories(self):
        cl = torch.empty(1, 2, 3, 4, device="mlu", memory_format=torch.channels_last)
        assert cl.device.type == "mlu" and cl.is_contiguous(memory_format=torch.channels_last)
        assert torch.tensor((), device="mlu").shape == (0,)
        assert torch.empty_strided((3, 4), (1, 3), device="mlu").stride() == (1, 3)
        assert torch.equal(torch.full((3, 4), 5.0, device="mlu").cpu(), torch.full((3, 4), 5.0))
        assert torch.equal(torch.ones_like(torch.randn(3, 4, device="mlu")).cpu(), torch.ones(3, 4))
        with torch._subclasses.fake_tensor.FakeTensorMode():
            z = torch.empty(3, 3, device="mlu") + torch.empty(3, 3, device="mlu:0")
            assert z.device.type == "mlu" and z.shape == (3, 3)

    def test_copies_across_devices_and_dtypes(self):
        a = torch.rand(10)
        assert torch.equal(a.to("mlu").add(2).to("cpu"), a + 2)
        assert torch.equal(torch.ones(10, device="mlu:0").to("mlu:1").cpu(), torch.ones(10))
        x = torch.randn(3, 4, device="mlu")
        y = torch.empty(3, 4, dtype=torch.float64, device="mlu").copy_(x)
        assert y.dtype == torch.float64 and torch.equal(y.cpu(), x.cpu().double())
        assert torch.equal(torch.empty(3, 4, device="mlu").copy_(x, non_blocking=True).cpu(), x.cpu())
        assert torch.tensor([5.0], device="mlu").item() == 5.0

    def test_views_resize_and_set(self):
        x = torch.tensor([[1], [2], [3]], device="mlu")
        y = x.expand(3, 2)
        assert torch.equal(y.cpu(), torch.tensor([[1, 1], [2, 2], [3, 3]])) and y.data_ptr() == x.data_ptr()
        t = torch.randn(2, 3, 4, device="mlu")
        assert t.view(6, 4).data_ptr() == t.data_ptr()
        s = torch.as_strided(t, (2, 2), (4, 1), 1)
        assert torch.equal(s.cpu(), torch.as_strided(t.cpu(), (2, 2), (4, 1), 1))
        r = torch.randn(4, 4).to("mlu")
        r.resize_(2, 2, 2, 2)
        assert r.shape == (2, 2, 2, 2) and r.untyped_storage().nbytes() == 16 * 4
        a = torch.randn(3, 4, device="mlu")
        assert torch.equal(torch.empty(3, 4, device="mlu").set_(a).cpu(), a.cpu())
        b = torch.empty(3, 4, device="mlu").set_(a.untyped_storage(), 0, (3, 4))
        assert b.data_ptr() == a.data_ptr() and torch.equal(b.cpu(), a.cpu())

    def test_masked_select_and_out_into_strided_slices_match_cpu(self):
        v = torch.randn(10)
        assert torch.equal(torch.masked_select(v.to("mlu"), v.to("mlu").gt(0)).cpu(), v.masked_select(v.gt(0)))
        x = torch.randn(2, 2, 3)
        o = torch.randn(2, 2, 6)
        om = o.to("mlu")
        torch.abs(x, out=o[:, :, 0:6:2])  # an output of the right size, written in place
        torch.abs(x.to("mlu"), out=om[:, :, 0:6:2])
        assert torch.equal(om.cpu(), o)
        for t, src in ((o, x), (om, x.to("mlu"))):  # an output of the wrong size: resized, as on CPU
            with pytest.warns(UserWarning, match="was resized since it had shape"):
                torch.abs(src, out=t[:, :, 0:6:3])
        assert torch.equal(om.cpu(), o)

    def test_cpu_fallback_ops_match_cpu(self):
        assert torch.equal(torch.triu_indices(3, 3, device="mlu").cpu(),
                           torch.tensor([[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]))
        x = torch.tensor([[1.0, 2, 3], [2, 3, 4]], device="mlu")
        assert torch.equal(torch.sub(x, torch.tensor([1.0, 0, 2], device="mlu")).cpu(),
                           torch.tensor([[0.0, 2, 1], [1, 3, 2]]))
        idx = torch.tensor([1, 0], device="mlu")
        assert torch.equal(x[idx, idx].cpu(), torch.tensor([3.0, 1]))
        v = torch.tensor([1.0, 2, 3], device="mlu")
        assert [t.cpu().tolist() for t in torch._foreach_add((v, v), (v, v))] == [[2.0, 4.0, 6.0]] * 2
        lo, hi = torch.tensor([1.0, 5, 3], device="mlu"), torch.tensor([4.0, 2, 6], device="mlu")
        out = torch.empty(3, device="mlu")
        assert torch.maximum(lo, hi, out=out) is out and out.cpu().tolist() == [4.0, 5.0, 6.0]
        assert torch.minimum(lo, hi).cpu().tolist() == [1.0, 2.0, 3.0]

    def test_quantize_per_tensor(self):
        x = torch.randn(3, 4, 5)
        # torch's deprecation warning of quantization is emitted once per process: not a fact of this test
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            q = torch.quantize_per_tensor(x.to("mlu"), 0.1, 10, torch.qint8)
            want = torch.quantize_per_tensor(x, 0.1, 10, torch.qint8)
        assert q.device == torch.device("mlu:0") and q.dtype == torch.qint8
        assert (q.q_scale(), q.q_zero_point()) == (0.1, 10)
        assert torch.equal(q.int_repr().cpu(), want.int_repr())


class TestDistributed:
    """test_distributed.py: a two-rank "cncl" process group (torch_openreg's "occl"): default group, all_reduce."""

    @pytest.fixture(scope="class")
    @classmethod
    def reports(cls, tmp_path_factory):

        out = tmp_path_factory.mktemp("cncl")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        ranks = [_spawn(DIST_WORKER, rank=rank, port=port, out_dir=str(out)) for rank in range(2)]
        deadline = time.monotonic() + MP_TIMEOUT
        for p in ranks:
            p.join(max(deadline - time.monotonic(), 0))
        if any(p.is_alive() for p in ranks):
            for p in ranks:
                p.kill()
            pytest.fail(f"distributed workers did not finish within {MP_TIMEOUT} s")
        assert [p.exitcode for p in ranks] == [0, 0]
        return [json.loads((out / f"{rank}.json").read_text()) for rank in range(2)]

    def test_backend_registration_and_default_group(self, reports):
        for rank, r in enumerate(reports):
            assert (r["listed"], r["initialized"], r["backend"], r["pg_backend"]) == (True, True, "cncl", "cncl")
            assert (r["world"], r["rank"]) == (2, rank)

    def test_allreduce_future(self, reports):
        # openreg's "occl" is a dummy whose future holds None; cuda's "nccl" future holds the reduced tensors
        # (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: the work's future is completed with its outputs).
        for r in reports:
            assert r["done"] and r["tensor"] == [3.0, 3.0, 3.0]
            assert r["value"] == [["mlu", [3.0, 3.0, 3.0]]]


class TestTesting:
    """test_testing.py: tests limited to cuda by @onlyCUDA / @onlyOn run on mlu only when the class opts in."""

    @staticmethod
    def _generic(ran):
        from torch.testing._internal.common_device_type import onlyCUDA, onlyOn
        from torch.testing._internal.common_utils import TestCase

        class Generic(TestCase):
            @onlyCUDA
            def test_only_cuda(self, device):
                ran.append(("only_cuda", device))

            @onlyOn(["cuda"])
            def test_only_on(self, device):
                ran.append(("only_on", device))

        return Generic

    def test_cuda_only_tests_are_skipped_by_default(self):
        from torch.testing._internal.common_device_type import PrivateUse1TestBase
        assert PrivateUse1TestBase.bypass_device_restrictions is False
        ran = []
        _, result = _run_device_type_tests(self._generic(ran), only_for="mlu")
        assert ran == [] and len(result.skipped) == 2

    def test_opting_in_runs_cuda_only_tests_on_mlu(self):
        ran = []
        _, result = _run_device_type_tests(self._generic(ran), bypass=True, only_for="mlu")
        assert sorted(ran) == [("only_cuda", "mlu:0"), ("only_on", "mlu:0")] and result.skipped == []
