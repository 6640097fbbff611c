# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""benchmarks/README.md's results table is what ``benchmarks/results_table.py`` makes of the newest results file in
``benchmarks/results/``; the generator rewrites only that table, from the newest run, as ``run_all.py`` prints it,
and refuses bad input with one line, leaving the README as it was."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from catch_tools.errors import run_cli

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "results_table.py"


@pytest.fixture(scope="module")
def rt() -> ModuleType:
    spec = importlib.util.spec_from_file_location("results_table", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _row(measure: str, baseline: float | None, ours: float | None, target: float, **extra: Any) -> dict[str, Any]:
    return {"measure": measure, "baseline_label": extra.pop("label", "cpu"), "baseline": baseline, "ours": ours,
            "target": target, "kind": extra.pop("kind", "ratio"), "note": extra.pop("note", ""), **extra}


def _run(commit: str, time_utc: str, rows: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A results file as run_all.py writes it."""
    return {"commit": commit, "time_utc": time_utc, "torch": "2.13.0", "python": "3.11.9", "cores": 2, "threads": 2,
            "load_average_before": [0.8, 0.5, 0.4], "load_average_after": [1.2, 0.6, 0.4], "seconds": 195.3,
            "quick": False, "rows": rows, **extra}


def _readme(path: Path, rt: ModuleType, body: str = "stale table\n") -> Path:
    path.write_text(f"# Benchmarks\n\nhow to run\n\n{rt.BEGIN}\n{body}{rt.END}\n\nafter the table\n")
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_readme_table_is_the_newest_results_file(rt: ModuleType, tmp_path: Path) -> None:
    """Judged on the committed results files only: a local dashboard run (git-ignored) does not make it fail."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the committed results files are unknown")
    tracked = subprocess.run(["git", "ls-files", "-z", "benchmarks/results"], cwd=REPO, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        if Path(name).parent != Path("benchmarks/results"):
            continue  # other benchmarks' results live in subdirectories (e.g. host_math/); the table reads the top
        shutil.copy2(REPO / name, tmp_path / Path(name).name)
    assert rt.is_current(REPO / "benchmarks" / "README.md", tmp_path), \
        "the README's table is stale: run python benchmarks/results_table.py"


def test_rewrites_only_the_table_from_the_newest_run(rt: ModuleType, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    # Named so that the newest run sorts first by name: newest means the latest time_utc.
    (results / "b-older.json").write_text(json.dumps(_run("0ld0ld0", "2026-01-01T00:00:00+00:00",
                                                          [_row("older measure", 1.0, 1.0, 1.1)])))
    (results / "a-newer.json").write_text(json.dumps(_run("abc1234", "2026-02-01T00:00:00+00:00", [
        _row("digits step", 0.003049, 0.002626, 1.10),
        _row("add, 64 elements", 0.001, 0.0013, 1.20),
        _row("graph mode", 0.001649, 0.000959, 0.6, label="eager mlu", note="median of 3 processes: 0.58x"),
        _row("interface check, cold", None, 3.27, 5.0, label="", kind="seconds"),
        _row("apply with quilt", None, None, 1.0, label="quilt push -a", note="quilt not installed"),
    ])))
    readme = _readme(tmp_path / "README.md", rt)
    head, tail = readme.read_text().split(rt.BEGIN)[0], readme.read_text().split(rt.END)[1]

    assert rt.update(readme, results) is True
    text = readme.read_text()
    assert text.startswith(head + rt.BEGIN + "\n") and text.endswith(rt.END + tail)
    section = text.split(rt.BEGIN)[1].split(rt.END)[0]
    assert "older measure" not in section and "stale table" not in section
    assert "`benchmarks/results/a-newer.json`" in section and "torch 2.13.0" in section
    assert "Catch benchmarks (abc1234, 2 cores, load average 0.8 -> 1.2, 195 s)" in section
    lines = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
             for line in section.splitlines() if line.startswith("│")}
    assert lines["digits step"] == ["3.049 ms cpu", "2.626 ms", "0.86x", "<= 1.10x", "yes"]
    assert lines["add, 64 elements"] == ["1.000 ms cpu", "1.300 ms", "1.30x", "<= 1.20x", "NO"]
    assert lines["graph mode (median of 3 processes: 0.58x)"][2:] == ["0.58x", "<= 0.60x", "yes"]
    assert lines["interface check, cold"] == ["-", "3.27 s", "3.27 s", "<= 5 s", "yes"]
    assert lines["apply with quilt (quilt not installed)"] == ["- quilt push -a", "-", "not run", "<= 1.00x", "-"]

    # Again: nothing to do, and the check agrees; a newer run makes the table stale, and --check changes nothing.
    assert rt.update(readme, results) is False and rt.is_current(readme, results)
    assert run_cli(rt.main, ["--check", "--readme", str(readme), "--results", str(results)]) == 0
    (results / "c.json").write_text(json.dumps(_run("def5678", "2026-03-01T00:00:00+00:00",
                                                    [_row("newest measure", 1.0, 0.5, 1.1)])))
    before = _sha(readme)
    assert run_cli(rt.main, ["--check", "--readme", str(readme), "--results", str(results)]) == 1
    assert _sha(readme) == before
    assert run_cli(rt.main, ["--readme", str(readme), "--results", str(results)]) == 0
    assert "newest measure" in readme.read_text() and "digits step" not in readme.read_text()


def test_no_results_file_gives_a_sentence_saying_so(rt: ModuleType, tmp_path: Path) -> None:
    readme = _readme(tmp_path / "README.md", rt)
    (tmp_path / "results").mkdir()
    assert rt.update(readme, tmp_path / "results") is True
    section = readme.read_text().split(rt.BEGIN)[1].split(rt.END)[0]
    assert "No results file" in section and "│" not in section


@pytest.mark.parametrize("case, readme_body, results_file, message", [
    ("no markers", None, None, "needs exactly one line"),
    ("two begin markers", "BEGIN", None, "needs exactly one line"),
    ("not JSON", "", '{"rows": [\n  oops\n]}', "c.json:2: invalid JSON"),
    ("not a results file", "", '["a", "list"]', "no 'rows' list"),
    ("row without a target", "", json.dumps(_run("abc1234", "2026-02-01T00:00:00+00:00",
                                                 [{"measure": "m", "baseline_label": "cpu"}])),
     "rows[0]: 'target' must be a number"),
    ("load average not a list", "", json.dumps(_run("abc1234", "2026-02-01T00:00:00+00:00", [],
                                                    load_average_before="high")), "'load_average_before'"),
])
def test_bad_input_is_one_line_and_changes_nothing(rt: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   case: str, readme_body: str | None, results_file: str | None,
                                                   message: str) -> None:
    readme = tmp_path / "README.md"
    if readme_body is None:
        readme.write_text("# Benchmarks\n\nno markers here\n")
    else:
        _readme(readme, rt, f"{rt.BEGIN}\n" if readme_body == "BEGIN" else "old\n")
    results = tmp_path / "results"
    results.mkdir()
    if results_file is not None:
        (results / "c.json").write_text(results_file)
    before = _sha(readme)
    for argv in (["--readme", str(readme), "--results", str(results)], ["--check", "--readme", str(readme),
                                                                         "--results", str(results)]):
        assert run_cli(rt.main, argv) == 2, case
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err
        assert str(readme if results_file is None else results / "c.json") in err
        assert _sha(readme) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "results"]  # no temporary file left


def test_command_line_reports_bad_input_without_a_traceback(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n")
    done = subprocess.run([sys.executable, str(SCRIPT), "--readme", str(readme), "--results", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {readme}: needs exactly one line")
