# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Bad input to the combined-wheel build: one clear error, non-zero exit, nothing left in the output directory."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel, write_wheel

from catch_tools.errors import UserError
from catch_tools.pin import Pin
from catch_tools.wheel.overlay import build_overlay

COMMIT = "cf30153c4c131c8164ee7798e5022d810682e2cb"
PIN = Pin("https://github.com/pytorch/pytorch.git", "v2.13.0", COMMIT, "2.13.0+cpu", 1)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATCH_CACHE", str(tmp_path / "cache"))


def series(root: Path, patches: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "series").write_text("".join(f"{name}\n" for name in (patches or {})))
    for name, text in (patches or {}).items():
        (root / name).write_text(text)
    return root


def attempt(tmp: Path, upstream: Path, backend: Path | None = None, patches: Path | None = None) -> UserError:
    out = tmp / "dist"
    with pytest.raises(UserError) as info:
        build_overlay(upstream_wheel=upstream, backend_wheel=backend or fake_backend_wheel(tmp / "be"),
                      patches_dir=patches or series(tmp / "patches"), pin=PIN, out_dir=out)
    assert not out.exists() or list(out.iterdir()) == [], "a partial wheel was left behind"
    assert "\n" not in str(info.value)
    return info.value


def test_wrong_upstream_version(tmp_path: Path) -> None:
    err = attempt(tmp_path, fake_torch_wheel(tmp_path / "up", "2.12.0+cpu", COMMIT))
    assert "2.12.0+cpu" in str(err) and "pin wants 2.13.0+cpu" in str(err)


def test_wrong_upstream_commit(tmp_path: Path) -> None:
    err = attempt(tmp_path, fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", "0" * 40))
    assert "0" * 40 in str(err) and COMMIT in str(err)


def test_truncated_wheel(tmp_path: Path) -> None:
    good = fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT)
    data = good.read_bytes()
    good.write_bytes(data[: len(data) // 2])
    err = attempt(tmp_path, good)
    assert "truncated" in str(err) and err.path == str(good)


def test_corrupt_member_data(tmp_path: Path) -> None:
    good = fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT, extra={"torch/big.py": "x = 1\n" * 2000})
    with zipfile.ZipFile(good) as zf:
        info = zf.getinfo("torch/big.py")
    data = bytearray(good.read_bytes())
    start = info.header_offset + 30 + len(info.filename)
    data[start + info.compress_size // 2] ^= 0xFF
    good.write_bytes(bytes(data))
    err = attempt(tmp_path, good)
    assert "torch/big.py" in str(err)


def test_record_hash_mismatch(tmp_path: Path) -> None:
    good = fake_torch_wheel(tmp_path / "src", "2.13.0+cpu", COMMIT)
    bad = tmp_path / "up" / good.name
    bad.parent.mkdir()
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "torch/utils/helpers.py":
                data += b"# tampered\n"
            zout.writestr(info, data)
    err = attempt(tmp_path, bad)
    assert "torch/utils/helpers.py" in str(err) and "RECORD" in str(err)


def test_member_missing_from_record(tmp_path: Path) -> None:
    good = fake_torch_wheel(tmp_path / "src", "2.13.0+cpu", COMMIT)
    bad = tmp_path / "up" / good.name
    bad.parent.mkdir()
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info, zin.read(info))
        zout.writestr("torch/sneaked_in.py", "x = 1\n")
    err = attempt(tmp_path, bad)
    assert "torch/sneaked_in.py" in str(err) and "not listed in RECORD" in str(err)


def test_backend_without_autoload_entry_point(tmp_path: Path) -> None:
    backend = write_wheel(tmp_path / "be", "torch_mlu", "0.1.0", {"torch_mlu/__init__.py": ""})
    err = attempt(tmp_path, fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT), backend)
    assert "torch.backends" in str(err)


def test_backend_with_file_outside_its_package(tmp_path: Path) -> None:
    backend = write_wheel(tmp_path / "be", "torch_mlu", "0.1.0",
                          {"torch_mlu/__init__.py": "", "torch/hijack.py": ""},
                          entry_points="[torch.backends]\nmlu = torch_mlu:_autoload\n")
    err = attempt(tmp_path, fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT), backend)
    assert "torch/hijack.py" in str(err)


def test_backend_requiring_another_torch(tmp_path: Path) -> None:
    backend = write_wheel(tmp_path / "be", "torch_mlu", "0.1.0", {"torch_mlu/__init__.py": ""},
                          requires=("torch>2.13.0",), entry_points="[torch.backends]\nmlu = torch_mlu:_autoload\n")
    err = attempt(tmp_path, fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT), backend)
    assert "torch>2.13.0" in str(err)


def test_backend_for_another_python(tmp_path: Path) -> None:
    backend = fake_backend_wheel(tmp_path / "be", tag="cp312-cp312-linux_x86_64")
    err = attempt(tmp_path, fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT), backend)
    assert "cp312" in str(err)


NATIVE_PATCH = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Catch <catch@example.com>
Date: Thu, 1 Jan 2026 00:00:00 +0000
Subject: [PATCH] Tweak a native kernel

Upstream-Status: Inappropriate [test]
Catch-Test: tests/backend/test_x.py::test_x
---
 aten/src/ATen/native/Foo.cpp | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/aten/src/ATen/native/Foo.cpp b/aten/src/ATen/native/Foo.cpp
index 1111111..2222222 100644
--- a/aten/src/ATen/native/Foo.cpp
+++ b/aten/src/ATen/native/Foo.cpp
@@ -1,3 +1,3 @@
 int a;
-int b;
+int c;
 int d;
--
2.39.0
"""


def test_native_patch_in_overlay_mode(tmp_path: Path) -> None:
    patches = series(tmp_path / "patches", {"0001-Tweak-a-native-kernel.patch": NATIVE_PATCH})
    err = attempt(tmp_path, fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT), patches=patches)
    assert "aten/src/ATen/native/Foo.cpp" in str(err) and "source build" in str(err)


def test_cli_error_is_one_line_without_traceback(tmp_path: Path) -> None:
    upstream = fake_torch_wheel(tmp_path / "up", "2.12.0+cpu", COMMIT)
    backend = fake_backend_wheel(tmp_path / "be")
    out = tmp_path / "dist"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "build_wheel.py"), "--upstream-wheel",
                           str(upstream), "--catch-wheel", str(backend), "--out", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() or list(out.iterdir()) == []


def test_missing_upstream_wheel_path(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "build_wheel.py"), "--upstream-wheel",
                           str(tmp_path / "nope.whl"), "--catch-wheel", str(tmp_path / "nope2.whl"),
                           "--out", str(tmp_path / "dist")], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "nope.whl" in proc.stderr and "Traceback" not in proc.stderr


def test_partial_of_a_killed_build_is_removed_by_the_next(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    out.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    stale = out / f".catch-build-{dead}-k3j2h1x9" / "torch-2.13.0+cpu.catch1-cp311-cp311-manylinux_2_28_x86_64.whl"
    stale = stale.with_name(stale.name + ".partial")
    stale.parent.mkdir()
    stale.write_bytes(b"half a wheel")
    result = build_overlay(upstream_wheel=fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT),
                           backend_wheel=fake_backend_wheel(tmp_path / "be"), patches_dir=series(tmp_path / "p"),
                           pin=PIN, out_dir=out)
    assert sorted(out.iterdir()) == [result.wheel]
