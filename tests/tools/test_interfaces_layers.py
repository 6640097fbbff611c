# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Native interface check on small synthetic wheels: each deliberately broken combined wheel fails in the right layer
with the right exit bits (layers 0, 1 and 3; layer 1's runtime facts come from the stand-in ``torch._C``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel, write_wheel
from wheel_edit import edit_wheel

from catch_tools.interfaces.check import run_check
from catch_tools.interfaces.report import ERROR, INCOMPATIBLE, REVIEW, Report
from catch_tools.pin import Pin
from catch_tools.wheel.overlay import build_overlay
from catch_tools.wheel.unpack import MANIFEST

COMMIT = "cf30153c4c131c8164ee7798e5022d810682e2cb"
PIN = Pin("https://github.com/pytorch/pytorch.git", "v2.13.0", COMMIT, "2.13.0+cpu", 1)
REPO = Path(__file__).resolve().parents[2]
LIB = "torch/lib/libfake.so"
DI = "torch-2.13.0+cpu.catch1.dist-info"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed to build test shared objects")

SOURCE = """
#include <string.h>
#include <stdlib.h>
{extra_include}
int fake_add(int a, int b) {{ return a + b + (int)strlen(""); }}
{mul}
{extra}
"""


def compile_so(out: Path, *, mul: bool = True, getrandom: bool = False, libm: bool = False) -> bytes:
    """A shared object exporting fake_add@FAKE_1.0 (and fake_mul@FAKE_1.0), built with gcc and a version script."""
    out.mkdir(parents=True, exist_ok=True)
    src = out / "fake.c"
    src.write_text(SOURCE.format(
        mul="int fake_mul(int a, int b) { return a * b; }" if mul else "",
        extra_include="#include <sys/random.h>" if getrandom else "",
        extra="int fake_rand(void) { int x = 0; getrandom(&x, sizeof x, 0); return x; }" if getrandom else ""))
    exports = ["fake_add"] + (["fake_mul"] if mul else []) + (["fake_rand"] if getrandom else [])
    vmap = out / "fake.map"
    vmap.write_text("FAKE_1.0 { global: " + " ".join(f"{e};" for e in exports) + " local: *; };\n")
    lib = out / "libfake.so"
    cmd = ["gcc", "-shared", "-fPIC", "-O1", "-Wl,-soname,libfake.so", f"-Wl,--version-script={vmap}",
           "-o", str(lib), str(src)] + (["-Wl,--no-as-needed", "-lm"] if libm else [])
    subprocess.run(cmd, check=True, capture_output=True)
    return lib.read_bytes()


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path]]:
    """(upstream, good combined, work dir) built once for the module; the check's cache in the work dir."""
    tmp = tmp_path_factory.mktemp("ifcheck")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CATCH_CACHE", str(tmp / "cache"))
        yield _build_wheels(tmp)


def _build_wheels(tmp: Path) -> tuple[Path, Path, Path]:
    good_so = compile_so(tmp / "so-good")
    upstream = fake_torch_wheel(tmp / "up", PIN.wheel_version, COMMIT, extra={LIB: good_so})
    (tmp / "patches").mkdir()
    (tmp / "patches" / "series").write_text("")
    result = build_overlay(upstream_wheel=upstream, backend_wheel=fake_backend_wheel(tmp / "be"),
                           patches_dir=tmp / "patches", pin=PIN, out_dir=tmp / "dist")
    return upstream, result.wheel, tmp


def broken(wheels: tuple[Path, Path, Path], name: str, changes: dict[str, bytes | None]) -> Path:
    _up, good, tmp = wheels
    dst = tmp / name / good.name
    dst.parent.mkdir(parents=True, exist_ok=True)
    return edit_wheel(good, dst, changes)


def check(wheels: tuple[Path, Path, Path], combined: Path, layers: tuple[int, ...] = (0, 1, 3)) -> Report:
    return run_check(wheels[0], combined, layers)


def bits_by_layer(report: Report) -> dict[int, int]:
    return {layer.layer: layer.bits for layer in report.layers}


def codes(report: Report, layer: int) -> set[str]:
    return {f.code for res in report.layers if res.layer == layer for f in res.findings}


def read(wheel: Path, name: str) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(name)


def test_good_combined_wheel_passes(wheels: tuple[Path, Path, Path]) -> None:
    report = check(wheels, wheels[1])
    assert report.exit_code == 0, report.to_json()
    assert [layer.layer for layer in report.layers] == [0, 1, 3]


def test_removed_exported_symbol_fails_layer_1(wheels: tuple[Path, Path, Path]) -> None:
    combined = broken(wheels, "nosym", {LIB: compile_so(wheels[2] / "so-nomul", mul=False)})
    report = check(wheels, combined)
    assert bits_by_layer(report) == {0: 0, 1: INCOMPATIBLE, 3: 0}
    finding = next(f for f in report.layers[1].findings if f.code == "elf-symbol-removed")
    assert "fake_mul@FAKE_1.0" in finding.message and finding.path == LIB
    assert report.exit_code == INCOMPATIBLE


def test_raised_glibc_requirement_and_new_needed_fail_layer_1(wheels: tuple[Path, Path, Path]) -> None:
    combined = broken(wheels, "glibc", {LIB: compile_so(wheels[2] / "so-rand", getrandom=True, libm=True)})
    report = check(wheels, combined)
    assert codes(report, 1) >= {"elf-version-rise", "elf-needed-changed"}
    assert "elf-symbol-removed" not in codes(report, 1)
    assert report.exit_code == INCOMPATIBLE


def test_cxx11_abi_flag_change_fails_layer_1(wheels: tuple[Path, Path, Path]) -> None:
    combined = broken(wheels, "abi", {"torch/_C.py": b"_GLIBCXX_USE_CXX11_ABI = False\n"})
    report = check(wheels, combined, (1,))
    assert codes(report, 1) == {"cxx11-abi-changed", "pybind11-abi-changed"}
    assert report.exit_code == INCOMPATIBLE


def test_edited_header_fails_layer_0(wheels: tuple[Path, Path, Path]) -> None:
    header = "torch/include/ATen/Fake.h"
    combined = broken(wheels, "header", {header: read(wheels[1], header) + b"int extra;\n"})
    report = check(wheels, combined)
    assert bits_by_layer(report) == {0: INCOMPATIBLE, 1: 0, 3: 0}
    assert [(f.code, f.path) for f in report.layers[0].findings] == [("frozen-file-changed", header)]


def test_file_added_outside_backend_needs_review_in_layer_0(wheels: tuple[Path, Path, Path]) -> None:
    combined = broken(wheels, "added", {"torch/share/notes.txt": b"hello\n"})
    report = check(wheels, combined)
    assert bits_by_layer(report) == {0: REVIEW, 1: 0, 3: 0}
    assert [(f.code, f.path) for f in report.layers[0].findings] == [
        ("file-added-outside-backend", "torch/share/notes.txt")]


def test_removed_upstream_file_and_changed_requirements_fail_layer_0(wheels: tuple[Path, Path, Path]) -> None:
    meta = read(wheels[1], f"{DI}/METADATA").replace(b"Requires-Dist: filelock\n", b"")
    combined = broken(wheels, "removed", {"torch/share/cmake/Torch/TorchConfig.cmake": None, f"{DI}/METADATA": meta})
    report = check(wheels, combined, (0,))
    assert codes(report, 0) == {"file-removed", "metadata-changed"}
    assert report.exit_code == INCOMPATIBLE


def test_backend_extra_is_offered_and_not_a_metadata_change(wheels: tuple[Path, Path, Path]) -> None:
    upstream, _good, tmp = wheels
    backend = write_wheel(tmp / "be-extra", "torch_mlu", "0.1.0",
                          {"torch_mlu/__init__.py": "def _autoload() -> None:\n    pass\n"},
                          requires=("torch==2.13.0", 'libcst>=1.0.1; extra == "migration"'),
                          entry_points="[torch.backends]\nmlu = torch_mlu:_autoload\n")
    combined = build_overlay(upstream_wheel=upstream, backend_wheel=backend, patches_dir=tmp / "patches", pin=PIN,
                             out_dir=tmp / "dist-extra").wheel
    meta = read(combined, f"{DI}/METADATA").decode()
    assert "Provides-Extra: migration\n" in meta and 'Requires-Dist: libcst>=1.0.1; extra == "migration"\n' in meta
    report = check(wheels, combined, layers=(0,))
    assert report.exit_code == 0, report.to_json()
    # an unconditional requirement still changes what `pip install torch` resolves: incompatible
    worse = broken(wheels, "extra-unconditional", {f"{DI}/METADATA": meta.replace(
        'libcst>=1.0.1; extra == "migration"', "libcst>=1.0.1").encode()})
    assert "metadata-changed" in codes(check(wheels, worse, layers=(0,)), 0)


def test_tampered_record_fails_layer_0(wheels: tuple[Path, Path, Path]) -> None:
    good = wheels[1]
    bad = wheels[2] / "tampered" / good.name
    bad.parent.mkdir()
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            zout.writestr(info, data + b"# x\n" if info.filename == "torch_mlu/__init__.py" else data)
    report = check(wheels, bad, (0,))
    assert [(f.code, f.path) for f in report.layers[0].findings] == [("record-mismatch", "torch_mlu/__init__.py")]


def test_removed_public_function_fails_layer_3(wheels: tuple[Path, Path, Path]) -> None:
    helpers = "torch/utils/helpers.py"
    text = read(wheels[1], helpers).decode()
    combined = broken(wheels, "nofunc", {helpers: text.split("def shift")[0].encode()})
    report = check(wheels, combined)
    assert bits_by_layer(report) == {0: 0, 1: 0, 3: INCOMPATIBLE}
    finding = report.layers[2].findings[0]
    assert finding.code == "api-breaking-change" and "torch.utils.helpers.shift" in finding.message


def test_new_required_parameter_fails_layer_3(wheels: tuple[Path, Path, Path]) -> None:
    combined = broken(wheels, "param", {"torch/__init__.py": read(wheels[1], "torch/__init__.py").replace(
        b"def add(a, b, *, alpha=1):", b"def add(a, b, c, *, alpha=1):")})
    report = check(wheels, combined, (3,))
    assert report.exit_code == INCOMPATIBLE
    assert "torch.add" in report.layers[0].findings[0].message


def test_additions_reviewed_outside_backend_only(wheels: tuple[Path, Path, Path]) -> None:
    helpers = "torch/utils/helpers.py"
    version = read(wheels[1], "torch/version.py") + b"mlu_runtime = 'emulated'\n"
    combined = broken(wheels, "additions", {helpers: read(wheels[1], helpers) + b"\n\ndef triple(x):\n    return x\n",
                                            "torch/version.py": version})
    report = check(wheels, combined, (3,))
    assert [(f.bit, f.code) for f in report.layers[0].findings] == [(REVIEW, "api-added-outside-backend")]
    assert "torch.utils.helpers.triple" in report.layers[0].findings[0].message


def test_layer_2_on_a_torch_without_dispatcher_is_an_error(wheels: tuple[Path, Path, Path]) -> None:
    report = check(wheels, wheels[1], (2,))
    assert report.exit_code == ERROR
    assert "not a real torch build" in report.layers[0].findings[0].message


def test_cli_json_and_exit_code(wheels: tuple[Path, Path, Path]) -> None:
    lib = compile_so(wheels[2] / "so-cli", mul=False)
    combined = broken(wheels, "cli", {"torch/share/notes.txt": b"x\n", LIB: lib})
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"), str(wheels[0]),
                           str(combined), "--json", "--layers", "0,1"], capture_output=True, text=True, check=False)
    assert proc.returncode == REVIEW | INCOMPATIBLE, proc.stderr
    data = json.loads(proc.stdout)
    assert data["exit_code"] == 12
    assert {(f["layer"], f["kind"], f["code"]) for layer in data["layers"] for f in layer["findings"]} == {
        (0, "review", "file-added-outside-backend"), (1, "incompatible", "elf-symbol-removed")}
    human = subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"), str(wheels[0]),
                            str(combined), "--layers", "0,1"], capture_output=True, text=True, check=False)
    assert human.returncode == 12 and "elf-symbol-removed" in human.stdout and "exit status 12" in human.stdout


def test_cli_unreadable_wheel_exits_1(wheels: tuple[Path, Path, Path], tmp_path: Path) -> None:
    junk = tmp_path / "torch-2.13.0+cpu.catch1-cp311-cp311-manylinux_2_28_x86_64.whl"
    junk.write_bytes(b"not a zip")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"), str(wheels[0]),
                           str(junk)], capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    bad_layers = subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"),
                                 str(wheels[0]), str(wheels[1]), "--layers", "5"], capture_output=True, text=True,
                                check=False)
    assert bad_layers.returncode == 2 and "layers" in bad_layers.stderr


def test_backend_object_needing_newer_glibc_than_the_tag_needs_review(wheels: tuple[Path, Path, Path]) -> None:
    tmp = wheels[2] / "be-native"
    tmp.mkdir()
    src = tmp / "c.c"
    src.write_text("#include <pthread.h>\nstatic void *run(void *a) { return a; }\n"
                   "int start(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }\n")
    so = tmp / "_C.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(so), str(src), "-lpthread"], check=True, capture_output=True)
    if shutil.which("objdump") is None:
        pytest.skip("objdump (binutils) needed to see which glibc version the test object needs")
    needs = subprocess.run(["objdump", "-T", str(so)], capture_output=True, text=True, check=False).stdout
    if "GLIBC_2.34" not in needs:
        pytest.skip("this machine's glibc predates 2.34: pthread_create is not versioned above manylinux_2_28")
    combined = broken(wheels, "be-glibc", {"torch_mlu/_C.so": so.read_bytes()})
    report = check(wheels, combined, (1,))
    assert [(f.bit, f.code, f.path) for f in report.layers[0].findings] == [
        (REVIEW, "backend-glibc-above-tag", "torch_mlu/_C.so")]
    assert "GLIBC_2.34" in report.layers[0].findings[0].message


def test_reviewed_changes_file_accepts_review_findings_only(wheels: tuple[Path, Path, Path], tmp_path: Path) -> None:
    lib = compile_so(wheels[2] / "so-accept", mul=False)
    combined = broken(wheels, "accept", {"torch/share/notes.txt": b"x\n", LIB: lib})
    accept = tmp_path / "reviewed.toml"
    accept.write_text(
        '[[accept]]\ncode = "file-added-outside-backend"\npath = "torch/share/notes.txt"\n'
        'reason = "release notes for packagers"\n\n'
        '[[accept]]\ncode = "elf-symbol-removed"\nreason = "incompatible changes cannot be accepted"\n\n'
        '[[accept]]\ncode = "api-added-outside-backend"\nmatch = "nothing_like_this"\nreason = "stale"\n')
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"), str(wheels[0]),
                           str(combined), "--json", "--layers", "0,1", "--accept", str(accept)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == INCOMPATIBLE, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    findings = [(f["layer"], f["code"]) for layer in data["layers"] for f in layer["findings"]]
    assert findings == [(1, "elf-symbol-removed")]
    notes = " ".join(note for layer in data["layers"] for note in layer["notes"])
    assert "accepted file-added-outside-backend" in notes and "release notes for packagers" in notes
    assert "reviewed-change entry not used: api-added-outside-backend" in notes
    accept.write_text('[[accept]]\ncode = "x"\n')
    bad = subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"), str(wheels[0]),
                          str(combined), "--accept", str(accept)], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "reason" in bad.stderr and "Traceback" not in bad.stderr


def test_cached_upstream_tree_gives_the_same_report(wheels: tuple[Path, Path, Path], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATCH_CACHE", str(tmp_path / "cache"))
    combined = broken(wheels, "cached", {LIB: compile_so(wheels[2] / "so-cached", mul=False)})
    uncached = run_check(wheels[0], combined, (0, 1, 3), cache=False)
    assert not (tmp_path / "cache" / "unpacked").exists()
    first = run_check(wheels[0], combined, (0, 1, 3))
    trees = list((tmp_path / "cache" / "unpacked").iterdir())
    assert len(trees) == 1 and (trees[0] / MANIFEST).is_file() and (trees[0] / LIB).is_file()
    assert len(list((tmp_path / "cache" / "probes").glob("*.json"))) == 1
    second = run_check(wheels[0], combined, (0, 1, 3))
    summary = [[(f.layer, f.bit, f.code, f.path) for layer in r.layers for f in layer.findings]
               for r in (uncached, first, second)]
    assert summary[0] == summary[1] == summary[2] == [(1, INCOMPATIBLE, "elf-symbol-removed", LIB)]


def test_removed_console_script_fails_layer_0(wheels: tuple[Path, Path, Path]) -> None:
    eps = read(wheels[1], f"{DI}/entry_points.txt").replace(b"torchrun = torch.distributed.run:main\n", b"")
    combined = broken(wheels, "eps", {f"{DI}/entry_points.txt": eps})
    report = check(wheels, combined, (0,))
    assert [(f.bit, f.code) for f in report.layers[0].findings] == [(INCOMPATIBLE, "entry-point-removed")]
    assert "torchrun" in report.layers[0].findings[0].message
