# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``scripts/torch_gpu2mlu.py`` given careless and hostile arguments and environments: it names the line of a
source that does not decode, runs without the backend built (or torch installed), and says in one line when libcst
is missing.

Every case runs the script in a fresh interpreter, as a user does; a refused run must print one line, exit 2 and leave
the whole temporary directory as it was (a digest of every file, link and directory, taken before and after). The
cases that convert need libcst (the ``migration`` extra); the refusals are checked before libcst is needed.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "torch_gpu2mlu.py"
CUDA_SOURCE = "import torch\nx = torch.ones(1).cuda()\n"
#: Makes torch, torch_mlu (and with NO_LIBCST libcst) unimportable, then runs the script: the backend not installed.
NOT_INSTALLED = ("import runpy, sys; sys.modules['torch'] = None; sys.modules['torch_mlu'] = None; {extra}"
                 "sys.argv = [{script!r}] + sys.argv[1:]; runpy.run_path({script!r}, run_name='__main__')")
NO_LIBCST = "sys.modules['libcst'] = None; "


def gpu2mlu(*args: str | Path, cwd: Path, code: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the script (or ``python -c code`` with the same arguments) in ``cwd``. The timeout only ends a run that
    blocks (a FIFO read); no assertion depends on how long a run takes."""
    command = [sys.executable, str(SCRIPT)] if code is None else [sys.executable, "-c", code]
    return subprocess.run([*command, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120,
                          check=False)


def digest(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (symlinks not followed): a file's sha256, a link's target, a directory, a FIFO."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                out[rel] = "link " + os.readlink(path)
            elif stat.S_ISREG(mode):
                out[rel] = "file " + hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[rel] = "dir" if stat.S_ISDIR(mode) else oct(stat.S_IFMT(mode))
    return out


def assert_refused(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2 with one line ``error: ...`` holding every needle, no traceback, nothing on stdout."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``tmp_path/src`` with CUDA code (``train.py``), a plain module in ``pkg/`` and a non-Python file."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "train.py").write_text(CUDA_SOURCE)
    (src / "pkg" / "util.py").write_text("print('no accelerator here')\n")
    (src / "README.md").write_text("notes\n")
    return src


# -- sources that do not decode: the line, not a byte offset -----------------------------------------------------

def test_undecodable_source_names_its_line(project: Path) -> None:
    pytest.importorskip("libcst")
    tmp = project.parent
    (project / "cuda_latin.py").write_bytes(b"import torch\n\nname = '\xff'\ntorch.cuda.synchronize()\n")
    (project / "plain_latin.py").write_bytes(b"x = 1\ny = 2\n\nz = '\xe9t\xe9'\n")
    (project / "ascii_cookie.py").write_bytes(b"# coding: ascii\nimport torch\nx = '\xc3\xa9'\ntorch.cuda.init()\n")
    (project / "bom.py").write_bytes(b"\xef\xbb\xbfimport torch\ntorch.cuda.init()\ns = '\xfe'\n")
    before = digest(project)
    proc = gpu2mlu("-i", "src", "-o", "out", cwd=tmp)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [
        "error: ascii_cookie.py:3: skipped-malformed: cannot decode as ascii: byte 0xc3 (ordinal not in range(128))",
        "error: bom.py:3: skipped-malformed: cannot decode as utf-8: byte 0xfe (invalid start byte)",
        "error: cuda_latin.py:3: skipped-malformed: cannot decode as utf-8: byte 0xff (invalid start byte)",
        "error: plain_latin.py:4: skipped-malformed: cannot decode as utf-8: byte 0xe9 (invalid continuation byte)",
    ]
    log = (tmp / "out_report" / "torch_gpu2mlu.log").read_text()
    assert "WARNING cuda_latin.py:3: skipped-malformed: cannot decode as utf-8: byte 0xff" in log
    assert digest(project) == before
    assert (tmp / "out" / "cuda_latin.py").read_bytes() == (project / "cuda_latin.py").read_bytes()  # copied as is


# -- without the backend -----------------------------------------------------------------------------------------

def test_help_without_torch_or_the_backend(tmp_path: Path) -> None:
    proc = gpu2mlu("--help", cwd=tmp_path, code=NOT_INSTALLED.format(extra=NO_LIBCST, script=str(SCRIPT)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: torch_gpu2mlu") and "--inplace" in proc.stdout and proc.stderr == ""


def test_run_without_libcst_is_one_line(project: Path) -> None:
    tmp = project.parent
    before = digest(tmp)
    proc = gpu2mlu("-i", "src", cwd=tmp, code=NOT_INSTALLED.format(extra=NO_LIBCST, script=str(SCRIPT)))
    assert_refused(proc, "torch_gpu2mlu needs libcst: pip install")
    assert digest(tmp) == before


def test_run_without_torch_or_the_backend(project: Path) -> None:
    """The converter is pure Python: with libcst, a run needs neither torch nor a built torch_mlu."""
    pytest.importorskip("libcst")
    tmp = project.parent
    proc = gpu2mlu("-i", "src", cwd=tmp, code=NOT_INSTALLED.format(extra="", script=str(SCRIPT)))
    assert proc.returncode == 0, proc.stderr
    assert (tmp / "src_mlu" / "train.py").read_text().endswith("x = torch.ones(1).mlu()\n")
    assert (tmp / "src_mlu_report" / "change_list.csv").is_file()
