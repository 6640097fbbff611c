# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Device activity and sensors, with ``torch.cuda``'s NVML-backed names: :func:`utilization`, :func:`memory_usage`,
:func:`clock_rate`, :func:`temperature`, :func:`power_draw`.

The emulated device's kernels run on the host CPU, so its clock, temperature and power are the host CPU's, read from
the kernel's interfaces (``/proc/cpuinfo``, ``/sys/class/thermal``, ``/sys/class/powercap``); busy times come from the
backend. Sample periods: the time since the previous call for the device (since ``import torch_mlu`` for the first).
"""

from __future__ import annotations

import glob
import os
import time

from torch_mlu import _C
from torch_mlu.mlu._utils import _get_device_index

# Roots of the host's sensor interfaces, and the clock of the sample periods (module attributes so tests can point
# them at a copy).
_THERMAL_ROOT = "/sys/class/thermal"
_POWERCAP_ROOT = "/sys/class/powercap"
# Thermal zone types of the CPU package (x86_pkg_temp, cpu-thermal, cpu0_thermal, soc_thermal, ...).
_CPU_ZONE_TYPES = ("x86_pkg_temp", "cpu", "soc", "pkg")
_clock = time.monotonic_ns

_busy_samples: dict[int, tuple[int, int]] = {}
_mem_samples: dict[int, tuple[int, int]] = {}
_energy_samples: dict[int, tuple[int, dict[str, int]]] = {}


def _checked_index(device: object) -> int:
    """Index of ``device`` (default: current); RuntimeError, in the backend's words, if no such device is visible."""
    idx = _get_device_index(device, optional=True)
    count = _C.device_count()
    if not 0 <= idx < count:
        raise RuntimeError(f"MLU error: invalid device ordinal: device index {idx} is out of range; {count} MLU "
                           f"device(s) are visible (set MLU_VISIBLE_DEVICE_COUNT to change)")
    return idx


def _busy_percent(samples: dict[int, tuple[int, int]], idx: int, busy: int) -> int:
    """Percent of the time since ``idx``'s previous sample in ``samples`` (or since import) that the busy counter
    ``busy`` (ns) grew, capped at 100; records this sample."""
    now = _clock()
    t0, b0 = samples.get(idx, (_IMPORT_NS, 0))
    samples[idx] = (now, busy)
    if now <= t0:
        return 0
    return min(100, round(100 * (busy - b0) / (now - t0)))


def utilization(device: object = None) -> int:
    """Percent of time during which device kernels ran on ``device`` over the past sample period (NVML's
    utilization). Kernels of several threads may overlap, so the value is capped at 100."""
    idx = _get_device_index(device, optional=True)
    return _busy_percent(_busy_samples, idx, int(_C.device_busy_ns(idx)))


def memory_usage(device: object = None) -> int:
    """Percent of time during which ``device``'s memory was read or written over the past sample period (NVML's
    memory utilization): device kernels (they work on device memory throughout) plus copies to or from it; capped
    at 100."""
    idx = _get_device_index(device, optional=True)
    return _busy_percent(_mem_samples, idx, int(_C.device_busy_ns(idx)) + int(_C.copy_busy_ns(idx)))


def clock_rate(device: object = None) -> int:
    """Clock of the compute units in MHz (NVML's SM clock): the mean current frequency of the host's cores
    (``/proc/cpuinfo``, else ``cpufreq``); 0 when the host does not report one."""
    _checked_index(device)
    mhz: list[float] = []
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            mhz = [float(line.split(":")[1]) for line in f if line.lower().startswith("cpu mhz")]
    except OSError:
        pass
    if not mhz:
        try:
            with open("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", encoding="utf-8") as f:
                mhz = [int(f.read().strip()) / 1000]
        except (OSError, ValueError):
            return 0
    return round(sum(mhz) / len(mhz))


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def temperature(device: object = None) -> int:
    """Temperature of ``device`` in degrees Celsius (NVML's GPU die sensor, ``torch.cuda.temperature``): the hottest
    CPU package zone of ``/sys/class/thermal`` (``thermal_zone*/temp``, millidegrees, of a zone whose ``type`` names
    the CPU: ``x86_pkg_temp``, ``cpu*``, ``soc*``).

    Raises RuntimeError when the host reports no such zone (containers and VMs often do not), as
    ``torch.cuda.temperature`` fails when NVML cannot reach a driver.
    """
    _checked_index(device)
    temps = []
    for zone in sorted(glob.glob(os.path.join(_THERMAL_ROOT, "thermal_zone*"))):
        try:
            with open(os.path.join(zone, "type"), encoding="utf-8") as f:
                kind = f.read().strip().lower()
        except OSError:
            continue
        if any(t in kind for t in _CPU_ZONE_TYPES) and (millideg := _read_int(os.path.join(zone, "temp"))) is not None:
            temps.append(millideg)
    if not temps:
        raise RuntimeError(f"MLU temperature is not available: the emulated device runs on the host CPU, and this host "
                           f"reports no CPU thermal zone under {_THERMAL_ROOT}")
    return round(max(temps) / 1000)


def _package_counters() -> dict[str, tuple[int, int]]:
    """RAPL energy counters of the host's CPU packages (top-level ``intel-rapl:N`` zones; their subzones are parts of
    them): zone -> (``energy_uj``, ``max_energy_range_uj``, where the counter wraps); readable ones only."""
    out = {}
    for zone in sorted(glob.glob(os.path.join(_POWERCAP_ROOT, "intel-rapl:*"))):
        if os.path.basename(zone).count(":") != 1:
            continue
        uj = _read_int(os.path.join(zone, "energy_uj"))
        if uj is not None:
            out[zone] = (uj, _read_int(os.path.join(zone, "max_energy_range_uj")) or 0)
    return out


def power_draw(device: object = None) -> int:
    """Average power draw of ``device`` in milliwatts over the past sample period (NVML's power usage,
    ``torch.cuda.power_draw``): the CPU packages' power from the RAPL energy counters of ``/sys/class/powercap``
    (``intel-rapl:N/energy_uj``, packages summed; a counter that wrapped is unwrapped with its
    ``max_energy_range_uj``).
    A call right after the previous one (no time elapsed) returns 0.

    Raises RuntimeError when the host exposes no readable counter (containers and VMs often do not; ``energy_uj``
    is root-only on recent kernels), as ``torch.cuda.power_draw`` fails when NVML cannot reach a driver.
    """
    idx = _checked_index(device)
    now, counters = _clock(), _package_counters()
    if not counters:
        raise RuntimeError(f"MLU power draw is not available: the emulated device runs on the host CPU, and this host "
                           f"exposes no readable RAPL energy counter under {_POWERCAP_ROOT}")
    energy = {zone: uj for zone, (uj, _) in counters.items()}
    t0, e0 = _energy_samples.get(idx, (_IMPORT_NS, _IMPORT_ENERGY_UJ or energy))
    _energy_samples[idx] = (now, energy)
    if now <= t0:
        return 0
    used = 0
    for zone, (uj, wrap) in counters.items():
        delta = uj - e0.get(zone, uj)
        used += delta + wrap if delta < 0 else delta
    return round(used * 1e6 / (now - t0))  # uJ per ns = kW; * 1e6 -> mW


_IMPORT_NS = _clock()
_IMPORT_ENERGY_UJ = {zone: uj for zone, (uj, _) in _package_counters().items()}
