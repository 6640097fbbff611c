# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The hosted-CI pipelines (.github/workflows) and the scripts they call (ci/scripts).

Schema validity is checked with check-jsonschema's vendored GitHub workflow schema (PyPI, offline); the "no inline
logic" rule with ci/scripts/check_workflows.py; the scripts themselves run here on small git repos and on the real
upstream trees (marked ``real``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from fake_wheels import write_wheel

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))
CI_SCRIPTS = REPO_ROOT / "ci" / "scripts"
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, CI_SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


check_workflows = _load("check_workflows")
canary_issue = _load("canary_issue")


def _run(*cmd: str | Path, cwd: Path = REPO_ROOT, env: dict[str, str] | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, check=False)


def _commands(workflow: Path) -> list[str]:
    return [cmd for _line, script in check_workflows.run_steps(workflow)
            for _off, cmd in check_workflows.command_lines(script)]


def test_the_four_pipelines_exist() -> None:
    assert {w.name for w in WORKFLOWS} >= {"pull-request.yml", "recheck-open-prs.yml", "rebase-canary.yml",
                                           "release.yml"}


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_valid_against_the_github_schema(workflow: Path) -> None:
    proc = _run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", workflow)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    # `runs-on` missing and `step` instead of `steps`: both schema violations.
    broken.write_text("name: x\non: push\njobs:\n  a:\n    step:\n      - run: tox\n")
    proc = _run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", broken)
    assert proc.returncode == 1
    assert "broken.yml" in proc.stdout + proc.stderr


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_every_run_step_calls_a_repo_script_or_allowed_tool(workflow: Path) -> None:
    assert check_workflows.check_runs(workflow, REPO_ROOT) == []
    # ... and the checker saw real commands (a parse that finds nothing would pass vacuously).
    assert _commands(workflow)


def test_checker_cli_passes_on_the_repository() -> None:
    proc = _run(sys.executable, CI_SCRIPTS / "check_workflows.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(WORKFLOWS)} workflow file(s): ok" in proc.stdout


def test_checker_rejects_inline_logic_and_missing_scripts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "name: bad\non: push\njobs:\n  a:\n    runs-on: ubuntu-22.04\n    steps:\n"
        "      - run: scripts/no_such_script.py\n"          # line 7
        "      - run: |\n"
        "          pip install -e .\n"
        "          for f in *.whl; do echo $f; done\n"     # line 10
        "      - run: make wheel\n"                         # line 11
        "      - run: python -m pytest\n"                   # line 12
        "      - run: tox -e lint | tee log\n"              # line 13
        "      - run: python ../outside.py\n"               # line 14
        "      - run: FOO=1 bash ci/scripts/series_gate.sh ${{ github.workspace }}\n"  # fine
    )
    proc = _run(sys.executable, CI_SCRIPTS / "check_workflows.py", "--no-schema", bad)
    assert proc.returncode == 1
    errors = [line for line in proc.stdout.splitlines() if line.startswith("error:")]
    lines = [int(e.split(":")[2]) for e in errors]
    assert lines == [7, 10, 11, 12, 13, 14], proc.stdout
    assert "no_such_script.py does not exist" in errors[0]
    assert "inline shell logic" in errors[1] and "inline shell logic" in errors[4]
    assert "'make'" in errors[2] and "pytest" in errors[3] and "outside the repository" in errors[5]


def test_checker_reports_a_missing_file(tmp_path: Path) -> None:
    proc = _run(sys.executable, CI_SCRIPTS / "check_workflows.py", tmp_path / "nope.yml")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {tmp_path / 'nope.yml'}: no such file"


def test_pull_request_pipeline_runs_every_gate() -> None:
    commands = " \n".join(_commands(REPO_ROOT / ".github" / "workflows" / "pull-request.yml"))
    for needed in ("ci/scripts/series_gate.sh", "scripts/prove_patches.py", "scripts/build_wheel.py",
                   "scripts/check_native_interfaces.py", "tox run -e", "docker/build_images.sh dev release"):
        assert needed in commands, needed
    gate = (CI_SCRIPTS / "series_gate.sh").read_text()
    for sub in ("lint", "check", "apply", "status", "export --dry-run"):
        assert f"scripts/apply_patches.py {sub}" in gate, sub


def test_recheck_runs_when_patches_or_pin_change_on_main() -> None:
    from ruamel.yaml import YAML

    doc = YAML(typ="safe").load((REPO_ROOT / ".github" / "workflows" / "recheck-open-prs.yml").read_text())
    push = doc["on"]["push"]
    assert push["branches"] == ["main"]
    assert {"patches/**", "pytorch"} <= set(push["paths"])
    assert any("ci/scripts/recheck_open_prs.sh" in c
               for c in _commands(REPO_ROOT / ".github" / "workflows" / "recheck-open-prs.yml"))


def test_canary_is_nightly_publishes_the_report_and_tracks_an_issue() -> None:
    from ruamel.yaml import YAML

    path = REPO_ROOT / ".github" / "workflows" / "rebase-canary.yml"
    doc = YAML(typ="safe").load(path.read_text())
    assert doc["on"]["schedule"]
    job = doc["jobs"]["canary"]
    targets = {entry["target"] for entry in job["strategy"]["matrix"]["include"]}
    assert targets == {"latest-release", "origin/nightly"}
    uses = [step.get("uses", "") for step in job["steps"]]
    assert any(u.startswith("actions/upload-artifact") for u in uses)
    assert doc["permissions"]["issues"] == "write"
    commands = " ".join(_commands(path))
    assert "ci/scripts/rebase_canary.sh" in commands and "ci/scripts/canary_issue.py" in commands


# ---- the tracking issue of the canary -----------------------------------------------------------------------------

def test_canary_issue_conflict_without_issue_creates_one(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    cmds = canary_issue.plan("conflict", "v2.15.0", report, [{"number": 7, "title": "something else"}])
    create = cmds[-1]
    assert create[:3] == ["gh", "issue", "create"]
    assert create[create.index("--title") + 1] == "Rebase canary: the series conflicts with v2.15.0"
    assert create[create.index("--body-file") + 1] == str(report)
    assert cmds[0][:3] == ["gh", "label", "create"]  # the label exists before the issue uses it


def test_canary_issue_conflict_with_open_issue_comments_on_it(tmp_path: Path) -> None:
    title = canary_issue.title_for("origin/nightly")
    cmds = canary_issue.plan("conflict", "origin/nightly", tmp_path / "r.md",
                             [{"number": 3, "title": "other"}, {"number": 12, "title": title}])
    assert cmds == [["gh", "issue", "comment", "12", "--body-file", str(tmp_path / "r.md")]]


def test_canary_issue_ok_closes_the_open_issue_and_is_quiet_otherwise(tmp_path: Path) -> None:
    title = canary_issue.title_for("v2.15.0")
    cmds = canary_issue.plan("ok", "v2.15.0", tmp_path / "r.md", [{"number": 5, "title": title}])
    assert [c[:4] for c in cmds] == [["gh", "issue", "close", "5"]]
    assert canary_issue.plan("ok", "v2.15.0", tmp_path / "r.md", []) == []
    with pytest.raises(ValueError):
        canary_issue.plan("maybe", "v2.15.0", tmp_path / "r.md", [])


def test_canary_issue_cli_rejects_a_bad_result_file(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("v2.15.0\n")
    (tmp_path / "result").write_text("exploded\n")
    proc = _run(sys.executable, CI_SCRIPTS / "canary_issue.py", tmp_path, "--dry-run")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {tmp_path / 'result'}:1: expected 'ok' or 'conflict', found 'exploded'"


def test_publish_release_refuses_a_tag_that_does_not_match_the_wheel(tmp_path: Path) -> None:
    write_wheel(tmp_path, "torch", "2.13.0+cpu.catch1", {"torch/__init__.py": ""},
                tag="cp311-cp311-manylinux_2_28_x86_64")
    proc = _run("bash", CI_SCRIPTS / "publish_release.sh", "v2.13.0-catch2", tmp_path,
                env={"PYTHON": sys.executable, "PYTHONPATH": str(REPO_ROOT / "src")})
    assert proc.returncode == 2
    assert "belongs to tag v2.13.0-catch1, not v2.13.0-catch2" in proc.stderr


# ---- the scripts on real git repositories and real upstream trees ---------------------------------------------------

def _project_repo(tmp_path: Path) -> Path:
    """A git repository holding this project's tooling, series and CI scripts, committed on ``main``."""
    repo = tmp_path / "project"
    repo.mkdir()
    for name in ("patches", "scripts", "src", "ci"):
        shutil.copytree(REPO_ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "constraints.txt", repo)
    (repo / "README.md").write_text("project\n")
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "main"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True, env={**os.environ, **GIT_ENV})
    return repo


def _branch(repo: Path, name: str, edit: dict[str, str]) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "checkout", "-q", "-b", name, "main"], cwd=repo, check=True, env=env)
    for rel, text in edit.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", name], cwd=repo, check=True, env=env)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True, env=env)


@pytest.mark.real
@pytest.mark.slow
def test_check_merge_passes_a_healthy_pr_and_fails_one_that_breaks_the_series(tmp_path: Path) -> None:
    repo = _project_repo(tmp_path)
    series = (repo / "patches" / "series").read_text()
    _branch(repo, "docs-only", {"docs/guide.md": "how to use it\n"})
    _branch(repo, "breaks-series", {"patches/series": series + "9999-not-there.patch\n"})
    _branch(repo, "conflicts", {"README.md": "a different README\n"})
    # main moves on after the branches were made (the electron#39950 situation: each was green on the old main).
    env = {**os.environ, **GIT_ENV}
    (repo / "README.md").write_text("main's README\n")
    subprocess.run(["git", "commit", "-q", "-am", "main moves"], cwd=repo, check=True, env=env)
    script = repo / "ci" / "scripts" / "check_merge.sh"

    good = _run("bash", script, "main", "docs-only", cwd=repo)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "series healthy" in good.stdout

    broken = _run("bash", script, "main", "breaks-series", cwd=repo)
    assert broken.returncode == 1
    assert "9999-not-there.patch" in broken.stdout + broken.stderr
    assert "series gate FAILED" in broken.stdout

    conflict = _run("bash", script, "main", "conflicts", cwd=repo)
    assert conflict.returncode == 1
    assert "does not merge cleanly" in conflict.stdout
    # The repository is left as it was: no worktrees, main checked out, clean.
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout
    assert len(worktrees.splitlines()) == 1
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""


@pytest.mark.real
@pytest.mark.slow
def test_rebase_canary_reports_on_the_real_upstream_and_leaves_the_checkout_alone(tmp_path: Path) -> None:
    versions = ["2.13.0", "2.14.0", "2.14.1", "2.15.0"]
    tree = _run(sys.executable, REPO_ROOT / "scripts" / "upstream.py", "tree", *versions)
    assert tree.returncode == 0, tree.stderr
    source = Path(tree.stdout.strip())
    before = {p.name: p.read_bytes() for p in (REPO_ROOT / "patches").iterdir() if p.is_file()}
    out = tmp_path / "out"

    proc = _run("bash", CI_SCRIPTS / "rebase_canary.sh", "--onto", "latest-release", "--source", source, "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "target").read_text().strip() == "v2.15.0"  # the newest vX.Y.Z tag of the tree
    result = (out / "result").read_text().strip()
    assert result in ("ok", "conflict")
    report = (out / "report.md").read_text()
    if result == "ok":
        assert (out / "report.json").is_file() and "# Patch series rebase report" in report
    else:
        assert "conflicts with `v2.15.0`" in report and ".patch" in report and not (out / "report.json").exists()
    after = {p.name: p.read_bytes() for p in (REPO_ROOT / "patches").iterdir() if p.is_file()}
    assert after == before


def test_rebase_canary_rejects_a_missing_ref(tmp_path: Path) -> None:
    repo = tmp_path / "up"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    proc = _run("bash", CI_SCRIPTS / "rebase_canary.sh", "--onto", "v9.9.9", "--source", repo, "--out",
                tmp_path / "out")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {repo}: no commit 'v9.9.9' (fetch it first)"
    assert not (tmp_path / "out").exists()
