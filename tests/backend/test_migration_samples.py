# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Realistic CUDA training scripts (tests/backend/migration_samples/) run on mlu two ways -- converted by
``torch_gpu2mlu`` and unchanged under ``import torch_mlu.contrib.transfer_to_mlu`` -- and must give the numbers a
CPU run of the same unchanged script gives (computed in the same test; no GPU here, so the script's own
``cuda if available else cpu`` choice yields the CPU reference).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from migration_samples._support import SAMPLE_NAMES, SAMPLES, cncl_available, run_sample

from torch_mlu.migration.cli import main as gpu2mlu

CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}
MODES = ("converted", "transfer")


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The samples converted once by the tool (the input is a copy holding only the sample scripts)."""
    root = tmp_path_factory.mktemp("convert")
    src = root / "samples"
    src.mkdir()
    for name in SAMPLE_NAMES:
        shutil.copy(SAMPLES / name, src / name)
    assert gpu2mlu(["-i", str(src), "-o", str(root / "out")]) == 0
    return root / "out"


def _script(mode: str, name: str, converted: Path) -> tuple[Path, bool]:
    return (converted / name, False) if mode == "converted" else (SAMPLES / name, True)


def _close(a: list[float], b: list[float], tol: float) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert abs(x - y) <= tol * max(1.0, abs(y)), (a, b)


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """CPU results of the unchanged samples, computed lazily once per sample."""
    cache: dict[str, dict] = {}
    root = tmp_path_factory.mktemp("reference")

    class Refs(dict):
        def __missing__(self, name: str) -> dict:
            ddp = name == "train_ddp.py"
            res = run_sample(SAMPLES / name, root / (name + ".json"), ddp=ddp, env=CPU_ONLY)
            assert res["device"] == "cpu"
            self[name] = res
            return res

    return Refs(cache)


@pytest.mark.parametrize("mode", MODES)
def test_amp_training(mode: str, converted: Path, references: dict, tmp_path: Path) -> None:
    script, transfer = _script(mode, "train_amp.py", converted)
    res = run_sample(script, tmp_path / "out.json", transfer=transfer)
    ref = references["train_amp.py"]
    assert res["device"] == "mlu:0"
    assert res["logits_dtype"] == ref["logits_dtype"] == "torch.float16"  # autocast really ran on both
    assert res["scale"] == ref["scale"]
    # float16 autocast on both sides; the two devices' float16 matmuls may round differently
    _close(res["losses"], ref["losses"], 2e-3)
    _close([res["weights_sum"], res["weights_abs_sum"]], [ref["weights_sum"], ref["weights_abs_sum"]], 5e-3)


@pytest.mark.parametrize("mode", MODES)
def test_dataloader_pin_memory(mode: str, converted: Path, references: dict, tmp_path: Path) -> None:
    script, transfer = _script(mode, "train_dataloader.py", converted)
    res = run_sample(script, tmp_path / "out.json", transfer=transfer)
    ref = references["train_dataloader.py"]
    assert res["device"] == "mlu:0"
    assert res["first_batch_pinned"] is True and ref["first_batch_pinned"] is False
    _close(res["epoch_losses"], ref["epoch_losses"], 1e-5)
    assert res["accuracy"] == pytest.approx(ref["accuracy"], abs=1e-9)


@pytest.mark.parametrize("mode", MODES)
def test_memory_and_stream_apis(mode: str, converted: Path, references: dict, tmp_path: Path) -> None:
    script, transfer = _script(mode, "cuda_memory_streams.py", converted)
    res = run_sample(script, tmp_path / "out.json", transfer=transfer)
    ref = references["cuda_memory_streams.py"]
    assert res["device"] == "mlu:0"
    _close([res["y_sum"], res["y_abs_sum"]], [ref["y_sum"], ref["y_abs_sum"]], 1e-5)
    _close(res["y_first_row"], ref["y_first_row"], 1e-5)
    # the allocator saw exactly the 4 MiB buffer come and go (torch.cuda.memory_allocated semantics)
    assert res["allocated_delta"] >= res["big_nbytes"] == 4 * 1024 * 1024
    assert res["allocated_after_free"] == 0
    assert res["peak_delta"] >= res["big_nbytes"]
    assert res["reserved_after_empty_cache"] < res["reserved_before_empty_cache"]
    assert res["mem_info_ok"] and res["elapsed_ms_nonnegative"] and res["streams_distinct"]


@pytest.mark.skipif(not cncl_available(), reason="the cncl process-group backend (torch_mlu.distributed) is not "
                    "available in this build yet")
@pytest.mark.parametrize("mode", MODES)
def test_ddp_nccl(mode: str, converted: Path, references: dict, tmp_path: Path) -> None:
    script, transfer = _script(mode, "train_ddp.py", converted)
    res = run_sample(script, tmp_path / "out.json", transfer=transfer, ddp=True)
    ref = references["train_ddp.py"]
    assert (res["device"], res["backend"], ref["backend"]) == ("mlu:0", "cncl", "gloo")
    assert res["world_size"] == ref["world_size"] == 2
    assert res["replicas_in_sync"] and ref["replicas_in_sync"]
    _close(res["losses"], ref["losses"], 1e-5)
    _close([res["weights_sum"], res["weights_abs_sum"]], [ref["weights_sum"], ref["weights_abs_sum"]], 1e-5)
