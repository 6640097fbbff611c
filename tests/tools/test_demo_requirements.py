# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The demos after a plain ``pip install`` of the wheel, which brings no scikit-learn: each digits demo says in one
line what to install and exits with status 2, no traceback; the demos that do not need scikit-learn run without it.

scikit-learn is made unimportable (whether or not it is installed) by a directory first on ``PYTHONPATH`` holding an
``sklearn`` package whose import raises. The runs use ``--device cpu``: no backend build is needed.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
#: The demos that train on scikit-learn's digits, with the arguments of a short cpu run.
SHORT = ["--device", "cpu", "--steps", "1", "--threads", "1", "--result", "{tmp}/r.json"]
NEED_SKLEARN = {
    "train_digits.py": SHORT,
    "resnet_digits.py": SHORT,
    "quantize_digits.py": SHORT,
    "serve_inference.py": SHORT,
    "train_digits_ddp.py": ["--device", "cpu", "--epochs", "1", "--result", "{tmp}/r.json"],
    "memory_snapshot_digits.py": ["{tmp}/snapshot"],
}
#: The demos whose data ship with Python.
NO_SKLEARN = {"transformer_lm.py": SHORT}
#: torch warns on import when numpy is absent (as after a plain pip install of torch): not the demo's output.
QUIET_TORCH = "ignore:Failed to initialize NumPy"
ABSENT = "raise ModuleNotFoundError(\"No module named 'sklearn'\", name='sklearn')\n"
BROKEN = "raise ImportError('numpy.core.multiarray failed to import')\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_without_sklearn(demo: str, args: list[str], tmp_path: Path, stub: str = ABSENT
                         ) -> subprocess.CompletedProcess[str]:
    (tmp_path / "shadow" / "sklearn").mkdir(parents=True)
    (tmp_path / "shadow" / "sklearn" / "__init__.py").write_text(stub)
    env = dict(os.environ, PYTHONWARNINGS=QUIET_TORCH,
               PYTHONPATH=os.pathsep.join([str(tmp_path / "shadow"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    if demo == "train_digits_ddp.py":  # what torchrun sets for one process
        env.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", LOCAL_WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(_free_port()))
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    return subprocess.run([sys.executable, f"examples/{demo}", *argv], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, check=False, timeout=300)


@pytest.mark.parametrize("demo", sorted(NEED_SKLEARN))
def test_a_digits_demo_without_sklearn_says_what_to_install(demo: str, tmp_path: Path) -> None:
    proc = _run_without_sklearn(demo, NEED_SKLEARN[demo], tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.splitlines() == [
        f"error: examples/{demo} needs scikit-learn for its dataset: pip install scikit-learn"], proc.stderr


def test_a_broken_sklearn_is_named_with_its_import_error(tmp_path: Path) -> None:
    proc = _run_without_sklearn("train_digits.py", NEED_SKLEARN["train_digits.py"], tmp_path, stub=BROKEN)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        "error: examples/train_digits.py needs scikit-learn for its dataset: pip install scikit-learn (importing "
        "sklearn.datasets failed: numpy.core.multiarray failed to import)"]


@pytest.mark.parametrize("demo", sorted(NO_SKLEARN))
def test_the_other_demos_run_without_sklearn(demo: str, tmp_path: Path) -> None:
    proc = _run_without_sklearn(demo, NO_SKLEARN[demo], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r.json").is_file()


def test_every_demo_is_classified_and_only_the_demo_plumbing_imports_sklearn() -> None:
    demos = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    assert demos == set(NEED_SKLEARN) | set(NO_SKLEARN)
    importing = {p.name for p in EXAMPLES.glob("*.py")
                 if re.search(r"^\s*(from|import) sklearn|import_module\(\"sklearn", p.read_text(), re.MULTILINE)}
    assert importing == set(), importing  # examples/_demo.py's load_digits is the one place: require("sklearn...")
    assert 'require("sklearn.datasets", "scikit-learn"' in (EXAMPLES / "_demo.py").read_text()
