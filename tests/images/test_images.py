# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Build the dev and release images (docker/build_images.sh) and check that each one's smoke step trained on mlu.

Runs with podman where no Docker engine exists (``podman build --isolation=chroot`` with vfs storage works without a
daemon, RUN steps included); the base image is ``$CATCH_BASE``, by default the Dockerfiles' public base with docker
and, with podman, ``localhost/catch-base:bookworm`` made by docker/make_base.sh with debootstrap (cached).
Slow: the first build takes minutes (see the tox env's description for measured times).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCKER = REPO_ROOT / "docker"


def _engine() -> list[str]:
    engine = os.environ.get("CATCH_ENGINE")
    if not engine:  # the same choice as docker/build_images.sh: docker only when its daemon answers
        answers = shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True).returncode == 0
        engine = "docker" if answers else "podman"
    if engine == "podman":
        return (os.environ.get("CATCH_PODMAN") or "podman --storage-driver=vfs --cgroup-manager=cgroupfs").split()
    return [engine]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    engine = _engine()
    # scripts/test.sh (the README's test command) installs podman and debootstrap when it runs as root with apt-get;
    # elsewhere the image builds cannot run: skipped, with the reason in pytest's summary (-rs).
    if shutil.which(engine[0]) is None:
        pytest.skip(f"{engine[0]} not found and not installable here: apt-get install podman debootstrap (as root), "
                    "or run docker")
    # podman here has no registry to pull python:3.11-slim-bookworm from: a debootstrap base instead (cached).
    base = os.environ.get("CATCH_BASE") or ("localhost/catch-base:bookworm" if engine[0].endswith("podman") else "")
    if base.startswith("localhost/catch-base") and shutil.which("debootstrap") is None and subprocess.run(
            [*engine, "image", "exists", base], capture_output=True, check=False).returncode != 0:
        pytest.skip(f"debootstrap not found and no {base} image yet: apt-get install debootstrap (as root)")
    if base.startswith("localhost/catch-base"):
        made = subprocess.run(["bash", DOCKER / "make_base.sh", base], capture_output=True, text=True, check=False)
        assert made.returncode == 0, made.stdout + made.stderr
    # The release image installs dist/'s combined wheel: build it from the current series and backend first.
    wheel = subprocess.run([sys.executable, REPO_ROOT / "scripts" / "build_wheel.py", "--out", REPO_ROOT / "dist"],
                           capture_output=True, text=True, check=False)
    assert wheel.returncode == 0, wheel.stdout + wheel.stderr
    logs = tmp_path_factory.mktemp("image-logs")
    proc = subprocess.run(["bash", DOCKER / "build_images.sh", "dev", "release"], cwd=REPO_ROOT, capture_output=True,
                          text=True, check=False, env={**os.environ, "CATCH_IMAGE_LOGS": str(logs), "CATCH_BASE": base})
    print(proc.stdout)
    return proc, logs


@pytest.mark.slow
@pytest.mark.timeout(5400)
def test_both_images_build(built: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, _logs = built
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    names = re.findall(r"^image (\S+) built in (\d+) s$", proc.stdout, flags=re.M)
    assert [n.rsplit("/", 1)[-1].split(":")[0] for n, _s in names] == ["catch-dev", "catch"]
    for name, _seconds in names:
        exists = subprocess.run([*_engine(), "image", "exists", name], check=False)
        assert exists.returncode == 0, f"{name} is not in the image store"


@pytest.mark.slow
@pytest.mark.parametrize("image", ["catch-dev", "catch"])
def test_smoke_stage_trained_on_mlu(built: tuple[subprocess.CompletedProcess[str], Path], image: str) -> None:
    proc, logs = built
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = (logs / f"{image}.log").read_text()
    smoke = [line for line in log.splitlines() if line.startswith("catch-smoke: ")]
    assert len(smoke) == 1 and smoke[0].startswith("catch-smoke: ok torch 2.13.0"), smoke
    assert re.search(r"devices [1-9]", smoke[0])
    if image == "catch":
        assert "+cpu.catch" in smoke[0]  # the combined wheel's torch, not the upstream one


def _mounted(image: str) -> Path:
    out = subprocess.run([*_engine(), "image", "mount", image], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


@pytest.mark.slow
def test_image_contents(built: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """Dev: the series applied on /opt/pytorch (refs/patches/applied) and torch_mlu installed editable from
    /opt/catch/catch; release: the combined wheel's torch, and no project sources. Read from the image's file system
    (``podman image mount``), since ``podman run`` does not work here."""
    proc, _logs = built
    assert proc.returncode == 0, proc.stderr[-2000:]
    engine = _engine()
    if not engine[0].endswith("podman"):
        pytest.skip("reads the image file system with `podman image mount`")
    names = dict((n.rsplit("/", 1)[-1].split(":")[0], n)
                 for n, _s in re.findall(r"^image (\S+) built in (\d+) s$", proc.stdout, flags=re.M))
    site = "opt/venv/lib/python3.11/site-packages"
    try:
        dev = _mounted(names["catch-dev"])
        applied = subprocess.run(["git", "-c", f"safe.directory={dev}/opt/pytorch", "-C", dev / "opt/pytorch",
                                  "log", "--format=%s", "refs/patches/base..refs/patches/applied"],
                                 capture_output=True, text=True, check=True).stdout.splitlines()
        series = [line for line in (REPO_ROOT / "patches" / "series").read_text().splitlines()
                  if line.strip() and not line.startswith("#")]
        assert len(applied) == len(series)
        direct = [json.loads(p.read_text()) for p in (dev / site).glob("torch_mlu-*.dist-info/direct_url.json")]
        assert direct and direct[0]["dir_info"].get("editable") is True
        assert direct[0]["url"] == "file:///opt/catch/catch"

        release = _mounted(names["catch"])
        wheel = next(iter((REPO_ROOT / "dist").glob("torch-*catch*.whl")))
        version = wheel.name.split("-")[1]  # PEP 427 file name: torch-<version>-<tags>.whl
        assert [p.name for p in (release / site).glob("torch-*.dist-info")] == [f"torch-{version}.dist-info"]
        assert not (release / "opt/catch").exists()
    finally:
        for name in names.values():
            subprocess.run([*engine, "image", "unmount", name], capture_output=True, check=False)
