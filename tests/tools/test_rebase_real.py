# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Rebase on the real upstream trees (torch/**/*.py of the 2.13.0, 2.14.0, 2.14.1 and 2.15.0 release wheels).

The project's real series (``patches/`` of this checkout, copied to a temporary project) is moved from v2.13.0 to
v2.15.0. Upstream rewrote ``_has_sufficient_memory`` in ``common_device_type.py`` for 2.15 (MTIA joined the
accelerator branch; PrivateUse1 still has none), so the patch adding the PrivateUse1 branch conflicts: the test
resolves it the way a maintainer does -- keep upstream's function, put the PrivateUse1 branch back before the XLA
check -- and finishes with ``--continue``. A second test adds patches written here against real files -- the
kinds of change the series carries -- whose
fate across the releases is known from upstream's own diffs, so every status is exercised on real code:
``_foreach_utils.py`` (untouched upstream: clean), ``checkpoint.py`` (code inserted above: offset), ``dataloader.py``
(a typo upstream fixed the same way in 2.14: upstreamed; an edit next to lines upstream changed: 3-way),
``grad_scaler.py`` (a docstring fix upstream made in 2.15: upstreamed).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_rebase_support import git, run_cli, series_names

from catch_tools.patches import apply_to_git, export_series
from catch_tools.patches.check import check_series
from catch_tools.paths import repo_root
from catch_tools.pin import load_pin, manifest_path
from catch_tools.upstream import clone_upstream

pytestmark = [pytest.mark.real, pytest.mark.slow]
RELEASES = ["2.13.0", "2.14.0", "2.14.1", "2.15.0"]


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    return clone_upstream(RELEASES, tmp_path / "pytorch")


def real_project(path: Path) -> Path:
    """A copy of this checkout's ``patches/`` in a git repo whose index has the ``pytorch`` gitlink at the pin."""
    shutil.copytree(repo_root() / "patches", path / "patches")
    git(path, "init", "-q", "-b", "main")
    git(path, "update-index", "--add", "--cacheinfo", f"160000,{load_pin(manifest_path(path)).commit},pytorch")
    return path


def release_commit(upstream: Path, tag: str) -> str:
    """The upstream commit the wheel of ``tag`` was built from, as recorded in the release commit's message."""
    return git(upstream, "log", "-1", "--format=%B", tag).split("upstream commit ")[1][:40]


def check_result(project: Path, upstream: Path, report: dict) -> None:
    """The pin moved to v2.15.0 everywhere and the exported series applies to v2.15.0 with the engine, no hunk moved
    (every carried patch as git format-patch writes it on v2.15.0)."""
    pin = load_pin(manifest_path(project))
    assert (pin.tag, pin.commit, pin.wheel_version) == ("v2.15.0", release_commit(upstream, "v2.15.0"), "2.15.0+cpu")
    assert pin.commit in git(project, "ls-files", "--stage", "pytorch")
    assert report["inputs"] == len(report["patches"])
    assert report["outputs"] == len(series_names(project))
    assert report["inputs"] == report["outputs"] + sum(not p["in_new_series"] for p in report["patches"])
    fresh = clone_upstream(RELEASES, project.parent / "verify")
    applied = apply_to_git(fresh, project / "patches", base="v2.15.0", pin=pin, force=True)
    assert [name for name, _ in applied.commits] == series_names(project)
    assert git(fresh, "rev-parse", "HEAD^{tree}") == git(upstream, "rev-parse", "refs/patches/applied^{tree}")
    checked = check_series(project / "patches", source=fresh, base="v2.15.0", pin=pin)
    assert not checked.failed
    assert [(p.name, h["header"]) for p in checked.patches for h in p.hunks if h["status"] != "ok"] == []


COMMON_DEVICE_TYPE = "torch/testing/_internal/common_device_type.py"
XLA_CHECK = ('    if device_type == "xla":\n'
             '        raise unittest.SkipTest("TODO: Memory availability checks for XLA?")\n')


def resolve_common_device_type(upstream: Path, patch: Path) -> None:
    """Resolve the 2.15 conflict by hand: upstream's file, plus the patch's PrivateUse1 branch before the XLA check."""
    added = [ln[1:] for ln in patch.read_text().splitlines(keepends=True)
             if ln.startswith("+") and not ln.startswith("+++")]
    branch = "".join(added)
    assert "_get_privateuse1_backend_name()" in branch
    git(upstream, "checkout", "--ours", "--", COMMON_DEVICE_TYPE)  # the new base's version (HEAD side of the pick)
    path = upstream / COMMON_DEVICE_TYPE
    text = path.read_text()
    assert text.count(XLA_CHECK) == 1 and "<<<<<<<" not in text
    path.write_text(text.replace(XLA_CHECK, branch + XLA_CHECK))
    git(upstream, "add", "--", COMMON_DEVICE_TYPE)


def test_real_series_from_v2_13_0_to_v2_15_0(tmp_path: Path, upstream: Path) -> None:
    project = real_project(tmp_path / "project")
    inputs = series_names(project)
    conflicting = next(n for n in inputs if "largeTensorTest" in n)
    res = run_cli(project, upstream, "--onto", "v2.15.0", "--json")
    assert res.returncode == 1, res.stderr
    assert conflicting in res.stderr and COMMON_DEVICE_TYPE in res.stderr and "--continue" in res.stderr
    resolve_common_device_type(upstream, project / "patches" / conflicting)
    res = run_cli(project, upstream, "--continue", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    statuses = {p["name"]: [s["status"] for s in p["steps"]] for p in report["patches"]}
    assert statuses[conflicting] == ["resolved"]
    assert [p["name"] for p in report["patches"]] == inputs
    assert report["old_base"]["ref"] == "v2.13.0" and report["new_base"]["ref"] == "v2.15.0"
    check_result(project, upstream, report)


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert text.count(old) == 1, (rel, old)
    path.write_text(text.replace(old, new))


GENERATED = [
    ("Mark PrivateUse1 in the foreach device list", "torch/utils/_foreach_utils.py",
     '    return ["cuda", "xpu", "mtia", torch._C._get_privateuse1_backend_name()]\n',
     "    # PrivateUse1 backends (Catch's mlu) opt in under the name they registered.\n"
     '    return ["cuda", "xpu", "mtia", torch._C._get_privateuse1_backend_name()]\n'),
    ("checkpoint: say PrivateUse1 device states are saved too", "torch/utils/checkpoint.py",
     "    # the conditionals short-circuit.\n",
     "    # the conditionals short-circuit. PrivateUse1 devices (mlu) are saved like CUDA ones.\n"),
    ("dataloader: fix a typo in the worker-count warning comment", "torch/utils/data/dataloader.py",
     "        # use, than we will pop up a warning to let user pay attention.\n",
     "        # use, then we will pop up a warning to let user pay attention.\n"),
    ("dataloader: note why index queues must not join", "torch/utils/data/dataloader.py",
     "            # See sections (2) and (3b) above.\n",
     "            # See sections (2) and (3b) above; the same holds for PrivateUse1 pin-memory threads.\n"),
    ("grad_scaler: fix double spaces in the step docstring", "torch/amp/grad_scaler.py",
     "        If :meth:`unscale_` is not called explicitly,  gradients will be unscaled  automatically during "
     ":meth:`step`.\n",
     "        If :meth:`unscale_` is not called explicitly, gradients will be unscaled automatically during "
     ":meth:`step`.\n"),
]


def test_realistic_patches_via_every_release(tmp_path: Path, upstream: Path) -> None:
    """Patches of known fate on real files, through every release (the real series has its own test above)."""
    project = real_project(tmp_path / "project")
    for name in series_names(project):
        (project / "patches" / name).unlink()
    series = project / "patches" / "series"
    series.write_text("".join(ln for ln in series.read_text().splitlines(keepends=True) if ln.startswith("#")))
    real = series_names(project)
    assert real == []
    scratch = clone_upstream(RELEASES, tmp_path / "scratch")
    git(scratch, "checkout", "-q", "--detach", "v2.13.0")
    pin = load_pin(manifest_path(project))
    apply_to_git(scratch, project / "patches", base="v2.13.0", pin=pin)
    for subject, rel, old, new in GENERATED:
        _edit(scratch, rel, old, new)
        git(scratch, "commit", "-q", "-a", "-m", f"{subject}\n\nUpstream-Status: Pending\n")
    export_series(scratch, project / "patches", base="v2.13.0", pin=pin)
    names = series_names(project)
    assert len(names) == len(real) + len(GENERATED)

    res = run_cli(project, upstream, "--onto", "v2.15.0", "--via", "v2.14.0,v2.14.1", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert [s["onto"] for s in report["steps"]] == ["v2.14.0", "v2.14.1", "v2.15.0"]
    foreach, checkpoint, typo, queues, scaler = ([s["status"] for s in p["steps"]]
                                                 for p in report["patches"][len(real):])
    assert foreach == ["clean", "clean", "clean"]
    assert checkpoint[0] == "offset"
    assert typo == ["upstreamed"]
    assert queues[0] == "3way"
    assert scaler == ["clean", "clean", "upstreamed"]
    assert report["outputs"] == report["inputs"] - 2
    assert "Range-diff" in (upstream / ".git" / "catch-rebase-report.md").read_text()
    assert "dataloader: note why index queues must not join" in report["range_diff"]
    check_result(project, upstream, report)
