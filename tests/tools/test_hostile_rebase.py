# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Hostile and careless input to ``scripts/rebase.py``: a damaged or hand-edited state file (one line, and
``--abort`` still puts everything back), ``--report`` where no file can be written, a manifest or constraints file
that is not UTF-8, and advice naming only options ``rebase.py`` has."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import one_line_error
from test_rebase_support import SCRIPT, edit, make_project, make_upstream, release, run_cli, snapshot

A10 = ("a", "Change a", {"torch/a.py": lambda t: edit(t, "a line 10\n", "a line 10 patched\n")})
B20 = ("b", "Change b", {"torch/b.py": lambda t: edit(t, "b line 20\n", "b line 20 patched\n")})


def build(root: Path, conflict: bool) -> tuple[Path, Path]:
    """A project with two patches; upstream v2.14.0 conflicts with the second one when ``conflict``."""
    up = make_upstream(root / "up")
    proj = make_project(root / "proj", up, [A10, B20])
    b = (up / "torch/b.py").read_text()
    release(up, "2.14.0", {"torch/b.py": edit(b, "b line 20\n", "b line 20 upstream\n") if conflict else b + "end\n"})
    return proj, up




def _edit(key: str, value: object) -> object:
    def change(text: str) -> str:
        data = json.loads(text)
        data[key] = value
        return json.dumps(data)
    return change


STATE_EDITS = {
    "phase-bogus": (_edit("phase", "bogus"), "phase 'bogus'"),
    "current-99": (_edit("current", 99), "current is 99"),
    "steps-empty": (_edit("steps", []), "steps (0)"),
    "step-commits-text": (_edit("step_commits", "v2.14.0"), "step_commits must be a list"),
    "truncated": (lambda text: text[: len(text) // 2], "not JSON"),
    "list": (lambda text: "[]", "must be a JSON object"),
    "not-utf8": (lambda text: text.replace('"phase"', '"ph\udce9se"'), "non-UTF-8 byte 0xe9"),
}


@pytest.mark.parametrize("case", sorted(STATE_EDITS))
def test_hand_edited_state_is_one_line_and_abort_restores_the_start(tmp_path: Path, case: str) -> None:
    change, needle = STATE_EDITS[case]
    proj, up = build(tmp_path, conflict=True)
    before = snapshot(proj, up)
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1  # stopped at the conflict in b
    state = up / ".git" / "catch-rebase" / "state.json"
    state.write_bytes(change(state.read_text()).encode("utf-8", "surrogateescape"))
    for args in (("--continue",), ("status",)):
        line = one_line_error(run_cli(proj, up, *args), "unreadable rebase state", needle, "--abort")
        assert line.startswith(f"error: {state}")
    res = run_cli(proj, up, "--abort")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr and "aborted with the start record" in res.stderr
    assert snapshot(proj, up) == before
    assert not (up / ".git" / "catch-rebase").exists()


def test_fifo_as_state_file_is_refused_never_read(tmp_path: Path) -> None:
    proj, up = build(tmp_path, conflict=True)
    before = snapshot(proj, up)
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1
    state = up / ".git" / "catch-rebase" / "state.json"
    state.unlink()
    os.mkfifo(state)
    for args in (("--continue",), ("status",)):
        one_line_error(run_cli_quick(proj, up, *args), "state.json: unreadable rebase state", "is a FIFO")
    one_line_error(run_cli_quick(proj, up, "--onto", "v2.14.0"), "already in progress")
    res = run_cli_quick(proj, up, "--abort")
    assert res.returncode == 0, res.stderr
    assert snapshot(proj, up) == before


def run_cli_quick(project: Path, upstream: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """:func:`test_rebase_support.run_cli` with a short timeout: a FIFO read by mistake would hang."""
    return subprocess.run([sys.executable, str(SCRIPT), "--project", str(project), "--source", str(upstream), *args],
                          capture_output=True, text=True, check=False, timeout=60)


def test_abort_with_state_and_start_record_both_damaged_gives_a_cleanup_that_works(tmp_path: Path) -> None:
    proj, up = build(tmp_path, conflict=True)
    before = snapshot(proj, up)
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1
    store = up / ".git" / "catch-rebase"
    for name in ("state.json", "start.json"):
        (store / name).write_text("{")
    line = one_line_error(run_cli(proj, up, "--abort"), "state.json", "start record", "reflog")
    commands = re.search(r"clean up by hand: `(.*)`$", line)
    assert commands is not None, line
    # the advice, with the branch the tree was on, cleans up for real
    script = commands.group(1).replace("<START>", "main")
    subprocess.run(["bash", "-ec", script], check=True, capture_output=True)
    after = snapshot(proj, up)
    for key in ("patches", "constraints", "index", "refs", "head", "status"):
        assert after[key] == before[key], key


@pytest.mark.parametrize("layout", ["below-a-file", "md-is-a-directory"])
def test_report_where_no_file_can_be_written_is_refused_before_anything_changes(tmp_path: Path, layout: str) -> None:
    proj, up = build(tmp_path, conflict=False)
    blocker = tmp_path / "notes.txt"
    if layout == "below-a-file":
        blocker.write_text("my notes\n")
        report = blocker / "rebase"
    else:
        (tmp_path / "rep.md").mkdir()
        report = tmp_path / "rep"
    before = snapshot(proj, up)
    one_line_error(run_cli(proj, up, "--onto", "v2.14.0", "--report", str(report)),
                   str(blocker) if layout == "below-a-file" else str(tmp_path / "rep.md"))
    assert snapshot(proj, up) == before
    assert not (up / ".git" / "catch-rebase").exists()


def test_manifest_not_utf8_is_one_line_with_its_line(tmp_path: Path) -> None:
    proj, up = build(tmp_path, conflict=False)
    manifest = proj / "patches" / "manifest.toml"
    lines = manifest.read_bytes().split(b"\n")
    lines.insert(2, b"# pinned by J\xf6rg")
    manifest.write_bytes(b"\n".join(lines))
    before = snapshot(proj, up)
    one_line_error(run_cli(proj, up, "--onto", "v2.14.0"), f"{manifest}:3: non-UTF-8 byte 0xf6")
    assert snapshot(proj, up) == before


@pytest.mark.parametrize("missing", ["series", "manifest.toml"])
def test_advice_names_only_options_rebase_has(tmp_path: Path, missing: str) -> None:
    proj, up = build(tmp_path, conflict=False)
    (proj / "patches" / missing).unlink()
    before = snapshot(proj, up)
    line = one_line_error(run_cli(proj, up, "--onto", "v2.14.0"), "--project DIR")
    assert "--patches-dir" not in line and "--pin" not in line
    assert snapshot(proj, up) == before


def test_constraints_not_utf8_is_kept_byte_for_byte(tmp_path: Path) -> None:
    proj, up = build(tmp_path, conflict=True)
    constraints = proj / "constraints.txt"
    constraints.write_bytes(b"# pinned by J\xf6rg\n" + constraints.read_bytes())
    before = snapshot(proj, up)
    assert run_cli(proj, up, "--onto", "v2.14.0").returncode == 1  # stopped at the conflict in b
    res = run_cli(proj, up, "--abort")
    assert res.returncode == 0, res.stderr
    assert snapshot(proj, up) == before
    proj, up = build(tmp_path / "clean", conflict=False)
    constraints = proj / "constraints.txt"
    constraints.write_bytes(b"# pinned by J\xf6rg\n" + constraints.read_bytes())
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 0, res.stderr
    data = constraints.read_bytes()
    assert data.startswith(b"# pinned by J\xf6rg\n") and b"torch==2.14.0" in data
