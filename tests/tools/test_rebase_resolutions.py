# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Recorded resolutions replayed by the next run of the same upgrade; the maintainer's drop (git rm + --continue) as
its own class with a reason given once; an upstreamed patch names the release that contains it and its git_version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_rebase_support import edit, fake_sha, git, make_project, make_upstream, release, run_cli, series_names

A10 = ("a", "Change a line 10", {"torch/a.py": lambda t: edit(t, "a line 10\n", "a line 10 patched\n")})
B20 = ("b", "Change b line 20", {"torch/b.py": lambda t: edit(t, "b line 20\n", "b line 20 patched\n")})
C5 = ("c", "Change c line 5", {"torch/c.py": lambda t: edit(t, "c line 5\n", "c line 5 patched\n")})


def report_of(upstream: Path) -> dict:
    return json.loads((upstream / ".git" / "catch-rebase-report.json").read_text())


def conflicting_upgrade(root: Path) -> tuple[Path, Path]:
    """A project (a, b, c) and an upstream whose v2.14.0 rewrote b's line: b conflicts."""
    up = make_upstream(root / "up")
    proj = make_project(root / "proj", up, [A10, B20, C5])
    b = (up / "torch/b.py").read_text()
    release(up, "2.14.0", {"torch/b.py": edit(b, "b line 20\n", "b line 20 upstream\n")})
    return proj, up


def resolve_b(up: Path) -> None:
    text = (up / "torch/b.py").read_text()
    head, rest = text.split("<<<<<<< HEAD\n")
    tail = rest.split(">>>>>>> ")[1].split("\n", 1)[1]
    (up / "torch/b.py").write_text(head + "b line 20 upstream and patched\n" + tail)


def test_a_resolution_is_recorded_and_the_next_run_replays_it(tmp_path: Path) -> None:
    proj, up = conflicting_upgrade(tmp_path / "first")
    name = series_names(proj)[1]
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1
    resolve_b(up)
    assert run_cli(proj, up, "--continue").returncode == 0
    recorded = proj / "resolutions" / "v2.14.0" / name
    assert recorded.is_file() and "+b line 20 upstream and patched" in recorded.read_text()
    resolved_patch = (proj / "patches" / name).read_text()
    # the same upgrade again, unattended, in a fresh copy with the recorded resolution: no stop
    proj2, up2 = conflicting_upgrade(tmp_path / "second")
    shutil.copytree(proj / "resolutions", proj2 / "resolutions")
    res = run_cli(proj2, up2, "--onto", "v2.14.0")
    assert res.returncode == 0, res.stderr
    rep = report_of(up2)
    assert [p["status"] for p in rep["patches"]] == ["clean", "resolved", "clean"]
    assert "recorded resolution replayed" in rep["patches"][1]["steps"][0]["detail"]
    assert (proj2 / "patches" / name).read_text() == resolved_patch
    assert "<<<<<<<" not in git(up2, "show", "refs/patches/applied:torch/b.py")


def test_a_recorded_resolution_for_another_patch_text_is_not_used(tmp_path: Path) -> None:
    proj, up = conflicting_upgrade(tmp_path)
    name = series_names(proj)[1]
    stale = proj / "resolutions" / "v2.14.0" / name
    stale.parent.mkdir(parents=True)
    stale.write_text("# resolves patch-id " + "0" * 40 + "\n\n")
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 1 and name in res.stderr
    assert run_cli(proj, up, "--abort").returncode == 0
    assert stale.read_text().startswith("# resolves patch-id 000")  # --abort puts the file back as it was


def test_abort_removes_a_resolution_recorded_during_the_rebase(tmp_path: Path) -> None:
    proj, up = conflicting_upgrade(tmp_path)
    release(up, "2.14.1", {"torch/c.py": "c replaced upstream\n"})  # c then conflicts onto v2.14.1
    assert run_cli(proj, up, "--onto", "v2.14.1", "--via", "v2.14.0").returncode == 1
    resolve_b(up)
    assert run_cli(proj, up, "--continue").returncode == 1  # recorded b, stopped at c
    assert (proj / "resolutions" / "v2.14.0" / series_names(proj)[1]).is_file()
    assert run_cli(proj, up, "--abort").returncode == 0
    assert not list((proj / "resolutions").rglob("*.patch"))


def test_git_rm_and_continue_is_the_maintainers_drop_with_a_reason(tmp_path: Path) -> None:
    proj, up = conflicting_upgrade(tmp_path)
    names = series_names(proj)
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1
    git(up, "checkout", "HEAD", "--", "torch/b.py")  # the resolution keeps upstream's side only: no change left
    no_reason = run_cli(proj, up, "--continue")
    assert no_reason.returncode == 2 and "--reason" in no_reason.stderr
    assert len(no_reason.stderr.strip().splitlines()) == 1
    assert f"{names[1]}: CONFLICT" in run_cli(proj, up, "status").stdout  # nothing changed
    done = run_cli(proj, up, "--continue", "--reason", "upstream's rewrite covers PrivateUse1")
    assert done.returncode == 0, done.stderr
    rep = report_of(up)
    assert [p["status"] for p in rep["patches"]] == ["clean", "dropped", "clean"]
    assert rep["patches"][1]["label"] == "dropped by the maintainer"
    assert rep["patches"][1]["reason"] == "upstream's rewrite covers PrivateUse1"
    markdown = (up / ".git" / "catch-rebase-report.md").read_text()
    assert markdown.count("upstream's rewrite covers PrivateUse1") == 1
    assert len(series_names(proj)) == 2


def test_drop_reason_is_reported_once(tmp_path: Path) -> None:
    proj, up = conflicting_upgrade(tmp_path)
    names = series_names(proj)
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1
    assert run_cli(proj, up, "--drop", names[1], "--reason", "obsolete since 2.14").returncode == 0
    markdown = (up / ".git" / "catch-rebase-report.md").read_text()
    assert markdown.count("obsolete since 2.14") == 1
    assert "dropped by the maintainer" in markdown


def test_upstreamed_patch_names_its_release_and_git_version(tmp_path: Path) -> None:
    up = make_upstream(tmp_path / "up")
    proj = make_project(tmp_path / "proj", up, [A10, B20, C5])
    names = series_names(proj)
    git(up, "apply", "--index", str(proj / "patches" / names[1]))
    git(up, "commit", "-q", "-m", "Fix b (from Catch)")
    release(up, "2.14.0", {})
    release(up, "2.15.0", {})
    res = run_cli(proj, up, "--onto", "v2.15.0", "--via", "v2.14.0")
    assert res.returncode == 0, res.stderr
    rep = report_of(up)
    assert rep["patches"][1]["status"] == "upstreamed"
    assert rep["patches"][1]["upstream_release"] == {"release": "v2.14.0", "git_version": fake_sha("2.14.0")}
    markdown = (up / ".git" / "catch-rebase-report.md").read_text()
    assert f"in upstream v2.14.0 (git_version {fake_sha('2.14.0')})" in markdown
