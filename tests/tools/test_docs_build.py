# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The docs build offline with Sphinx, warnings as errors, and the generated parts are really there: the API guide
holds the docstrings of ``torch.mlu`` (autodoc ran; a MyST page that only echoed the directives would still
"build"), and the version matrix page holds the pin of ``patches/manifest.toml``."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs env (tox -e docs) installs sphinx and myst-parser")
pytest.importorskip("myst_parser", reason="the docs env (tox -e docs) installs sphinx and myst-parser")

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("html")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-b", "html",
                           "-d", str(out / ".doctrees"), str(REPO / "docs"), str(out)],
                          capture_output=True, text=True, check=False, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, proc.stdout + proc.stderr


def test_build_has_no_warnings(built: tuple[Path, str]) -> None:
    _, log = built
    assert "WARNING" not in log and "ERROR" not in log, log[-3000:]


def test_api_guide_holds_the_docstrings(built: tuple[Path, str]) -> None:
    html = (built[0] / "api.html").read_text()
    import torch_mlu.mlu as mlu  # the docstrings the page must show

    for name in ("fallback_report", "set_fallback_strict", "memory_allocated", "manual_seed", "Stream"):
        assert re.search(rf'id="torch_mlu\.mlu\.(\w+\.)?{name}"', html), name
    words = re.sub(r"``|:\w+:`[^`]*`", " ", mlu.set_fallback_strict.__doc__ or "").split()
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert len(words) > 3 and " ".join(words[:2]) in text and words[-1] in text
    assert ".. automodule::" not in html and ".. py:" not in html


def test_version_matrix_is_generated_from_the_manifest(built: tuple[Path, str]) -> None:
    html = (built[0] / "versions.html").read_text()
    up = tomllib.loads((REPO / "patches" / "manifest.toml").read_text())["upstream"]
    assert "catch-version-matrix" not in html
    assert f"<code class=\"docutils literal notranslate\"><span class=\"pre\">{up['tag']}</span></code>" in html
    assert up["commit"][:12] in html


def test_every_page_is_reachable(built: tuple[Path, str]) -> None:
    pages = {p.stem for p in (REPO / "docs").glob("*.md")}
    index = (built[0] / "index.html").read_text()
    assert {stem for stem in pages if f'href="{stem}.html"' in index} == pages - {"index"}
