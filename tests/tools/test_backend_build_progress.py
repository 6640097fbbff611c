# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The backend build shows its compile steps: ninja's ``[n/N]`` lines in pip's verbose output are picked out of
everything else, and without a terminal (a pipe, CI) each is one INFO line, which the quickstart shows (``-v``).

The build itself is replaced by a script replaying a captured sample of ``pip wheel -v catch/`` output: no C++ is
compiled here.
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from catch_tools.errors import UserError
from catch_tools.progress import Reporter
from catch_tools.wheel import sources
from catch_tools.wheel.sources import backend_wheel, ninja_step

#: ``pip wheel --no-build-isolation --no-deps -v catch/`` as scikit-build-core and ninja print it (shortened).
SAMPLE = """\
Processing ./catch
  Preparing metadata (pyproject.toml): started
  Running command Preparing metadata (pyproject.toml)
  *** scikit-build-core 0.11.1 using CMake 3.31.2 (metadata_wheel)
Building wheels for collected packages: torch_mlu
  Running command Building wheel for torch_mlu (pyproject.toml)
  *** Configuring CMake...
  -- The CXX compiler identification is GNU 12.2.0
  -- Found Torch: /venv/lib/python3.11/site-packages/torch/lib/libtorch.so
  *** Building project with Ninja...
  [1/4] Building CXX object CMakeFiles/_C.dir/csrc/core/device.cpp.o
  [2/4] Building CXX object CMakeFiles/_C.dir/csrc/ops/binary.cpp.o
  /src/catch/csrc/ops/binary.cpp:12:3: warning: unused variable 'x' [-Wunused-variable]
     12 |   int x = 0;
  [3/4] Building CXX object CMakeFiles/_C.dir/csrc/runtime/queue.cpp.o
  [4/4] Linking CXX shared module _C.cpython-311-x86_64-linux-gnu.so
  *** Installing project into wheel...
  -- Installing: /tmp/build/platlib/torch_mlu/_C.cpython-311-x86_64-linux-gnu.so
  Building wheel for torch_mlu (pyproject.toml): finished with status 'done'
Successfully built torch_mlu
"""
STEPS = ["[1/4] csrc/core/device.cpp", "[2/4] csrc/ops/binary.cpp", "[3/4] csrc/runtime/queue.cpp",
         "[4/4] Linking CXX shared module _C.cpython-311-x86_64-linux-gnu.so"]


def test_ninja_steps_are_picked_out_of_the_verbose_output() -> None:
    assert [step for line in SAMPLE.splitlines() if (step := ninja_step(line))] == STEPS


def _fake_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, ok: bool = True) -> Path:
    """``catch/`` whose build replays :data:`SAMPLE` (and writes a wheel when ``ok``, else fails)."""
    catch = tmp_path / "catch"
    catch.mkdir()
    (catch / "pyproject.toml").write_text("")
    (tmp_path / "sample.txt").write_text(SAMPLE if ok else SAMPLE.replace("Successfully built", "error: failed"))
    replay = tmp_path / "replay.py"
    wheel = "torch_mlu-2.13.0-cp311-cp311-linux_x86_64.whl"
    replay.write_text("import pathlib, sys\n"
                      "sys.stdout.write(pathlib.Path(sys.argv[1]).read_text())\n"
                      f"if {ok}:\n"
                      f"    (pathlib.Path(sys.argv[2]) / {wheel!r}).write_bytes(b'')\n"
                      f"sys.exit(0 if {ok} else 1)\n")
    monkeypatch.setattr(sources, "backend_build_command",
                        lambda _catch, out, _build_dir=None: [sys.executable, str(replay), str(tmp_path / "sample.txt"),
                                                              str(out)])
    return catch


def test_without_a_terminal_each_step_is_an_info_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    catch = _fake_build(monkeypatch, tmp_path)
    with caplog.at_level(logging.INFO, logger="catch_tools"):
        built = backend_wheel(None, catch, tmp_path / "out", progress=Reporter())
    assert built.name.startswith("torch_mlu-")
    info = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert info[:-1] == [f"building the Catch backend: {step}" for step in STEPS]
    assert re.fullmatch(r"built torch_mlu-\S+\.whl in \d+ s", info[-1])
    assert (tmp_path / "out" / "build.log").read_text() == SAMPLE


def test_a_failed_build_is_one_line_with_its_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    catch = _fake_build(monkeypatch, tmp_path, ok=False)
    with pytest.raises(UserError) as info:
        backend_wheel(None, catch, tmp_path / "out")
    assert "building the Catch backend failed: error: failed torch_mlu" in str(info.value)
    assert f"(log: {tmp_path / 'out' / 'build.log'})" in str(info.value)


def test_the_quickstart_shows_the_steps() -> None:
    script = (REPO_ROOT / "scripts" / "quickstart.sh").read_text()
    builds = [line for line in script.splitlines() if "scripts/build_wheel.py" in line and not line.startswith("#")]
    assert builds and all(" -v " in line for line in builds), builds
