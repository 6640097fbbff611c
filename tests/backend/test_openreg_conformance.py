# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The facts PyTorch's reference PrivateUse1 backend checks for its own device, checked on mlu.

Oracle: torch_openreg's tests in upstream PyTorch (test/cpp_extensions/open_registration_extension/torch_openreg/
tests/test_<area>.py; one class here per file there, named after it), rewritten for mlu, not copied. Where mlu
deliberately answers as cuda does rather than as openreg, the test checks cuda's answer and names the upstream
source of it; docs/support.md ("Where mlu answers as cuda, not as torch_openreg") lists these differences.
Stricter checks of several areas live in their own modules (test_sdpa.py, test_serialization_backend_meta.py,
test_out_argument.py, test_device_capability.py, test_streams_events.py, test_rng.py).
"""

from __future__ import annotations

import os
import tempfile
from unittest import mock

import pytest
import torch
from mlu_helpers import run_python
from torch.nn.attention import SDPBackend, sdpa_kernel
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


class TestOpInfo:
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
