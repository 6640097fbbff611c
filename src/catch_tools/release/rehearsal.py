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

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

from catch_tools.errors import UserError
from catch_tools.release import servers, wheel_check
from catch_tools.release.images import ImageSteps
from catch_tools.release.steps import REPO_ROOT, Report, Step, StepFailed, run_logged


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


class Rehearsal(ImageSteps):
    """Runs the steps in a temporary directory ``work``; :meth:`run` returns the :class:`Report`."""

    def __init__(self, work: Path, *, fail_at: str | None = None, podman: str | None = None,
                 on_step: Callable[[Step], None] | None = None) -> None:
        super().__init__(work, fail_at=fail_at, on_step=on_step)
        self.podman = podman if podman is not None else (shutil.which("podman") or "")
        self.wheel: Path | None = None
        self.version = ""
        self.index_url = ""
        self.registry = ""  # 127.0.0.1:<port>
        self.registries_conf: Path | None = None
        self.pushed: dict[str, tuple[str, str]] = {}  # short name -> (image reference, digest)
        self._user_env: dict[str, str] = {}

    # -- steps ------------------------------------------------------------------------------------------------------
    def combined_wheel(self) -> None:
        with self.step("combined wheel in dist/") as step:
            wheels = sorted((REPO_ROOT / "dist").glob("torch-*catch*.whl"))
            if not wheels:
                run_logged([sys.executable, REPO_ROOT / "scripts" / "build_wheel.py", "--out", REPO_ROOT / "dist"],
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
            out = run_logged(["bash", REPO_ROOT / "ci/scripts/publish_release.sh", tag, dist], env=env,
                       log=self.logs / "publish.log")
            if f"published {self.wheel.name} sha256 " not in out:
                raise StepFailed(f"publish_release.sh did not publish {self.wheel.name}: {out.strip()[-300:]}")
            card = dist / "support.md"
            if not card.is_file() or card.read_bytes() != (REPO_ROOT / "docs" / "support.md").read_bytes():
                raise StepFailed(f"publish_release.sh did not put docs/support.md beside the wheel: {card}")
            step.detail = f"{tag} -> <index>/files/{self.wheel.name}; support.md beside it"

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
            want = wheel_check.sha256_file(self.wheel)
            if not href.endswith(f"#sha256={want}"):
                raise StepFailed(f"{url}: link {href!r} lacks #sha256={want}")
            want_rp = wheel_check.requires_python(wheel_check.wheel_metadata(self.wheel))
            if links[0].get("data-requires-python") != want_rp:
                raise StepFailed(f"{url}: data-requires-python {links[0].get('data-requires-python')!r}, "
                                 f"the wheel says {want_rp!r}")
            step.detail = f"sha256={want[:12]}…, requires-python {want_rp}"

    def pip_install(self) -> None:
        with self.step("user: pip install from the index (fresh venv)") as step:
            venv = self.work / "venv"
            run_logged([sys.executable, "-m", "venv", venv], log=self.logs / "pip.log")
            extra = _configured_index()
            env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
            env["PIP_CACHE_DIR"] = str(self.work / "pip-cache")  # a user's first install: nothing cached
            env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
            cmd: list[str | Path] = [venv / "bin/pip", "install", "--index-url", self.index_url,
                                     "--extra-index-url", extra, f"torch=={self.version}"]
            run_logged(cmd, env=env, log=self.logs / "pip.log")
            served = [line for line in (self.logs / "index-server.log").read_text().splitlines()
                      if f'"GET /files/{quote(self.wheel.name if self.wheel else "")} ' in line]
            if not any('" 200 ' in line for line in served):
                raise StepFailed("the loopback index's log shows no download of the wheel: pip took it elsewhere")
            out = run_logged([venv / "bin/python", "-c", "import torch, torch_mlu; print(torch.__version__, "
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
            run_logged([venv / "bin/pip", "install", "--index-url", _configured_index(), "scikit-learn"], env=env,
                 log=self.logs / "train.log")
            out = run_logged([venv / "bin/python", REPO_ROOT / "examples/train_digits.py", "--device", "mlu"], env=env,
                       log=self.logs / "train.log", cwd=self.work)
            found = re.search(r"^test accuracy ([0-9.]+)$", out, flags=re.M)
            steps = len(re.findall(r"^step \d+ loss", out, flags=re.M))
            if not found or float(found.group(1)) < 0.9:
                raise StepFailed(f"no test accuracy >= 0.9 in the output: {out.strip().splitlines()[-1:]}")
            step.detail = f"{steps} steps, test accuracy {found.group(1)}"

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
                    skip = self.image_skip_reason()
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
                skip = self.image_skip_reason()
                if skip is not None:
                    for name in ("push images (docker/build_images.sh --push)", "registry: manifest digests (HTTP API)",
                                 "user: pull into a fresh podman --root", "image contents (podman image mount)"):
                        self.skip(name, skip)
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
