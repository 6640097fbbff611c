# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Differential test of the patch engine with ``git apply`` as the oracle.

Each case is generated from a seed alone (``random.Random(f"{seed}:{index}")``), so any case can be replayed:
``python tests/tools/patch_difftest.py --seed S --case I -v``. A case:

1. takes 1-3 real upstream files (the v2.13.0 tree built from the release wheel, :mod:`catch_tools.upstream`) as a
   small base tree, commits it in a throw-away repository, makes a change of its class (edits, renames, copies, mode
   changes, symlinks, binary, empty files, non-UTF-8 bytes...), and lets ``git diff`` write the patch;
2. mutates the patch or the base for its class (wrong hunk counts, context drift, whitespace, CRLF, missing newline
   at EOF, ``..``/absolute paths, paths through a symlink, duplicate files);
3. applies the patch four ways: ``git apply --index`` in the repository and ``git apply`` in a plain directory
   (the oracles), ``apply_to_git`` and ``apply_series_to_dir`` (ours, the functions behind ``apply`` and
   ``apply --target-dir``; ``check_series`` is run too and must agree with ``apply``).

Ours must give the same tree as the oracle (paths, modes, bytes) or refuse exactly when it refuses. A disagreement is
either a *deliberate difference* (listed in :data:`DELIBERATE`, documented in docs/maintainers.md, "The engine
and `git apply`") or a failure.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C", "GIT_AUTHOR_NAME": "U",
           "GIT_AUTHOR_EMAIL": "u@example.org", "GIT_COMMITTER_NAME": "U", "GIT_COMMITTER_EMAIL": "u@example.org",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
PIN = """[upstream]
repository = "https://github.com/pytorch/pytorch.git"
tag = "v2.13.0"
commit = "cf30153c4c131c8164ee7798e5022d810682e2cb"
wheel_version = "2.13.0+cpu"

[series]
version = 1
"""
CLASSES = ("clean", "wrong_counts", "context_drift", "offset", "whitespace", "crlf", "no_eol", "empty_file",
           "rename", "copy", "mode", "symlink", "beyond_symlink", "dotdot", "absolute", "binary", "duplicate",
           "non_utf8", "create_delete")

#: Documented deliberate differences: name -> why (docs/maintainers.md, "The engine and `git apply`").
DELIBERATE = {
    "crlf_patch": "patch files must use LF line endings: a CRLF patch is refused (git applies it to CRLF files)",
    "non_utf8_patch": "patch files must be UTF-8: other bytes are refused with file:line (git applies them)",
    "dir_symlink": "--target-dir never patches a symlink nor creates one (an overlay has none; git does both)",
    "dir_binary": "--target-dir does not apply binary patches (a wheel overlay patches Python sources)",
    "symlink_outside": "a symlink pointing outside the tree is refused (git creates it)",
    "names_differ": "---/+++ names that differ from the diff --git line (without rename/copy headers) are refused; "
                    "git takes the ---/+++ names, which can make an undeclared rename",
}


def git(cwd: Path, *args: str, input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, **GIT_ENV, GIT_CEILING_DIRECTORIES=str(cwd.parent))
    return subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, env=env, check=check)


@dataclass
class Case:
    """One generated case: the base tree (path -> (git mode, bytes)) and the patch bytes."""

    index: int
    cls: str
    base: dict[str, tuple[str, bytes]]
    patch: bytes = b""
    notes: list[str] = field(default_factory=list)
    commit: str = ""  # the base commit in <work>/repo


Tree = dict[str, tuple[str, bytes]]


def real_files(repo: Path, tag: str = "v2.13.0", limit: int = 30_000) -> list[tuple[str, bytes]]:
    """Every ``.py`` file of the real upstream tree at ``tag`` up to ``limit`` bytes: (path, bytes), sorted."""
    out = git(repo, "ls-tree", "-r", "-l", "--full-tree", tag).stdout.decode()
    wanted = []
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, sha, size = meta.split()
        if kind == "blob" and path.endswith(".py") and 200 < int(size) <= limit and mode == "100644":
            wanted.append((path, sha))
    blobs = git(repo, "cat-file", "--batch", input="".join(f"{s}\n" for _, s in wanted).encode()).stdout
    files, pos = [], 0
    for path, _ in wanted:
        end = blobs.index(b"\n", pos)
        size = int(blobs[pos:end].split()[2])
        files.append((path, blobs[end + 1:end + 1 + size]))
        pos = end + 1 + size + 1
    return files


# -- generation --------------------------------------------------------------------------------------------------

def _edit(rng: random.Random, data: bytes, edits: int) -> bytes:
    lines = data.splitlines(keepends=True)
    for _ in range(edits):
        if not lines:
            lines = [b"x = 0\n"]
            continue
        pos = rng.randrange(len(lines))
        op = rng.choice(("replace", "insert", "delete"))
        new = [f"catch_{rng.randrange(10**6)} = {rng.randrange(100)}\n".encode() for _ in range(rng.randint(1, 3))]
        if op == "replace":
            lines[pos:pos + rng.randint(1, 2)] = new
        elif op == "insert":
            lines[pos:pos] = new
        else:
            del lines[pos:pos + rng.randint(1, 3)]
    return b"".join(lines)


def _write_tree(root: Path, tree: Tree) -> None:
    for rel, (mode, data) in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(data.decode("utf-8", "surrogateescape"), path)
        else:
            path.write_bytes(data)
            os.chmod(path, 0o755 if mode == "100755" else 0o644)


def _read_tree(root: Path) -> Tree:
    out: Tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if ".git" in dirnames and Path(dirpath) == root:
            dirnames.remove(".git")
        for name in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if rel.startswith(".catch-apply-journal"):
                continue
            if p.is_symlink():
                out[rel] = ("120000", os.readlink(p).encode("utf-8", "surrogateescape"))
            else:
                out[rel] = ("100755" if p.stat().st_mode & stat.S_IXUSR else "100644", p.read_bytes())
    return out


def _git_tree(repo: Path, rev: str) -> Tree:
    out: Tree = {}
    listing = git(repo, "ls-tree", "-r", "-z", "--full-tree", rev).stdout.split(b"\0")
    entries = [e for e in listing if e]
    shas = []
    for e in entries:
        meta, path = e.split(b"\t", 1)
        mode, _kind, sha = meta.decode().split()
        shas.append((path.decode("utf-8", "surrogateescape"), mode, sha))
    blobs = git(repo, "cat-file", "--batch", input="".join(f"{s}\n" for _, _, s in shas).encode()).stdout
    pos = 0
    for path, mode, _ in shas:
        end = blobs.index(b"\n", pos)
        size = int(blobs[pos:end].split()[2])
        out[path] = (mode, blobs[end + 1:end + 1 + size])
        pos = end + 1 + size + 1
    return out


def _init_repo(repo: Path, tree: Tree) -> str:
    """A fresh repository at ``repo`` whose one commit holds ``tree``; returns the commit id."""
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "--template=")
    _write_tree(repo, tree)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    return git(repo, "rev-parse", "HEAD").stdout.decode().strip()


def _clear(repo: Path) -> None:
    for child in repo.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()


def _diff(repo: Path, new: Tree, *, extra: tuple[str, ...] = ()) -> bytes:
    """``git diff --binary`` from the repository's HEAD to ``new`` (a real git patch); the work tree and index are
    back at HEAD afterwards."""
    _clear(repo)
    _write_tree(repo, new)
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", "--binary", "--full-index", *extra, "HEAD").stdout
    git(repo, "reset", "-q", "--hard", "HEAD")
    return patch


def _header_lines(patch: bytes) -> list[int]:
    return [i for i, ln in enumerate(patch.split(b"\n")) if ln.startswith(b"@@ ")]


def generate(seed: int, index: int, files: list[tuple[str, bytes]], work: Path) -> Case:
    """Case ``index`` of ``seed`` (deterministic: the same inputs give the same case)."""
    rng = random.Random(f"{seed}:{index}")
    cls = CLASSES[index % len(CLASSES)] if index < len(CLASSES) else rng.choice(CLASSES)
    picks = rng.sample(files, rng.randint(1, 3))
    base: Tree = {p: ("100644", d) for p, d in picks}
    case = Case(index, cls, base)
    main, data = picks[0]
    new: Tree = dict(base)
    extra: tuple[str, ...] = ()
    if cls == "no_eol":
        base[main] = ("100644", data.rstrip(b"\n"))
        lines = base[main][1].split(b"\n")
        lines[-1] = lines[-1] + b"  # tail" if rng.random() < 0.5 else lines[-1]
        lines.insert(max(0, len(lines) - rng.randint(1, 3)), b"catch_tail = 1")
        new[main] = ("100644", b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b""))
    elif cls == "empty_file":
        empty = main.rsplit("/", 1)[0] + f"/empty_{rng.randrange(1000)}.py"
        which = rng.choice(("fill", "make_empty", "create_empty", "delete_empty"))
        if which in ("fill", "delete_empty"):
            base[empty] = ("100644", b"")
            new = dict(base)
        if which == "fill":
            new[empty] = ("100644", b"filled = 1\n")
        elif which == "make_empty":
            new[main] = ("100644", b"")
        elif which == "create_empty":
            new[empty] = ("100644", b"")
        else:
            del new[empty]
        case.notes.append(which)
    elif cls == "rename":
        dest = main.rsplit("/", 1)[0] + f"/moved_{rng.randrange(1000)}.py"
        del new[main]
        new[dest] = ("100644", _edit(rng, data, rng.randint(0, 2)))
        extra = ("-M",)
    elif cls == "copy":
        dest = main.rsplit("/", 1)[0] + f"/copied_{rng.randrange(1000)}.py"
        new[dest] = ("100644", _edit(rng, data, rng.randint(0, 2)))
        extra = ("-C", "--find-copies-harder")
    elif cls == "mode":
        new[main] = ("100755", _edit(rng, data, rng.randint(0, 1)))
        if rng.random() < 0.3:
            base[main] = ("100755", data)
            new[main] = ("100644", data)
    elif cls == "symlink":
        link = main.rsplit("/", 1)[0] + f"/link_{rng.randrange(1000)}.py"
        how = rng.choice(("create", "retarget", "to_file", "outside"))
        if how == "create":
            new[link] = ("120000", main.rsplit("/", 1)[1].encode())
        elif how == "retarget":
            base[link] = ("120000", main.rsplit("/", 1)[1].encode())
            new = dict(base)
            new[link] = ("120000", b"other.py")
        elif how == "to_file":
            base[link] = ("120000", main.rsplit("/", 1)[1].encode())
            new = dict(base)
            new[link] = ("100644", b"now_a_file = 1\n")
        else:
            new[link] = ("120000", b"../" * (main.count("/") + 1) + b"etc/passwd")
        case.notes.append(how)
    elif cls == "binary":
        blob = bytes(rng.randrange(256) for _ in range(rng.randint(16, 400))) + b"\0"
        target = main.rsplit("/", 1)[0] + f"/blob_{rng.randrange(1000)}.bin"
        if rng.random() < 0.5:
            new[target] = ("100644", blob)
        else:
            base[target] = ("100644", blob)
            new = dict(base)
            new[target] = ("100644", blob[::-1])
    elif cls == "non_utf8":
        base[main] = ("100644", data.replace(b"\n", b"  # caf\xe9\n", 1))
        new[main] = ("100644", _edit(rng, base[main][1], 1).replace(b"\n", b" # \xff\n", 2))
    elif cls == "create_delete":
        if rng.random() < 0.5:
            new[main.rsplit("/", 1)[0] + f"/new_{rng.randrange(1000)}.py"] = ("100644", b"created = 1\n")
        else:
            del new[main]
    else:
        new[main] = ("100644", _edit(rng, data, rng.randint(1, 4)))
        for other, odata in picks[1:]:
            if rng.random() < 0.5:
                new[other] = ("100644", _edit(rng, odata, rng.randint(1, 2)))
    case.base = base
    repo = work / "repo"
    _init_repo(repo, base)
    patch = _diff(repo, new, extra=extra)
    if not patch:
        new[main] = ("100644", data + b"catch_end = 1\n")
        patch = _diff(repo, new, extra=extra)
    before = dict(base)
    case.patch = _mutate(rng, case, patch)
    if case.base != before:  # the mutation changed the base: commit it
        _clear(repo)
        _write_tree(repo, case.base)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--allow-empty", "--amend", "-m", "base")
    case.commit = git(repo, "rev-parse", "HEAD").stdout.decode().strip()
    return case


def _mutate(rng: random.Random, case: Case, patch: bytes) -> bytes:
    cls, base = case.cls, case.base
    lines = patch.split(b"\n")
    hunks = _header_lines(patch)
    main = next(iter(base))
    if cls == "wrong_counts" and hunks and rng.random() < 0.4:
        # Undercount both sides (the hand-edit git silently accepts): the last counted lines are dropped, or
        # lines are appended after the counted body.
        i = rng.choice(hunks)
        m = re.match(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$", lines[i])
        assert m is not None
        old_n, new_n = int(m.group(2) or b"1"), int(m.group(4) or b"1")
        if rng.random() < 0.5:
            end = i + 1
            seen_old = seen_new = 0
            while end < len(lines) and (seen_old < old_n or seen_new < new_n):
                kind = lines[end][:1]
                seen_old += kind in (b" ", b"-", b"")
                seen_new += kind in (b" ", b"+", b"")
                end += 1
            lines[end:end] = [b"+catch_sneaked_in = 1"]
            case.notes.append("appended after the counted body")
        else:
            lines[i] = b"@@ -%s,%d +%s,%d @@%s" % (m.group(1), max(old_n - 1, 0), m.group(3), max(new_n - 1, 0),
                                                 m.group(5))
            case.notes.append(lines[i].decode())
    elif cls == "wrong_counts" and hunks:
        i = rng.choice(hunks)
        parts = lines[i].split(b" ")
        side = rng.choice((1, 2))
        spec = parts[side]
        start, _, count = spec.partition(b",")
        count_i = int(count) if count else 1
        parts[side] = start + b"," + str(max(0, count_i + rng.choice((-2, -1, 1, 2)))).encode()
        lines[i] = b" ".join(parts)
        case.notes.append(lines[i].decode())
    elif cls in ("context_drift", "whitespace", "offset") and base[main][0] != "120000":
        data = base[main][1].splitlines(keepends=True)
        if data:
            pos = rng.randrange(len(data))
            if cls == "context_drift":
                data[pos] = b"drifted = 1\n"
            elif cls == "whitespace":
                data[pos] = data[pos].rstrip(b"\n") + b" \n"
            else:
                data[pos:pos] = [b"# moved\n"] * rng.randint(1, 40)
            base[main] = (base[main][0], b"".join(data))
    elif cls == "crlf":
        roll = rng.random()
        if roll < 0.3:
            return patch.replace(b"\n", b"\r\n")
        if roll < 0.6:  # a CRLF file and a patch written for it
            base[main] = (base[main][0], base[main][1].replace(b"\n", b"\r\n"))
            return b"\n".join(ln + b"\r" if ln[:1] in (b" ", b"-", b"+") and not ln.startswith((b"---", b"+++"))
                              else ln for ln in lines)
        base[main] = (base[main][0], base[main][1].replace(b"\n", b"\r\n"))
    elif cls == "dotdot":
        return patch.replace(b" a/", b" a/../", 2).replace(b" b/", b" b/../", 2) if rng.random() < 0.5 else \
            patch.replace(b"a/torch/", b"a/torch/../../", 2).replace(b"b/torch/", b"b/torch/../../", 2)
    elif cls == "absolute":
        return patch.replace(b"--- a/", b"--- /tmp/", 1).replace(b"+++ b/", b"+++ /tmp/", 1) \
            .replace(b"diff --git a/", b"diff --git /tmp/", 1)
    elif cls == "beyond_symlink":
        top, rest = main.split("/", 1) if "/" in main else (main, "")
        real_dir = "real_" + top
        moved = {(real_dir + p[len(top):] if p.startswith(top + "/") else p): v for p, v in base.items()}
        base.clear()
        base.update(moved)
        base[top] = ("120000", real_dir.encode())
        case.notes.append(f"{top} -> {real_dir}")
    elif cls == "duplicate":
        first = patch.split(b"diff --git ")[1] if b"diff --git " in patch else b""
        return patch + (b"diff --git " + first if first else b"")
    return b"\n".join(lines)


# -- running -----------------------------------------------------------------------------------------------------

@dataclass
class Result:
    """``tree`` after the patch, or ``error`` (refused)."""

    tree: Tree | None
    error: str | None = None
    tree_id: str | None = None  # git mode: compared by tree id (the same bytes, modes and paths)


def oracle_git(work: Path, case: Case) -> Result:
    """``git apply --index`` in the case's repository (reset to the base first); the tree is its write-tree id."""
    repo = work / "repo"
    git(repo, "reset", "-q", "--hard", case.commit)
    git(repo, "clean", "-qfdx")
    (work / "case.patch").write_bytes(case.patch)
    proc = git(repo, "apply", "--index", str(work / "case.patch"), check=False)
    if proc.returncode:
        return Result(None, proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:][0] if proc.stderr
                      else f"exit {proc.returncode}")
    return Result({}, tree_id=git(repo, "write-tree").stdout.decode().strip())


def oracle_dir(work: Path, case: Case) -> Result:
    root = work / "oracle-dir"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    _write_tree(root, case.base)
    (work / "case.patch").write_bytes(case.patch)
    proc = git(root, "apply", str(work / "case.patch"), check=False)
    if proc.returncode:
        return Result(None, proc.stderr.decode("utf-8", "replace").strip()[-200:])
    return Result(_read_tree(root))


def _series(work: Path, case: Case) -> Path:
    patches = work / "patches"
    shutil.rmtree(patches, ignore_errors=True)
    patches.mkdir()
    (patches / "0001-case.patch").write_bytes(b"Case\n\n" + case.patch)
    (patches / "series").write_text("0001-case.patch\n")
    (patches / "manifest.toml").write_text(PIN)
    return patches


def ours_git(work: Path, case: Case) -> Result:
    """``check_series`` and ``apply_to_git`` on the case's repository at its base; the tree is HEAD's tree id."""
    from catch_tools.errors import UserError
    from catch_tools.patches import apply_to_git, check_series
    from catch_tools.pin import load_pin

    repo = work / "repo"
    patches = _series(work, case)
    pin = load_pin(patches / "manifest.toml")
    check_error = ""
    try:
        checked_ok = not check_series(patches, source=repo, base=case.commit, pin=pin).failed
    except UserError as err:
        checked_ok, check_error = False, str(err)
    try:
        result = apply_to_git(repo, patches, base=case.commit, pin=pin)
    except UserError as err:
        if checked_ok and not _binary(case):
            raise AssertionError(f"check passed but apply refused: {err}") from None
        return Result(None, str(err))
    if not checked_ok and not _binary(case):
        raise AssertionError(f"apply succeeded but check failed {check_error}")
    return Result({}, tree_id=git(repo, "rev-parse", f"{result.head}^{{tree}}").stdout.decode().strip())


def _binary(case: Case) -> bool:
    return b"GIT binary patch" in case.patch or b"Binary files " in case.patch


def ours_dir(work: Path, case: Case) -> Result:
    from catch_tools.errors import UserError
    from catch_tools.patches import apply_series_to_dir, check_series

    root = work / "ours-dir"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    _write_tree(root, case.base)
    patches = _series(work, case)
    try:
        checked_ok = not check_series(patches, target_dir=root).failed
    except UserError:
        checked_ok = False
    try:
        apply_series_to_dir(patches, root)
    except UserError as err:
        if checked_ok:
            raise AssertionError(f"check passed but apply --target-dir refused: {err}") from None
        return Result(None, str(err))
    if not checked_ok:
        raise AssertionError("apply --target-dir succeeded but check failed")
    return Result(_read_tree(root))


def deliberate(case: Case, mode: str, ours: Result, oracle: Result) -> str | None:
    """The :data:`DELIBERATE` difference explaining a disagreement, or None."""
    if ours.tree is not None:
        return None  # we never accept what git refuses on purpose
    err = ours.error or ""
    if "CRLF" in err and b"\r" in case.patch:
        return "crlf_patch"
    if "non-UTF-8" in err:
        return "non_utf8_patch"
    if "named by the diff --git header" in err:
        return "names_differ"
    if "pointing outside the tree" in err:
        return "symlink_outside"
    if mode == "dir" and ("symbolic link" in err or "symlink" in err):
        return "dir_symlink"
    if mode == "dir" and "binary" in err:
        return "dir_binary"
    return None


def same(ours: Result, oracle: Result) -> bool:
    return (ours.tree is None) == (oracle.tree is None) and ours.tree == oracle.tree and ours.tree_id == oracle.tree_id


@dataclass
class Tally:
    cases: collections.Counter[str] = field(default_factory=collections.Counter)
    agree: collections.Counter[str] = field(default_factory=collections.Counter)
    refused_both: collections.Counter[str] = field(default_factory=collections.Counter)
    deliberate: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)

    def merge(self, other: Tally) -> None:
        for name in ("cases", "agree", "refused_both", "deliberate"):
            getattr(self, name).update(getattr(other, name))
        self.failures.extend(other.failures)

    def report(self) -> str:
        rows = [f"{'class':<15} {'cases':>6} {'agree':>6} {'(both refuse)':>13} {'deliberate':>10} {'MISMATCH':>8}"]
        for cls in CLASSES:
            n = self.cases[cls]
            if n:
                bad = sum(1 for f in self.failures if f.split()[1] == cls)
                rows.append(f"{cls:<15} {n:>6} {self.agree[cls]:>6} {self.refused_both[cls]:>13} "
                            f"{sum(v for k, v in self.deliberate.items() if k.startswith(cls + ':')):>10} {bad:>8}")
        total = sum(self.cases.values())
        rows.append(f"{'total':<15} {total:>6} {sum(self.agree.values()):>6} {sum(self.refused_both.values()):>13} "
                    f"{sum(self.deliberate.values()):>10} {len(self.failures):>8}")
        kinds = collections.Counter(k.split(":", 1)[1] for k in self.deliberate.elements())
        rows += [f"deliberate {k}: {v} ({DELIBERATE[k]})" for k, v in sorted(kinds.items())]
        return "\n".join(rows)


def run_cases(seed: int, indices: range | list[int], files: list[tuple[str, bytes]],
              on_case: Callable[[int], None] | None = None) -> Tally:
    """Generate and check every case in ``indices``; each (case, mode) counts once in the tally."""
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="catch-difftest-") as tmp:
        work = Path(tmp)
        for index in indices:
            case = generate(seed, index, files, work)
            for mode, ours_fn, oracle_fn in (("git", ours_git, oracle_git), ("dir", ours_dir, oracle_dir)):
                tally.cases[case.cls] += 1
                try:
                    ours = ours_fn(work, case)
                except AssertionError as err:
                    tally.failures.append(f"case {case.cls} #{index} ({mode}): check/apply disagree: {err}")
                    continue
                oracle = oracle_fn(work, case)
                if same(ours, oracle):
                    tally.agree[case.cls] += 1
                    if ours.tree is None:
                        tally.refused_both[case.cls] += 1
                    continue
                why = deliberate(case, mode, ours, oracle)
                if why:
                    tally.deliberate[f"{case.cls}:{why}"] += 1
                    continue
                tally.failures.append(f"case {case.cls} #{index} ({mode}) {case.notes}: ours "
                                      f"{'refused: ' + str(ours.error) if ours.tree is None else 'applied'}; "
                                      f"git {'refused: ' + str(oracle.error) if oracle.tree is None else 'applied'}"
                                      + _tree_diff(ours, oracle))
            if on_case is not None:
                on_case(index)
    return tally


def _tree_diff(ours: Result, oracle: Result) -> str:
    if ours.tree is None or oracle.tree is None:
        return ""
    if ours.tree_id != oracle.tree_id:
        return f"; tree {ours.tree_id} != git's {oracle.tree_id}"
    paths = sorted(set(ours.tree) | set(oracle.tree))
    diff = [p for p in paths if ours.tree.get(p) != oracle.tree.get(p)]
    return f"; trees differ at {diff[:3]}"


def main(argv: list[str] | None = None) -> int:
    """Run the differential test from the command line; prints the per-class table; exit 1 on a mismatch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=200, help="number of generated cases (each runs 2 modes)")
    parser.add_argument("--case", type=int, action="append", help="run only this case index (repeatable)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (cases are split by index)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the patch of each --case")
    args = parser.parse_args(argv)
    from catch_tools.pin import load_pin
    from catch_tools.upstream import upstream_repo

    files = real_files(upstream_repo([load_pin().public_version]))
    indices = args.case or range(args.cases)
    if args.verbose and args.case:
        with tempfile.TemporaryDirectory() as tmp:
            for i in args.case:
                case = generate(args.seed, i, files, Path(tmp))
                sys.stdout.write(f"--- case {i} {case.cls} {case.notes} base {list(case.base)}\n")
                sys.stdout.write(case.patch.decode("utf-8", "replace"))
    if args.jobs > 1:
        import multiprocessing

        chunks = [(args.seed, list(indices)[k::args.jobs], files) for k in range(args.jobs)]
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            tally = Tally()
            for part in pool.starmap(run_cases, chunks):
                tally.merge(part)
    else:
        tally = run_cases(args.seed, indices, files,
                          on_case=lambda i: print(f"{i + 1} cases", file=sys.stderr) if (i + 1) % 250 == 0 else None)
    print(tally.report())
    for failure in tally.failures:
        print(failure)
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    sys.exit(main())
