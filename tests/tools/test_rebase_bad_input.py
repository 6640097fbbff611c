# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Bad input to scripts/rebase.py: each a one-line error, exit status 2, and nothing changed."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest
from test_rebase_support import (
    edit,
    git,
    make_project,
    make_upstream,
    release,
    run_cli,
    series_names,
    snapshot,
)

A10 = ("a", "Change a", {"torch/a.py": lambda t: edit(t, "a line 10\n", "a line 10 patched\n")})
B20 = ("b", "Change b", {"torch/b.py": lambda t: edit(t, "b line 20\n", "b line 20 patched\n")})


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    up = make_upstream(tmp_path / "up")
    proj = make_project(tmp_path / "proj", up, [A10, B20])
    b = (up / "torch/b.py").read_text()
    release(up, "2.14.0", {"torch/b.py": edit(b, "b line 20\n", "b line 20 upstream\n")})
    return proj, up


def assert_one_line_error(res, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert res.returncode == 2, (res.stdout, res.stderr)
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr
    for needle in needles:
        assert needle in err[0]


@pytest.mark.parametrize(("ref", "needle"), [("v9.9.9", "no such tag or commit"),
                                             ("0123456789abcdef0123456789abcdef01234567", "no such tag or commit"),
                                             ("v2.13.0", "not newer than the pinned base")])
def test_onto_missing_or_not_newer(setup: tuple[Path, Path], ref: str, needle: str) -> None:
    proj, up = setup
    before = snapshot(proj, up)
    assert_one_line_error(run_cli(proj, up, "--onto", ref), needle)
    assert snapshot(proj, up) == before


def test_onto_older_than_base(tmp_path: Path) -> None:
    up = make_upstream(tmp_path / "up")
    release(up, "2.12.0", {"torch/z.py": "z\n"})  # tagged after v2.13.0 but pin it as the base
    proj = make_project(tmp_path / "proj", up, [A10])
    git(up, "tag", "-f", "v2.12.0", "v2.13.0")
    git(up, "tag", "-f", "v2.13.0", "main")
    git(up, "checkout", "-q", "v2.13.0")
    before = snapshot(proj, up)
    assert_one_line_error(run_cli(proj, up, "--onto", "v2.12.0"), "not newer")
    assert snapshot(proj, up) == before


def test_via_out_of_order(setup: tuple[Path, Path]) -> None:
    proj, up = setup
    release(up, "2.15.0", {"torch/c.py": "c\n"})
    before = snapshot(proj, up)
    assert_one_line_error(run_cli(proj, up, "--onto", "v2.14.0", "--via", "v2.15.0"), "not newer than v2.15.0")
    assert snapshot(proj, up) == before


@pytest.mark.parametrize("kind", ["modified", "untracked", "staged"])
def test_dirty_upstream_tree(setup: tuple[Path, Path], kind: str) -> None:
    proj, up = setup
    if kind == "untracked":
        (up / "notes.txt").write_text("x\n")
    else:
        (up / "torch/a.py").write_text("changed\n")
        if kind == "staged":
            git(up, "add", "torch/a.py")
    before = snapshot(proj, up)
    assert_one_line_error(run_cli(proj, up, "--onto", "v2.14.0"), "not clean")
    assert snapshot(proj, up) == before


def test_continue_with_nothing_in_progress(setup: tuple[Path, Path]) -> None:
    proj, up = setup
    before = snapshot(proj, up)
    assert_one_line_error(run_cli(proj, up, "--continue"), "no rebase in progress")
    assert_one_line_error(run_cli(proj, up, "--abort"), "no rebase in progress")
    assert snapshot(proj, up) == before


def test_second_rebase_while_one_is_in_progress(setup: tuple[Path, Path]) -> None:
    proj, up = setup
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1  # stopped at the conflict in b
    during = snapshot(proj, up)
    assert_one_line_error(run_cli(proj, up, "--onto", "v2.14.0"), "already in progress")
    assert snapshot(proj, up) == during


def test_concurrent_process_holding_the_lock(setup: tuple[Path, Path]) -> None:
    proj, up = setup
    before = snapshot(proj, up)
    with open(up / ".git" / "catch-rebase.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        assert_one_line_error(run_cli(proj, up, "--onto", "v2.14.0"), "another rebase.py is running")
    (up / ".git" / "catch-rebase.lock").unlink()
    assert snapshot(proj, up) == before


def test_patches_edited_by_hand_during_rebase(setup: tuple[Path, Path]) -> None:
    proj, up = setup
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1
    name = series_names(proj)[0]
    patch = proj / "patches" / name
    patch.write_text(patch.read_text() + "\n")
    (up / "torch/b.py").write_text("resolved\n")
    during = snapshot(proj, up)
    assert_one_line_error(run_cli(proj, up, "--continue"), "edited by hand", name)
    assert snapshot(proj, up) == during
    # --abort still gets back to the start, keeping the edited copy aside
    res = run_cli(proj, up, "--abort")
    assert res.returncode == 0 and name in res.stderr
    assert (up / ".git" / "catch-rebase-aborted-patches" / name).read_text().endswith("\n\n")


def test_drop_of_unknown_patch_and_mismatched_reason(setup: tuple[Path, Path]) -> None:
    proj, up = setup
    name = series_names(proj)[0]
    before = snapshot(proj, up)
    assert_one_line_error(run_cli(proj, up, "--onto", "v2.14.0", "--drop", "0009-x.patch", "--reason", "r"),
                          "0009-x.patch")
    assert_one_line_error(run_cli(proj, up, "--onto", "v2.14.0", "--drop", name), "--reason")
    assert_one_line_error(run_cli(proj, up, "--onto", "v2.14.0", "--drop", name, "--reason", " "), "--reason")
    assert snapshot(proj, up) == before


def test_not_a_git_checkout(tmp_path: Path, setup: tuple[Path, Path]) -> None:
    proj, _up = setup
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(run_cli(proj, empty, "--onto", "v2.14.0"), "not a git checkout")


def test_series_that_does_not_apply_to_its_own_base(setup: tuple[Path, Path]) -> None:
    proj, up = setup
    name = series_names(proj)[1]
    patch = proj / "patches" / name
    patch.write_text(patch.read_text().replace(" b line 19\n", " b line nineteen\n"))
    before = snapshot(proj, up)
    assert_one_line_error(run_cli(proj, up, "--onto", "v2.14.0"), name, "does not apply")
    assert snapshot(proj, up) == before
