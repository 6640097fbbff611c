# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The release rehearsal (scripts/release_rehearsal.py) end to end, and its cleanup when a step fails.

The rehearsal publishes with the release scripts to a real index (http.server) and a real registry
(docker-registry) on 127.0.0.1 and consumes as a user (pip from the index, podman pull into a fresh store); its own
checks are judged by pip, the registry's HTTP API and podman. Here: every step passed (the image steps may be
skipped only where podman or docker-registry is missing, and then this test is reported skipped with that reason),
and nothing is left behind: the servers' processes are gone, the temporary directory is deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def rehearse(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, REPO_ROOT / "scripts/release_rehearsal.py", "--json", out, *args],
                          capture_output=True, text=True, check=False, timeout=3600)
    print(proc.stdout)
    print(proc.stderr, file=sys.stderr)
    assert out.is_file(), proc.stderr[-3000:]
    return proc, json.loads(out.read_text())


def assert_nothing_left(report: dict) -> None:
    assert report["pids"], "no server was started"
    for pid in report["pids"]:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not Path(report["work"]).exists()
    cleanup = report["steps"][-1]
    assert cleanup["name"].startswith("cleanup") and cleanup["result"] == "ok", cleanup
    registry = report["urls"].get("registry")
    if registry and shutil.which("podman"):
        store = subprocess.run(["podman", "--storage-driver=vfs", "images", "--format", "{{.Repository}}"],
                               capture_output=True, text=True, check=False).stdout
        assert registry not in store


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_release_rehearsal(tmp_path: Path) -> None:
    proc, report = rehearse(tmp_path)
    steps = {s["name"]: s for s in report["steps"]}
    failed = [f"{s['name']}: {s['detail']}" for s in report["steps"] if s["result"] not in ("ok", "skipped")]
    assert proc.returncode == 0 and not failed, failed
    assert_nothing_left(report)
    assert steps["user: examples/train_digits.py --device mlu"]["result"] == "ok"
    skipped = [s for s in report["steps"] if s["result"] == "skipped"]
    if skipped:
        pytest.skip(f"image steps skipped: {skipped[0]['detail']}")
    digests = report["digests"]
    assert sorted(digests) == ["catch", "catch-dev"]
    for name, seen in digests.items():
        assert seen["pushed"] == seen["registry"] == seen["pulled"], (name, seen)


@pytest.mark.slow
def test_cleanup_when_a_step_fails(tmp_path: Path) -> None:
    proc, report = rehearse(tmp_path, "--fail-at", "index page: #sha256, data-requires-python")
    assert proc.returncode == 1
    results = [(s["name"], s["result"]) for s in report["steps"]]
    assert ("index page: #sha256, data-requires-python", "FAILED") in results
    assert not any(name.startswith("user:") for name, _result in results)  # nothing after the failure ran
    assert "| **total** | FAILED |" in proc.stdout
    assert_nothing_left(report)
