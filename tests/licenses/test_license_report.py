# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""ci/scripts/license_report.py: the allowlist rule on real license strings, and pip-licenses on a real venv.

Runs in ``tox -e licenses`` (needs pip-licenses and license-expression, as the script does).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("piplicenses")
pytest.importorskip("license_expression")

REPO_ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("license_report", REPO_ROOT / "ci" / "scripts" / "license_report.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["license_report"] = module
    spec.loader.exec_module(module)
    return module


report = _load()


@pytest.mark.parametrize(("text", "source"), [
    ("MIT", "expression"),
    ("Apache-2.0 AND Apache-2.0 WITH LLVM-exception AND BSD-2-Clause AND BSD-3-Clause AND BSL-1.0 AND MIT",
     "expression"),  # torch 2.13.0's License-Expression
    ("Apache-2.0 OR BSD-2-Clause", "expression"),  # packaging
    ("GPL-3.0-only OR MIT", "expression"),  # one allowed alternative is enough
    ("BSD License", "classifier"),
    ("Mozilla Public License 2.0 (MPL 2.0)", "classifier"),  # certifi
    ("Public Domain", "classifier"),  # pyelftools
    ("Apache Software License; BSD License", "classifier"),
    ("BSD-3-Clause", "metadata"),
])
def test_permissive_licenses_pass(text: str, source: str) -> None:
    assert report.license_reason(text, source) == ""


@pytest.mark.parametrize(("text", "source", "named"), [
    ("GPL-3.0-only", "expression", "GPL-3.0-only"),
    ("MIT AND AGPL-3.0-or-later", "expression", "AGPL-3.0-or-later"),
    ("GPL-2.0-only WITH Classpath-exception-2.0", "expression", "GPL-2.0-only"),
    ("Apache-2.0 WITH Classpath-exception-2.0", "expression", "Classpath-exception-2.0"),
    ("GNU General Public License v3 (GPLv3)", "classifier", "GNU General Public License"),
    ("MIT License; GNU Lesser General Public License v3 (LGPLv3)", "classifier", "Lesser"),
    ("Copyright (c) 2020 Someone. All rights reserved.", "metadata", "not an SPDX expression"),
    ("UNKNOWN", "none", "no license"),
])
def test_copyleft_unknown_and_unreadable_licenses_fail(text: str, source: str, named: str) -> None:
    reason = report.license_reason(text, source)
    assert reason and named in reason


def test_declared_license_prefers_the_pep639_expression() -> None:
    info = {"Name": "x", "Version": "1", "License-Expression": "MIT", "License-Classifier": "GNU General Public "
            "License v3 (GPLv3)", "License-Metadata": "GPL"}
    assert report.declared_license(info) == ("MIT", "expression")
    info["License-Expression"] = "UNKNOWN"
    assert report.declared_license(info) == ("GNU General Public License v3 (GPLv3)", "classifier")


def test_exceptions_list_clears_a_reviewed_package(monkeypatch: pytest.MonkeyPatch) -> None:
    records = [{"Name": "Odd_Pkg", "Version": "1.0", "License-Expression": "UNKNOWN", "License-Classifier": "UNKNOWN",
                "License-Metadata": "see LICENSE"}]
    assert report.judge(records)[0].reason
    monkeypatch.setitem(report.EXCEPTIONS, "odd-pkg", "LICENSE file is MIT")
    row = report.judge(records)[0]
    assert row.reason == "" and "LICENSE file is MIT" in row.source


def _wheel(tmp_path: Path, name: str, license_expression: str) -> Path:
    """A real wheel of a one-module distribution declaring ``license_expression`` (setuptools, PEP 639)."""
    src = tmp_path / f"src-{name}"
    (src / name).mkdir(parents=True)
    (src / name / "__init__.py").write_text("")
    (src / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=77"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{name}"
        version = "1.0"
        license = "{license_expression}"
        """))
    out = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q", "-w", str(out),
                    str(src)], check=True)
    return next(out.glob(f"{name}-*.whl"))


def test_a_gpl_package_in_a_real_venv_is_reported(tmp_path: Path) -> None:
    gpl = _wheel(tmp_path, "catch_gpl_probe", "GPL-3.0-only")
    mit = _wheel(tmp_path, "catch_mit_probe", "MIT")
    rows = report.judge(report.install_and_read([str(gpl), str(mit)], tmp_path / "venv"))
    by_name = {r.name: r for r in rows}
    assert set(by_name) == {"catch_gpl_probe", "catch_mit_probe"}  # exactly what was installed, nothing else
    assert "GPL-3.0-only is not allowed" in by_name["catch_gpl_probe"].reason
    assert by_name["catch_mit_probe"].reason == ""


def test_cli_exits_2_on_a_missing_wheel(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "ci" / "scripts" / "license_report.py"), "--only", "wheel",
                           "--wheel", str(tmp_path / "torch-0-none-any.whl")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'torch-0-none-any.whl'}: no such wheel"]
