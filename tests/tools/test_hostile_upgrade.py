# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Careless and hostile input to scripts/upgrade.py: it starts only from a pin a rebase moved, a run that fails leaves
the checkout byte for byte as it found it, a damaged state file or a --work/--report on a regular file is one line,
``status`` says when no upgrade has run, and a missing manifest's advice names the tool's own options.

The steps run on scratch checkouts; the real ``fetch`` finds a small torch wheel made here in a private cache, and the
steps after it fail (or pass) on purpose: nothing is downloaded or built."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git_cmd

from catch_tools.cli import upgrade as cli
from catch_tools.cli import wheel as wheel_cli
from catch_tools.errors import UserError, run_cli
from catch_tools.paths import repo_root
from catch_tools.pin import load_pin, manifest_path, update_pin
from catch_tools.upgrade import runner, steps

RELEASE = "2.15.0"
NEW_COMMIT = "d0f2af8b66b20da4baa50644c0cd3f887a2eae2e"


def make_checkout(root: Path, *, rebased: bool = True, git: bool = True) -> Path:
    """A scratch Catch checkout (``patches/`` and ``catch/``), committed; ``rebased``: then the pin moved to v2.15.0 in
    the work tree the way scripts/rebase.py writes it (tag, commit, wheel_version), not committed."""
    shutil.copytree(repo_root() / "patches", root / "patches")
    (root / "catch").mkdir()
    (root / "catch" / "CMakeLists.txt").write_text("project(x)\n")
    if git:
        git_cmd(root, "init", "-q")
        git_cmd(root, "add", "-A")
        git_cmd(root, "-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-q", "-m", "series")
    if rebased:
        update_pin(manifest_path(root), tag=f"v{RELEASE}", commit=NEW_COMMIT, wheel_version=f"{RELEASE}+cpu")
    return root


def checksum(root: Path) -> str:
    """sha256 over every path and file's bytes under ``root`` (``.git`` aside) and ``git status --porcelain``."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if ".git" not in rel.parts:
            digest.update(str(rel).encode() + b"\0" + (path.read_bytes() if path.is_file() else b"<dir>") + b"\0")
    if (root / ".git").exists():
        digest.update(git_cmd(root, "status", "--porcelain", "--untracked-files=all").encode())
    return digest.hexdigest()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private CATCH_CACHE holding a small torch 2.15.0+cpu wheel for this Python, where ``fetch`` looks first."""
    root = tmp_path / "cache"
    monkeypatch.setenv("CATCH_CACHE", str(root))
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    (root / "wheels").mkdir(parents=True)
    with zipfile.ZipFile(root / "wheels" / f"torch-{RELEASE}+cpu-{tag}-{tag}-linux_x86_64.whl", "w") as zf:
        zf.writestr("torch/version.py", f"__version__ = '{RELEASE}+cpu'\ngit_version = '{NEW_COMMIT}'\n")
    return root


Step = Callable[[steps.Context], str]


def replace_steps(monkeypatch: pytest.MonkeyPatch, calls: list[str], fakes: dict[str, Step] | None = None, *,
                  real: tuple[str, ...] = ()) -> None:
    """Steps that record their call and pass, except the ``fakes`` given and the ``real`` ones (the module's own)."""
    def make(name: str, real_func: Step) -> Step:
        def step(ctx: steps.Context) -> str:
            calls.append(name)
            if name in real:
                return real_func(ctx)
            return (fakes or {}).get(name, lambda _ctx: f"{name} ok")(ctx)
        return step
    monkeypatch.setattr(steps, "STEPS", {n: (t, make(n, f)) for n, (t, f) in steps.STEPS.items()})


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def test_refuses_to_start_from_a_pin_no_rebase_moved(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    project = make_checkout(tmp_path / "proj", rebased=False)
    before, calls = checksum(project), []
    replace_steps(monkeypatch, calls)
    work = tmp_path / "work"
    assert run_cli(cli.main, ["--project", str(project), "--work", str(work)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: {manifest_path(project)}: the pin (v2.13.0) is the one committed in HEAD")
    # the rebase to run first, on the same line, with this checkout and the upstream tree it needs; and --force
    assert f"python scripts/rebase.py --project {project} --source DIR --onto vX.Y.Z" in line and "--force" in line
    assert calls == [] and not work.exists() and checksum(project) == before
    # --force starts anyway
    assert run_cli(cli.main, ["--project", str(project), "--work", str(work), "--force", "--json"]) == 0
    assert calls == list(steps.STEPS)


def test_refuses_when_no_git_history_tells_whether_the_pin_moved(tmp_path: Path, cache: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    project = make_checkout(tmp_path / "proj", git=False)
    before, calls = checksum(project), []
    replace_steps(monkeypatch, calls)
    assert run_cli(cli.main, ["--project", str(project), "--work", str(tmp_path / "work")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "no git work tree" in line and "scripts/rebase.py" in line and "--force" in line
    assert calls == [] and not (tmp_path / "work").exists() and checksum(project) == before


def test_a_failed_run_leaves_the_checkout_as_it_found_it_and_the_next_run_resumes(tmp_path: Path, cache: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                                   capsys: pytest.CaptureFixture[str]
                                                                                   ) -> None:
    project = make_checkout(tmp_path / "proj")
    before, status_before = checksum(project), git_cmd(project, "status", "--porcelain")
    calls: list[str] = []
    seen: list[str] = []

    def build_fails(ctx: steps.Context) -> str:
        seen.append(manifest_path(ctx.project).read_text())
        raise steps.StepFailed("cmake broke", "fix it, then scripts/upgrade.py")

    replace_steps(monkeypatch, calls, {"build": build_fails}, real=("fetch",))
    argv = ["--project", str(project), "--work", str(tmp_path / "work"), "--json"]
    assert run_cli(cli.main, argv) == 1
    rows = {r["step"]: r for r in json.loads(capsys.readouterr().out)["steps"]}
    assert rows["fetch"]["status"] == "passed" and rows["build"]["status"] == "failed"
    # fetch did record its wheel in the manifest for the build; the failed run took it back
    assert 'wheel_flavour = "cpu: the CPU build"' in seen[0]
    assert checksum(project) == before and git_cmd(project, "status", "--porcelain") == status_before
    # the next run resumes at build, with fetch's edit written again first; a run where every step passes keeps it
    calls.clear()
    seen.clear()
    replace_steps(monkeypatch, calls, {"build": lambda ctx: seen.append(manifest_path(ctx.project).read_text()) or ""})
    assert run_cli(cli.main, argv) == 0
    assert calls == ["build", "suite", "wheel", "interfaces", "demo"]
    assert 'wheel_flavour = "cpu: the CPU build"' in seen[0] and seen[0] == manifest_path(project).read_text()
    assert load_pin(manifest_path(project)).wheel_version == f"{RELEASE}+cpu"


@pytest.mark.parametrize("error", [KeyboardInterrupt(), UserError("bad input"), RuntimeError("a bug")])
def test_an_interrupted_run_also_undoes_its_manifest_edit(tmp_path: Path, cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          error: BaseException) -> None:
    project = make_checkout(tmp_path / "proj")
    before = checksum(project)

    def build(_ctx: steps.Context) -> str:
        raise error

    replace_steps(monkeypatch, [], {"build": build}, real=("fetch",))
    with pytest.raises(type(error)):
        runner.run(steps.Context(project=project, work=tmp_path / "work", release=RELEASE))
    assert checksum(project) == before


def test_an_interpreter_that_does_not_exist_fails_the_step_naming_it(tmp_path: Path, cache: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_checkout(tmp_path / "proj")
    before = checksum(project)
    replace_steps(monkeypatch, [], real=("fetch", "build"))
    python = tmp_path / "nonexistent" / "python"
    rep = runner.run(steps.Context(project=project, work=tmp_path / "work", release=RELEASE, python=str(python)))
    build = rep["steps"][1]
    assert build["status"] == "failed" and build["detail"].startswith(f"cannot run {python}: ")
    assert str(python) in Path(build["log"]).read_text() and checksum(project) == before


DAMAGED_STATES = {
    "array": b"[]\n",
    "truncated": b'{"release": "2.15.0", "steps": {"fetch": ',
    "steps not an object": b'{"release": "2.15.0", "steps": []}',
    "unknown step": b'{"release": "2.15.0", "steps": {"bogus": {"status": "passed", "seconds": 1, "detail": "", '
                    b'"next": ""}}}',
    "unknown status": b'{"release": "2.15.0", "steps": {"fetch": {"status": "done", "seconds": 1, "detail": "", '
                      b'"next": ""}}}',
    "seconds a string": b'{"release": "2.15.0", "steps": {"fetch": {"status": "passed", "seconds": "1", '
                        b'"detail": "", "next": ""}}}',
    "release a number": b'{"release": 2.15}',
    "outputs a list": b'{"release": "2.15.0", "outputs": ["x"]}',
    "not UTF-8": b'{"release": "2.15.0",\n "sources": "\xff"}',
    "a directory": b"",
}


@pytest.mark.parametrize("command", [[], ["status"]], ids=["run", "status"])
@pytest.mark.parametrize("kind", list(DAMAGED_STATES))
def test_a_damaged_state_file_is_one_line_naming_it(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], kind: str,
                                                    command: list[str]) -> None:
    project = make_checkout(tmp_path / "proj")
    work = tmp_path / "work"
    state = work / "state.json"
    if kind == "a directory":
        state.mkdir(parents=True)
    else:
        work.mkdir()
        state.write_bytes(DAMAGED_STATES[kind])
    before, work_before, calls = checksum(project), checksum(work), []
    replace_steps(monkeypatch, calls)
    assert run_cli(cli.main, [*command, "--project", str(project), "--work", str(work)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: {state}") and "not an upgrade state; remove it to start the steps over" in line
    assert calls == [] and checksum(project) == before and checksum(work) == work_before


def test_status_before_any_run_says_that_no_upgrade_has_run(tmp_path: Path, cache: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    project = make_checkout(tmp_path / "proj")
    work = tmp_path / "work"
    assert run_cli(cli.main, ["status", "--project", str(project), "--work", str(work)]) == 1
    out = capsys.readouterr().out
    assert out == f"no upgrade to torch {RELEASE} has run in {work}: run scripts/upgrade.py\n"
    assert not work.exists()
    # --json: the report of no run (every step pending) on stdout, the line on stderr
    assert run_cli(cli.main, ["status", "--project", str(project), "--work", str(work), "--json"]) == 1
    captured = capsys.readouterr()
    assert {r["status"] for r in json.loads(captured.out)["steps"]} == {"pending"}
    assert "no upgrade to torch" in captured.err
    # the state of another release's run in the same directory is not this release's
    work.mkdir()
    (work / "state.json").write_text(json.dumps({"release": "2.14.0", "steps": {"fetch": {
        "status": "failed", "seconds": 1.0, "detail": "x", "next": "y"}}}))
    assert run_cli(cli.main, ["status", "--project", str(project), "--work", str(work)]) == 1
    out = capsys.readouterr().out
    assert "FAILED" not in out and out.startswith(f"no upgrade to torch {RELEASE} has run in {work} (its last run "
                                                  "was to torch 2.14.0)")


@pytest.mark.parametrize("args", [["--work", "{f}"], ["--work", "{f}/sub"], ["status", "--work", "{f}"],
                                  ["--work", "{w}", "--report", "{f}/up"], ["--work", "{w}", "--report", "{d}"]])
def test_work_or_report_on_a_file_is_one_line(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    project = make_checkout(tmp_path / "proj")
    regular = tmp_path / "notes.txt"
    regular.write_text("my notes\n")
    (tmp_path / "dir.md").mkdir()  # --report PATH writes PATH.md: here a directory
    places = {"f": str(regular), "w": str(tmp_path / "work"), "d": str(tmp_path / "dir")}
    before, calls = checksum(project), []
    replace_steps(monkeypatch, calls)
    argv = [a.format(**places) for a in args]
    assert run_cli(cli.main, [*argv, "--project", str(project)]) == 2
    line = one_error_line(capsys.readouterr().err)
    named = tmp_path / "dir.md" if "{d}" in args else regular
    assert line.startswith(f"error: {named}: --") and ("--report" in line) == ("--report" in args)
    assert calls == [] and regular.read_text() == "my notes\n" and checksum(project) == before
    assert not (tmp_path / "work").exists()


def test_a_missing_manifest_is_advised_with_the_tools_own_options(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli(cli.main, ["--project", str(empty)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "pin manifest not found: pass --project DIR" in line and "--pin" not in line
    assert run_cli(wheel_cli.main, ["--patches-dir", str(empty), "--out", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "pin manifest not found: pass --patches-dir DIR" in line and "--pin" not in line
