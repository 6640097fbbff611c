# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark ``scripts/rebase.py`` against plain ``git rebase`` on the real upstream trees.

Prints, from one run:

1. a generated 200-patch series (one small edit each, across real ``torch/**/*.py`` files) rebased from v2.13.0 to
   v2.14.0: our full rebase (replay on the old base, per-patch apply and classification, export, pin, report) vs
   ``git rebase --onto v2.14.0`` of the same 200 commits in another clone; the ratio (target <= 1.5x);
2. the project's real series (``patches/``) from v2.13.0 to v2.15.0 (target < 60 s).

Usage: ``python benchmarks/bench_rebase.py [--patches 200] [--seed 0]``. Uses the cached wheel-built upstream repository
(:func:`catch_tools.upstream.upstream_repo`); everything else lives in a temporary directory.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

try:
    import catch_tools  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from catch_tools.git import run_git
from catch_tools.patches import apply_to_git, export_series
from catch_tools.paths import repo_root
from catch_tools.pin import load_pin, manifest_path, update_pin
from catch_tools.rebase import Finished, Rebase
from catch_tools.upstream import clone_upstream

RELEASES = ["2.13.0", "2.14.0", "2.14.1", "2.15.0"]
ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@catch.invalid", "GIT_AUTHOR_DATE": "1710000000 +0000",
       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@catch.invalid",
       "GIT_COMMITTER_DATE": "1710000000 +0000"}


def git(cwd: Path, *args: str) -> str:
    return run_git(cwd, *args, env=ENV).stdout.strip()


def pick_edits(repo: Path, count: int, seed: int) -> list[tuple[str, int]]:
    """(path, line index) pairs: a line whose 7-line neighbourhood is also in v2.14.0, so plain git rebase does not
    stop on a conflict (the lines may move: offsets and 3-way merges still happen)."""
    rng = random.Random(seed)
    old_files = set(git(repo, "ls-tree", "-r", "--name-only", "v2.13.0").splitlines())
    new_files = set(git(repo, "ls-tree", "-r", "--name-only", "v2.14.0").splitlines())
    candidates = sorted(f for f in old_files & new_files if f.endswith(".py"))
    rng.shuffle(candidates)
    chosen: list[tuple[str, int]] = []
    for path in candidates:
        old = git(repo, "show", f"v2.13.0:{path}").split("\n")
        new = "\n".join(git(repo, "show", f"v2.14.0:{path}").split("\n"))
        if len(old) < 20:
            continue
        index = rng.randrange(5, len(old) - 5)
        block = "\n".join(old[index - 3:index + 4])
        if old[index].strip() and "\n".join(old).count(block) == 1 and new.count(block) == 1:
            chosen.append((path, index))
        if len(chosen) == count:
            return chosen
    raise SystemExit(f"only {len(chosen)} editable places found")


def make_series(work: Path, project: Path, count: int, seed: int) -> None:
    """Write a ``count``-patch series against v2.13.0 into ``project/patches`` with the engine's export."""
    scratch = clone_upstream(RELEASES, work / "scratch")
    git(scratch, "checkout", "-q", "--detach", "v2.13.0")
    for number, (path, index) in enumerate(pick_edits(scratch, count, seed), start=1):
        file = scratch / path
        lines = file.read_text().split("\n")
        lines[index] += f"  # catch bench edit {number}"
        file.write_text("\n".join(lines))
        message = f"bench: edit {number} in {path}\n\nUpstream-Status: Inappropriate [bench]"
        git(scratch, "commit", "-q", "-a", "-m", message)
    (project / "patches").mkdir(parents=True)
    shutil.copy(manifest_path(repo_root()), manifest_path(project))
    update_pin(manifest_path(project), tag="v2.13.0")
    (project / "patches" / "series").write_text("# bench series\n")
    export_series(scratch, project / "patches", base="v2.13.0", pin=load_pin(manifest_path(project)))
    shutil.rmtree(scratch)


def time_ours(project: Path, upstream: Path, onto: str, via: list[str] | None = None) -> tuple[float, dict]:
    start = time.perf_counter()
    outcome = Rebase(project, upstream).start(onto, via)
    elapsed = time.perf_counter() - start
    if not isinstance(outcome, Finished):
        raise SystemExit(f"rebase stopped at a conflict: {outcome.message()}")
    return elapsed, outcome.report


def time_git_rebase(work: Path, project: Path, tag: str) -> float:
    """Plain ``git rebase --onto v2.14.0`` of the same series (replayed as commits with the engine, untimed)."""
    clone = clone_upstream(RELEASES, work / f"plain-{tag}")
    git(clone, "checkout", "-q", "--detach", "v2.13.0")
    apply_to_git(clone, project / "patches", base="v2.13.0", pin=load_pin(manifest_path(project)))
    git(clone, "checkout", "-q", "-b", "series")
    start = time.perf_counter()
    git(clone, "rebase", "-q", "--onto", "v2.14.0", "v2.13.0", "series")
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patches", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs of each; the minimum is compared")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-rebase-") as tmp:
        work = Path(tmp)
        series = work / "series"
        make_series(work, series, args.patches, args.seed)
        plain_times, our_times = [], []
        for run in range(args.repeat):
            plain_times.append(time_git_rebase(work, series, str(run)))
            project = work / f"project-{run}"
            shutil.copytree(series, project)
            upstream = clone_upstream(RELEASES, work / f"upstream-{run}")
            ours, report = time_ours(project, upstream, "v2.14.0")
            our_times.append(ours)
        counts = ", ".join(f"{n} {s}" for s, n in report["counts"].items() if n)
        ours, plain = min(our_times), min(plain_times)
        print(f"{args.patches}-patch series v2.13.0 -> v2.14.0 ({counts}); best of {args.repeat}")
        print(f"  ours (replay + rebase + export + pin + report): {ours:7.2f} s  (all: {_fmt(our_times)})")
        print(f"  plain git rebase of the same commits:           {plain:7.2f} s  (all: {_fmt(plain_times)})")
        print(f"  ratio: {ours / plain:.2f}x (target <= 1.5x)")

        real = work / "real"
        shutil.copytree(repo_root() / "patches", real / "patches")
        upstream2 = clone_upstream(RELEASES, work / "upstream2")
        seconds, report = time_ours(real, upstream2, "v2.15.0")
        print(f"real series ({report['inputs']} patches) v2.13.0 -> v2.15.0: {seconds:.2f} s (target < 60 s)")
        seconds, report = time_ours_via(work, real)
        print(f"real series v2.13.0 -> v2.15.0 --via v2.14.0,v2.14.1: {seconds:.2f} s")
    return 0


def _fmt(times: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


def time_ours_via(work: Path, real: Path) -> tuple[float, dict]:
    shutil.rmtree(real / "patches")
    shutil.copytree(repo_root() / "patches", real / "patches")
    upstream = clone_upstream(RELEASES, work / "upstream3")
    return time_ours(real, upstream, "v2.15.0", ["v2.14.0", "v2.14.1"])


if __name__ == "__main__":
    sys.exit(main())
