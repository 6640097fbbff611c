# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The upgrade's steps after the patch rebase: ``fetch``, ``build``, ``suite``, ``wheel``, ``interfaces``, ``demo``
(:data:`STEPS`), each a function ``(ctx) -> detail`` that raises :class:`StepFailed` (with the log and what to do
next) when it fails. :mod:`catch_tools.upgrade.runner` runs them; :mod:`catch_tools.upgrade.state` keeps their
outcomes on disk.

The only tracked file the steps change in the checkout is the pin manifest (``fetch`` records the upstream wheel it
chose, :func:`record_flavour`).

Every pip command runs with ``PIP_CONSTRAINT=<project>/constraints.txt``: the rebase moved its ``torch==`` line to the
new release, and a constraint in the environment overrides a machine-wide ``constraint`` in pip's configuration files
(pip reads ``PIP_*`` variables after its config files), which may cap torch below the release being upgraded to.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from catch_tools.errors import UserError
from catch_tools.pin import load_pin, manifest_path, update_pin

#: Build and test requirements of the backend venv besides torch (tox -e backend's deps, and the tooling for the proof
#: gate and the wheel build: the project itself, editable).
BUILD_DEPS = ("scikit-build-core>=0.10", "cmake>=3.25", "ninja", "numpy", "scikit-learn", "expecttest", "libcst>=1.0.1")
#: The digits demo: the combined wheel plus the data set's package, nothing from the checkout.
DEMO_DEPS = ("scikit-learn",)
MIN_DEMO_ACCURACY = 0.8
_ACCURACY = re.compile(r"^test accuracy ([0-9.]+)$", re.MULTILINE)
_VERSION_PY = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)
_FLAVOUR_LINE = re.compile(r"^wheel_flavour\s*=.*\n", re.MULTILINE)


class StepFailed(Exception):
    """A step failed: ``detail`` (one line), ``next_action`` (what the maintainer does next), ``log`` (full output)."""

    def __init__(self, detail: str, next_action: str, log: Path | None = None) -> None:
        super().__init__(detail)
        self.detail, self.next_action, self.log = detail, next_action, log


@dataclass
class Context:
    """What the steps share: the project checkout, the work directory (venvs, wheels, logs) and the release."""

    project: Path
    work: Path
    release: str  # public version of the release, e.g. "2.15.0"
    python: str = sys.executable  # interpreter the venvs are made from
    demo_epochs: int = 3
    outputs: dict[str, str] = field(default_factory=dict)  # step outputs (paths), saved in the state

    @property
    def venv(self) -> Path:
        return self.work / "venv"

    @property
    def venv_python(self) -> Path:
        return self.venv / "bin" / "python"

    def log(self, step: str) -> Path:
        path = self.work / "logs" / f"{step}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def env(self) -> dict[str, str]:
        """The environment of every command: the project's constraints, no autoload while building."""
        return {**os.environ, "PIP_CONSTRAINT": str(self.project / "constraints.txt"), "CATCH_ROOT": str(self.project),
                "PYTHONDONTWRITEBYTECODE": "1"}

    def run(self, step: str, cmd: list[str], *, cwd: Path | None = None, next_action: str,
            env: dict[str, str] | None = None) -> str:
        """Run ``cmd``, appending its output to the step's log; return the output.

        Raises:
            StepFailed: non-zero exit (the detail is the last non-empty output line).
        """
        log = self.log(step)
        proc = spawn(cmd, cwd=cwd or self.project, env=env or self.env(), next_action=next_action, log=log)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}\n[exit {proc.returncode}]\n")
        if proc.returncode != 0:
            lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
            raise StepFailed(f"{Path(cmd[0]).name} {' '.join(cmd[1:3])}... exit {proc.returncode}: "
                             f"{lines[-1].strip() if lines else 'no output'}", next_action, log)
        return proc.stdout + proc.stderr


def spawn(cmd: list[str], *, cwd: Path, env: dict[str, str], next_action: str,
          log: Path) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(cmd)`` with its output captured.

    Raises:
        StepFailed: the program cannot be started (a missing interpreter, a directory, no permission); the detail
            names the program's path.
    """
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    except OSError as err:
        with log.open("a", encoding="utf-8") as fh:
            fh.write(f"$ {' '.join(cmd)}\ncannot run {cmd[0]}: {err.strerror or err}\n")
        raise StepFailed(f"cannot run {cmd[0]}: {err.strerror or err}", next_action, log) from None


def release_of(project: Path) -> str:
    """The release the pin names (``v2.15.0`` -> ``2.15.0``).

    Raises:
        UserError: the pin's tag is not a release version.
    """
    pin = load_pin(manifest_path(project), option="--project DIR")
    try:
        return Version(pin.tag.removeprefix("v")).public
    except InvalidVersion:
        raise UserError(f"the pin's tag {pin.tag!r} is not a release (vX.Y.Z)", path=manifest_path(project)) from None


# -- the steps ---------------------------------------------------------------------------------------------------------

def _python_tag() -> str:
    return f"cp{sys.version_info.major}{sys.version_info.minor}"


def _cached_wheel(directory: Path, version: str) -> Path | None:
    """The cached torch wheel whose file-name version is exactly ``version`` (local label included) for this Python."""
    want = Version(version)
    for whl in sorted(directory.glob(f"torch-*-{_python_tag()}-*.whl")):
        try:
            if Version(whl.name.split("-")[1]) == want and (want.local or not Version(whl.name.split("-")[1]).local):
                return whl
        except InvalidVersion:
            continue
    return None


def wheel_flavour(wheel: Path) -> str:
    """The build flavour of a torch wheel: the local label of its ``torch/version.py`` ``__version__`` (``cpu``,
    ``cu132``), or ``default`` when it has none."""
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read("torch/version.py").decode("utf-8", "replace")
    match = _VERSION_PY.search(text)
    local = Version(match.group(1)).local if match else None
    return local or "default"


def record_flavour(project: Path, wheel_version: str, flavour: str, note: str) -> None:
    """Write the chosen upstream wheel into the manifest: ``wheel_version`` (the wheel's own version, what pip and the
    combined build check) and a ``wheel_flavour = "<flavour>: <note>"`` line right after it (added or replaced).
    A manifest that already says so is not written."""
    path = manifest_path(project)
    line = f'wheel_flavour = "{flavour}: {note}"\n'
    if load_pin(path).wheel_version == wheel_version and _FLAVOUR_LINE.findall(path.read_text(encoding="utf-8")) == [
            line]:
        return
    update_pin(path, wheel_version=wheel_version)
    text = _FLAVOUR_LINE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"^(wheel_version\s*=.*\n)", lambda m: m.group(1) + line, text, count=1, flags=re.MULTILINE)
    path.write_text(text, encoding="utf-8")


def step_fetch(ctx: Context) -> str:
    """Get the release's upstream wheel: the ``+cpu`` build when pip can see one, else the default build (e.g.
    ``+cu132``, which runs on a machine without CUDA); cached in ``<cache>/wheels``; the choice goes into the
    manifest."""
    from catch_tools.paths import cache_dir

    wheels = cache_dir() / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    tried = []
    for version in (f"{ctx.release}+cpu", ctx.release):
        found = _cached_wheel(wheels, version)
        if found is None:
            try:
                ctx.run("fetch", [ctx.python, "-m", "pip", "download", "--no-deps", "--progress-bar", "off", "-d",
                                  str(wheels), f"torch=={version}"], next_action="")
            except StepFailed as err:
                tried.append(f"torch=={version}: {err.detail.split(': ', 1)[-1]}")
                continue
            found = _cached_wheel(wheels, version)
        if found is not None:
            flavour = wheel_flavour(found)
            wheel_version = found.name.split("-")[1]
            note = ("the CPU build" if flavour == "cpu" else
                    f"the default build; no +cpu wheel of {ctx.release} was reachable")
            record_flavour(ctx.project, wheel_version, flavour, note)
            ctx.outputs.update(upstream_wheel=str(found), wheel_version=wheel_version, flavour=flavour,
                               flavour_note=note)
            return f"{found.name} ({flavour}); manifest: wheel_version = \"{wheel_version}\""
    raise StepFailed(f"no torch {ctx.release} wheel for {_python_tag()}: " + "; ".join(tried),
                     f"check that pip sees the release (pip index versions torch), or put the wheel in "
                     f"{wheels}; then scripts/upgrade.py", ctx.log("fetch"))


def step_build(ctx: Context) -> str:
    """A venv with the release's wheel (and its dependencies) and the build/test requirements; the backend built
    against it as a wheel (kept for the combined wheel) and installed."""
    wheel = Path(ctx.outputs["upstream_wheel"])
    nxt = (f"read {ctx.log('build')}; where the C++ API changed, guard Catch's code with TORCH_VERSION_MAJOR/MINOR "
           "(torch/version.h) and a comment naming the upstream change; then scripts/upgrade.py")
    if not ctx.venv_python.exists():
        ctx.run("build", [ctx.python, "-m", "venv", str(ctx.venv)], next_action=nxt)
    pip = [str(ctx.venv_python), "-m", "pip", "install", "--progress-bar", "off"]
    ctx.run("build", [*pip, str(wheel), *BUILD_DEPS], next_action=nxt)
    ctx.run("build", [*pip, "-e", f"{ctx.project}[test]"], next_action=nxt)
    backend = ctx.work / "backend"
    shutil.rmtree(backend, ignore_errors=True)
    started = time.monotonic()
    ctx.run("build", [str(ctx.venv_python), "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-C",
                      f"build-dir={ctx.work / 'catch-build'}", "-w", str(backend), str(ctx.project / "catch")],
            next_action=nxt)
    built = sorted(backend.glob("torch_mlu-*.whl"))
    if not built:
        raise StepFailed("pip wheel wrote no torch_mlu wheel", nxt, ctx.log("build"))
    ctx.run("build", [*pip, "--no-deps", "--force-reinstall", str(built[-1])], next_action=nxt)
    version = ctx.run("build", [str(ctx.venv_python), "-c", "import torch; print(torch.__version__)"],
                      next_action=nxt).split()[0]
    ctx.outputs["backend_wheel"] = str(built[-1])
    return f"{built[-1].name} against torch {version} (compile {time.monotonic() - started:.0f} s)"


def step_suite(ctx: Context) -> str:
    """The backend suite (tests/backend) and the patch proof gate (each patch's test fails on the new upstream and
    passes patched), in the build venv."""
    nxt = f"fix what {ctx.log('suite')} shows (a test, or a version guard in catch/); then scripts/upgrade.py"
    out = ctx.run("suite", [str(ctx.venv_python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/backend"],
                  next_action=nxt)
    summary = [ln for ln in out.splitlines() if re.search(r"\d+ passed", ln)]
    proof = ctx.run("suite", [str(ctx.venv_python), "scripts/prove_patches.py"], next_action=(
        f"a patch's test no longer fails on upstream {ctx.release} (upstreamed?) or fails patched: see "
        f"{ctx.log('suite')}; drop or fix the patch (scripts/rebase.py), then scripts/upgrade.py"))
    proven = sum(1 for ln in proof.splitlines() if ln.startswith("proven: "))
    return f"{summary[-1].strip('= ') if summary else 'tests passed'}; proof gate: {proven} patches proven"


def step_wheel(ctx: Context) -> str:
    """The combined wheel from the release's upstream wheel + the series + the backend wheel (overlay build)."""
    dist = ctx.work / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    ctx.run("wheel", [str(ctx.venv_python), "scripts/build_wheel.py", "--upstream-wheel", ctx.outputs["upstream_wheel"],
                      "--catch-wheel", ctx.outputs["backend_wheel"], "--out", str(dist)],
            next_action=f"see {ctx.log('wheel')}; then scripts/upgrade.py")
    built = sorted(dist.glob("torch-*.whl"))
    if len(built) != 1:
        raise StepFailed(f"expected one combined wheel in {dist}, found {len(built)}", "see the log", ctx.log("wheel"))
    ctx.outputs["combined_wheel"] = str(built[0])
    return f"{built[0].name} ({built[0].stat().st_size / 1e6:.0f} MB)"


def step_interfaces(ctx: Context) -> str:
    """The native interface check of the combined wheel against the upstream wheel (exit bits: 1 error, 8
    incompatible fail the step; 4 "review" passes with a note)."""
    cmd = [str(ctx.venv_python), "scripts/check_native_interfaces.py", ctx.outputs["upstream_wheel"],
           ctx.outputs["combined_wheel"], "--python", str(ctx.venv_python)]
    log = ctx.log("interfaces")
    nxt = f"read {log}: the combined wheel must keep upstream's native interfaces"
    proc = spawn(cmd, cwd=ctx.project, env=ctx.env(), next_action=nxt, log=log)
    log.write_text(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}\n[exit {proc.returncode}]\n", encoding="utf-8")
    if proc.returncode & (1 | 8) or proc.returncode not in (0, 4):
        raise StepFailed(f"check_native_interfaces.py exit {proc.returncode} (1 error, 8 incompatible)", nxt, log)
    return "compatible" + (" (items to review: see the log)" if proc.returncode == 4 else "")


def step_demo(ctx: Context) -> str:
    """A fresh venv with only the combined wheel (and the data set's package): examples/train_digits.py trains on
    ``mlu``, run from outside the checkout; the test accuracy must reach :data:`MIN_DEMO_ACCURACY`."""
    venv = ctx.work / "venv-demo"
    shutil.rmtree(venv, ignore_errors=True)
    nxt = (f"read {ctx.log('demo')}; install the combined wheel by hand in a venv and run the demo; then "
           "scripts/upgrade.py")
    ctx.run("demo", [ctx.python, "-m", "venv", str(venv)], next_action=nxt)
    python = venv / "bin" / "python"
    ctx.run("demo", [str(python), "-m", "pip", "install", "--progress-bar", "off", ctx.outputs["combined_wheel"],
                     *DEMO_DEPS], next_action=nxt)
    scratch = ctx.work / "demo-cwd"
    scratch.mkdir(exist_ok=True)
    script = scratch / "train_digits.py"
    for name in ("train_digits.py", "_demo.py"):  # the demo and the helpers the examples share (examples/_demo.py)
        if (ctx.project / "examples" / name).exists():
            shutil.copyfile(ctx.project / "examples" / name, scratch / name)
    env = {k: v for k, v in ctx.env().items() if k not in ("CATCH_ROOT", "PYTHONPATH")}
    out = ctx.run("demo", [str(python), str(script), "--device", "mlu", "--seed", "0", "--epochs",
                           str(ctx.demo_epochs)], cwd=scratch, next_action=nxt, env=env)
    match = _ACCURACY.search(out)
    if match is None or float(match.group(1)) < MIN_DEMO_ACCURACY:
        raise StepFailed(f"digits on mlu: accuracy {match.group(1) if match else 'not printed'} "
                         f"(< {MIN_DEMO_ACCURACY})", nxt, ctx.log("demo"))
    version = ctx.run("demo", [str(python), "-c", "import torch, torch_mlu; print(torch.__version__, "
                               "torch_mlu.__version__)"], cwd=scratch, next_action=nxt, env=env).split()
    return (f"test accuracy {match.group(1)} on mlu after {ctx.demo_epochs} epochs; "
            f"torch {' / torch_mlu '.join(version)}")


STEPS: dict[str, tuple[str, Callable[[Context], str]]] = {
    "fetch": ("fetch the release's upstream wheel", step_fetch),
    "build": ("build the backend against it", step_build),
    "suite": ("backend suite + patch proof gate", step_suite),
    "wheel": ("combined wheel from that release's wheel", step_wheel),
    "interfaces": ("native interface check", step_interfaces),
    "demo": ("digits CNN trains on mlu, fresh venv", step_demo),
}
