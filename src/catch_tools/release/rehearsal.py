# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Release rehearsal: publish the combined wheel and both images the way a release does, to a real package index
and a real OCI registry on 127.0.0.1, then install and pull them the way users do.

Steps (each timed; the table is printed at the end, also when a step fails):

1. the combined wheel in ``dist/`` (built with scripts/build_wheel.py when there is none);
2. servers: a static PEP 503 index (``python -m http.server``) and ``docker-registry``, both on 127.0.0.1;
3. publish the wheel with ``ci/scripts/publish_release.sh`` (``CATCH_INDEX_DIR``; no GitHub release);
4. the index page: the ``#sha256=`` fragment equals the wheel's sha256, ``data-requires-python`` its metadata's;
5. a fresh venv: ``pip install --index-url <index> --extra-index-url <the machine's index> torch==<version>``
   (the wheel must come from the loopback index: its access log is checked);
6. ``examples/train_digits.py --device mlu`` in that venv;
7. push both images with ``docker/build_images.sh --push`` (``CATCH_REGISTRY=127.0.0.1:<port>/catch-mlu``;
   ``CATCH_REUSE_IMAGES=1``: an image built from the same inputs by ``tox -e images`` is reused, else built);
8. the registry's manifest digests (its HTTP API) equal the pushed ones;
9. a fresh container storage (``podman --root <tmp>``) pulls both; pulled digest == pushed digest;
10. the pulled images' file systems (``podman image mount``, no ``podman run``): the release image holds the
    combined wheel's torch (its RECORD hashes), torch_mlu; the dev image torch 2.13.0 and torch_mlu editable;
11. cleanup: both servers stopped, the loopback tags removed from the image store, the temporary directory deleted.

Steps 7-10 are skipped, with the reason, where podman or docker-registry is missing. Exit status: 0 when every
step passed or was skipped, 1 when one failed.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

from catch_tools.errors import UserError
from catch_tools.release import index, servers
from catch_tools.wheel.metadata import dist_info_dir, member_text
from catch_tools.wheel.record import parse_record
from catch_tools.wheel.zipraw import RawZipReader

REPO_ROOT = Path(__file__).resolve().parents[3]
SITE = "opt/venv/lib/python3.11/site-packages"
PODMAN_GLOBAL = ["--storage-driver=vfs", "--cgroup-manager=cgroupfs", "--events-backend=none"]
MANIFEST_TYPES = ", ".join([
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
])


class StepFailed(Exception):
    """A rehearsal step found something wrong (the message is the table's result)."""


@dataclass
class Step:
    """One row of the table: step name, result (ok / FAILED / skipped), detail, seconds."""

    name: str
    result: str = "not run"
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Report:
    steps: list[Step] = field(default_factory=list)
    total_seconds: float = 0.0
    pids: list[int] = field(default_factory=list)
    work: str = ""
    urls: dict[str, str] = field(default_factory=dict)
    digests: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(s.result in ("ok", "skipped") for s in self.steps)

    def table(self) -> str:
        rows = ["| step | result | time |", "| --- | --- | --- |"]
        for s in self.steps:
            result = s.result + (f": {s.detail}" if s.detail else "")
            rows.append(f"| {s.name} | {result.replace('|', '/')} | {s.seconds:.1f} s |")
        rows.append(f"| **total** | {'ok' if self.ok else 'FAILED'} | {self.total_seconds:.1f} s |")
        return "\n".join(rows)


def _run(cmd: Sequence[str | Path], *, log: Path, env: dict[str, str] | None = None, cwd: Path | None = None,
         timeout: float = 1800) -> str:
    """Run ``cmd``; its output goes to ``log`` (appended) and is returned. Non-zero exit: StepFailed with the tail."""
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(map(str, cmd))}\n")
    try:
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise StepFailed(f"{Path(str(cmd[0])).name} timed out after {timeout:.0f} s (log {log})") from None
    with log.open("a") as out:
        out.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        tail = " / ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        raise StepFailed(f"{Path(str(cmd[0])).name} exited {proc.returncode}: {tail} (log {log})")
    return proc.stdout


class _Links(HTMLParser):
    """The anchors of a PEP 503 page: (href, attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.append(dict(attrs))


def _configured_index() -> str:
    """The index the machine's pip uses for everything else (``pip config get global.index-url``, else PyPI)."""
    for key in ("global.index-url", "install.index-url"):
        out = subprocess.run([sys.executable, "-m", "pip", "config", "get", key], capture_output=True, text=True,
                             check=False)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple"


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


class Rehearsal:
    """Runs the steps in a temporary directory ``work``; :meth:`run` returns the :class:`Report`."""

    def __init__(self, work: Path, *, fail_at: str | None = None, podman: str | None = None,
                 on_step: Callable[[Step], None] | None = None) -> None:
        self.work = work
        self.logs = work / "logs"
        self.fail_at = fail_at
        self.podman = podman if podman is not None else (shutil.which("podman") or "")
        self.on_step = on_step or (lambda step: None)
        self.report = Report(work=str(work))
        self.wheel: Path | None = None
        self.version = ""
        self.index_url = ""
        self.registry = ""  # 127.0.0.1:<port>
        self.registries_conf: Path | None = None
        self.pushed: dict[str, tuple[str, str]] = {}  # short name -> (image reference, digest)
        self._user_env: dict[str, str] = {}

    # -- helpers ----------------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[Step]:
        step = Step(name)
        self.report.steps.append(step)
        start = time.monotonic()
        try:
            if self.fail_at == name:
                raise StepFailed("failure injected (--fail-at)")
            yield step
            if step.result == "not run":
                step.result = "ok"
        except (StepFailed, UserError) as err:
            step.result, step.detail = "FAILED", str(err)
            raise
        except Exception as err:  # noqa: BLE001 - an unexpected error still fails only its step, with a row
            step.result, step.detail = "FAILED", f"{type(err).__name__}: {err}"
            raise StepFailed(step.detail) from err
        finally:
            step.seconds = time.monotonic() - start
            self.on_step(step)

    def _skip(self, name: str, reason: str) -> None:
        step = Step(name, "skipped", reason)
        self.report.steps.append(step)
        self.on_step(step)

    def _image_skip_reason(self) -> str | None:
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

    # -- steps ------------------------------------------------------------------------------------------------------
    def combined_wheel(self) -> None:
        with self.step("combined wheel in dist/") as step:
            wheels = sorted((REPO_ROOT / "dist").glob("torch-*catch*.whl"))
            if not wheels:
                _run([sys.executable, REPO_ROOT / "scripts" / "build_wheel.py", "--out", REPO_ROOT / "dist"],
                     log=self.logs / "wheel.log")
                wheels = sorted((REPO_ROOT / "dist").glob("torch-*catch*.whl"))
            if len(wheels) != 1:
                raise StepFailed(f"dist/: expected one combined wheel torch-*catch*.whl, found {len(wheels)}")
            self.wheel = wheels[0]
            self.version = self.wheel.name.split("-")[1]
            step.detail = f"{self.wheel.name} ({self.wheel.stat().st_size / 2**20:.0f} MiB)"

    def publish_wheel(self) -> None:
        assert self.wheel is not None
        with self.step("publish wheel (ci/scripts/publish_release.sh)") as step:
            dist = self.work / "dist"  # the release's dist: the script writes SHA256SUMS next to the wheel
            dist.mkdir()
            try:
                os.link(self.wheel, dist / self.wheel.name)
            except OSError:
                shutil.copyfile(self.wheel, dist / self.wheel.name)
            tag = "v{}-catch{}".format(self.version.split("+")[0], self.version.rsplit(".catch", 1)[1])
            env = {**os.environ, "CATCH_INDEX_DIR": str(self.work / "index"), "CATCH_GH_RELEASE": "0",
                   "PYTHON": sys.executable}
            out = _run(["bash", REPO_ROOT / "ci/scripts/publish_release.sh", tag, dist], env=env,
                       log=self.logs / "publish.log")
            if f"published {self.wheel.name} sha256 " not in out:
                raise StepFailed(f"publish_release.sh did not publish {self.wheel.name}: {out.strip()[-300:]}")
            step.detail = f"{tag} -> <index>/files/{self.wheel.name}"

    def index_page(self) -> None:
        assert self.wheel is not None
        with self.step("index page: #sha256, data-requires-python") as step:
            url = f"{self.index_url}torch/"
            with urllib.request.urlopen(url, timeout=30) as resp:
                parser = _Links()
                parser.feed(resp.read().decode())
            links = [a for a in parser.links if (a.get("href") or "").split("#")[0].endswith(
                quote(self.wheel.name))]
            if len(links) != 1:
                raise StepFailed(f"{url}: expected one link to {self.wheel.name}, found {len(links)}")
            href = links[0]["href"] or ""
            want = index.sha256_file(self.wheel)
            if not href.endswith(f"#sha256={want}"):
                raise StepFailed(f"{url}: link {href!r} lacks #sha256={want}")
            want_rp = index.requires_python(index.wheel_metadata(self.wheel))
            if links[0].get("data-requires-python") != want_rp:
                raise StepFailed(f"{url}: data-requires-python {links[0].get('data-requires-python')!r}, "
                                 f"the wheel says {want_rp!r}")
            step.detail = f"sha256={want[:12]}…, requires-python {want_rp}"

    def pip_install(self) -> None:
        with self.step("user: pip install from the index (fresh venv)") as step:
            venv = self.work / "venv"
            _run([sys.executable, "-m", "venv", venv], log=self.logs / "pip.log")
            extra = _configured_index()
            env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
            env["PIP_CACHE_DIR"] = str(self.work / "pip-cache")  # a user's first install: nothing cached
            env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
            cmd: list[str | Path] = [venv / "bin/pip", "install", "--index-url", self.index_url,
                                     "--extra-index-url", extra, f"torch=={self.version}"]
            _run(cmd, env=env, log=self.logs / "pip.log")
            served = [line for line in (self.logs / "index-server.log").read_text().splitlines()
                      if f'"GET /files/{quote(self.wheel.name if self.wheel else "")} ' in line]
            if not any('" 200 ' in line for line in served):
                raise StepFailed("the loopback index's log shows no download of the wheel: pip took it elsewhere")
            out = _run([venv / "bin/python", "-c", "import torch, torch_mlu; print(torch.__version__, "
                        "torch.version.catch, torch.mlu.device_count())"], env=env, log=self.logs / "pip.log",
                       cwd=self.work)
            got = out.split()
            if not got or got[0] != self.version:
                raise StepFailed(f"the venv's torch is {out.strip()!r}, not {self.version}")
            step.detail = f"torch {got[0]} (catch {got[1]}, {got[2]} mlu devices); deps from {extra}"
            self._user_env = env

    def train_digits(self) -> None:
        with self.step("user: examples/train_digits.py --device mlu") as step:
            venv = self.work / "venv"
            env = self._user_env
            _run([venv / "bin/pip", "install", "--index-url", _configured_index(), "scikit-learn"], env=env,
                 log=self.logs / "train.log")
            out = _run([venv / "bin/python", REPO_ROOT / "examples/train_digits.py", "--device", "mlu"], env=env,
                       log=self.logs / "train.log", cwd=self.work)
            found = re.search(r"^test accuracy ([0-9.]+)$", out, flags=re.M)
            steps = len(re.findall(r"^step \d+ loss", out, flags=re.M))
            if not found or float(found.group(1)) < 0.9:
                raise StepFailed(f"no test accuracy >= 0.9 in the output: {out.strip().splitlines()[-1:]}")
            step.detail = f"{steps} steps, test accuracy {found.group(1)}"

    def push_images(self) -> None:
        assert self.registries_conf is not None
        with self.step("push images (docker/build_images.sh --push)") as step:
            base = os.environ.get("CATCH_BASE", "localhost/catch-base:bookworm")
            env = {**os.environ, "CATCH_REGISTRY": f"{self.registry}/catch-mlu", "CATCH_REUSE_IMAGES": "1",
                   "CATCH_BASE": base, "CATCH_IMAGE_LOGS": str(self.logs / "images"),
                   "CONTAINERS_REGISTRIES_CONF": str(self.registries_conf), "CATCH_ENGINE": "podman",
                   "PYTHON": sys.executable}
            if base.startswith("localhost/catch-base"):  # cached: returns at once when tox -e images made it
                _run(["bash", REPO_ROOT / "docker/make_base.sh", base], env=env, log=self.logs / "push.log")
            out = _run(["bash", REPO_ROOT / "docker/build_images.sh", "--push", "dev", "release"], env=env,
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
                _run([*self._fresh_podman(), "pull", "--quiet", ref], env=env, log=self.logs / "pull.log")
                pulled = _run([*self._fresh_podman(), "image", "inspect", "--format", "{{.Digest}}", ref], env=env,
                              log=self.logs / "pull.log").strip()
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
                mount = Path(_run([*self._fresh_podman(), "image", "mount", ref], env=env,
                                  log=self.logs / "pull.log").strip())
                try:
                    details.append(self._check_image(name, mount))
                finally:
                    _run([*self._fresh_podman(), "image", "unmount", ref], env=env, log=self.logs / "pull.log")
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

    # -- cleanup ----------------------------------------------------------------------------------------------------
    def cleanup(self, stack: contextlib.ExitStack) -> None:
        step = Step("cleanup: servers stopped, loopback tags removed, temp deleted")
        start = time.monotonic()
        problems: list[str] = []
        timings: list[str] = []
        t0 = time.monotonic()
        try:
            stack.close()  # stops the servers (SIGTERM, then SIGKILL)
        except Exception as err:  # noqa: BLE001 - reported in the table, cleanup goes on
            problems.append(f"stopping servers: {err}")
        for pid in self.report.pids:
            with contextlib.suppress(ChildProcessError, ProcessLookupError):
                os.kill(pid, 0)
                problems.append(f"process {pid} still runs")
        timings.append(f"servers {time.monotonic() - t0:.0f} s")
        t0 = time.monotonic()
        if self.registry and self.podman:  # every tag of the loopback registry, also of a push that failed
            listing = [*self._store_podman(), "images", "--format", "{{.Repository}}:{{.Tag}}"]
            mine = [ref for ref in subprocess.run(listing, capture_output=True, text=True, check=False
                                                  ).stdout.split() if ref.startswith(f"{self.registry}/")]
            for ref in mine:
                subprocess.run([*self._store_podman(), "untag", ref, ref], capture_output=True, check=False)
            left = subprocess.run(listing, capture_output=True, text=True, check=False).stdout
            if f"{self.registry}/" in left:
                problems.append(f"image store still has {self.registry} tags")
            timings.append(f"tags {time.monotonic() - t0:.0f} s")
        t0 = time.monotonic()
        # the fresh store is plain directories (vfs); unmount anything podman left mounted under the work directory
        for line in Path("/proc/mounts").read_text().splitlines():
            target = line.split()[1]
            if target.startswith(str(self.work)):
                subprocess.run(["umount", "-l", target], capture_output=True, check=False)
        shutil.rmtree(self.work, ignore_errors=True)
        timings.append(f"temp {time.monotonic() - t0:.0f} s")
        if self.work.exists():
            problems.append(f"{self.work} could not be removed")
        step.result, step.detail = ("FAILED", "; ".join(problems)) if problems else ("ok", "; ".join(timings))
        step.seconds = time.monotonic() - start
        self.report.steps.append(step)
        self.on_step(step)

    def run(self) -> Report:
        start = time.monotonic()
        self.logs.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            try:
                self.combined_wheel()
                with self.step("servers on 127.0.0.1: index + registry") as step:
                    web = stack.enter_context(servers.static_http(self.work / "index", self.logs / "index-server.log"))
                    self.report.pids.append(web.proc.pid)
                    self.index_url = f"{web.url}/simple/"
                    self.report.urls["index"] = self.index_url
                    skip = self._image_skip_reason()
                    if skip is None:
                        reg = stack.enter_context(servers.oci_registry(self.work / "registry",
                                                                       self.logs / "registry.log"))
                        self.report.pids.append(reg.proc.pid)
                        self.registry = reg.url.removeprefix("http://")
                        self.report.urls["registry"] = self.registry
                        self.registries_conf = servers.registries_conf(self.work / "registries.conf", self.registry)
                    step.detail = f"index {self.index_url}" + (f", registry {self.registry}" if self.registry
                                                               else " (no registry: images skipped)")
                self.publish_wheel()
                self.index_page()
                self.pip_install()
                self.train_digits()
                skip = self._image_skip_reason()
                if skip is not None:
                    for name in ("push images (docker/build_images.sh --push)", "registry: manifest digests (HTTP API)",
                                 "user: pull into a fresh podman --root", "image contents (podman image mount)"):
                        self._skip(name, skip)
                else:
                    self.push_images()
                    self.registry_digests()
                    self.pull_images()
                    self.image_contents()
            except (StepFailed, UserError):
                pass  # recorded in its step; the table shows it
            finally:
                self.report.total_seconds = time.monotonic() - start
                self.cleanup(stack)
        self.report.total_seconds = time.monotonic() - start
        return self.report
