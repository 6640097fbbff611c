# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""One command-line vocabulary (catch_tools.clikit): plain-text --help with examples, -v/-q, --patches-dir; one
command line, ``catch``, whose subcommands are the scripts' command lines; scripts that only import and run them."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from catch_tools.cli import catch

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = [("apply_patches.py", ["--help"]), ("apply_patches.py", ["apply", "--help"]),
           ("apply_patches.py", ["lint", "--help"]), ("build_wheel.py", ["--help"]),
           ("check_native_interfaces.py", ["--help"]), ("rebase.py", ["--help"]), ("upgrade.py", ["--help"]),
           ("prove_patches.py", ["--help"]), ("upstream.py", ["--help"]), ("publish_index.py", ["--help"]),
           ("release_rehearsal.py", ["--help"])]


@pytest.mark.parametrize(("script", "args"), SCRIPTS)
def test_help_is_plain_text_with_examples(run_script, script: str, args: list[str]) -> None:
    proc = run_script(script, *args)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "``" not in text and ":func:" not in text and ":mod:" not in text, text
    assert "examples:\n  scripts/" in text
    if args != ["--help"] or script != "apply_patches.py":
        assert "-v, --verbose" in text and "-q, --quiet" in text


def test_same_names_for_the_same_things(run_script) -> None:
    for script, args in (("apply_patches.py", ["apply", "--help"]), ("build_wheel.py", ["--help"])):
        assert "--patches-dir DIR" in run_script(script, *args).stdout
    assert "--source DIR" in run_script("apply_patches.py", "check", "--help").stdout
    rebase = run_script("rebase.py", "--help").stdout
    assert "--source DIR" in rebase and "--3way" in run_script("apply_patches.py", "apply", "--help").stdout
    assert "--3way, --no-3way" in rebase  # the apply spelling, and the old rebase spelling still works
    for script in ("rebase.py", "upgrade.py"):
        assert "--project DIR" in run_script(script, "--help").stdout


def test_catch_is_the_console_script_and_runs_every_command_line() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["catch"] == "catch_tools.cli.catch:entry" and callable(catch.entry)
    wanted = {"apply", "check", "lint", "status", "export", "rebase", "upgrade", "wheel", "interfaces", "prove",
              "upstream", "release", "gpu2mlu"}
    assert wanted <= set(catch.COMMANDS)
    top = subprocess.run([sys.executable, "-m", "catch_tools.cli", "--help"], capture_output=True, text=True,
                         timeout=120)
    assert top.returncode == 0 and all(f"  {name} " in top.stdout for name in catch.COMMANDS), top.stdout
    for name in catch.COMMANDS:
        proc = subprocess.run([sys.executable, "-m", "catch_tools.cli", name, "--help"], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, (name, proc.stderr)
        assert proc.stdout.startswith("usage: "), (name, proc.stdout)
        if name not in ("gpu2mlu", "release"):  # the converter's own parser; release lists its two commands
            assert f"usage: catch {name}" in proc.stdout and "-v, --verbose" in proc.stdout, (name, proc.stdout)


def test_unknown_command_is_refused_with_the_list(run_script) -> None:
    proc = subprocess.run([sys.executable, "-m", "catch_tools.cli", "aply"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "invalid choice: 'aply'" in proc.stderr and "'apply'" in proc.stderr


def test_scripts_only_import_their_command_line() -> None:
    """The tooling is installed where scripts run (pip install -e .): no script edits sys.path."""
    for script in sorted((REPO / "scripts").glob("*.py")):
        text = script.read_text()
        assert "sys.path" not in text and "catch_tools.cli." in text and "run_cli(main)" in text, script.name
