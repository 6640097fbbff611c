# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Rebase on small synthetic repositories: every status, conflicts with --continue/--abort, --drop, --via."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_rebase_support import (
    edit,
    fake_sha,
    git,
    lines,
    make_project,
    make_upstream,
    release,
    run_cli,
    series_names,
    snapshot,
)

from catch_tools.pin import load_pin, manifest_path

A10 = ("a", "Change a line 10", {"torch/a.py": lambda t: edit(t, "a line 10\n", "a line 10 patched\n")})
B20 = ("b", "Change b line 20", {"torch/b.py": lambda t: edit(t, "b line 20\n", "b line 20 patched\n")})
C5 = ("c", "Change c line 5", {"torch/c.py": lambda t: edit(t, "c line 5\n", "c line 5 patched\n")})
D30 = ("d", "Change d line 30", {"torch/d.py": lambda t: edit(t, "d line 30\n", "d line 30 patched\n")})


def report_of(upstream: Path) -> dict:
    return json.loads((upstream / ".git" / "catch-rebase-report.json").read_text())


def statuses(report: dict) -> list[str]:
    """Final status of each input patch, in series order."""
    return [p["status"] for p in report["patches"]]


def file_of(upstream: Path, rel: str) -> str:
    return (upstream / rel).read_text()


@pytest.fixture
def up(tmp_path: Path) -> Path:
    return make_upstream(tmp_path / "up")


def test_clean_and_offset_rebase_moves_pin_and_refreshes_only_the_moved_patch(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, B20, C5])
    names = series_names(proj)
    before = {p.name: p.read_bytes() for p in (proj / "patches").iterdir() if p.suffix == ".patch"}
    b = file_of(up, "torch/b.py")
    new_base = release(up, "2.14.0", {"torch/b.py": "header\n" * 3 + b, "torch/d.py": lines("d", 45)})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 0, res.stderr
    assert "INFO" not in res.stderr  # without -v and without a terminal: no progress lines
    rep = report_of(up)
    assert statuses(rep) == ["clean", "offset", "clean"]
    assert [p["name"] for p in rep["patches"]] == names == series_names(proj)
    assert "offset +3" in rep["patches"][1]["steps"][0]["detail"]
    # the patches that did not move keep their bytes; the moved one is refreshed (test_rebase_refresh.py)
    after = {p.name: p.read_bytes() for p in (proj / "patches").iterdir() if p.suffix == ".patch"}
    assert [n for n in names if after[n] != before[n]] == [names[1]]
    pin = load_pin(manifest_path(proj))
    assert (pin.tag, pin.commit, pin.wheel_version) == ("v2.14.0", fake_sha("2.14.0"), "2.14.0+cpu")
    assert fake_sha("2.14.0") in git(proj, "ls-files", "--stage", "pytorch")
    # constraints.txt pins the new release for every install (PEP 440: no local label in a constraint's ==)
    assert "torch==2.14.0\n" in (proj / "constraints.txt").read_text()
    assert "torch==2.13.0" not in (proj / "constraints.txt").read_text()
    assert git(up, "rev-parse", "refs/patches/base") == new_base
    applied = git(up, "rev-parse", "refs/patches/applied")
    assert git(up, "rev-list", "--count", f"{new_base}..{applied}") == "3"
    assert "b line 20 patched" in git(up, "show", f"{applied}:torch/b.py")
    assert git(up, "log", "-1", "--format=%an", applied) == "Ada Maintainer"
    assert not (up / ".git" / "catch-rebase").exists()
    assert git(up, "rev-parse", "main") == new_base  # HEAD was detached first: the branch did not move
    assert git(up, "rev-parse", "HEAD") == applied and git(up, "status", "--porcelain") == ""
    assert "1:" in rep["range_diff"] and "Change b line 20" in rep["range_diff"]
    assert (up / ".git" / "catch-rebase-report.md").read_text().count("| `000") == 3
    assert [p["name"] for p in rep["patches"] if p["file_changed"]] == [names[1]]


def test_three_way_when_context_changed_refreshes_the_patch(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, B20])
    names = series_names(proj)
    old_b = (proj / "patches" / names[1]).read_bytes()
    release(up, "2.14.0", {"torch/a.py": edit(file_of(up, "torch/a.py"), "a line 12\n", "a line 12 upstream\n")})
    res = run_cli(proj, up, "-v", "--onto", "v2.14.0")  # -v: each step is logged (no terminal: no live display)
    assert res.returncode == 0, res.stderr
    assert f"INFO: v2.14.0: {names[0]}: 3way\n" in res.stderr
    assert "INFO: v2.14.0: moved 1 patch(es) in memory" in res.stderr
    rep = report_of(up)
    assert statuses(rep) == ["3way", "clean"]
    text = (proj / "patches" / names[0]).read_text()
    assert " a line 12 upstream\n" in text and "+a line 10 patched\n" in text
    assert (proj / "patches" / names[1]).read_bytes() == old_b
    assert [p["name"] for p in rep["patches"] if p["file_changed"]] == [names[0]]


def test_conflict_stops_then_continue_after_resolution(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, B20, C5])
    names = series_names(proj)
    release(up, "2.14.0", {"torch/b.py": edit(file_of(up, "torch/b.py"), "b line 20\n", "b line 20 upstream\n")})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 1
    assert names[1] in res.stderr and "torch/b.py" in res.stderr and "--continue" in res.stderr
    status = run_cli(proj, up, "status")
    assert f"{names[1]}: CONFLICT in torch/b.py" in status.stdout and f"{names[0]}: clean" in status.stdout
    # markers still there: refused with the file and line
    again = run_cli(proj, up, "--continue")
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    marker_line = file_of(up, "torch/b.py").splitlines().index("<<<<<<< HEAD") + 1
    assert f"torch/b.py:{marker_line}: conflict markers remain" in again.stderr
    write = file_of(up, "torch/b.py")
    resolved = write.split("<<<<<<< HEAD\n")[0] + "b line 20 upstream and patched\n" + write.split(">>>>>>> ")[1].split(
        "\n", 1)[1]
    (up / "torch/b.py").write_text(resolved)
    done = run_cli(proj, up, "--continue")
    assert done.returncode == 0, done.stderr
    rep = report_of(up)
    assert statuses(rep) == ["clean", "resolved", "clean"]
    assert rep["patches"][1]["steps"][0]["files"] == ["torch/b.py"]
    assert "+b line 20 upstream and patched" in (proj / "patches" / names[1]).read_text()
    assert "<<<<<<<" not in git(up, "show", "refs/patches/applied:torch/b.py")


def test_conflict_then_abort_restores_everything_byte_identical(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, B20, C5])
    release(up, "2.14.0", {"torch/b.py": edit(file_of(up, "torch/b.py"), "b line 20\n", "b line 20 upstream\n")})
    git(up, "update-ref", "refs/patches/base", "v2.13.0")  # a previous apply_patches.py run left its refs
    before = snapshot(proj, up)
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1
    (up / "torch/b.py").write_text("half edited\n")
    (up / "scratch.txt").write_text("maintainer notes\n")
    res = run_cli(proj, up, "--abort")
    assert res.returncode == 0, res.stderr
    assert snapshot(proj, up) == before
    assert "no rebase in progress" in run_cli(proj, up, "status").stdout


def test_upstreamed_by_patch_id_names_the_upstream_commit(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, B20, C5])
    names = series_names(proj)
    # upstream merged our b change as its own commit, then did more work before the release
    git(up, "apply", "--index", str(proj / "patches" / names[1]))
    git(up, "commit", "-q", "-m", "Fix b (from Catch)")
    fix = git(up, "rev-parse", "HEAD")
    release(up, "2.14.0", {"torch/b.py": edit(file_of(up, "torch/b.py"), "b line 1\n", "b line 1 later\n")})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 0, res.stderr
    rep = report_of(up)
    assert statuses(rep) == ["clean", "upstreamed", "clean"]
    assert rep["patches"][1]["steps"][0]["upstream_commit"] == fix
    # the engine's export renumbers the files after the gap; the third patch's change is kept byte-for-byte
    assert series_names(proj) == [names[0], names[2].replace("0003-", "0002-")]
    assert rep["patches"][2]["new_name"] == names[2].replace("0003-", "0002-")
    assert not (proj / "patches" / names[2]).exists()
    assert rep["inputs"] == 3 and rep["outputs"] == 2


def test_upstreamed_inside_a_release_commit_is_detected_as_empty(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, C5])
    c = edit(file_of(up, "torch/c.py"), "c line 5\n", "c line 5 patched\n")
    release(up, "2.14.0", {"torch/c.py": c.replace("c line 30\n", "c line 30 also\n")})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 0, res.stderr
    step = report_of(up)["patches"][1]["steps"][0]
    assert step["status"] == "upstreamed" and step["upstream_commit"] is None
    assert len(series_names(proj)) == 1 and "Change-a" in series_names(proj)[0]


def test_file_renamed_upstream_follows_the_rename(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, C5])
    c = file_of(up, "torch/c.py")
    release(up, "2.14.0", {"torch/_impl/c.py": c.replace("c line 39\n", "c line 39 moved\n")},
            renames={"torch/c.py": "torch/_impl/c.py"})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 0, res.stderr
    assert statuses(report_of(up)) == ["clean", "3way"]
    text = (proj / "patches" / series_names(proj)[1]).read_text()
    assert "diff --git a/torch/_impl/c.py b/torch/_impl/c.py" in text and "+c line 5 patched" in text


def test_file_deleted_upstream_conflicts_then_drop_with_reason(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, D30, C5])
    names = series_names(proj)
    release(up, "2.14.0", {"torch/d.py": None})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 1 and names[1] in res.stderr and "torch/d.py" in res.stderr
    no_reason = run_cli(proj, up, "--drop", names[1])
    assert no_reason.returncode == 2 and "--reason" in no_reason.stderr
    res = run_cli(proj, up, "--drop", names[1], "--reason", "torch/d.py was removed upstream in 2.14")
    assert res.returncode == 0, res.stderr
    rep = report_of(up)
    assert statuses(rep) == ["clean", "dropped", "clean"]
    assert rep["patches"][1]["reason"] == "torch/d.py was removed upstream in 2.14"
    assert "torch/d.py was removed upstream in 2.14" in (up / ".git" / "catch-rebase-report.md").read_text()
    assert [n.split("-", 1)[1] for n in series_names(proj)] == [names[0].split("-", 1)[1], names[2].split("-", 1)[1]]


def test_explicit_drop_at_start_and_report_path(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, B20, C5])
    names = series_names(proj)
    release(up, "2.14.0", {"torch/d.py": lines("d", 41)})
    out = tmp_path / "reports" / "rebase"
    res = run_cli(proj, up, "--onto", "v2.14.0", "--drop", names[1], "--reason", "obsolete",
                  "--report", str(out), "--json")
    assert res.returncode == 0, res.stderr
    printed = json.loads(res.stdout)
    assert printed == json.loads(out.with_suffix(".json").read_text())
    assert statuses(printed) == ["clean", "dropped", "clean"] and printed["patches"][1]["reason"] == "obsolete"
    assert "obsolete" in out.with_suffix(".md").read_text()
    assert len(series_names(proj)) == 2 and not any("Change-b" in n for n in series_names(proj))


def test_via_steps_through_each_release(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, B20, C5])
    release(up, "2.14.0", {"torch/a.py": "top\n" + file_of(up, "torch/a.py")})
    release(up, "2.14.1", {"torch/b.py": edit(file_of(up, "torch/b.py"), "b line 22\n", "b line 22 fix\n")})
    c = file_of(up, "torch/c.py")
    release(up, "2.15.0", {"torch/c.py": edit(c, "c line 5\n", "c line 5 patched\n")})
    res = run_cli(proj, up, "--onto", "v2.15.0", "--via", "v2.14.0,v2.14.1")
    assert res.returncode == 0, res.stderr
    rep = report_of(up)
    assert [s["onto"] for s in rep["steps"]] == ["v2.14.0", "v2.14.1", "v2.15.0"]
    steps = [[(s["onto"], s["status"]) for s in p["steps"]] for p in rep["patches"]]
    assert steps[0] == [("v2.14.0", "offset"), ("v2.14.1", "clean"), ("v2.15.0", "clean")]
    assert steps[1] == [("v2.14.0", "clean"), ("v2.14.1", "3way"), ("v2.15.0", "clean")]
    assert steps[2] == [("v2.14.0", "clean"), ("v2.14.1", "clean"), ("v2.15.0", "upstreamed")]
    assert load_pin(manifest_path(proj)).tag == "v2.15.0"


def test_no_three_way_reports_rejects_as_conflict(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10])
    release(up, "2.14.0", {"torch/a.py": edit(file_of(up, "torch/a.py"), "a line 12\n", "a line 12 upstream\n")})
    res = run_cli(proj, up, "--onto", "v2.14.0", "--no-3way")
    assert res.returncode == 1 and "torch/a.py" in res.stderr
    assert (up / "torch/a.py.rej").exists()
    refused = run_cli(proj, up, "--continue")
    assert refused.returncode == 2 and "a.py.rej" in refused.stderr
    (up / "torch/a.py.rej").unlink()
    (up / "torch/a.py").write_text(edit(file_of(up, "torch/a.py"), "a line 10\n", "a line 10 patched\n"))
    assert run_cli(proj, up, "--continue").returncode == 0
    assert statuses(report_of(up)) == ["resolved"]


def test_every_patch_upstreamed_leaves_an_empty_series_and_the_branch_alone(tmp_path: Path, up: Path) -> None:
    proj = make_project(tmp_path / "proj", up, [A10, B20])
    names = series_names(proj)
    a = edit(file_of(up, "torch/a.py"), "a line 10\n", "a line 10 patched\n")
    new_base = release(up, "2.14.0", {"torch/a.py": a, "torch/b.py": edit(file_of(up, "torch/b.py"), "b line 20\n",
                                                                             "b line 20 patched\n")})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 0, res.stderr
    assert statuses(report_of(up)) == ["upstreamed", "upstreamed"]
    assert report_of(up)["range_diff"].count(" < -:  -------") == 2
    assert series_names(proj) == []
    assert (proj / "patches" / "series").read_text() == "# Catch patch series (test)\n"
    assert not any((proj / "patches" / n).exists() for n in names)
    assert git(up, "rev-parse", "refs/patches/applied") == new_base == git(up, "rev-parse", "refs/patches/base")
    assert git(up, "rev-parse", "main") == new_base  # the maintainer's branch was never moved
    assert git(up, "status", "--porcelain") == ""
