#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark: apply a generated 200-patch series to the real v2.13.0 tree with our engine vs plain ``git am``.

The series: 200 small commits (1-2 files, 1-3 inserted lines each) across real ``torch/**/*.py`` files of the pinned
release (from :func:`catch_tools.upstream.upstream_repo`), written with ``git format-patch``. Each round starts from
a fresh state at the release tag:

* ``git am``: ``git am -k --committer-date-is-author-date <200 files>`` (one process, the baseline);
* ours: ``scripts/apply_patches.py apply --source ... --base <tag>`` (CLI, including interpreter start-up) and the
  library call :func:`catch_tools.patches.apply_to_git`;
* ``check`` of the same series (CLI and library; target < 2 s).

Prints the best of ``--rounds`` times and the ratios ours / git am (target <= 1.0). No asserts.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from catch_tools.patches import apply_to_git, check_series  # noqa: E402
from catch_tools.patches.gitrepo import git_env  # noqa: E402
from catch_tools.pin import load_pin  # noqa: E402
from catch_tools.upstream import upstream_repo  # noqa: E402

ENV_AM = {"GIT_COMMITTER_NAME": "Catch Patches", "GIT_COMMITTER_EMAIL": "patches@catch.invalid"}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          env=git_env(env)).stdout.strip()


def make_series(repo: Path, tag: str, out: Path, count: int, seed: int = 13) -> list[Path]:
    """Commit ``count`` small edits on top of ``tag`` in ``repo`` and write them as patches + series to ``out``."""
    rng = random.Random(seed)
    git(repo, "checkout", "-q", "--detach", tag)
    files = [f for f in git(repo, "ls-files", "torch").splitlines()
             if f.endswith(".py") and (repo / f).stat().st_size > 4000]
    files = sorted(rng.sample(sorted(files), 120))
    env = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@catch.invalid",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@catch.invalid"}
    for i in range(count):
        for path in rng.sample(files, rng.choice((1, 1, 2))):
            lines = (repo / path).read_text(encoding="utf-8").splitlines(keepends=True)
            for _ in range(rng.choice((1, 2, 3))):
                pos = rng.randrange(10, len(lines) - 10)
                lines.insert(pos, f"# catch bench edit {i}\n")
            (repo / path).write_text("".join(lines), encoding="utf-8")
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{1_700_000_000 + i} +0000"
        git(repo, "commit", "-q", "-a", "-m", f"bench edit {i}\n\nUpstream-Status: Inappropriate [benchmark]\n"
            "Catch-Test: tests/tools/test_patch_apply.py::test_rerun_is_a_noop_that_says_so", env=env)
    out.mkdir(parents=True, exist_ok=True)
    names = git(repo, "format-patch", "-k", "--zero-commit", "--no-signature", "--no-stat", "--full-index",
                "-o", str(out), f"{tag}..HEAD").splitlines()
    (out / "series").write_text("".join(Path(n).name + "\n" for n in names))
    git(repo, "checkout", "-q", "--detach", tag)
    return [Path(n) for n in names]


def reset(repo: Path, tag: str) -> None:
    git(repo, "checkout", "-q", "--detach", "--force", tag)
    for ref in ("refs/patches/base", "refs/patches/applied"):
        subprocess.run(["git", "update-ref", "-d", ref], cwd=repo, check=False, env=git_env())


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patches", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    pin = load_pin()
    upstream = upstream_repo([pin.public_version])
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        gen, ours, am = work / "gen", work / "ours", work / "am"
        for clone in (gen, ours, am):
            git(work, "clone", "-q", str(upstream), str(clone))
        series = work / "series"
        files = make_series(gen, pin.tag, series, args.patches)
        print(f"series: {len(files)} patches over real torch files of {pin.tag}")

        def run_am() -> None:
            subprocess.run(["git", "am", "-q", "-k", "--committer-date-is-author-date", *map(str, files)], cwd=am,
                           check=True, env=git_env(ENV_AM))

        def run_ours_cli() -> None:
            subprocess.run([sys.executable, str(ROOT / "scripts/apply_patches.py"), "apply", "--source", str(ours),
                            "--patches-dir", str(series), "--base", pin.tag], check=True, capture_output=True)

        def run_ours_lib() -> None:
            apply_to_git(ours, series, base=pin.tag, progress=False)

        times: dict[str, list[float]] = {"am": [], "cli": [], "lib": [], "check_cli": [], "check_lib": []}
        for _ in range(args.rounds):
            reset(am, pin.tag)
            times["am"].append(timed(run_am))
            reset(ours, pin.tag)
            times["cli"].append(timed(run_ours_cli))
            reset(ours, pin.tag)
            times["lib"].append(timed(run_ours_lib))
            times["check_cli"].append(timed(lambda: subprocess.run(
                [sys.executable, str(ROOT / "scripts/apply_patches.py"), "check", "--source", str(ours),
                 "--patches-dir", str(series), "--base", pin.tag], check=True, capture_output=True)))
            times["check_lib"].append(timed(lambda: check_series(series, source=ours, base=pin.tag,
                                                                 progress=False)))
        same = git(am, "rev-parse", "HEAD") == git(ours, "rev-parse", "HEAD")
        best = {k: min(v) for k, v in times.items()}
        print(f"git am (baseline)        : {best['am']:.3f} s")
        print(f"ours, CLI                : {best['cli']:.3f} s   ratio {best['cli'] / best['am']:.2f}x (target <= 1.0)")
        print(f"ours, library call       : {best['lib']:.3f} s   ratio {best['lib'] / best['am']:.2f}x")
        print(f"check, CLI               : {best['check_cli']:.3f} s   (target < 2 s)")
        print(f"check, library call      : {best['check_lib']:.3f} s")
        print(f"same head commit as git am: {same}")
        print(f"(best of {args.rounds} rounds; all rounds: " +
              ", ".join(f"{k}=" + "/".join(f"{t:.2f}" for t in v) for k, v in times.items()) + ")")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
