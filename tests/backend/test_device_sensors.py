# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""torch.mlu.temperature and torch.mlu.power_draw (torch.cuda's NVML readings): the emulated device runs on the host
CPU, so they read the host's CPU sensors through the Linux interfaces, whose formats are the oracle (thermal zones:
``temp`` in millidegrees Celsius; powercap RAPL: ``energy_uj`` in microjoules, wrapping at ``max_energy_range_uj``).
Hosts without them (most containers) raise RuntimeError, as torch.cuda does without a reachable NVML driver."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from torch_mlu.mlu import monitoring


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def test_temperature_is_the_hottest_cpu_zone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "thermal_zone0" / "type", "acpitz")  # the board, not the CPU: ignored
    _write(tmp_path / "thermal_zone0" / "temp", "90000")
    _write(tmp_path / "thermal_zone1" / "type", "x86_pkg_temp")
    _write(tmp_path / "thermal_zone1" / "temp", "47500")
    _write(tmp_path / "thermal_zone2" / "type", "x86_pkg_temp")
    _write(tmp_path / "thermal_zone2" / "temp", "52400")
    monkeypatch.setattr(monitoring, "_THERMAL_ROOT", str(tmp_path))
    assert torch.mlu.temperature() == 52
    assert torch.mlu.temperature(0) == 52


def test_power_draw_is_the_packages_energy_rate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg0, pkg1 = tmp_path / "intel-rapl:0", tmp_path / "intel-rapl:1"
    for pkg in (pkg0, pkg1):
        _write(pkg / "max_energy_range_uj", "1000000000")
    _write(tmp_path / "intel-rapl:0:0" / "energy_uj", "999999999")  # a core subzone: part of package 0, not added
    _write(pkg0 / "energy_uj", "10000000")
    _write(pkg1 / "energy_uj", "20000000")
    now = [5_000_000_000]
    monkeypatch.setattr(monitoring, "_POWERCAP_ROOT", str(tmp_path))
    monkeypatch.setattr(monitoring, "_clock", lambda: now[0])
    monkeypatch.setattr(monitoring, "_energy_samples", {})
    monkeypatch.setattr(monitoring, "_IMPORT_NS", 3_000_000_000)
    monkeypatch.setattr(monitoring, "_IMPORT_ENERGY_UJ", {str(pkg0): 0, str(pkg1): 0})
    assert torch.mlu.power_draw() == 15_000  # 30 J in the 2 s since import: 15 W
    now[0] += 500_000_000
    _write(pkg0 / "energy_uj", "11000000")
    _write(pkg1 / "energy_uj", "21000000")
    assert torch.mlu.power_draw() == 4_000  # 2 J in 0.5 s
    now[0] += 1_000_000_000
    _write(pkg0 / "energy_uj", "500000")  # wrapped: 1000000000 - 11000000 + 500000 uJ since the last call
    _write(pkg1 / "energy_uj", "21000000")
    assert torch.mlu.power_draw() == 989_500


def test_hosts_without_sensors_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(monitoring, "_THERMAL_ROOT", str(tmp_path / "none"))
    monkeypatch.setattr(monitoring, "_POWERCAP_ROOT", str(tmp_path / "none"))
    with pytest.raises(RuntimeError, match="MLU temperature is not available: .* reports no CPU thermal zone"):
        torch.mlu.temperature()
    with pytest.raises(RuntimeError, match="MLU power draw is not available: .* no readable RAPL energy counter"):
        torch.mlu.power_draw()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):  # the backend's check, as for any device call
        torch.mlu.temperature(99)
