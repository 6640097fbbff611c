# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""ci/scripts/spdx_fix.sh on a throwaway git repository: the headers it writes, where, and the final `reuse lint`.

Runs in ``tox -e licenses`` (needs the ``reuse`` command).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
HEADER = ["SPDX-FileCopyrightText: 2026 Catch Developers", "SPDX-License-Identifier: BSD-3-Clause"]

pytestmark = pytest.mark.skipif(shutil.which("reuse") is None, reason="needs the reuse tool (tox -e licenses)")


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "ci" / "scripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "ci" / "scripts" / "spdx_fix.sh", root / "ci" / "scripts")
    shutil.copytree(REPO_ROOT / ".reuse", root / ".reuse")
    # Only the license the scratch files use: REUSE reports a license text no file uses ("unused license").
    (root / "LICENSES").mkdir()
    shutil.copy(REPO_ROOT / "LICENSES" / "BSD-3-Clause.txt", root / "LICENSES")
    files = {
        "docker/Dockerfile": "# syntax=docker/dockerfile:1\n# The image.\nFROM scratch\n",
        "run.sh": "#!/usr/bin/env bash\necho hi\n",
        "src/k.cpp": "#include <cstdio>\nint main() { return 0; }\n",
        "src/m.py": '"""Doc."""\n\nX = 1\n',
        "README.md": "# Title\n",
        "patches/series": "# the series\n0001-a.patch\n",
        "table.dat": "1,2\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "run.sh").chmod(0o755)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _fix(root: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "ci/scripts/spdx_fix.sh", *paths], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull})


def test_headers_in_each_comment_style_and_lint_reports_the_rest(tmp_path: Path) -> None:
    root = _project(tmp_path)
    proc = _fix(root)
    assert proc.returncode == 1  # table.dat has no comment style: left for REUSE.toml, reported by the final lint
    lint = [line for line in proc.stdout.splitlines() if not line.startswith(("Successfully", "Skipped"))]
    assert lint and {line.split(":")[0] for line in lint} == {"table.dat"}
    docker = (root / "docker/Dockerfile").read_text().splitlines()
    assert docker[0] == "# syntax=docker/dockerfile:1"  # BuildKit reads a parser directive on line 1 only
    assert docker[1:3] == [f"# {h}" for h in HEADER] and "FROM scratch" in docker
    shell = (root / "run.sh").read_text().splitlines()
    assert shell[0] == "#!/usr/bin/env bash" and [f"# {h}" for h in HEADER] == shell[2:4]
    assert os.access(root / "run.sh", os.X_OK)
    assert (root / "src/k.cpp").read_text().splitlines()[:2] == [f"// {h}" for h in HEADER]
    assert (root / "src/m.py").read_text().endswith('"""Doc."""\n\nX = 1\n')
    assert (root / "README.md").read_text().splitlines()[:4] == ["<!--", *HEADER, "-->"]
    assert (root / "patches/series").read_text().splitlines()[:2] == [f"# {h}" for h in HEADER]


def test_paths_restrict_the_fix_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _fix(root, "src")
    assert "SPDX" in (root / "src/m.py").read_text() and "SPDX" not in (root / "run.sh").read_text()
    (root / "REUSE.toml").write_text('version = 1\n[[annotations]]\npath = "table.dat"\n'
                                     'SPDX-FileCopyrightText = "2026 Catch Developers"\n'
                                     'SPDX-License-Identifier = "BSD-3-Clause"\n')
    assert _fix(root).returncode == 0
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
    proc = _fix(root)
    assert proc.returncode == 0 and proc.stdout == ""
    assert before == {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
