# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Bad input to ``apply_patches.py`` as a careless user gives it: one line on stderr naming the file (and line when
there is one), what is wrong and what to do; exit status 2; never a traceback; nothing changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PIN_TEMPLATE, SmallTree

from catch_tools.patches.gittree import open_tree
from catch_tools.patches.transaction import Transaction

GOOD_PIN = PIN_TEMPLATE.format(tag="v2.13.0", commit="cf30153c4c131c8164ee7798e5022d810682e2cb")

MANIFESTS = {
    "series version is a word": (GOOD_PIN.replace("version = 1", 'version = "one"'), "version = ", "positive integer"),
    "series version is a string": (GOOD_PIN.replace("version = 1", 'version = "1"'), "version = ", "positive integer"),
    "series version is a boolean": (GOOD_PIN.replace("version = 1", "version = true"), "version = ",
                                    "positive integer"),
    "series version is a float": (GOOD_PIN.replace("version = 1", "version = 1.5"), "version = ", "positive integer"),
    "series version is zero": (GOOD_PIN.replace("version = 1", "version = 0"), "version = ", "positive integer"),
    "upstream is a string": ('upstream = "v2.13.0"\n[series]\nversion = 1\n', "upstream = ", "must be a table"),
    "tag is a number": (GOOD_PIN.replace('tag = "v2.13.0"', "tag = 2.13"), "tag = ", "must be a string"),
    "wheel_version is a number": (GOOD_PIN.replace('wheel_version = "2.13.0+cpu"', "wheel_version = 2"),
                                  "wheel_version = ", "must be a string"),
    "wheel_version is not PEP 440": (GOOD_PIN.replace('wheel_version = "2.13.0+cpu"', 'wheel_version = "two"'),
                                     "wheel_version = ", "PEP 440"),
}


def _one_line_error(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize("case", sorted(MANIFESTS))
def test_bad_manifest_is_one_line_with_file_and_line(small_tree: SmallTree, run_script, case: str) -> None:
    text, key, what = MANIFESTS[case]
    manifest = small_tree.patches / "manifest.toml"
    manifest.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith(key))
    before = small_tree.snapshot()
    proc = run_script("apply_patches.py", "apply", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches))
    error = _one_line_error(proc)
    assert f"manifest.toml:{line}:" in error and what in error, error
    assert small_tree.snapshot() == before


def test_patches_dir_without_manifest_says_so(small_tree: SmallTree, run_script) -> None:
    (small_tree.patches / "manifest.toml").unlink()
    for command in ("apply", "check", "status"):
        proc = run_script("apply_patches.py", command, "--source", str(small_tree.root), "--patches-dir",
                          str(small_tree.patches))
        error = _one_line_error(proc)
        assert "no manifest.toml in" in error and "--pin" in error, error


def test_status_after_an_interrupted_apply_says_run_apply(small_tree: SmallTree, run_script) -> None:
    small_tree.commit("Edit b", {"torch/b.py": "b\n"})
    small_tree.format_series()
    Transaction(open_tree(small_tree.root), "apply", ["torch/b.py"]).begin()  # what a kill -9 midway leaves
    proc = run_script("apply_patches.py", "status", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches))
    assert proc.returncode == 0, proc.stderr
    assert "interrupted apply" in proc.stdout
    assert f"apply_patches.py apply --source {small_tree.root}" in proc.stdout, proc.stdout


@pytest.mark.parametrize("option", ["--target-dir", "--patches-dir", "--pin"])
def test_file_where_a_directory_is_expected_and_back(small_tree: SmallTree, tmp_path: Path, run_script,
                                                     option: str) -> None:
    """A directory for --pin, a file for --target-dir/--patches-dir: says which it is, not 'does not exist'."""
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("x\n")
    value = str(tmp_path) if option == "--pin" else str(a_file)
    args = ["check", "--source", str(small_tree.root), "--patches-dir", str(small_tree.patches)]
    if option == "--target-dir":
        args = ["check", "--target-dir", value, "--patches-dir", str(small_tree.patches)]
    elif option == "--patches-dir":
        args = ["check", "--source", str(small_tree.root), "--patches-dir", value, "--pin",
                str(small_tree.patches / "manifest.toml")]
    else:
        args += ["--pin", value]
    error = _one_line_error(run_script("apply_patches.py", *args))
    assert "is a file" in error or "is a directory" in error, error


def test_patches_dir_without_manifest_is_fine_with_an_explicit_base(small_tree: SmallTree, run_script) -> None:
    """The pin only locates the base: --base REF makes it unnecessary (benchmarks/bench_apply.py relies on it)."""
    (small_tree.patches / "manifest.toml").unlink()
    proc = run_script("apply_patches.py", "check", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches), "--base", "v2.13.0")
    assert proc.returncode == 0, proc.stderr


def test_source_that_is_no_work_tree_top_is_one_clear_error(tmp_path: Path) -> None:
    """``--source`` must be the top of a git work tree with a commit: each other case is one UserError line."""
    from catch_tools.errors import UserError
    from catch_tools.git import run_git

    plain, repo, bare = tmp_path / "plain", tmp_path / "repo", tmp_path / "bare.git"
    plain.mkdir()
    repo.mkdir()
    run_git(repo, "init", "-q")
    run_git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(UserError, match="has no commit"):
        open_tree(repo)
    cases = {plain: "not a git work tree", bare: "not the top directory", tmp_path / "missing": "does not exist"}
    (repo / "sub").mkdir()
    (repo / "sub" / "f").write_text("x\n")
    run_git(repo, "add", "-A")
    run_git(repo, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "one")
    cases[repo] = ""  # a commit now: opens
    cases[repo / "sub"] = "not the top directory"
    for source, message in cases.items():
        if not message:
            target = open_tree(source)
            assert target.root == repo.resolve() and target.git_dir == (repo / ".git").resolve()
            blob = run_git(repo, "rev-parse", "HEAD:sub/f").stdout.strip()
            assert target.blobs.read(blob) == b"x\n"
            with pytest.raises(KeyError):
                target.blobs.read("0" * 40)
            target.blobs.close()
            continue
        with pytest.raises(UserError, match=message) as err:
            open_tree(source)
        assert "\n" not in str(err.value)
