#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark the combined-wheel build and the native interface check, against baselines measured in the same run.

Prints: the overlay build time (cold: RECORD verification of the upstream wheel included; warm: verification cached
by file hash; best of three), ``wheel unpack`` + ``wheel pack`` of the same upstream wheel (what a naive rebuild
costs: it recompresses every member), a plain file copy, the ratios, and the run time of the interface check per
layer, with an empty cache and again with the upstream tree and probe cached.
Targets: warm overlay build <= 3 s on the 192 MB torch 2.13.0 CPU wheel; the whole check < 60 s.

Usage: python benchmarks/bench_wheel.py [--upstream-wheel PATH] [--catch-wheel PATH] [--skip-repack] [--skip-check]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import catch_tools  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from catch_tools.interfaces.check import run_check  # noqa: E402
from catch_tools.pin import load_pin  # noqa: E402
from catch_tools.upstream import release_wheel  # noqa: E402
from catch_tools.wheel.overlay import build_overlay  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tools"))  # test fixtures: fake wheels
from fake_wheels import fake_backend_wheel  # noqa: E402


def _timed(func):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    value = func()
    return time.perf_counter() - start, value


def main() -> int:
    """Run the benchmark; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream-wheel", type=Path)
    parser.add_argument("--catch-wheel", type=Path)
    parser.add_argument("--skip-repack", action="store_true", help="skip the wheel unpack+pack baseline (~30 s)")
    parser.add_argument("--skip-check", action="store_true", help="skip timing the interface check")
    args = parser.parse_args()
    pin = load_pin()
    upstream = args.upstream_wheel or release_wheel(pin.wheel_version)
    with tempfile.TemporaryDirectory(prefix="bench-wheel-") as tmp_name:
        tmp = Path(tmp_name)
        backend = args.catch_wheel or fake_backend_wheel(tmp / "backend")
        (tmp / "patches").mkdir()
        (tmp / "patches" / "series").write_text("")
        print(f"upstream: {upstream.name} ({upstream.stat().st_size / 1e6:.0f} MB); backend: {backend.name}")

        copy_s, _ = _timed(lambda: shutil.copyfile(upstream, tmp / "copy.whl"))
        os.environ["CATCH_CACHE"] = str(tmp / "cache")  # empty cache: the first build verifies every member

        def build(out: str) -> Path:
            return build_overlay(upstream_wheel=upstream, backend_wheel=backend, patches_dir=tmp / "patches",
                                 pin=pin, out_dir=tmp / out).wheel

        cold_s, combined = _timed(lambda: build("cold"))
        warm_s = min(_timed(lambda: build("warm"))[0] for _ in range(3))  # best of 3: the machine may be shared
        print(f"file copy                         {copy_s:7.2f} s")
        print(f"overlay build, cold (verify all)  {cold_s:7.2f} s")
        print(f"overlay build, warm (best of 3)   {warm_s:7.2f} s   (target <= 3 s)")
        if not args.skip_repack:
            def repack() -> None:
                subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", str(tmp / "unpacked"), str(upstream)],
                               check=True, capture_output=True)
                unpacked = next((tmp / "unpacked").iterdir())
                (tmp / "repacked").mkdir(exist_ok=True)
                subprocess.run([sys.executable, "-m", "wheel", "pack", "-d", str(tmp / "repacked"), str(unpacked)],
                               check=True, capture_output=True)

            repack_s, _ = _timed(repack)
            shutil.rmtree(tmp / "unpacked", ignore_errors=True)
            print(f"wheel unpack + wheel pack         {repack_s:7.2f} s")
            print(f"ratio overlay warm / repack       {warm_s / repack_s:7.3f}")
            print(f"ratio overlay cold / repack       {cold_s / repack_s:7.3f}")
        print(f"ratio overlay warm / file copy    {warm_s / copy_s:7.2f}")
        if not args.skip_check:
            for label in ("cold", "warm"):  # cold: upstream tree unpacked and probed; warm: both from the cache
                check_s, report = _timed(lambda: run_check(upstream, combined))
                per_layer = ", ".join(f"layer {r.layer} {r.seconds:.1f} s" for r in report.layers)
                print(f"interface check, {label} cache      {check_s:7.2f} s   (target < 60 s; exit "
                      f"{report.exit_code})")
                print(f"  {per_layer}")
        print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
