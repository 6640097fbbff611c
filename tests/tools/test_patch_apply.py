# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``apply`` onto git trees: reproducible commits, refs, no-op, refusals, atomic failure, 3-way, stop-at-conflict,
stale state and kill -9 recovery."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SCRIPTS, SmallTree, git_cmd, numbered

from catch_tools.errors import UserError
from catch_tools.patches import apply_to_git, series_status
from catch_tools.patches.gittree import REF_APPLIED, REF_BASE, REF_IN_PROGRESS
from catch_tools.pin import load_pin


def _two_patches(tree: SmallTree) -> list[str]:
    lines = numbered("a", 60).splitlines(keepends=True)
    lines[10] = "a changed 11\n"
    tree.commit("Change a", {"torch/a.py": "".join(lines)}, body="Why: a needs it.")
    tree.commit("Add d, drop b", {"torch/d.py": "d = 1\n", "torch/b.py": None})
    return tree.format_series()


def _pin(tree: SmallTree):
    return load_pin(tree.patches / "manifest.toml")


def test_apply_makes_one_commit_per_patch_with_refs(small_tree: SmallTree) -> None:
    names = _two_patches(small_tree)
    result = apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert [n for n, _ in result.commits] == names
    log = git_cmd(small_tree.root, "log", "--format=%s|%an|%cn", f"{small_tree.base}..HEAD").splitlines()
    assert log == ["Add d, drop b|Ada Lovelace|Catch Patches", "Change a|Ada Lovelace|Catch Patches"]
    assert git_cmd(small_tree.root, "rev-parse", REF_BASE) == small_tree.base
    assert git_cmd(small_tree.root, "rev-parse", REF_APPLIED) == git_cmd(small_tree.root, "rev-parse", "HEAD")
    assert (small_tree.root / "torch/d.py").read_text() == "d = 1\n"
    assert not (small_tree.root / "torch/b.py").exists()
    assert "a changed 11" in (small_tree.root / "torch/a.py").read_text()
    assert git_cmd(small_tree.root, "status", "--porcelain") == ""
    body = git_cmd(small_tree.root, "log", "-1", "--format=%B", "HEAD~1")
    assert "Why: a needs it." in body and "Upstream-Status: Pending" in body


def test_commit_ids_equal_plain_git_am_and_are_reproducible(small_tree: SmallTree, tmp_path: Path) -> None:
    _two_patches(small_tree)
    ours = apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree)).head
    clone = tmp_path / "clone"
    git_cmd(tmp_path, "clone", "-q", "--no-local", str(small_tree.root), str(clone))
    git_cmd(clone, "checkout", "-q", "--detach", "v2.13.0")
    again = apply_to_git(clone, small_tree.patches, pin=_pin(small_tree)).head
    assert again == ours
    am = tmp_path / "am"
    git_cmd(tmp_path, "clone", "-q", "--no-local", str(small_tree.root), str(am))
    git_cmd(am, "checkout", "-q", "--detach", "v2.13.0")
    env = {"GIT_COMMITTER_NAME": "Catch Patches", "GIT_COMMITTER_EMAIL": "patches@catch.invalid"}
    for line in (small_tree.patches / "series").read_text().splitlines():
        if line and not line.startswith("#"):
            git_cmd(am, "am", "-q", "-k", "--committer-date-is-author-date", str(small_tree.patches / line), env=env)
    assert git_cmd(am, "rev-parse", "HEAD") == ours


def test_rerun_is_a_noop_that_says_so(small_tree: SmallTree, run_script) -> None:
    _two_patches(small_tree)
    args = ["apply", "--source", str(small_tree.root), "--patches-dir", str(small_tree.patches)]
    first = run_script("apply_patches.py", *args)
    assert first.returncode == 0, first.stderr
    before = small_tree.snapshot()
    second = run_script("apply_patches.py", *args)
    assert second.returncode == 0
    assert "already applied" in second.stdout
    assert small_tree.snapshot() == before


def test_reapply_after_series_change_replaces_old_series(small_tree: SmallTree) -> None:
    _two_patches(small_tree)
    apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    series = small_tree.patches / "series"
    first = [ln for ln in series.read_text().splitlines() if ln.endswith(".patch")][0]
    series.write_text(first + "\n")
    result = apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert len(result.commits) == 1
    assert (small_tree.root / "torch/b.py").exists()
    assert git_cmd(small_tree.root, "rev-list", "--count", f"{small_tree.base}..HEAD") == "1"


def test_dirty_tree_is_refused_and_kept(small_tree: SmallTree) -> None:
    _two_patches(small_tree)
    (small_tree.root / "torch/a.py").write_text("local edit\n")
    before = small_tree.snapshot()
    with pytest.raises(UserError, match="uncommitted changes"):
        apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert small_tree.snapshot() == before


def test_force_discards_dirty_tree(small_tree: SmallTree) -> None:
    _two_patches(small_tree)
    (small_tree.root / "torch/a.py").write_text("local edit\n")
    apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree), force=True)
    assert "a changed 11" in (small_tree.root / "torch/a.py").read_text()
    assert git_cmd(small_tree.root, "status", "--porcelain") == ""


def test_target_not_at_pinned_base_is_refused(small_tree: SmallTree) -> None:
    _two_patches(small_tree)
    small_tree.commit("unrelated upstream work", {"torch/sub/c.py": "other\n"})
    git_cmd(small_tree.root, "checkout", "-q", "--detach", "HEAD")
    git_cmd(small_tree.root, "reset", "-q", "--hard", "HEAD")
    git_cmd(small_tree.root, "tag", "-f", "v2.13.0", small_tree.base)
    # HEAD now has a commit on top of the base that no series produced.
    before = small_tree.snapshot()
    with pytest.raises(UserError, match="not the applied series"):
        apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert small_tree.snapshot() == before
    other = git_cmd(small_tree.root, "commit-tree", "-m", "elsewhere", f"{small_tree.base}^{{tree}}")
    git_cmd(small_tree.root, "reset", "-q", "--hard", other)
    with pytest.raises(UserError, match="not at the pinned base"):
        apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    result = apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree), force=True)
    assert git_cmd(small_tree.root, "rev-parse", "HEAD~2") == small_tree.base
    assert len(result.commits) == 2


def test_base_prefers_pin_commit_then_tag_then_explicit(small_tree: SmallTree) -> None:
    _two_patches(small_tree)
    manifest = small_tree.patches / "manifest.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace('tag = "v2.13.0"', 'tag = "v9.9.9"'))
    with pytest.raises(UserError, match="neither the pinned commit"):
        apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    manifest.write_text(text.replace('tag = "v2.13.0"', 'tag = "v9.9.9"').replace(
        "cf30153c4c131c8164ee7798e5022d810682e2cb", small_tree.base))
    assert apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree)).base == small_tree.base
    assert apply_to_git(small_tree.root, small_tree.patches, base="v2.13.0", pin=_pin(small_tree),
                        force=True).base == small_tree.base


def test_failing_patch_leaves_everything_as_before(small_tree: SmallTree) -> None:
    _two_patches(small_tree)
    apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    # A third patch whose context does not exist.
    bad = small_tree.patches / "0003-bad.patch"
    bad.write_text((small_tree.patches / "0001-Change-a.patch").read_text().replace(" a line 10\n",
                                                                                      " a line 10 NOT THERE\n"))
    with open(small_tree.patches / "series", "a") as fh:
        fh.write("0003-bad.patch\n")
    before = small_tree.snapshot()
    with pytest.raises(UserError) as info:
        apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert "0003-bad.patch" in str(info.value) and "does not apply" in str(info.value)
    assert info.value.line is not None
    assert small_tree.snapshot() == before


def test_three_way_resolves_a_patch_with_stale_context(small_tree: SmallTree) -> None:
    lines = numbered("a", 60).splitlines(keepends=True)
    lines[30] = "a changed 31\n"
    small_tree.commit("Change a middle", {"torch/a.py": "".join(lines)})
    small_tree.format_series()
    # Upstream moved: the line next to the hunk changed, so the context no longer matches exactly.
    up = numbered("a", 60).splitlines(keepends=True)
    up[28] = "a upstream 29\n"
    small_tree.commit("upstream change", {"torch/a.py": "".join(up)})
    git_cmd(small_tree.root, "tag", "-f", "v2.13.0")
    new_base = git_cmd(small_tree.root, "rev-parse", "HEAD")
    with pytest.raises(UserError, match="does not apply"):
        apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    result = apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree), three_way=True)
    assert result.three_way == ["Change a middle"]
    text = (small_tree.root / "torch/a.py").read_text()
    assert "a upstream 29" in text and "a changed 31" in text
    assert git_cmd(small_tree.root, "rev-parse", "HEAD~1") == new_base
    assert git_cmd(small_tree.root, "status", "--porcelain") == ""


def _conflicting_series(tree: SmallTree) -> None:
    lines = numbered("a", 60).splitlines(keepends=True)
    lines[30] = "a ours 31\n"
    tree.commit("Change a middle", {"torch/a.py": "".join(lines)})
    tree.format_series()
    up = numbered("a", 60).splitlines(keepends=True)
    up[30] = "a theirs 31\n"
    tree.commit("upstream change", {"torch/a.py": "".join(up)})
    git_cmd(tree.root, "tag", "-f", "v2.13.0")


def test_three_way_conflict_is_atomic(small_tree: SmallTree) -> None:
    _conflicting_series(small_tree)
    before = small_tree.snapshot()
    with pytest.raises(UserError, match="even with 3-way"):
        apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree), three_way=True)
    assert small_tree.snapshot() == before
    assert not (Path(small_tree.repo.git_dir) / "rebase-apply").exists()


def test_stop_at_conflict_leaves_patch_in_progress_with_steps(small_tree: SmallTree, run_script) -> None:
    _conflicting_series(small_tree)
    proc = run_script("apply_patches.py", "apply", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches), "--3way", "--stop-at-conflict")
    assert proc.returncode == 1
    assert "am --continue" in proc.stdout and "export" in proc.stdout and "torch/a.py" in proc.stdout
    assert (Path(small_tree.repo.git_dir) / "rebase-apply").exists()
    # A plain re-run refuses rather than destroying the resolution in progress...
    again = run_script("apply_patches.py", "apply", "--source", str(small_tree.root), "--patches-dir",
                       str(small_tree.patches))
    assert again.returncode == 2 and "stopped at a conflict" in again.stderr
    # ...and reverse abandons it, back to the base with refs cleaned.
    rev = run_script("apply_patches.py", "reverse", "--source", str(small_tree.root), "--patches-dir",
                     str(small_tree.patches))
    assert rev.returncode == 0, rev.stderr
    assert not (Path(small_tree.repo.git_dir) / "rebase-apply").exists()
    assert git_cmd(small_tree.root, "status", "--porcelain") == ""


def test_stale_git_am_is_cleaned_up(small_tree: SmallTree) -> None:
    _conflicting_series(small_tree)
    patch = next(small_tree.patches.glob("*.patch"))
    proc = subprocess.run(["git", "am", str(patch)], cwd=small_tree.root, capture_output=True)
    assert proc.returncode != 0 and (Path(small_tree.repo.git_dir) / "rebase-apply").exists()
    # Rewrite the series so that it applies to the new base; the stale am must not block apply.
    patch.unlink()
    (small_tree.patches / "series").write_text("")
    result = apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert any("stale git am" in n for n in result.notes)
    assert not (Path(small_tree.repo.git_dir) / "rebase-apply").exists()


def test_kill_9_midway_is_recovered_by_the_next_run(small_tree: SmallTree) -> None:
    _two_patches(small_tree)
    before = small_tree.snapshot()
    env = dict(os.environ, CATCH_FAULT="patches.move-head,pause=30")
    proc = subprocess.Popen([sys.executable, str(SCRIPTS / "apply_patches.py"), "apply", "--source",
                             str(small_tree.root), "--patches-dir", str(small_tree.patches)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    state = Path(small_tree.repo.git_dir) / "catch-patches" / "state.json"
    deadline = time.monotonic() + 60
    # Wait until the work tree has been updated (torch/d.py created) but HEAD has not moved.
    while not (small_tree.root / "torch/d.py").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state.exists()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert git_cmd(small_tree.root, "rev-parse", "HEAD") == before["head"]
    assert git_cmd(small_tree.root, "rev-parse", REF_IN_PROGRESS) == before["head"]
    status = series_status(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert status.in_progress and "interrupted apply" in status.in_progress
    result = apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert any("recovered from an interrupted apply" in n for n in result.notes)
    assert not state.exists()
    assert git_cmd(small_tree.root, "status", "--porcelain") == ""
    assert git_cmd(small_tree.root, "rev-parse", "HEAD") == result.head
    assert not (small_tree.root / "torch/b.py").exists()


def test_dep3_patch_becomes_a_commit_with_its_author_and_subject(small_tree: SmallTree) -> None:
    (small_tree.patches / "fix-b.patch").write_text(
        "Description: Fix b for Debian\n Longer explanation.\nAuthor: Deb Maintainer <deb@debian.org>\n"
        "Forwarded: no\nUpstream-Status: Inappropriate [debian packaging]\n"
        "Catch-Test: tests/tools/test_x.py::test_x\n---\n"
        "Index: pkg/torch/b.py\n===================================================================\n"
        "--- pkg.orig/torch/b.py\n+++ pkg/torch/b.py\n@@ -1,3 +1,3 @@\n b line 1\n-b line 2\n+b debian 2\n"
        " b line 3\n")
    (small_tree.patches / "series").write_text("fix-b.patch\n")
    apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert git_cmd(small_tree.root, "log", "-1", "--format=%an <%ae>|%s") == \
        "Deb Maintainer <deb@debian.org>|Fix b for Debian"
    body = git_cmd(small_tree.root, "log", "-1", "--format=%b")
    assert "Longer explanation." in body and "Forwarded: no" in body
    assert "b debian 2" in (small_tree.root / "torch/b.py").read_text()


def test_strip_level_from_series(small_tree: SmallTree) -> None:
    (small_tree.patches / "p0.diff").write_text(
        "--- torch/sub/c.py\n+++ torch/sub/c.py\n@@ -1,2 +1,2 @@\n-c line 1\n+c p0 1\n c line 2\n")
    (small_tree.patches / "series").write_text("p0.diff -p0\n")
    apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert (small_tree.root / "torch/sub/c.py").read_text().startswith("c p0 1\n")
    assert git_cmd(small_tree.root, "log", "-1", "--format=%s|%an") == "p0|Catch Patches"


def test_declared_binary_patch_goes_through_git(small_tree: SmallTree, tmp_path: Path) -> None:
    small_tree.commit("Add a blob", {"torch/blob.bin": bytes(range(256)) * 4, "torch/b.py": "b\n"},
                      body="Catch-Binary: yes")
    names = small_tree.format_series()
    assert "GIT binary patch" in (small_tree.patches / names[0]).read_text()
    result = apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert (small_tree.root / "torch/blob.bin").read_bytes() == bytes(range(256)) * 4
    assert git_cmd(small_tree.root, "status", "--porcelain") == ""
    # Same commit id as the in-memory path would give for the same message/identity: reproducible across runs.
    git_cmd(small_tree.root, "checkout", "-q", "--detach", small_tree.base)
    assert apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree), force=True).head == result.head
    from catch_tools.patches import apply_series_to_dir

    wheel = tmp_path / "wheel"
    (wheel / "torch").mkdir(parents=True)
    (wheel / "torch/b.py").write_text(numbered("b", 30))
    with pytest.raises(UserError, match="binary"):
        apply_series_to_dir(small_tree.patches, wheel)
    assert (wheel / "torch/b.py").read_text() == numbered("b", 30)


def test_progress_is_quiet_without_a_terminal_or_with_q(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from catch_tools.progress import progress

    with progress("x", 500) as bar:  # pytest captures stderr: not a TTY
        assert bar.bar is None
        with caplog.at_level(logging.INFO, logger="catch_tools"):
            bar.line("step one done")  # not drawn: logged at INFO instead (seen with -v)
    assert "step one done" in caplog.text
    with progress("x", 500, enabled=True) as bar:
        bar.advance()
        assert bar.completed == 1
    with progress("x", 3, enabled=True) as bar:
        assert bar.bar is None
    with progress("upgrade", enabled=True) as outer:  # a nested operation is one more line of the same display
        with progress("download", 100, enabled=True) as inner:
            inner.advance(2)
            assert inner.bar is outer.bar and outer.bar is not None and len(outer.bar.tasks) == 2
            assert inner.completed == 2 and outer.completed == 0
        assert len(outer.bar.tasks) == 1
    logger = logging.getLogger("catch_tools")
    old = logger.level
    logger.setLevel(logging.ERROR)  # -q
    try:
        with progress("x", None) as bar:
            assert bar.bar is None
    finally:
        logger.setLevel(old)


def test_stop_at_conflict_workflow_resolve_export_reapply(small_tree: SmallTree, run_script) -> None:
    _conflicting_series(small_tree)
    common = ["--source", str(small_tree.root), "--patches-dir", str(small_tree.patches)]
    proc = run_script("apply_patches.py", "apply", *common, "--3way", "--stop-at-conflict")
    assert proc.returncode == 1
    # The maintainer resolves the conflict as the printed steps say.
    resolved = numbered("a", 60).replace("a line 31\n", "a ours and theirs 31\n")
    (small_tree.root / "torch/a.py").write_text(resolved)
    git_cmd(small_tree.root, "add", "torch/a.py")
    git_cmd(small_tree.root, "am", "--continue", env={"GIT_COMMITTER_NAME": "M", "GIT_COMMITTER_EMAIL": "m@x"})
    exported = run_script("apply_patches.py", "export", *common)
    assert exported.returncode == 0, exported.stderr
    patch_text = next(small_tree.patches.glob("*.patch")).read_text()
    assert "+a ours and theirs 31" in patch_text and "-a theirs 31" in patch_text
    again = run_script("apply_patches.py", "apply", *common, "--force")
    assert again.returncode == 0, again.stderr
    status = run_script("apply_patches.py", "status", *common)
    assert "1/1 applied; no drift" in status.stdout
    assert (small_tree.root / "torch/a.py").read_text() == resolved


def test_counted_sub_step_is_a_line_of_the_callers_display_or_nothing() -> None:
    from catch_tools.progress import Reporter, progress

    with Reporter().counted("checking", 500) as hidden:
        assert hidden.bar is None  # the caller's display is not drawn: neither is its sub-step
    with progress("check", enabled=True) as outer, outer.counted("checking", 500) as inner:
        inner.advance(3)
        assert inner.bar is outer.bar and outer.bar is not None and inner.completed == 3


def test_every_progress_parameter_is_a_reporter() -> None:
    """One type for progress across the tooling: each ``progress`` parameter is ``Reporter | None``."""
    import ast

    src = Path(__file__).resolve().parents[2] / "src" / "catch_tools"
    found = []
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in node.args.args + node.args.kwonlyargs:
                    if arg.arg == "progress":
                        found.append((f"{path.relative_to(src)}:{node.name}", ast.unparse(arg.annotation)
                                      if arg.annotation else None))
    assert len(found) >= 6, found
    assert [f for f in found if f[1] != "Reporter | None"] == []
