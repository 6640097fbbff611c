# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""A rebase that proves its patches are still needed, and conflicts that name their upstream cause.

The upstream's ``torch/`` is a tiny importable package (``torch/__init__.py`` and plain text lines), so each patch's
``Catch-Test`` (in the project's ``tests/test_feature.py``) runs on the new base without the series and with it. Two
upstream shapes: the wheel-built one (one commit per release: the cause is an upstream hunk) and a real history
(several commits between the releases: the cause is a commit, with its pull request).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from test_rebase_support import BASE_FILES, edit, git, make_project, release, run_cli

from catch_tools.rebase.cause import pr_number

#: The patches' regression tests: each reads a file of the torch tree under test (CATCH_TORCH_TREE).
FEATURE_TESTS = '''
import os
from pathlib import Path


def _read(rel):
    import torch
    tree = Path(os.environ["CATCH_TORCH_TREE"])
    assert Path(torch.__file__).parent == tree / "torch"
    return (tree / rel).read_text()


def test_a():
    assert "a line 10 patched" in _read("torch/a.py")


def test_b():
    assert "b line 20 fixed" in _read("torch/b.py")


def test_c():
    assert "def c_helper" in _read("torch/c.py")
'''
A10 = ("a", "Change a line 10", {"torch/a.py": lambda t: edit(t, "a line 10\n", "a line 10 patched\n")})
B20 = ("b", "Fix b line 20", {"torch/b.py": lambda t: edit(t, "b line 20\n", "b line 20 fixed by catch\n")})
C5 = ("c", "Add c helper", {"torch/c.py": lambda t: edit(t, "c line 5\n", "c line 5\ndef c_helper\n")})
TESTS = {"a": "tests/test_feature.py::test_a", "b": "tests/test_feature.py::test_b",
         "c": "tests/test_feature.py::test_c"}


def upstream_with_torch(path: Path) -> Path:
    """An upstream whose v2.13.0 is :data:`BASE_FILES` plus ``torch/__init__.py`` (torch imports from its tree)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    release(path, "2.13.0", {**BASE_FILES, "torch/__init__.py": ""})
    return path


def project(tmp_path: Path, up: Path, patches: list) -> Path:
    proj = make_project(tmp_path / "proj", up, patches, TESTS)
    (proj / "tests").mkdir()
    (proj / "tests" / "test_feature.py").write_text(FEATURE_TESTS)
    return proj


def report_of(up: Path) -> dict:
    return json.loads((up / ".git" / "catch-rebase-report.json").read_text())


def by_name(report: dict) -> dict:
    return {p["name"][5:]: p for p in report["patches"]}


def copied_command(stderr: str, marker: str) -> list[str]:
    """The command on the line after ``marker`` in a stop message, as a maintainer copies it."""
    lines = stderr.splitlines()
    line = lines[next(i for i, ln in enumerate(lines) if marker in ln) + 1]
    words = shlex.split(line)
    assert words[:2] == ["python", "scripts/rebase.py"]
    return words[2:]


def test_absorbed_upstream_in_another_form_is_obsolete_and_the_stop_names_the_hunk(tmp_path: Path) -> None:
    up = upstream_with_torch(tmp_path / "up")
    proj = project(tmp_path, up, [A10, B20, C5])
    b, c = (up / "torch/b.py").read_text(), (up / "torch/c.py").read_text()
    # wheel-built releases (one commit each; v2.13.1 in between touches another file): v2.14.0 fixes b line 20 its own
    # way (a conflict) and adds c's helper elsewhere (the patch still applies cleanly, but is no longer needed)
    release(up, "2.13.1", {"torch/d.py": edit((up / "torch/d.py").read_text(), "d line 3\n", "d line 3 new\n")})
    release(up, "2.14.0", {"torch/b.py": edit(b, "b line 20\n", "b line 20 fixed upstream\n"),
                           "torch/c.py": c + "def c_helper\n"})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 1, res.stderr
    lines = res.stderr.splitlines()
    assert "  upstream changes to these lines:" in lines
    assert "    torch/b.py:20-20: upstream hunk @@ -17,7 +17,7 @@ b line 16" in lines
    assert "      -b line 20" in lines and "      +b line 20 fixed upstream" in lines
    # the first suggestion: drop it, upstream provides it (before "resolve them")
    obsolete = lines.index("  obsolete? its test passes on v2.14.0 without it; drop it:")
    assert obsolete < next(i for i, ln in enumerate(lines) if "resolve them in" in ln)
    reason = "upstream provides it: tests/test_feature.py::test_b passes on v2.14.0"
    assert lines[obsolete + 1].endswith(f'--drop 0002-Fix-b-line-20.patch --reason "{reason}"')
    done = run_cli(proj, up, *copied_command(res.stderr, "obsolete?"))
    assert done.returncode == 0, done.stderr
    rep = report_of(up)
    patches = by_name(rep)
    assert patches["Fix-b-line-20.patch"]["status"] == "dropped"
    assert patches["Fix-b-line-20.patch"]["reason"] == reason
    assert patches["Fix-b-line-20.patch"]["proof"] is None
    [cause] = patches["Fix-b-line-20.patch"]["steps"][0]["causes"]
    assert (cause["file"], cause["start"], cause["end"], cause["commits"]) == ("torch/b.py", 20, 20, [])
    assert cause["hunks"][0].startswith("@@ -17,7 +17,7 @@") and "+b line 20 fixed upstream\n" in cause["hunks"][0]
    proof_a = patches["Change-a-line-10.patch"]["proof"]
    assert (proof_a["verdict"], proof_a["reason"], proof_a["without"], proof_a["with"]) == (
        "proven", "", "failed", "passed")
    proof_c = patches["Add-c-helper.patch"]["proof"]
    assert patches["Add-c-helper.patch"]["status"] == "clean"
    assert (proof_c["verdict"], proof_c["reason"], proof_c["obsolete"]) == (
        "not proven", "obsolete? its test passes on v2.14.0 without it", True)
    assert (rep["proven"], rep["not_proven"]) == (1, 1)
    rows = [ln for ln in done.stdout.splitlines() if ".patch" in ln]
    assert len(rows) == 3
    assert "proven" in rows[0] and "obsolete? its test passes on v2.14.0 without it" in rows[2]
    assert "torch/b.py:20-20: upstream hunk @@ -17,7 +17,7 @@ b line 16" in rows[1]
    assert "proof on v2.14.0: 1 proven, 1 not proven" in done.stdout
    markdown = (up / ".git" / "catch-rebase-report.md").read_text()
    assert "| not proven: obsolete? its test passes on v2.14.0 without it |" in markdown
    assert "## Upstream changes behind the conflicts" in markdown and "+b line 20 fixed upstream" in markdown


def resolve(up: Path, rel: str, block: str) -> None:
    """Replace the conflict (markers and both sides) in ``rel`` by ``block``, as a maintainer would."""
    text = (up / rel).read_text()
    (up / rel).write_text(text.split("<<<<<<<")[0] + block + text.split(">>>>>>> ")[1].split("\n", 1)[1])


def _commit(up: Path, subject: str, files: dict[str, str], body: str = "") -> None:
    for rel, text in files.items():
        (up / rel).write_text(text)
    git(up, "commit", "-q", "-am", subject + (f"\n\n{body}" if body else ""))


def test_conflicts_on_a_real_history_name_the_commits_and_their_pull_requests(tmp_path: Path) -> None:
    up = upstream_with_torch(tmp_path / "up")
    proj = project(tmp_path, up, [A10, B20, C5])
    b = (up / "torch/b.py").read_text()
    _commit(up, "Make b faster (#4242)", {"torch/b.py": edit(b, "b line 20\n", "b line 20 faster\n")})
    _commit(up, "Touch b far away", {"torch/b.py": edit((up / "torch/b.py").read_text(), "b line 38\n", "b 38\n")})
    c = (up / "torch/c.py").read_text()
    _commit(up, "Rework c", {"torch/c.py": edit(c, "c line 6\n", "c line 6 reworked\n")},
            body="Pull Request resolved: https://github.com/pytorch/pytorch/pull/777\nApproved by: someone")
    git(up, "tag", "v2.14.0")
    res = run_cli(proj, up, "--onto", "v2.14.0", "--prove", "conflicts")
    assert res.returncode == 1, res.stderr
    sha = git(up, "log", "-1", "--format=%h", "--abbrev=12", "--grep=#4242")
    assert f"    torch/b.py:20-20: upstream commit {sha} Make b faster (#4242) (PR #4242)" in res.stderr.splitlines()
    assert "Touch b far away" not in res.stderr and "obsolete?" not in res.stderr
    resolve(up, "torch/b.py", "b line 20 fixed by catch, faster\n")
    res = run_cli(proj, up, "--continue")
    assert res.returncode == 1, res.stderr
    sha = git(up, "log", "-1", "--format=%h", "--abbrev=12", "--grep=pull/777")
    # the patch's hunk covers c lines 5-6 of the old base (an insertion after line 5, with context to line 6)
    assert f"upstream commit {sha} Rework c (PR #777)" in res.stderr
    resolve(up, "torch/c.py", "def c_helper\nc line 6 reworked\n")
    res = run_cli(proj, up, "--continue")
    assert res.returncode == 0, res.stderr
    patches = by_name(report_of(up))
    [b_cause] = patches["Fix-b-line-20.patch"]["steps"][0]["causes"]
    assert [(c["subject"], c["pr"]) for c in b_cause["commits"]] == [("Make b faster (#4242)", 4242)]
    assert [c["pr"] for s in patches["Add-c-helper.patch"]["steps"] for k in s["causes"] for c in k["commits"]] \
        == [777]
    # --prove conflicts: the patches that conflicted prove themselves, the others are not run
    assert patches["Change-a-line-10.patch"]["proof"]["reason"] == "not run (--prove conflicts)"
    assert patches["Fix-b-line-20.patch"]["proof"]["verdict"] == "proven"
    assert patches["Add-c-helper.patch"]["proof"]["verdict"] == "proven"


def test_prove_none_runs_no_test(tmp_path: Path) -> None:
    up = upstream_with_torch(tmp_path / "up")
    proj = project(tmp_path, up, [A10, B20])
    release(up, "2.14.0", {"torch/b.py": edit((up / "torch/b.py").read_text(), "b line 20\n", "b line 20 fixed\n")})
    res = run_cli(proj, up, "--onto", "v2.14.0", "--prove", "none")
    assert res.returncode == 1 and "obsolete?" not in res.stderr  # its test would pass there, but it is not run
    assert "upstream hunk @@ -17,7 +17,7 @@" in res.stderr
    done = run_cli(proj, up, "--drop", "0002-Fix-b-line-20.patch", "--reason", "fixed upstream")
    assert done.returncode == 0, done.stderr
    [proof] = [p["proof"] for p in report_of(up)["patches"] if p["proof"]]
    assert (proof["verdict"], proof["reason"], proof["without"]) == ("not proven", "not run (--prove none)", "not-run")


def test_a_tree_torch_does_not_import_from_proves_nothing(tmp_path: Path) -> None:
    up = upstream_with_torch(tmp_path / "up")
    proj = project(tmp_path, up, [A10])
    release(up, "2.14.0", {"torch/__init__.py": "raise ImportError('no native library')\n"})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 0, res.stderr
    proof = report_of(up)["patches"][0]["proof"]
    assert proof["verdict"] == "not proven"
    assert proof["reason"] == ("not run: torch does not import from the v2.14.0 tree: ImportError: no native library "
                               "(the upgrade's proof gate runs it on the release's wheel)")
    bad = subprocess.run([sys.executable, "scripts/rebase.py", "--prove", "some"], capture_output=True, text=True,
                         check=False, cwd=Path(__file__).resolve().parents[2])
    assert bad.returncode == 2 and "--prove" in bad.stderr


def test_pull_request_numbers_as_the_merge_bot_writes_them() -> None:
    assert pr_number("Fix x (#123)", "") == 123
    assert pr_number("Fix x", "body\nPull Request resolved: https://github.com/pytorch/pytorch/pull/456\n") == 456
    assert pr_number("Fix #12 in x", "See https://github.com/pytorch/pytorch/pull/9") is None
