# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The patch proof gate (catch_tools.proof, scripts/prove_patches.py) on small fake torch trees.

The fake upstream tree is a git work tree whose ``torch/`` is a tiny package; patches are written with plain
``git format-patch`` (tests/tools/conftest.py); each patch's ``Catch-Test`` names a test in a temporary project root
that reads the torch tree the gate hands it (``CATCH_TORCH_TREE``, the first entry of ``PYTHONPATH``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SmallTree

from catch_tools.errors import UserError
from catch_tools.paths import patches_dir, repo_root
from catch_tools.proof import build_patched_tree, prove_series, render_table

#: Tests the fake patches name. They read torch/a.py of the tree under test and import torch from PYTHONPATH.
FEATURE_TESTS = '''
import os
from pathlib import Path


def _a_py():
    import torch
    tree = Path(os.environ["CATCH_TORCH_TREE"])
    assert Path(torch.__file__).parent == tree / "torch"
    return (tree / "torch" / "a.py").read_text()


def test_feature():
    assert "a line 5 FIXED" in _a_py()


def test_always_passes():
    assert "a line 1\\n" in _a_py()


def test_never_fixed():
    assert "NEVER" in _a_py()


def test_skipped():
    import pytest
    pytest.skip("cannot run here")
'''


ALWAYS_PASSES = "tests/test_feature.py::test_always_passes"


@pytest.fixture
def project(small_tree: SmallTree, tmp_path: Path) -> Path:
    """A project root with ``tests/test_feature.py`` and a pin; its ``patches/`` is the small tree's series dir."""
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_feature.py").write_text(FEATURE_TESTS)
    (root / "patches").symlink_to(small_tree.patches)
    return root


def _fix_a(tree: SmallTree, subject: str, test: str | None, marker: str = "FIXED") -> None:
    text = (tree.root / "torch/a.py").read_text().replace("a line 5\n", f"a line 5 {marker}\n")
    tree.commit(subject, {"torch/a.py": text}, test=test)


def _upstream(tree: SmallTree) -> Path:
    """The small tree at its base, made importable as a torch tree (an untracked ``torch/__init__.py``)."""
    (tree.root / "torch" / "__init__.py").write_text("")
    return tree.root


def _by_patch(results: list) -> dict:
    return {r.patch.split("-", 1)[1].removesuffix(".patch"): r for r in results}


def test_gate_accepts_a_proven_patch_and_rejects_the_rest(small_tree: SmallTree, project: Path) -> None:
    _fix_a(small_tree, "good fix", "tests/test_feature.py::test_feature")
    small_tree.commit("unproven change", {"torch/b.py": "b changed\n"}, test=ALWAYS_PASSES)
    small_tree.commit("missing test", {"torch/sub/c.py": "c changed\n"}, test="tests/test_feature.py::test_gone")
    small_tree.commit("missing test file", {"torch/sub/d.py": "d\n"}, test="tests/test_nowhere.py::test_x")
    small_tree.commit("no trailer", {"torch/e.py": "e\n"}, test=None)
    small_tree.commit("skipped test", {"torch/f.py": "f\n"}, test="tests/test_feature.py::test_skipped")
    small_tree.commit("does not fix", {"torch/g.py": "g\n"}, test="tests/test_feature.py::test_never_fixed")
    small_tree.format_series()
    upstream = _upstream(small_tree)

    results = _by_patch(prove_series(small_tree.patches, root=project, upstream_tree=upstream))

    good = results["good-fix"]
    assert (good.ok, good.unpatched, good.patched, good.reason) == (True, "failed", "passed", "")
    assert not results["unproven-change"].ok
    assert results["unproven-change"].unpatched == "passed"
    assert "does not fail without the patch" in results["unproven-change"].reason
    for name in ("missing-test", "missing-test-file"):
        assert not results[name].ok and "does not exist" in results[name].reason
    assert not results["no-trailer"].ok and "Catch-Test" in results["no-trailer"].reason
    assert not results["skipped-test"].ok and "is skipped" in results["skipped-test"].reason
    assert not results["does-not-fix"].ok
    assert (results["does-not-fix"].unpatched, results["does-not-fix"].patched) == ("failed", "failed")
    assert "does not pass with the patch" in results["does-not-fix"].reason
    # The reason carries the patched run's assertion, so a CI log says why without rerunning the test.
    assert "NEVER" in results["does-not-fix"].reason
    assert len(results) == 7


def test_gate_cli_exit_codes_json_and_one_line_per_rejection(small_tree: SmallTree, project: Path,
                                                              run_script: Callable) -> None:
    _fix_a(small_tree, "good fix", "tests/test_feature.py::test_feature")
    small_tree.commit("unproven change", {"torch/b.py": "b changed\n"}, test=ALWAYS_PASSES)
    small_tree.format_series()
    upstream = _upstream(small_tree)
    env = {"CATCH_ROOT": str(project)}

    proc = run_script("prove_patches.py", "--upstream-tree", str(upstream), "--json", env=env)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"] is False
    assert [p["ok"] for p in doc["patches"]] == [True, False]
    rejected = [ln for ln in proc.stderr.splitlines() if ln.startswith("rejected: ")]
    assert len(rejected) == 1 and "unproven-change" in rejected[0]

    only_good = run_script("prove_patches.py", "--upstream-tree", str(upstream), "--patch",
                           doc["patches"][0]["patch"], env=env)
    assert only_good.returncode == 0, only_good.stderr
    assert "proven" in only_good.stdout


def test_gate_bad_input_is_one_line(small_tree: SmallTree, project: Path, run_script: Callable) -> None:
    _fix_a(small_tree, "good fix", "tests/test_feature.py::test_feature")
    small_tree.format_series()
    env = {"CATCH_ROOT": str(project)}
    upstream = _upstream(small_tree)
    cases = [
        ("--upstream-tree", str(project / "nope")),
        ("--upstream-tree", str(upstream), "--patch", "0009-unknown.patch"),
        ("--upstream-tree", str(project)),  # no torch/ in it
    ]
    for args in cases:
        proc = run_script("prove_patches.py", *args, env=env)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: "), proc.stderr
        assert "Traceback" not in proc.stderr


def test_gate_refuses_an_upstream_tree_that_already_carries_the_series(small_tree: SmallTree,
                                                                         project: Path, tmp_path: Path) -> None:
    _fix_a(small_tree, "good fix", "tests/test_feature.py::test_feature")
    small_tree.format_series()
    patched = tmp_path / "patched"
    build_patched_tree(small_tree.patches, _upstream(small_tree), patched)
    with pytest.raises(UserError, match="already carries the series"):
        prove_series(small_tree.patches, root=project, upstream_tree=patched, torch_tree=patched)
    # Building an overlay on it fails too: the series does not apply twice.
    with pytest.raises(UserError, match="does not apply"):
        prove_series(small_tree.patches, root=project, upstream_tree=patched)


def test_overlay_links_untouched_files_and_patches_copies(small_tree: SmallTree, tmp_path: Path) -> None:
    _fix_a(small_tree, "good fix", "tests/test_feature.py::test_feature")
    small_tree.commit("new file", {"torch/sub/new.py": "x = 1\n"})
    small_tree.format_series()
    upstream = _upstream(small_tree)
    (upstream / "torch" / "__pycache__").mkdir()
    before = (upstream / "torch" / "a.py").read_bytes()

    overlay = tmp_path / "overlay"
    touched = build_patched_tree(small_tree.patches, upstream, overlay)

    assert touched == ["torch/a.py", "torch/sub/new.py"]
    a_py = overlay / "torch" / "a.py"
    assert not a_py.is_symlink() and "a line 5 FIXED\n" in a_py.read_text()
    assert (upstream / "torch" / "a.py").read_bytes() == before
    assert (overlay / "torch" / "b.py").is_symlink()
    assert (overlay / "torch" / "b.py").resolve() == (upstream / "torch" / "b.py").resolve()
    assert (overlay / "torch" / "sub").is_dir() and not (overlay / "torch" / "sub").is_symlink()
    assert (overlay / "torch" / "sub" / "c.py").is_symlink()
    assert (overlay / "torch" / "sub" / "new.py").read_text() == "x = 1\n"
    # Bytecode of patched files must not be written into the upstream tree.
    assert not (overlay / "torch" / "__pycache__").exists()
    with pytest.raises(UserError, match="not empty"):
        build_patched_tree(small_tree.patches, upstream, overlay)


def test_table_lists_every_patch_with_its_test_and_status(small_tree: SmallTree) -> None:
    _fix_a(small_tree, "make a better", "tests/test_feature.py::test_feature")
    small_tree.commit("pipe | in subject", {"torch/b.py": "b\n"}, status="Inappropriate [catch only]",
                      test="tests/test_feature.py::test_always_passes")
    small_tree.format_series()
    rows = [ln for ln in render_table(small_tree.patches).splitlines() if ln.startswith("| ") and "[0" in ln]
    assert len(rows) == 2
    assert "make a better" in rows[0] and "`torch/a.py`" in rows[0] and "Pending" in rows[0]
    assert "`tests/test_feature.py::test_feature`" in rows[0]
    assert "pipe \\| in subject" in rows[1] and "Inappropriate [catch only]" in rows[1]


def test_docs_patches_md_is_current() -> None:
    doc = repo_root() / "docs" / "patches.md"
    assert doc.is_file(), "run: python scripts/prove_patches.py --write-table"
    assert doc.read_text(encoding="utf-8") == render_table(patches_dir()), (
        "docs/patches.md is stale: run python scripts/prove_patches.py --write-table")
