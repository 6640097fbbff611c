# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Overlay build of the combined wheel on small synthetic wheels: contents, RECORD, raw copy, reproducibility."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel

from catch_tools.pin import Pin
from catch_tools.wheel.overlay import build_overlay

COMMIT = "cf30153c4c131c8164ee7798e5022d810682e2cb"
PIN = Pin("https://github.com/pytorch/pytorch.git", "v2.13.0", COMMIT, "2.13.0+cpu", 3)
COMBINED = "torch-2.13.0+cpu.catch3-cp311-cp311-manylinux_2_28_x86_64.whl"
DI = "torch-2.13.0+cpu.catch3.dist-info"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


def empty_series(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "series").write_text("# no patches yet\n\n")
    return root


def stored_upstream(out: Path) -> Path:
    """A fake upstream where one member is STORED (not deflated): a raw copy keeps it stored, a repack would not."""
    src = fake_torch_wheel(out / "src", PIN.wheel_version, COMMIT)
    dst = out / src.name
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            info.compress_type = zipfile.ZIP_STORED if info.filename == "torch/utils/helpers.py" else 8
            zout.writestr(info, data)
    return dst


def build(tmp: Path, upstream: Path | None = None, backend: Path | None = None, out: str = "dist") -> Path:
    upstream = upstream or stored_upstream(tmp / "up")
    backend = backend or fake_backend_wheel(tmp / "be")
    result = build_overlay(upstream_wheel=upstream, backend_wheel=backend, patches_dir=empty_series(tmp / "patches"),
                           pin=PIN, out_dir=tmp / out)
    return result.wheel


def record_rows(zf: zipfile.ZipFile) -> list[list[str]]:
    return list(csv.reader(io.StringIO(zf.read(f"{DI}/RECORD").decode())))


def test_combined_wheel_name_version_and_metadata(tmp_path: Path) -> None:
    wheel = build(tmp_path)
    assert wheel.name == COMBINED
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert zf.testzip() is None
        meta = zf.read(f"{DI}/METADATA").decode()
        assert "\nVersion: 2.13.0+cpu.catch3\n" in meta
        assert meta.count("Requires-Dist:") == 3
        version_py = zf.read("torch/version.py").decode()
        eps = zf.read(f"{DI}/entry_points.txt").decode()
        top = zf.read(f"{DI}/top_level.txt").decode().split()
    assert "torch_mlu/__init__.py" in names
    assert not any(n.startswith("torch-2.13.0+cpu.dist-info/") for n in names)
    assert names[-1] == f"{DI}/RECORD"
    namespace: dict[str, object] = {}
    exec(compile(version_py, "version.py", "exec"), namespace)
    assert namespace["__version__"] == "2.13.0+cpu.catch3"
    assert namespace["catch"] == "3"
    assert namespace["git_version"] == COMMIT
    assert "catch" in namespace["__all__"]  # type: ignore[operator]
    assert "[torch.backends]\nmlu = torch_mlu:_autoload" in eps
    assert "torchrun = torch.distributed.run:main" in eps
    assert "torch_mlu" in top and "torch" in top


def test_record_is_complete_and_correct(tmp_path: Path) -> None:
    wheel = build(tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        rows = record_rows(zf)
        by_path = {r[0]: r for r in rows}
        assert set(by_path) == set(zf.namelist())
        assert by_path[f"{DI}/RECORD"][1:] == ["", ""]
        for name in zf.namelist():
            if name == f"{DI}/RECORD":
                continue
            data = zf.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert by_path[name][1] == f"sha256={digest}", name
            assert by_path[name][2] == str(len(data)), name


def test_unchanged_members_are_copied_raw(tmp_path: Path) -> None:
    upstream = stored_upstream(tmp_path / "up")
    wheel = build(tmp_path, upstream=upstream)
    with zipfile.ZipFile(upstream) as up, zipfile.ZipFile(wheel) as new:
        for info in up.infolist():
            if info.filename.startswith("torch-2.13.0+cpu.dist-info/") or info.filename == "torch/version.py":
                continue
            other = new.getinfo(info.filename)
            assert (other.compress_type, other.CRC, other.compress_size, other.date_time) == (
                info.compress_type, info.CRC, info.compress_size, info.date_time), info.filename
        assert new.getinfo("torch/utils/helpers.py").compress_type == zipfile.ZIP_STORED


def test_two_builds_are_byte_identical(tmp_path: Path) -> None:
    upstream = stored_upstream(tmp_path / "up")
    backend = fake_backend_wheel(tmp_path / "be")
    first = build(tmp_path, upstream, backend, out="a")
    second = build(tmp_path, upstream, backend, out="b")
    assert first.read_bytes() == second.read_bytes()


def test_source_date_epoch_sets_new_member_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    upstream = stored_upstream(tmp_path / "up")
    backend = fake_backend_wheel(tmp_path / "be")
    plain = build(tmp_path, upstream, backend, out="a")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14 22:13:20 UTC
    dated = build(tmp_path, upstream, backend, out="b")
    assert plain.read_bytes() != dated.read_bytes()
    with zipfile.ZipFile(dated) as zf:
        assert zf.getinfo("torch/version.py").date_time == (2023, 11, 14, 22, 13, 20)
        assert zf.getinfo(f"{DI}/METADATA").date_time == (2023, 11, 14, 22, 13, 20)


def test_pip_installs_the_combined_wheel_and_sees_the_entry_point(tmp_path: Path) -> None:
    wheel = build(tmp_path)
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                           "--target", str(target), str(wheel)], capture_output=True, text=True, check=False,
                          env={"PATH": "/usr/bin:/bin", "PIP_CONSTRAINT": "", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    dists = {d.metadata["Name"]: d for d in importlib.metadata.distributions(path=[str(target)])}
    assert dists["torch"].version == "2.13.0+cpu.catch3"
    eps = [ep for ep in dists["torch"].entry_points if ep.group == "torch.backends"]
    assert [(ep.name, ep.value) for ep in eps] == [("mlu", "torch_mlu:_autoload")]
    assert (target / "torch_mlu" / "__init__.py").is_file()
