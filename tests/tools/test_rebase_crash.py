# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""kill -9 at every step of a rebase, then recovery: --continue gives the uninterrupted result, --abort the start.

``CATCH_FAULT=rebase.<point>[:<n>]`` (:mod:`catch_tools.faults`) makes the process SIGKILL itself the n-th time it
passes ``<point>`` (:data:`catch_tools.rebase.flow.CRASH_POINTS`); the kernel kills it like ``kill -9`` would, with no
cleanup.
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest
from test_rebase_support import edit, git, make_project, make_upstream, release, run_cli, snapshot

from catch_tools.rebase.flow import CRASH_POINTS

A10 = ("a", "Change a", {"torch/a.py": lambda t: edit(t, "a line 10\n", "a line 10 patched\n")})
B20 = ("b", "Change b", {"torch/b.py": lambda t: edit(t, "b line 20\n", "b line 20 patched\n")})
C5 = ("c", "Change c", {"torch/c.py": lambda t: edit(t, "c line 5\n", "c line 5 patched\n")})


def build(root: Path, conflict: bool) -> tuple[Path, Path]:
    """Upstream with v2.14.0 (offset in a; a 3-way change in c) and v2.14.1 (a conflict in b when asked)."""
    up = make_upstream(root / "up")
    proj = make_project(root / "proj", up, [A10, B20, C5])
    a, c = (up / "torch/a.py").read_text(), (up / "torch/c.py").read_text()
    release(up, "2.14.0", {"torch/a.py": "new\n" * 2 + a, "torch/c.py": edit(c, "c line 7\n", "c line 7 up\n")})
    b = (up / "torch/b.py").read_text()
    release(up, "2.14.1", {"torch/b.py": edit(b, "b line 20\n", "b line 20 upstream\n") if conflict else b + "end\n"})
    return proj, up


def resolve_b(up: Path) -> None:
    text = (up / "torch/b.py").read_text()
    head, rest = text.split("<<<<<<< HEAD\n")
    tail = rest.split(">>>>>>> ", 1)[1].split("\n", 1)[1]
    (up / "torch/b.py").write_text(head + "b line 20 upstream, patched\n" + tail)


def outcome(proj: Path, up: Path) -> dict[str, object]:
    """What a finished rebase produced (compared between crashed-and-recovered and uninterrupted runs)."""
    rep = json.loads((up / ".git" / "catch-rebase-report.json").read_text())
    return {
        "patches": {p.name: p.read_bytes() for p in sorted((proj / "patches").iterdir())},
        "index": git(proj, "ls-files", "--stage"),
        "refs": git(up, "for-each-ref", "--format=%(refname) %(objectname)", "refs/patches", "refs/catch-rebase"),
        "head": git(up, "rev-parse", "HEAD"),
        "status": git(up, "status", "--porcelain", "--untracked-files=all"),
        "statuses": [(p["name"], [(s["onto"], s["status"]) for s in p["steps"]]) for p in rep["patches"]],
        "range_diff": rep["range_diff"],
        "state_left": (up / ".git" / "catch-rebase").exists(),
    }


ARGS = ("--onto", "v2.14.1", "--via", "v2.14.0")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    results = {}
    for conflict in (False, True):
        proj, up = build(tmp_path_factory.mktemp(f"ref{int(conflict)}"), conflict)
        res = run_cli(proj, up, *ARGS)
        if conflict:
            assert res.returncode == 1
            resolve_b(up)
            res = run_cli(proj, up, "--continue")
        assert res.returncode == 0, res.stderr
        results[str(conflict)] = outcome(proj, up)
    return results


CLEAN_POINTS = ["start", "replay", "apply", "apply:2", "apply:3", "step", "step:2", "export", "pin", "report"]


@pytest.mark.parametrize("point", CLEAN_POINTS)
def test_crash_then_continue_finishes_like_an_uninterrupted_run(tmp_path: Path, point: str,
                                                                 reference: dict[str, dict[str, object]]) -> None:
    proj, up = build(tmp_path, conflict=False)
    crashed = run_cli(proj, up, *ARGS, env={"CATCH_FAULT": f"rebase.{point}"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert "rebase in progress" in run_cli(proj, up, "status").stdout
    again = run_cli(proj, up, *ARGS)
    assert again.returncode == 2 and "already in progress" in again.stderr
    res = run_cli(proj, up, "--continue")
    assert res.returncode == 0, res.stderr
    assert outcome(proj, up) == reference["False"]


@pytest.mark.parametrize("point", ["start", "replay", "apply:3", "step", "export", "pin", "report"])
def test_crash_then_abort_restores_the_start(tmp_path: Path, point: str) -> None:
    proj, up = build(tmp_path, conflict=False)
    before = snapshot(proj, up)
    crashed = run_cli(proj, up, *ARGS, env={"CATCH_FAULT": f"rebase.{point}"})
    assert crashed.returncode == -signal.SIGKILL
    res = run_cli(proj, up, "--abort")
    assert res.returncode == 0, res.stderr
    assert snapshot(proj, up) == before


@pytest.mark.parametrize("point", ["apply:4", "conflict"])
def test_crash_around_a_conflict_then_resolve_and_continue(tmp_path: Path, point: str,
                                                           reference: dict[str, dict[str, object]]) -> None:
    proj, up = build(tmp_path, conflict=True)
    crashed = run_cli(proj, up, *ARGS, env={"CATCH_FAULT": f"rebase.{point}"})
    assert crashed.returncode == -signal.SIGKILL
    res = run_cli(proj, up, "--continue")
    if point == "conflict":  # the conflict state was saved: --continue refuses while the markers are there
        assert res.returncode == 2 and "torch/b.py" in res.stderr and "conflict markers remain" in res.stderr
    else:  # killed before the conflict was saved: the patch is retried and the conflict reported
        assert res.returncode == 1 and "Change-b" in res.stderr
    assert "CONFLICT in torch/b.py" in run_cli(proj, up, "status").stdout
    resolve_b(up)
    res = run_cli(proj, up, "--continue")
    assert res.returncode == 0, res.stderr
    assert outcome(proj, up) == reference["True"]


def test_crash_while_committing_the_resolution(tmp_path: Path, reference: dict[str, dict[str, object]]) -> None:
    proj, up = build(tmp_path, conflict=True)
    assert run_cli(proj, up, *ARGS).returncode == 1
    resolve_b(up)
    crashed = run_cli(proj, up, "--continue", env={"CATCH_FAULT": "rebase.resolve"})
    assert crashed.returncode == -signal.SIGKILL
    res = run_cli(proj, up, "--continue")
    assert res.returncode == 0, res.stderr
    assert outcome(proj, up) == reference["True"]


def test_every_crash_point_is_exercised() -> None:
    used = {p.split(":")[0] for p in CLEAN_POINTS} | {"conflict", "resolve"}
    assert used == set(CRASH_POINTS)


@pytest.mark.parametrize("point", ["replay", "apply:2", "export"])
def test_ctrl_c_reports_one_line_and_continue_finishes(tmp_path: Path, point: str,
                                                       reference: dict[str, dict[str, object]]) -> None:
    proj, up = build(tmp_path, conflict=False)
    res = run_cli(proj, up, *ARGS, env={"CATCH_FAULT": f"rebase.{point},interrupt"})
    assert res.returncode == 130 and res.stderr.strip() == "error: interrupted"
    res = run_cli(proj, up, "--continue")
    assert res.returncode == 0, res.stderr
    assert outcome(proj, up) == reference["False"]


def test_continue_from_another_project_is_refused(tmp_path: Path) -> None:
    proj, up = build(tmp_path, conflict=True)
    assert run_cli(proj, up, *ARGS).returncode == 1
    other = tmp_path / "other"
    shutil.copytree(proj, other)
    res = run_cli(other, up, "--continue")
    assert res.returncode == 2 and "belongs to the project" in res.stderr
