#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark the patch engine in one run against two baselines:

(a) **200 patches vs git am**: a generated 200-patch series over real ``torch/**/*.py`` files of the pinned release
    (from :func:`catch_tools.upstream.upstream_repo`; 200 small commits of 1-2 files, 1-3 inserted lines each,
    written with ``git format-patch``), applied from a fresh state at the release tag by
    ``git am -k --committer-date-is-author-date <200 files>`` (one process, the baseline) and by our engine: the
    library call :func:`catch_tools.patches.apply_to_git` (target <= 0.5x git am) and the CLI
    ``scripts/apply_patches.py apply`` (interpreter start-up included); ``check`` of the same series (target < 2 s).
(b) **Debian's 17-patch series vs quilt**: Debian's ``pytorch 2.6.0+dfsg-7`` source package (``debian/patches``,
    17 patches over the 158 MB upstream tree; downloaded once from deb.debian.org into ``<cache>/debian``, checked
    against the pinned ``.dsc`` hash and its SHA-256 sums) applied by ``quilt push -a`` (the baseline; needs
    ``apt-get install quilt``) and by ``python scripts/apply_patches.py apply --source TREE --patches-dir
    debian/patches --base base`` exactly as a user runs it (interpreter start-up included; target: no slower, <= 1.0x).
    The two resulting trees are compared file by file.

Rounds are interleaved (baseline, ours, baseline, ...) and the best of ``--rounds`` is kept, so machine load hits
both alike; the load average is printed. No asserts: prints times and ratios (``--json`` for the dashboard,
``benchmarks/run_all.py``, which shows both rows with their targets).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from catch_tools.git import run_git  # noqa: E402
from catch_tools.patches import apply_to_git, check_series  # noqa: E402
from catch_tools.paths import cache_dir  # noqa: E402
from catch_tools.pin import load_pin  # noqa: E402
from catch_tools.upstream import upstream_repo  # noqa: E402

ENV_AM = {"GIT_COMMITTER_NAME": "Catch Patches", "GIT_COMMITTER_EMAIL": "patches@catch.invalid"}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return run_git(cwd, *args, env=env).stdout.strip()


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
        run_git(repo, "update-ref", "-d", ref, check=False)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timed_cpu(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system of the child processes ``fn`` ran and waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(fn)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_am(count: int = 200, rounds: int = 3) -> dict[str, object]:
    """(a): best-of-``rounds`` seconds of git am, our CLI, our library call, and check (CLI and library) on a
    generated ``count``-patch series; ``same_head``: our head commit equals git am's."""
    pin = load_pin()
    upstream = upstream_repo([pin.public_version])
    with tempfile.TemporaryDirectory(prefix="bench-apply-") as tmp:
        work = Path(tmp)
        gen, ours, am = work / "gen", work / "ours", work / "am"
        for clone in (gen, ours, am):
            git(work, "clone", "-q", str(upstream), str(clone))
        series = work / "series"
        files = make_series(gen, pin.tag, series, count)

        def run_am() -> None:
            run_git(am, "am", "-q", "-k", "--committer-date-is-author-date", *map(str, files), env=ENV_AM)

        def run_ours_cli() -> None:
            subprocess.run([sys.executable, str(ROOT / "scripts/apply_patches.py"), "apply", "--source", str(ours),
                            "--patches-dir", str(series), "--base", pin.tag], check=True, capture_output=True)

        def run_ours_lib() -> None:
            apply_to_git(ours, series, base=pin.tag)

        times: dict[str, list[float]] = {"am": [], "cli": [], "lib": [], "check_cli": [], "check_lib": []}
        for _ in range(rounds):
            reset(am, pin.tag)
            times["am"].append(timed(run_am))
            reset(ours, pin.tag)
            times["cli"].append(timed(run_ours_cli))
            reset(ours, pin.tag)
            times["lib"].append(timed(run_ours_lib))
            times["check_cli"].append(timed(lambda: subprocess.run(
                [sys.executable, str(ROOT / "scripts/apply_patches.py"), "check", "--source", str(ours),
                 "--patches-dir", str(series), "--base", pin.tag], check=True, capture_output=True)))
            times["check_lib"].append(timed(lambda: check_series(series, source=ours, base=pin.tag)))
        same = git(am, "rev-parse", "HEAD") == git(ours, "rev-parse", "HEAD")
    return {"patches": len(files), "best": {k: min(v) for k, v in times.items()}, "all": times, "same_head": same}


# ---- (b) Debian's series vs quilt ----------------------------------------------------------------------------------
DEBIAN_POOL = "http://deb.debian.org/debian/pool/main/p/pytorch/"
DEBIAN_DSC = "pytorch_2.6.0+dfsg-7.dsc"
#: SHA-256 of the .dsc (which lists the SHA-256 of the two tarballs): the download is checked against it.
DEBIAN_DSC_SHA256 = "24783f3515b228ee476e788608ea0beea80409dbc8e861b6b8035c592d79646e"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fetch(name: str, dest: Path, sha256: str) -> Path:
    path = dest / name
    if path.is_file() and _sha256(path) == sha256:
        return path
    tmp = path.with_name(path.name + ".part")
    with urllib.request.urlopen(DEBIAN_POOL + name, timeout=120) as resp, tmp.open("wb") as out:  # noqa: S310
        shutil.copyfileobj(resp, out)
    if _sha256(tmp) != sha256:
        tmp.unlink()
        raise SystemExit(f"bench_apply.py: {DEBIAN_POOL + name}: SHA-256 mismatch")
    tmp.replace(path)
    return path


def debian_sources() -> tuple[Path, Path]:
    """The cached ``(orig.tar.xz, debian.tar.xz)`` of :data:`DEBIAN_DSC`, downloaded (~27 MB) on first use."""
    dest = cache_dir() / "debian"
    dest.mkdir(parents=True, exist_ok=True)
    dsc = _fetch(DEBIAN_DSC, dest, DEBIAN_DSC_SHA256).read_text(encoding="utf-8")
    section = dsc.split("Checksums-Sha256:", 1)[1]
    sums = {name: digest for digest, name in re.findall(r"^ ([0-9a-f]{64}) \d+ (\S+)$", section, re.MULTILINE)}
    orig = next(n for n in sums if ".orig.tar" in n)
    deb = next(n for n in sums if ".debian.tar" in n)
    return _fetch(orig, dest, sums[orig]), _fetch(deb, dest, sums[deb])


def measure_quilt(rounds: int = 3) -> dict[str, object] | None:
    """(b): best-of-``rounds`` seconds of ``quilt push -a`` and of our CLI on Debian's series; ``same_tree``: the
    two patched trees are equal. None when quilt is not installed."""
    quilt = shutil.which("quilt")
    if quilt is None:
        return None
    orig, deb = debian_sources()
    with tempfile.TemporaryDirectory(prefix="bench-quilt-") as tmp:
        work = Path(tmp)
        for name, archive in (("q", orig), ("debian", deb)):
            (work / name).mkdir()
            subprocess.run(["tar", "--no-same-owner", "-xf", str(archive), "-C", str(work / name)], check=True)
        (top,) = (work / "q").iterdir()
        ours = work / "ours"
        shutil.copytree(top, ours, symlinks=True)
        patches = work / "debian" / "debian" / "patches"
        count = len([ln for ln in (patches / "series").read_text().splitlines() if ln.strip()])
        ident = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@catch.invalid",
                 "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@catch.invalid"}
        git(ours, "init", "-q")
        # No automatic gc: the first commit leaves thousands of loose objects, and a later git command's `gc --auto`
        # detached into the background kept writing objects/ while the temporary directory was removed (OSError:
        # Directory not empty), besides taking CPU from the timed runs.
        git(ours, "config", "gc.auto", "0")
        git(ours, "add", "-A")
        git(ours, "commit", "-q", "-m", "pytorch 2.6.0+dfsg", env=ident)
        git(ours, "tag", "base")
        qenv = {**os.environ, "QUILT_PATCHES": str(patches)}
        quilt_cmd = [quilt, "--quiltrc=/dev/null", "push", "-a", "-q"]
        # as a user runs it: byte-compiled modules are cached after the first run (PYTHONDONTWRITEBYTECODE unset)
        cli_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cli_cmd = [sys.executable, str(ROOT / "scripts/apply_patches.py"), "apply", "--source", str(ours),
                   "--patches-dir", str(patches), "--base", "base"]

        def run_quilt() -> None:
            subprocess.run(quilt_cmd, cwd=top, env=qenv, check=True, capture_output=True)

        def undo_quilt() -> None:
            subprocess.run([quilt, "--quiltrc=/dev/null", "pop", "-a", "-q"], cwd=top, env=qenv, check=True,
                           capture_output=True)

        def run_cli() -> None:
            subprocess.run(cli_cmd, env=cli_env, check=True, capture_output=True)

        times: dict[str, list[float]] = {"quilt": [], "cli": [], "quilt_cpu": [], "cli_cpu": []}
        for warm in (True,) + (False,) * rounds:  # one untimed warm-up round (page cache, byte code)
            t_quilt, c_quilt = timed_cpu(run_quilt)
            undo_quilt()
            reset(ours, "base")
            t_cli, c_cli = timed_cpu(run_cli)
            if not warm:
                times["quilt"].append(t_quilt)
                times["cli"].append(t_cli)
                times["quilt_cpu"].append(c_quilt)
                times["cli_cpu"].append(c_cli)
        run_quilt()
        diff = subprocess.run(["diff", "-r", "-q", "--no-dereference", "-x", ".git", "-x", ".pc", str(top),
                               str(ours)], capture_output=True, text=True)
    return {"patches": count, "best": {k: min(v) for k, v in times.items()}, "all": times,
            "same_tree": diff.returncode == 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patches", type=int, default=200, help="size of the generated series of (a)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per measure (best kept)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    load_before = os.getloadavg()
    am = measure_am(args.patches, args.rounds)
    deb = measure_quilt(args.rounds)
    load = (load_before[0], os.getloadavg()[0])
    if args.json:
        print(json.dumps({"am": am, "quilt": deb, "load_average": load}, indent=2))
        return 0
    best = am["best"]
    assert isinstance(best, dict)
    print(f"(a) series: {am['patches']} patches over real torch files of {load_pin().tag}")
    print(f"git am (baseline)        : {best['am']:.3f} s")
    print(f"ours, library call       : {best['lib']:.3f} s   ratio {best['lib'] / best['am']:.2f}x (target <= 0.5)")
    print(f"ours, CLI                : {best['cli']:.3f} s   ratio {best['cli'] / best['am']:.2f}x")
    print(f"check, CLI               : {best['check_cli']:.3f} s   (target < 2 s)")
    print(f"check, library call      : {best['check_lib']:.3f} s")
    print(f"same head commit as git am: {am['same_head']}")
    if deb is None:
        print("(b) quilt is not installed (apt-get install quilt): Debian series row not run")
    else:
        qb = deb["best"]
        assert isinstance(qb, dict)
        print(f"(b) Debian pytorch 2.6.0+dfsg-7: {deb['patches']} patches")
        print(f"quilt push -a (baseline) : {qb['quilt']:.3f} s")
        print(f"ours, CLI (python start) : {qb['cli']:.3f} s   ratio {qb['cli'] / qb['quilt']:.2f}x (target <= 1.0)")
        print(f"CPU time (user+sys), quilt {qb['quilt_cpu']:.3f} s, ours {qb['cli_cpu']:.3f} s: "
              f"ratio {qb['cli_cpu'] / qb['quilt_cpu']:.2f}x (cross-check, steadier under load)")
        print(f"same tree as quilt       : {deb['same_tree']}")
    print(f"(best of {args.rounds} rounds; load average {load[0]:.1f} -> {load[1]:.1f})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
