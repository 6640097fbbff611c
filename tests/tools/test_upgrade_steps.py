# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""scripts/upgrade.py's driver: resumable steps, the step report, the wheel flavour recorded in the manifest.

The steps themselves run for real in tox -e next and docs/upgrade.md (they need the new release's torch: GBs)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import git_cmd

from catch_tools.cli import upgrade as cli
from catch_tools.paths import repo_root
from catch_tools.pin import load_pin, manifest_path
from catch_tools.upgrade import runner, steps


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A scratch checkout as scripts/rebase.py leaves it: the repository's pin in the work tree, an older in HEAD."""
    root = tmp_path / "proj"
    shutil.copytree(repo_root() / "patches", root / "patches")
    (root / "catch").mkdir()
    (root / "catch" / "CMakeLists.txt").write_text("project(x)\n")
    manifest = manifest_path(root)
    pinned = manifest.read_text()
    manifest.write_text(pinned.replace(f'tag = "{load_pin(manifest).tag}"', 'tag = "v2.12.0"'))
    git_cmd(root, "init", "-q")
    git_cmd(root, "add", "-A")
    git_cmd(root, "-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-q", "-m", "series on v2.12.0")
    manifest.write_text(pinned)
    return root


def fake_steps(monkeypatch: pytest.MonkeyPatch, fail: set[str], calls: list[str]) -> None:
    def make(name: str):  # noqa: ANN202
        def step(ctx: steps.Context) -> str:
            calls.append(name)
            if name in fail:
                raise steps.StepFailed(f"{name} broke", f"fix {name}, then scripts/upgrade.py")
            ctx.outputs[name] = f"/out/{name}"
            return f"{name} ok"
        return step
    monkeypatch.setattr(steps, "STEPS", {n: (t, make(n)) for n, (t, _f) in steps.STEPS.items()})


def test_a_failed_step_stops_the_run_and_the_rerun_resumes_there(project: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    fake_steps(monkeypatch, {"suite"}, calls)
    ctx = steps.Context(project=project, work=tmp_path / "work", release="2.15.0")
    rep = runner.run(ctx)
    assert not rep["ok"]
    assert [r["status"] for r in rep["steps"]] == ["passed", "passed", "failed", "not run", "not run", "not run"]
    failed = rep["steps"][2]
    assert failed["detail"] == "suite broke" and failed["next"] == "fix suite, then scripts/upgrade.py"
    assert calls == ["fetch", "build", "suite"]
    # the next run (after the fix) starts at the failed step and keeps the earlier steps' outputs
    calls.clear()
    fake_steps(monkeypatch, set(), calls)
    rep = runner.run(steps.Context(project=project, work=tmp_path / "work", release="2.15.0"))
    assert rep["ok"] and calls == ["suite", "wheel", "interfaces", "demo"]
    assert rep["outputs"]["fetch"] == "/out/fetch"
    # a change to catch/ (or another checkout, whose manifest lacks fetch's edit) reruns every step, fetch included;
    # --from reruns from the given step
    calls.clear()
    (project / "catch" / "CMakeLists.txt").write_text("project(y)\n")
    assert runner.run(steps.Context(project=project, work=tmp_path / "work", release="2.15.0"))["ok"]
    assert calls == ["fetch", "build", "suite", "wheel", "interfaces", "demo"]
    calls.clear()
    runner.run(steps.Context(project=project, work=tmp_path / "work", release="2.15.0"), start="wheel")
    assert calls == ["wheel", "interfaces", "demo"]


def test_another_release_starts_over(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    fake_steps(monkeypatch, set(), calls)
    runner.run(steps.Context(project=project, work=tmp_path / "work", release="2.15.0"))
    calls.clear()
    runner.run(steps.Context(project=project, work=tmp_path / "work", release="2.16.0"))
    assert calls == list(steps.STEPS)


def test_cli_writes_the_report_and_exits_1_on_failure(project: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    fake_steps(monkeypatch, {"demo"}, [])
    code = cli.main(["--project", str(project), "--work", str(tmp_path / "w"), "--json",
                     "--report", str(tmp_path / "r" / "up")])
    assert code == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "r" / "up.json").read_text())
    assert printed["release"] == "2.13.0" and printed["steps"][-1]["status"] == "failed"
    markdown = (tmp_path / "w" / "upgrade-report.md").read_text()
    assert "| demo | digits CNN trains on mlu, fresh venv | failed |" in markdown and "fix demo" in markdown
    assert cli.main(["status", "--project", str(project), "--work", str(tmp_path / "w")]) == 1


def test_unknown_from_step_is_a_user_error(project: Path, tmp_path: Path) -> None:
    from catch_tools.errors import UserError

    with pytest.raises(UserError, match="not a step"):
        runner.run(steps.Context(project=project, work=tmp_path / "w", release="2.15.0"), start="nope")


def test_flavour_is_recorded_in_the_manifest_once(project: Path, tmp_path: Path) -> None:
    wheel = tmp_path / "torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("torch/version.py", "__version__ = '2.15.0+cu132'\ngit_version = '" + "a" * 40 + "'\n")
    assert steps.wheel_flavour(wheel) == "cu132"
    for _ in range(2):
        steps.record_flavour(project, "2.15.0", "cu132", "the default build")
    text = manifest_path(project).read_text()
    assert text.count("wheel_flavour") == 1 and 'wheel_flavour = "cu132: the default build"' in text
    assert load_pin(manifest_path(project)).wheel_version == "2.15.0"
    # the backend's version regex (catch/pyproject.toml) still reads it: <base>+catch<series>
    assert load_pin(manifest_path(project)).combined_version == "2.15.0+catch1"
