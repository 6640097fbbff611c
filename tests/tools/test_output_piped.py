# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Output a maintainer can copy when it is not a terminal (CI logs, ``| tee``): every command the tooling tells the
user to run is on one line, and every patch name in a table is whole, whatever the length of the paths.

The commands run as a CI job runs them: a subprocess with its output piped, ``COLUMNS``/``LINES`` unset, in
directories whose paths are longer than 80 characters, on a series whose file names are 64 characters long."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_rebase_support import SCRIPT, edit, make_project, make_upstream, release, series_names

from catch_tools.paths import repo_root

APPLY = repo_root() / "scripts" / "apply_patches.py"
LONG = "a-directory-name-long-enough-that-every-path-under-it-passes-eighty-columns"
SUBJECTS = (
    ("a", "dataloader_counter counts the workers of every PrivateUse1 device it is given",
     {"torch/a.py": lambda t: edit(t, "a line 10\n", "a line 10 patched\n")}),
    ("b", "checkpoint stashes and restores the RNG state of PrivateUse1 devices too",
     {"torch/b.py": lambda t: edit(t, "b line 20\n", "b line 20 patched\n")}),
    ("c", "common_device_type asks a PrivateUse1 device for its memory in largeTensorTest",
     {"torch/c.py": lambda t: edit(t, "c line 5\n", "c line 5 patched\n")}),
)


def piped(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """Run a script with stdout and stderr piped and no ``COLUMNS``/``LINES`` (rich's 80-column default)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run([sys.executable, *map(str, argv)], capture_output=True, text=True, env=env, check=False,
                          timeout=300, stdin=subprocess.DEVNULL)


def line_with(text: str, needle: str) -> str:
    """The one line of ``text`` that contains ``needle``."""
    found = [line for line in text.splitlines() if needle in line]
    assert len(found) == 1, (needle, text)
    return found[0]


def run_copied(line: str) -> subprocess.CompletedProcess[str]:
    """Run a command line copied from the output as a maintainer would paste it (``scripts/...`` from the checkout)."""
    words = shlex.split(line)
    words = words[1:] if words[0] == "python" else words
    if words[0].startswith("scripts/"):
        return piped(repo_root() / words[0], *words[1:])
    return subprocess.run(words, capture_output=True, text=True, check=False, timeout=60)


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    """A directory whose path alone is longer than 80 characters."""
    path = tmp_path / LONG / "x"
    path.mkdir(parents=True)
    assert len(str(path)) > 80
    return path


def conflicting(deep: Path) -> tuple[Path, Path, list[str]]:
    """A project of :data:`SUBJECTS` whose second patch conflicts with the upstream release v2.14.0."""
    up = make_upstream(deep / "upstream-pytorch-work-tree")
    proj = make_project(deep / "catch-checkout", up, list(SUBJECTS))
    text = (up / "torch/b.py").read_text()
    release(up, "2.14.0", {"torch/b.py": edit(text, "b line 20\n", "b line 20 upstream\n")})
    return up, proj, series_names(proj)


def test_conflict_stop_prints_each_command_on_one_line(deep: Path) -> None:
    up, proj, names = conflicting(deep)
    assert all(len(name) > 60 for name in names)
    res = piped(SCRIPT, "--project", proj, "--source", up, "--onto", "v2.14.0")
    assert res.returncode == 1, res.stderr
    rebase = f"python scripts/rebase.py --project {proj} --source {up}"
    assert line_with(res.stderr, "--continue").strip() == f"{rebase} --continue"
    assert line_with(res.stderr, "--drop").strip() == f'{rebase} --drop {names[1]} --reason "..."'
    assert line_with(res.stderr, "--abort").strip() == f"{rebase} --abort"
    assert line_with(res.stderr, " rm ").strip() == f"git -C {up} rm torch/b.py"
    stop = line_with(res.stderr, "conflict: patch")
    assert stop.startswith(f"conflict: patch {names[1]} does not apply onto v2.14.0")
    assert line_with(res.stderr, "resolve them in").startswith(f"  resolve them in {up} ")
    # the lines copied from the log are the commands: they run as they are
    assert run_copied(line_with(res.stderr, " rm ")).returncode == 0
    aborted = run_copied(line_with(res.stderr, "--abort"))
    assert aborted.returncode == 0, aborted.stderr
    assert line_with(aborted.stdout, "rebase aborted").endswith(f"{proj / 'patches'} are back to their state before it")


def test_drop_copied_from_the_stop_finishes_with_whole_names_in_the_table(deep: Path) -> None:
    up, proj, names = conflicting(deep)
    stop = piped(SCRIPT, "--project", proj, "--source", up, "--onto", "v2.14.0")
    drop = line_with(stop.stderr, "--drop").replace('"..."', shlex.quote("fixed upstream in 2.14"))
    done = run_copied(drop)
    assert done.returncode == 0, done.stderr
    for name in names:
        row = line_with(done.stdout, name)  # one row a line: the name is whole, never folded or cut with "…"
        assert "…" not in row
    assert "dropped by the maintainer" in line_with(done.stdout, names[1])
    assert "fixed upstream in 2.14" in line_with(done.stdout, names[1])
    report = up / ".git" / "catch-rebase-report.md"
    assert str(report) in line_with(done.stdout, "patches in")
    assert line_with(done.stdout, "next:").endswith("docs/upgrade.md)")


def test_patch_commands_print_whole_names_and_commands(deep: Path) -> None:
    up, proj, names = conflicting(deep)
    common = ("--source", up, "--patches-dir", proj / "patches")
    check = piped(APPLY, "check", *common, "--base", "v2.13.0")
    assert check.returncode == 0, check.stderr
    for name in names:
        assert line_with(check.stdout, name).split() == ["ok", name]
    assert line_with(check.stdout, "apply to").startswith(f"3/3 patch(es) apply to {up}")
    failing = piped(APPLY, "check", *common, "--base", "v2.14.0")
    assert failing.returncode == 1
    assert line_with(failing.stdout, f"FAIL {names[1]}") == f"FAIL {names[1]}"
    applied = piped(APPLY, "apply", *common, "--base", "v2.14.0", "--stop-at-conflict")
    assert applied.returncode == 1, applied.stderr
    assert line_with(applied.stdout, "stopped:").startswith(f"patch {names[1]} stopped: ")
    assert line_with(applied.stdout, "am --continue") == f"2. git -C {up} add torch/b.py && git -C {up} am --continue"
    status = piped(APPLY, "status", *common, "--base", "v2.14.0")
    assert status.returncode == 0, status.stderr
    assert line_with(status.stdout, names[0]).split() == ["applied", names[0]]
    assert line_with(status.stdout, names[2]).split() == ["not-applied", names[2]]
    assert status.stdout.startswith(f"tree {up}: base ")
    assert f"`scripts/apply_patches.py reverse --source {up}`" in line_with(status.stdout, "in progress: ")
    give_up = line_with(applied.stdout, "or give up: ").removeprefix("or give up: ")
    assert give_up == f"scripts/apply_patches.py reverse --source {up}"
    reverse = run_copied(give_up + " --base v2.14.0")
    assert reverse.returncode == 0, reverse.stderr
