# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Overlay build from the real upstream torch 2.13.0 wheel (with the pure-Python stand-in backend)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel

from catch_tools.interfaces.check import run_check
from catch_tools.interfaces.report import ERROR, INCOMPATIBLE
from catch_tools.patches import Series
from catch_tools.paths import patches_dir
from catch_tools.pin import load_pin
from catch_tools.upstream import release_wheel
from catch_tools.wheel.overlay import build_overlay

pytestmark = [pytest.mark.real, pytest.mark.slow]


def test_real_overlay_build(tmp_path: Path) -> None:
    pin = load_pin()
    upstream = release_wheel(pin.wheel_version)
    backend = fake_backend_wheel(tmp_path / "be")
    (tmp_path / "patches").mkdir()
    (tmp_path / "patches" / "series").write_text("")
    first = build_overlay(upstream_wheel=upstream, backend_wheel=backend, patches_dir=tmp_path / "patches", pin=pin,
                          out_dir=tmp_path / "a").wheel
    second = build_overlay(upstream_wheel=upstream, backend_wheel=backend, patches_dir=tmp_path / "patches", pin=pin,
                           out_dir=tmp_path / "b").wheel
    assert first.name == upstream.name.replace(pin.wheel_version, pin.combined_version)
    assert first.read_bytes() == second.read_bytes()
    di = f"torch-{pin.combined_version}.dist-info"
    with zipfile.ZipFile(upstream) as up, zipfile.ZipFile(first) as new:
        up_infos = {i.filename: i for i in up.infolist()}
        new_infos = {i.filename: i for i in new.infolist()}
        assert len(new_infos) == len(up_infos) + 1  # torch_mlu/__init__.py
        raw = 0
        for name, info in up_infos.items():
            target = name.replace(f"torch-{pin.wheel_version}.dist-info", di)
            other = new_infos[target]
            assert other.CRC == info.CRC or name.endswith(("version.py", "METADATA", "entry_points.txt",
                                                            "top_level.txt", "RECORD")), name
            raw += (other.compress_size, other.CRC) == (info.compress_size, info.CRC)
        assert raw == len(up_infos) - 5
        version_py = new.read("torch/version.py").decode()
        assert f"__version__ = '{pin.combined_version}'" in version_py
        assert f"catch: str = '{pin.series_version}'" in version_py
        assert f"git_version = '{pin.commit}'" in version_py
        assert "[torch.backends]\nmlu = torch_mlu:_autoload" in new.read(f"{di}/entry_points.txt").decode()


def test_real_series_is_carried_by_the_combined_wheel(tmp_path: Path) -> None:
    pin = load_pin()
    upstream = release_wheel(pin.wheel_version)
    result = build_overlay(upstream_wheel=upstream, backend_wheel=fake_backend_wheel(tmp_path / "be"),
                           patches_dir=patches_dir(), pin=pin, out_dir=tmp_path / "dist")
    series = Series.read(patches_dir())
    if series.empty:
        assert result.patched == ["torch/version.py"]
        return
    touched = set(series.touched_paths())
    shipped = {p for p in touched if p.startswith(("torch/", "torchgen/", "functorch/"))}
    from_series = (set(result.patched) - {"torch/version.py"}) | (set(result.added) - {"torch_mlu/__init__.py"})
    assert from_series and from_series <= shipped
    with zipfile.ZipFile(upstream) as up, zipfile.ZipFile(result.wheel) as new:
        for name in result.patched:
            assert new.read(name) != up.read(name), name
    report = run_check(upstream, result.wheel, (0, 3))
    assert report.exit_code & (ERROR | INCOMPATIBLE) == 0, report.to_json()
