# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""One command-line vocabulary (catch_tools.clikit): plain-text --help with examples, -v/-q, --patches-dir."""

from __future__ import annotations

import pytest

SCRIPTS = [("apply_patches.py", ["--help"]), ("apply_patches.py", ["apply", "--help"]),
           ("apply_patches.py", ["lint", "--help"]), ("build_wheel.py", ["--help"]),
           ("check_native_interfaces.py", ["--help"]), ("rebase.py", ["--help"]), ("upgrade.py", ["--help"])]


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
