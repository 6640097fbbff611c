# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The patch proof gate: every patch of the series must be proven by its regression test.

A patch is carried only when the test its ``Catch-Test:`` trailer names (``tests/<path>::<test>``, a pytest node id
relative to the repository root) **fails** against the unpatched upstream torch and **passes** against the patched
one (a patch can apply cleanly and still not work, so applying proves nothing). Anything else -- no trailer, a test
that does not exist, a test that passes without the patch, fails with it, is skipped or errors -- rejects the patch.

Trees. A *torch tree* is a directory that holds the ``torch/`` package (a site-packages directory, or an overlay).
The test run gets it in ``CATCH_TORCH_TREE`` and first on ``PYTHONPATH``, so a test may either load files from it or
import torch in a fresh interpreter and check ``torch.__file__``.

* unpatched: the installed torch (the directory holding it, found without importing it) or ``upstream_tree``;
* patched: ``torch_tree`` when given (e.g. the site-packages of an installed combined wheel), else a *patched
  tree* built by :func:`build_patched_tree`: a mirror of the installed ``torch/`` made of symlinks, except the
  directories on the way to a file the series touches, which are real, and the touched files, which are copies
  patched by the patch engine (:func:`catch_tools.patches.apply_series_to_dir`).

The module also renders the series as the Markdown table of ``docs/patches.md`` (:func:`render_table`). Its command
line is :mod:`catch_tools.cli.prove` (``scripts/prove_patches.py``, ``catch prove``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.patches import Series, apply_series_to_dir, classify_path
from catch_tools.patches.model import Patch
from catch_tools.patches.parse import display_path

#: The trailer naming a patch's regression test in ``tests/`` (a git trailer: ``git interpret-trailers``).
TEST_TRAILER = "Catch-Test"
#: Outcomes of one pytest run of one node id (from its JUnit XML report).
Outcome = str  # "passed" | "failed" | "error" | "skipped" | "missing" | "not-run"
#: Seconds one pytest run may take before it counts as an error.
RUN_TIMEOUT = 900


@dataclass
class PatchProof:
    """The gate's verdict on one patch.

    ``unpatched`` / ``patched`` are outcomes of the test on each tree; ``seconds`` is the wall time of both runs;
    ``reason`` is empty when ``ok``, else one line saying why the patch is rejected.
    """

    patch: str
    test: str | None
    unpatched: Outcome
    patched: Outcome
    ok: bool
    reason: str
    seconds: float = 0.0


def installed_torch_tree() -> Path:
    """The directory that holds the importable ``torch`` package of this interpreter, found without importing torch.

    Raises:
        UserError: torch is not installed.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise UserError("torch is not installed in this interpreter (pip install torch==2.13.0)")
    return Path(spec.origin).resolve().parent.parent


def _touched_python_files(patches: list[Patch]) -> list[str]:
    """Paths under ``torch/`` that the series changes and a wheel ships, in first-touch order."""
    seen: dict[str, None] = {}
    for patch in patches:
        for change in patch.files:
            for path in change.paths:
                if classify_path(path) == "python" and path.startswith("torch/"):
                    seen.setdefault(path, None)
    return list(seen)


def _mirror(src: Path, dst: Path, rel: str, real_dirs: set[str]) -> None:
    """Fill ``dst`` with symlinks to the entries of ``src``, recursing (as real directories) into ``real_dirs``.

    ``__pycache__`` is left out of real directories: bytecode of patched files must not land in the upstream tree.
    """
    dst.mkdir(parents=True, exist_ok=True)
    for entry in sorted(src.iterdir()):
        sub = f"{rel}/{entry.name}"
        if sub in real_dirs and entry.is_dir() and not entry.is_symlink():
            _mirror(entry, dst / entry.name, sub, real_dirs)
        elif entry.name != "__pycache__":
            (dst / entry.name).symlink_to(entry)


def build_patched_tree(series: Series | Path, upstream_tree: Path, dest: Path) -> list[str]:
    """Build at ``dest`` a torch tree equal to ``upstream_tree`` with the series applied (``dest/torch/...``).

    Only the Python files the series touches are copied (and patched); everything else is a symlink into
    ``upstream_tree``. ``dest`` must not exist or be empty. Returns the patched paths (``torch/...``).

    Raises:
        UserError: a bad series, a patch that does not apply to the upstream files, a native patch (the overlay,
        like the combined wheel, carries Python only), or ``upstream_tree`` without ``torch/``.
    """
    if not (upstream_tree / "torch" / "__init__.py").is_file():
        raise UserError("not a torch tree (no torch/__init__.py)", path=display_path(upstream_tree))
    if dest.exists() and any(dest.iterdir()):
        raise UserError("the directory for the patched tree is not empty", path=display_path(dest))
    series = Series.of(series)
    touched = _touched_python_files(series.patches)
    with tempfile.TemporaryDirectory(prefix="catch-overlay-") as tmp:
        staging = Path(tmp)
        for path in touched:
            source = upstream_tree / path
            if source.is_file():
                (staging / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, staging / path)
        apply_series_to_dir(series, staging)
        real_dirs = {"/".join(Path(p).parts[:i]) for p in touched for i in range(1, len(Path(p).parts))}
        dest.mkdir(parents=True, exist_ok=True)
        _mirror(upstream_tree / "torch", dest / "torch", "torch", real_dirs)
        for path in touched:
            target = dest / path
            if target.is_symlink():
                target.unlink()
            patched = staging / path
            if patched.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(patched, target)
    return touched


def tree_env(tree: Path) -> dict[str, str]:
    """Environment for a child process that must use the torch of ``tree``: ``CATCH_TORCH_TREE`` and PYTHONPATH."""
    env = dict(os.environ)
    env["CATCH_TORCH_TREE"] = str(tree)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTEST_ADDOPTS", None)
    return env


def verify_tree(tree: Path, name: str = "this tree") -> None:
    """Check that a fresh interpreter with :func:`tree_env` imports torch from ``tree`` (``torch.__file__``);
    ``name`` names the tree in the error.

    Raises:
        UserError: torch comes from elsewhere or does not import.
    """
    env = tree_env(tree)
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    proc = subprocess.run([sys.executable, "-c", "import torch; print(torch.__file__)"], env=env, capture_output=True,
                          text=True, check=False, timeout=300)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"torch does not import from {name}: {last}", path=display_path(tree))
    expected = (tree / "torch" / "__init__.py").absolute()
    if Path(lines[-1]).absolute() != expected:
        raise UserError(f"torch imports from {lines[-1]}, not from {name}", path=display_path(tree))


def _junit_outcome(report: Path) -> tuple[Outcome, str]:
    """Outcome of a one-test pytest run from its JUnit XML (xfail counts as skipped, as pytest writes it).

    Returns ``(outcome, detail)``: ``detail`` is the first line of the failure/error message ("" when it passed).
    """
    if not report.is_file():
        return "missing", ""
    root = ET.parse(report).getroot()
    cases = list(root.iter("testcase"))
    if not cases:
        return "missing", ""
    for kind, outcome in (("error", "error"), ("failure", "failed"), ("skipped", "skipped")):
        for case in cases:
            for child in case:
                if child.tag == kind:
                    message = (child.get("message") or child.text or "").strip().splitlines()
                    return outcome, (message[0][:300] if message else "")
    return "passed", ""


def run_test(nodeid: str, tree: Path, root: Path) -> tuple[Outcome, str]:
    """Run the pytest node ``nodeid`` (relative to ``root``) with ``tree`` as the torch tree.

    Returns ``(outcome, detail)`` as :func:`_junit_outcome`. Exit code 4/5 of pytest (node not found / nothing
    collected) gives ``"missing"``; a run longer than :data:`RUN_TIMEOUT` seconds gives ``"error"``.
    """
    with tempfile.TemporaryDirectory(prefix="catch-proof-") as tmp:
        report = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit2",
               f"--junitxml={report}", nodeid]
        try:
            proc = subprocess.run(cmd, cwd=root, env=tree_env(tree), capture_output=True, text=True, check=False,
                                  timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return "error", f"timed out after {RUN_TIMEOUT} s"
        if proc.returncode in (4, 5):
            return "missing", ""
        return _junit_outcome(report)


def test_file_exists(nodeid: str, root: Path) -> bool:
    """Whether ``nodeid`` names a test (``tests/...::name``) whose file exists under ``root``."""
    file_part = nodeid.split("::", 1)[0]
    return "::" in nodeid and file_part.startswith("tests/") and (root / file_part).is_file()


def judge(patch: str, test: str | None, unpatched: Outcome, patched: Outcome, detail: str = "") -> PatchProof:
    """The gate's rule for one patch: the test must fail unpatched and pass patched.

    ``detail`` (the patched run's failure message, if any) is appended to the reason of a patch it rejects.
    """
    if test is None:
        reason = f"no {TEST_TRAILER}: trailer names its regression test"
    elif "missing" in (unpatched, patched):
        reason = f"test {test} does not exist"
    elif unpatched != "failed":
        reason = f"test {test} does not fail without the patch (it {_verb(unpatched)}), so nothing proves the patch"
    elif patched != "passed":
        reason = f"test {test} does not pass with the patch (it {_verb(patched)})"
        if detail:
            reason += f": {detail}"
    else:
        reason = ""
    return PatchProof(patch, test, unpatched, patched, not reason, reason)


def _verb(outcome: Outcome) -> str:
    return {"passed": "passes", "failed": "fails", "error": "errors", "skipped": "is skipped",
            "missing": "is missing", "not-run": "was not run"}.get(outcome, outcome)


def prove_series(patches_dir: Path, *, root: Path, torch_tree: Path | None = None, upstream_tree: Path | None = None,
                 only: Sequence[str] = (), on_result: Callable[[PatchProof], None] | None = None) -> list[PatchProof]:
    """Run the gate over the series in ``patches_dir``; return one :class:`PatchProof` per patch, in series order.

    ``root`` is the directory the ``Catch-Test`` node ids are relative to (the repository root). ``torch_tree`` is
    the patched tree (default: an overlay built in a temporary directory), ``upstream_tree`` the unpatched one
    (default: :func:`installed_torch_tree`). ``only`` limits the run to these patch names. ``on_result`` is called
    after each patch (progress).

    Raises:
        UserError: a bad series, an overlay that cannot be built, a tree torch does not import from, an unknown
        name in ``only``, or an upstream tree whose files already carry the series.
    """
    series = Series.read(patches_dir)
    patches = series.patches
    unknown = sorted(set(only) - {p.name for p in patches})
    if unknown:
        raise UserError(f"not in the series: {', '.join(unknown)}", path=display_path(patches_dir / "series"))
    upstream = (upstream_tree or installed_torch_tree()).absolute()
    with tempfile.TemporaryDirectory(prefix="catch-proof-tree-") as tmp:
        if torch_tree is None:
            patched_tree = Path(tmp) / "overlay"
            touched = build_patched_tree(series, upstream, patched_tree)
        else:
            patched_tree = torch_tree.absolute()
            touched = _touched_python_files(patches)
        _require_different(upstream, patched_tree, touched)
        verify_tree(patched_tree)
        results = []
        for patch in patches:
            if only and patch.name not in only:
                continue
            result = prove_one(patch, root, upstream, patched_tree)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


def patch_test(patch: Patch) -> str | None:
    """The node id a patch's ``Catch-Test:`` trailer names, or None."""
    trailer = patch.meta.trailers.get(TEST_TRAILER)
    return trailer[0].strip() if trailer else None


def prove_one(patch: Patch, root: Path, upstream: Path, patched_tree: Path) -> PatchProof:
    """The gate on one patch: its test run on ``upstream`` (must fail) and on ``patched_tree`` (must pass)."""
    test = patch_test(patch)
    if test is None:
        return judge(patch.name, None, "not-run", "not-run")
    if not test_file_exists(test, root):
        return judge(patch.name, test, "missing", "missing")
    start = time.monotonic()
    # The two runs are independent processes: run them side by side.
    with ThreadPoolExecutor(max_workers=2) as pool:
        unpatched_run = pool.submit(run_test, test, upstream, root)
        patched_run = pool.submit(run_test, test, patched_tree, root)
        (unpatched, _), (patched, detail) = unpatched_run.result(), patched_run.result()
    result = judge(patch.name, test, unpatched, patched, detail)
    result.seconds = round(time.monotonic() - start, 1)
    return result


def _require_different(upstream: Path, patched: Path, touched: list[str]) -> None:
    """Refuse an 'unpatched' tree whose touched files equal the patched tree's (e.g. the combined wheel installed)."""
    same = [p for p in touched if (upstream / p).is_file() and (patched / p).is_file()
            and (upstream / p).read_bytes() == (patched / p).read_bytes()]
    if touched and len(same) == len(touched):
        raise UserError("the unpatched tree already carries the series (its patched files equal the patched tree's);"
                        " pass --upstream-tree with a plain upstream torch", path=display_path(upstream))


def proofs_to_json(results: list[PatchProof]) -> str:
    """The ``--json`` document: ``{"ok": bool, "patches": [PatchProof as a dict, ...]}``."""
    return json.dumps({"ok": all(r.ok for r in results), "patches": [asdict(r) for r in results]}, indent=2)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_table(patches_dir: Path) -> str:
    """Markdown of ``docs/patches.md``: one row per patch (subject, files, test, Upstream-Status), in series order.

    Raises:
        UserError: a bad series (see :class:`catch_tools.patches.Series`).
    """
    patches = Series.read(patches_dir).patches
    lines = [
        "# The patch series",
        "",
        "<!-- Generated from patches/series by `python scripts/prove_patches.py --write-table`; do not edit. -->",
        "",
        "Catch carries these patches on top of upstream PyTorch (pin: `patches/manifest.toml`). Each is proven by",
        "its regression test: `python scripts/prove_patches.py` runs the test against the unpatched and the patched",
        "torch and rejects the patch unless it fails without it and passes with it. Gaps a Python patch cannot fix",
        "are listed in [`patches/NATIVE.md`](../patches/NATIVE.md).",
        "",
        "| # | Patch | What it fixes | Files | Regression test | Upstream-Status |",
        "|---|---|---|---|---|---|",
    ]
    for i, patch in enumerate(patches, 1):
        files = "<br>".join(f"`{p}`" for change in patch.files for p in change.paths)
        test = patch.meta.trailers.get(TEST_TRAILER, ("(none)", 0))[0].strip()
        status = patch.meta.trailers.get("Upstream-Status", ("(none)", 0))[0].strip()
        lines.append(f"| {i} | [{patch.name}](../patches/{patch.name}) | {_md_cell(patch.meta.subject)} | {files} "
                     f"| `{_md_cell(test)}` | {_md_cell(status)} |")
    return "\n".join(lines) + "\n"
