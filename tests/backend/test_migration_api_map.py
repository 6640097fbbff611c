# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The shared CUDA -> mlu API table (torch_mlu/contrib/api_map.csv) against torch.cuda's real surface in the installed
torch (2.13 in CI, 2.15 in the upgrade): rows with ``since`` name what newer releases added."""

from __future__ import annotations

import pkgutil

import pytest
import torch
from migration_samples import _support  # noqa: F401  (makes the checkout's torch_mlu.contrib importable)

from torch_mlu.contrib._surface import cuda_public_surface
from torch_mlu.contrib.api_map import ApiMap, _parse, load_api_map


def test_every_public_torch_cuda_name_is_classified() -> None:
    surface = cuda_public_surface()
    table = load_api_map().available(torch.__version__)
    missing = [name for name in surface if table.get(name) is None]
    assert not missing, f"torch.cuda names the table does not classify: {missing}"


def test_surface_is_the_real_one() -> None:
    """The surface walk finds what torch.cuda documents: __all__, public submodules' __all__, exceptions."""
    surface = set(cuda_public_surface())
    assert {f"torch.cuda.{n}" for n in torch.cuda.__all__} <= surface
    assert {f"torch.cuda.memory.{n}" for n in torch.cuda.memory.__all__} <= surface
    assert {f"torch.cuda.amp.{n}" for n in torch.cuda.amp.__all__} <= surface
    assert {"torch.cuda.OutOfMemoryError", "torch.cuda.nvtx.range_push", "torch.cuda.streams.Stream"} <= surface
    assert not any(n.startswith(("torch.cuda.os", "torch.cuda.torch", "torch.cuda._")) for n in surface)
    assert len(surface) > 200


def test_every_row_names_a_real_torch_api() -> None:
    """No stale rows: every classified name exists in the installed torch, unless its ``since`` is newer."""
    for api in load_api_map().available(torch.__version__).entries:
        pkgutil.resolve_name(api)


def test_since_is_true_for_the_installed_torch() -> None:
    """A row's ``since`` is a fact about torch: names newer than the installed torch are not in its surface, and on a
    torch at or after ``since`` they are (the other test checks that)."""
    table = load_api_map()
    newer = [e.api for e in table.entries.values() if not e.available_in(torch.__version__)]
    present = sorted(set(newer) & set(cuda_public_surface()))
    assert not present, f"rows marked newer than torch {torch.__version__} name APIs it has: {present}"


def test_available_follows_since() -> None:
    rows = _parse("api,status,mlu,reason,since\ntorch.cuda.a,unsupported,,old\ntorch.cuda.b,unsupported,,new,2.15.0\n",
                  "t.csv")
    table = ApiMap(rows)
    assert set(table.available("2.13.0+cpu").entries) == {"torch.cuda.a"}
    assert set(table.available("2.15.0").entries) == {"torch.cuda.a", "torch.cuda.b"}
    assert set(table.available("2.15.0a0+git1234").entries) == {"torch.cuda.a", "torch.cuda.b"}
    assert set(table.available("2.16.1+cu132").entries) == {"torch.cuda.a", "torch.cuda.b"}


def test_mapped_targets_exist_and_are_mlu() -> None:
    for entry in load_api_map().entries.values():
        if entry.status == "unsupported":
            assert entry.mlu == "" and entry.reason, entry
            continue
        target = pkgutil.resolve_name(entry.mlu)
        assert target is not None or entry.mlu.endswith(("has_half", "has_magma")), entry
        assert entry.mlu.startswith(("torch.mlu", "torch_mlu.", "torch.OutOfMemoryError", "torch.AcceleratorError",
                                     "torch.cuda.CudaError", "torch.cuda.DeferredCudaCallError")), entry


def test_mapped_functions_answer_for_mlu() -> None:
    """Spot checks that mapped rows mean the same thing on mlu (values from torch.mlu itself)."""
    table = load_api_map()
    assert pkgutil.resolve_name(table.get("torch.cuda.device_count").mlu)() == torch.mlu.device_count()
    x = torch.ones(1024, device="mlu")
    assert pkgutil.resolve_name(table.get("torch.cuda.memory.memory_allocated").mlu)() == torch.mlu.memory_allocated()
    assert pkgutil.resolve_name(table.get("torch.cuda.memory_cached").mlu)() == torch.mlu.memory_reserved()
    nested = pkgutil.resolve_name(table.get("torch.cuda.memory_stats_as_nested_dict").mlu)()
    assert nested["allocated_bytes"]["all"]["current"] == torch.mlu.memory_allocated()
    del x
    assert pkgutil.resolve_name(table.get("torch.cuda.amp.GradScaler").mlu) is torch.mlu.amp.GradScaler
    assert pkgutil.resolve_name(table.get("torch.cuda.OutOfMemoryError").mlu) is torch.OutOfMemoryError


def test_resolve_longest_prefix_and_unknown_names() -> None:
    table = load_api_map()
    entry, rest = table.resolve("torch.cuda.Event.elapsed_time")
    assert entry is not None and entry.api == "torch.cuda.Event" and rest == ".elapsed_time"
    assert table.resolve("torch.cuda._lazy_init") == (None, "")
    assert table.resolve("torch.cuda.amp.not_a_name") == (None, "")
    assert "torch.cuda.amp" in table.namespaces and "torch.cuda.Event" not in table.namespaces


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("api,status,target,reason\n", "header must be"),
        ("api,status,mlu,reason\ntorch.cuda.x,maybe,,why\n", "status must be one of"),
        ("api,status,mlu,reason,since\ntorch.cuda.x,unsupported,,why,2.15\n", "since must be a release"),
        ("api,status,mlu,reason\ntorch.cuda.x,mapped,,\n", "needs an mlu equivalent"),
        ("api,status,mlu,reason\ntorch.cuda.ok,mapped,torch.mlu.ok,\ntorch.cuda.x,unsupported,,\n", "needs a reason"),
    ],
)
def test_malformed_table_names_the_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        _parse(text, "t.csv")
    assert str(info.value).startswith("t.csv:")
    if "needs a reason" in message:
        assert str(info.value).startswith("t.csv:3:")


def test_table_statuses_cover_the_three_classes() -> None:
    table: ApiMap = load_api_map()
    statuses = {e.status for e in table.entries.values()}
    assert statuses == {"mapped", "unsupported", "not_applicable"}


def test_cuda_compat_stand_ins() -> None:
    """The stand-ins for torch.cuda names that torch.mlu does not spell, against torch.mlu's own numbers."""
    from torch_mlu.contrib import cuda_compat

    x = torch.ones(4096, device="mlu")
    summary = cuda_compat.memory_summary()
    row = next(line.split() for line in summary.splitlines() if line.startswith("allocated_bytes"))
    assert int(row[1]) == torch.mlu.memory_allocated() and int(row[2]) == torch.mlu.max_memory_allocated()
    free, total = torch.mlu.mem_get_info()
    assert cuda_compat.device_memory_used() == total - free
    assert cuda_compat.max_memory_cached() == torch.mlu.max_memory_reserved()
    assert cuda_compat.can_device_access_peer(0, torch.mlu.device_count() - 1) is True
    with pytest.raises(AssertionError, match="Invalid device id"):
        cuda_compat.can_device_access_peer(0, torch.mlu.device_count())
    assert cuda_compat.is_current_stream_capturing() is False
    assert cuda_compat.amp_definitely_not_available() is (not torch.mlu.is_available())
    del x

    class Square(torch.autograd.Function):
        @staticmethod
        @cuda_compat.custom_fwd(cast_inputs=torch.float32)
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @cuda_compat.custom_bwd
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return 2 * a * grad

    a = torch.tensor([1.0, 2.0], device="mlu", requires_grad=True)
    with torch.autocast("mlu", dtype=torch.float16):
        out = Square.apply(a.half())
    assert out.dtype == torch.float32  # cast_inputs ran forward in float32 under mlu autocast
    out.sum().backward()
    assert a.grad.cpu().tolist() == [2.0, 4.0]
