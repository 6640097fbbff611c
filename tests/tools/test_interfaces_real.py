# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The native interface check on the real upstream torch 2.13.0 wheel and a combined wheel built from it.

The combined wheel carries the pure-Python stand-in backend (the real one is built by the backend env), so this runs
without the native Catch compile. Layer 2 needs the real torch: each wheel is probed in its own interpreter.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fake_wheels import write_wheel
from wheel_edit import edit_wheel

from catch_tools.interfaces import _probe
from catch_tools.interfaces.check import run_check
from catch_tools.interfaces.report import INCOMPATIBLE, REVIEW, Report
from catch_tools.interfaces.schemas import in_namespace
from catch_tools.pin import load_pin
from catch_tools.upstream import release_wheel
from catch_tools.wheel.overlay import build_overlay

HAVE_TORCH = importlib.util.find_spec("torch") is not None
REPO = Path(__file__).resolve().parents[2]

BACKEND_INIT = '''"""Stand-in backend that registers operators at import, like the real one's TORCH_LIBRARY blocks."""
import torch

_mlu = torch.library.Library("mlu", "DEF")
_mlu.define("catch_probe(Tensor x) -> Tensor")
{extra}


def _autoload() -> None:
    """torch.backends entry point."""
'''


def backend(out: Path, extra: str = "") -> Path:
    return write_wheel(out, "torch_mlu", "0.1.0", {"torch_mlu/__init__.py": BACKEND_INIT.format(extra=extra)},
                       requires=("torch==2.13.0",), entry_points="[torch.backends]\nmlu = torch_mlu:_autoload\n")


@pytest.fixture(scope="module")
def real_wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(real upstream wheel, combined wheel with the registering stand-in backend, work dir)."""
    tmp = tmp_path_factory.mktemp("real-ifcheck")
    pin = load_pin()
    upstream = release_wheel(pin.wheel_version)
    (tmp / "patches").mkdir()
    (tmp / "patches" / "series").write_text("")
    result = build_overlay(upstream_wheel=upstream, backend_wheel=backend(tmp / "be"), patches_dir=tmp / "patches",
                           pin=pin, out_dir=tmp / "dist")
    return upstream, result.wheel, tmp


def codes(report: Report, layer: int) -> list[str]:
    return [f.code for res in report.layers if res.layer == layer for f in res.findings]


def test_bc_rule_on_schema_strings() -> None:
    torch = pytest.importorskip("torch")
    parse = torch._C.parse_schema
    old = ["aten::foo(Tensor self, int dim) -> Tensor", "aten::bar(Tensor self) -> Tensor"]
    assert _probe.bc_failures(old, ["aten::foo(Tensor self, int dim, bool keep=False) -> Tensor",
                                    "aten::bar(Tensor self) -> Tensor"], parse) == []
    assert _probe.bc_failures(old, ["aten::foo(Tensor self, int dim, bool keep) -> Tensor",
                                    "aten::bar(Tensor self) -> Tensor"], parse) == [old[0]]
    assert _probe.bc_failures(old, ["aten::foo(Tensor self, int dim) -> Tensor"], parse) == [old[1]]
    assert _probe.bc_failures(old, ["aten::foo(Tensor self, float dim) -> Tensor", old[1]], parse) == [old[0]]


def test_backend_namespace_rule() -> None:
    assert in_namespace("mlu::catch_probe(Tensor x) -> Tensor", ("torch_mlu", "mlu"))
    assert in_namespace("torch_mlu::op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", ("torch_mlu", "mlu"))
    assert not in_namespace("aten::mlu_op(Tensor x) -> Tensor", ("torch_mlu", "mlu"))
    assert not in_namespace("mlux::op(Tensor x) -> Tensor", ("torch_mlu", "mlu"))
    assert in_namespace("f(__torch__.torch.classes.mlu.Queue _0) -> NoneType _0", ("mlu",))


@pytest.mark.real
@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TORCH, reason="torch's dependencies are needed to import the unpacked wheels")
def test_upstream_vs_combined_passes_all_layers(real_wheels: tuple[Path, Path, Path]) -> None:
    report = run_check(real_wheels[0], real_wheels[1])
    assert report.exit_code == 0, report.to_json()
    assert [layer.layer for layer in report.layers] == [0, 1, 2, 3]
    notes = " ".join(report.layers[2].notes)
    assert "backend import adds 1 schema(s)" in notes  # mlu::catch_probe, in the backend's namespace


@pytest.mark.real
@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TORCH, reason="torch's dependencies are needed to import the unpacked wheels")
def test_changed_operator_schema_fails_layer_2(real_wheels: tuple[Path, Path, Path]) -> None:
    prims = "torch/_prims/__init__.py"
    with zipfile.ZipFile(real_wheels[1]) as zf:
        text = zf.read(prims).decode()
    old = 'schema="fill(Tensor self, Scalar value) -> Tensor"'
    assert old in text
    new = text.replace(old, 'schema="fill(Tensor self, Scalar value, int extra) -> Tensor"')
    dst = real_wheels[2] / "schema" / real_wheels[1].name
    dst.parent.mkdir()
    edit_wheel(real_wheels[1], dst, {prims: new.encode()})
    report = run_check(real_wheels[0], dst, (2,))
    assert report.exit_code == INCOMPATIBLE | REVIEW, report.to_json()
    found = codes(report, 2)
    assert "schema-changed-without-backend" in found and "schema-not-backward-compatible" in found
    messages = " ".join(f.message for f in report.layers[0].findings)
    assert "prims::fill(Tensor self, Scalar value) -> Tensor" in messages


@pytest.mark.real
@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TORCH, reason="torch's dependencies are needed to import the unpacked wheels")
def test_backend_op_outside_its_namespace_needs_review(real_wheels: tuple[Path, Path, Path]) -> None:
    stray = '_bad = torch.library.Library("catchstray", "DEF")\n_bad.define("op(Tensor x) -> Tensor")\n'
    with zipfile.ZipFile(backend(real_wheels[2] / "stray-be", stray)) as zf:
        init = zf.read("torch_mlu/__init__.py")
    dst = real_wheels[2] / "stray" / real_wheels[1].name
    dst.parent.mkdir()
    edit_wheel(real_wheels[1], dst, {"torch_mlu/__init__.py": init})
    report = run_check(real_wheels[0], dst, (2,))
    assert report.exit_code == REVIEW, report.to_json()
    assert [(f.code, f.message.split(": ", 1)[1]) for f in report.layers[0].findings] == [
        ("schema-added-outside-backend", "catchstray::op(Tensor x) -> Tensor")]


@pytest.mark.real
@pytest.mark.slow
def test_cli_defaults_to_the_pinned_upstream_wheel(real_wheels: tuple[Path, Path, Path]) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"), str(real_wheels[1]),
                           "--layers", "0", "--json"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert Path(data["upstream"]).name == real_wheels[0].name
    assert data["layers"][0]["notes"][-1] == "1 file(s) added"
