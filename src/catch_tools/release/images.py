# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The rehearsal's image steps: push both images to the loopback registry with ``docker/build_images.sh --push``,
compare the registry's digests with the pushed ones, pull them into a fresh ``podman --root`` and check the pulled
file systems (the release image holds the combined wheel's files; the dev image the pinned torch and torch_mlu
editable). Skipped, with the reason, where podman or docker-registry is missing."""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import os
import re
import shutil
import sys
import urllib.request
from pathlib import Path

from catch_tools.release.steps import REPO_ROOT, StepFailed, StepRunner, run_logged
from catch_tools.wheel.metadata import dist_info_dir, member_text
from catch_tools.wheel.record import parse_record
from catch_tools.wheel.zipraw import RawZipReader

SITE = "opt/venv/lib/python3.11/site-packages"
PODMAN_GLOBAL = ["--storage-driver=vfs", "--cgroup-manager=cgroupfs", "--events-backend=none"]
MANIFEST_TYPES = ", ".join([
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
])


def _wheel_record(wheel: Path) -> dict[str, str]:
    """path -> "sha256=..." from the wheel's own RECORD (entries with a hash).

    Raises:
        UserError: an unreadable wheel, not one RECORD in a top-level ``.dist-info``, or a malformed RECORD.
    """
    with RawZipReader(wheel) as reader:
        record = f"{dist_info_dir(reader)}/RECORD"
        rows = parse_record(member_text(reader, record), f"{wheel}!{record}")
    return {path: row.digest for path, row in rows.items() if row.digest}


def _file_hash(path: Path) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


class ImageSteps(StepRunner):
    """The image steps of a rehearsal (:class:`~catch_tools.release.rehearsal.Rehearsal` sets the attributes)."""

    podman: str
    registry: str  # 127.0.0.1:<port>
    registries_conf: Path | None
    pushed: dict[str, tuple[str, str]]  # short name -> (image reference, digest)
    wheel: Path | None
    version: str

    def image_skip_reason(self) -> str | None:
        """Why the image steps cannot run here (a tool missing), or None."""
        if not self.podman:
            return "podman not found (Debian: apt-get install podman docker-registry debootstrap)"
        if shutil.which("docker-registry") is None:
            return "docker-registry not found (Debian: apt-get install docker-registry)"
        return None

    def _fresh_podman(self) -> list[str]:
        return [self.podman, "--root", str(self.work / "pull-storage"), "--runroot", str(self.work / "pull-run"),
                *PODMAN_GLOBAL]

    def _store_podman(self) -> list[str]:
        """The podman of docker/build_images.sh (its default image store, where tox -e images left the images)."""
        return (os.environ.get("CATCH_PODMAN") or f"{self.podman} --storage-driver=vfs --cgroup-manager=cgroupfs"
                ).split()

    def push_images(self) -> None:
        assert self.registries_conf is not None
        with self.step("push images (docker/build_images.sh --push)") as step:
            base = os.environ.get("CATCH_BASE", "localhost/catch-base:bookworm")
            env = {**os.environ, "CATCH_REGISTRY": f"{self.registry}/catch-mlu", "CATCH_REUSE_IMAGES": "1",
                   "CATCH_BASE": base, "CATCH_IMAGE_LOGS": str(self.logs / "images"),
                   "CONTAINERS_REGISTRIES_CONF": str(self.registries_conf), "CATCH_ENGINE": "podman",
                   "PYTHON": sys.executable}
            if base.startswith("localhost/catch-base"):  # cached: returns at once when tox -e images made it
                run_logged(["bash", REPO_ROOT / "docker/make_base.sh", base], env=env, log=self.logs / "push.log")
            out = run_logged(["bash", REPO_ROOT / "docker/build_images.sh", "--push", "dev", "release"], env=env,
                       log=self.logs / "push.log", timeout=3600)
            for ref, digest in re.findall(r"^pushed (\S+) (sha256:[0-9a-f]{64})$", out, flags=re.M):
                self.pushed[ref.rsplit("/", 1)[1].split(":")[0]] = (ref, digest)
            if sorted(self.pushed) != ["catch", "catch-dev"]:
                raise StepFailed(f"expected pushed digests of catch and catch-dev, got {sorted(self.pushed)}")
            reused = len(re.findall(r"^image \S+ reused", out, flags=re.M))
            step.detail = f"{reused} of 2 reused from the image store; " + ", ".join(
                f"{name} {digest[:19]}…" for name, (_ref, digest) in sorted(self.pushed.items()))
            self.report.digests = {n: {"pushed": d} for n, (_r, d) in self.pushed.items()}

    def registry_digests(self) -> None:
        with self.step("registry: manifest digests (HTTP API)") as step:
            for name, (ref, digest) in sorted(self.pushed.items()):
                repo, tag = ref.split("/", 1)[1].rsplit(":", 1)
                req = urllib.request.Request(f"http://{self.registry}/v2/{repo}/manifests/{tag}", method="HEAD",
                                             headers={"Accept": MANIFEST_TYPES})
                with urllib.request.urlopen(req, timeout=30) as resp:
                    stored = resp.headers.get("Docker-Content-Digest")
                self.report.digests[name]["registry"] = stored or ""
                if stored != digest:
                    raise StepFailed(f"{ref}: the registry stores {stored}, the push reported {digest}")
            step.detail = "registry digest == pushed digest for catch, catch-dev"

    def pull_images(self) -> None:
        with self.step("user: pull into a fresh podman --root") as step:
            env = {**os.environ, "CONTAINERS_REGISTRIES_CONF": str(self.registries_conf)}
            for name, (ref, digest) in sorted(self.pushed.items()):
                run_logged([*self._fresh_podman(), "pull", "--quiet", ref], env=env, log=self.logs / "pull.log")
                pulled = run_logged([*self._fresh_podman(), "image", "inspect", "--format", "{{.Digest}}", ref],
                                    env=env, log=self.logs / "pull.log").strip()
                self.report.digests[name]["pulled"] = pulled
                if pulled != digest:
                    raise StepFailed(f"{ref}: pulled digest {pulled} != pushed {digest}")
            step.detail = "pulled digest == pushed digest for catch, catch-dev"

    def image_contents(self) -> None:
        assert self.wheel is not None
        with self.step("image contents (podman image mount)") as step:
            env = {**os.environ, "CONTAINERS_REGISTRIES_CONF": str(self.registries_conf)}
            details = []
            for name, (ref, _digest) in sorted(self.pushed.items()):
                mount = Path(run_logged([*self._fresh_podman(), "image", "mount", ref], env=env,
                                  log=self.logs / "pull.log").strip())
                try:
                    details.append(self._check_image(name, mount))
                finally:
                    run_logged([*self._fresh_podman(), "image", "unmount", ref], env=env, log=self.logs / "pull.log")
            step.detail = "; ".join(details)

    def _check_image(self, name: str, root: Path) -> str:
        assert self.wheel is not None
        site = root / SITE
        infos = sorted(p.name for p in site.glob("torch-*.dist-info"))
        if not (site / "torch_mlu" / "__init__.py").is_file() and name == "catch":
            raise StepFailed(f"{name}: no torch_mlu package in /{SITE}")
        if name == "catch":
            if infos != [f"torch-{self.version}.dist-info"]:
                raise StepFailed(f"{name}: /{SITE} has {infos}, not torch-{self.version}.dist-info")
            wheel_rows = _wheel_record(self.wheel)
            installed = dict(row[:2] for row in csv.reader((site / infos[0] / "RECORD").read_text().splitlines())
                             if len(row) >= 2)
            differ = [p for p, h in wheel_rows.items() if installed.get(p) != h]
            if differ:
                raise StepFailed(f"{name}: {len(differ)} file(s) differ from the wheel's RECORD, e.g. {differ[0]}")
            for probe in ("torch/version.py", "torch_mlu/__init__.py"):
                if _file_hash(site / probe) != wheel_rows[probe]:
                    raise StepFailed(f"{name}: /{SITE}/{probe} is not the wheel's")
            return f"catch: torch {self.version}, torch_mlu, {len(wheel_rows)} files = the wheel's RECORD"
        if infos != ["torch-2.13.0+cpu.dist-info"]:
            raise StepFailed(f"{name}: /{SITE} has {infos}, not the pinned torch-2.13.0+cpu.dist-info")
        direct = [json.loads(p.read_text()) for p in site.glob("torch_mlu-*.dist-info/direct_url.json")]
        if not direct or direct[0].get("url") != "file:///opt/catch/catch" or not (
                root / "opt/catch/catch/torch_mlu/__init__.py").is_file():
            raise StepFailed(f"{name}: torch_mlu is not installed editable from /opt/catch/catch")
        return "catch-dev: torch 2.13.0+cpu, torch_mlu editable (/opt/catch/catch)"
