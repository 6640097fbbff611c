# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The keyword check (ci/scripts/check_keywords.py with the project's ci/keywords.toml) on a scratch repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from catch_tools.paths import repo_root

SCRIPT = repo_root() / "ci" / "scripts" / "check_keywords.py"
RULES = repo_root() / "ci" / "keywords.toml"


def _repo(path: Path, files: dict[str, str]) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    return path


def _run(root: Path, rules: Path = RULES) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), "--rules", str(rules)],
                          capture_output=True, text=True, check=False)


def test_each_kind_of_keyword_is_reported_with_file_and_line(tmp_path: Path) -> None:
    # Built from pieces so that this file itself carries none of the keywords (the real check runs over it).
    token = "ghp_" + "a1B2" * 9
    todo, fixme, address, credential = "TO" + "DO", "FIX" + "ME", ".".join(["192", "168", "1", "20"]), "Pass" + "word"
    root = _repo(tmp_path / "r", {
        "src/ok.py": "x = 1\n",
        "src/todo.py": f"x = 1\n# {todo}: later\n",
        "conf/ci.yml": f"token: {token}\n",
        "conf/db.ini": f"[db]\nhost = {address}\n{credential} = \"hunter2\"\n",
        "patches/0001-x.patch": f"-    # {todo} upstream's own line\n",  # excluded: upstream context in patches
    })
    (root / "untracked.py").write_text(f"# {fixme} not published\n")  # not tracked: not what a clone publishes
    proc = _run(root)
    assert proc.returncode == 1, proc.stderr
    reported = {line.split(": ", 2)[1] for line in proc.stdout.splitlines()}
    assert reported == {"src/todo.py:2", "conf/ci.yml:1", "conf/db.ini:2", "conf/db.ini:3"}
    assert all(line.startswith("error: ") for line in proc.stdout.splitlines())


def test_clean_tree_passes(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r", {"a.py": "print('hello')\n", "README.md": "Contact: catch-dev@catch.invalid\n"})
    proc = _run(root)
    assert (proc.returncode, proc.stdout) == (0, "")


def test_bad_rules_file_is_one_line_error(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r", {"a.py": "x = 1\n"})
    bad = tmp_path / "rules.toml"
    bad.write_text("[[keyword]]\npattern = 'x'\n")  # no `why`
    proc = _run(root, bad)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and str(bad) in proc.stderr and "why" in proc.stderr
    bad.write_text("[[keyword]]\npattern = '('\nwhy = 'broken regex'\n")
    proc = _run(root, bad)
    assert proc.returncode == 2 and proc.stderr.startswith("error: pattern '('")


def test_issue_and_session_numbers_are_reported(tmp_path: Path) -> None:
    # Built from pieces, as above: the check runs over this file too.
    issue, session = "Iss" + "ue", "ses" + "sion"
    root = _repo(tmp_path / "r", {
        "src/a.py": f"# fast path ({issue} 21, {session} 16)\n",
        "docs/b.md": f"Fixed in {issue.lower()} #7.\n\nSeen in {session}s 3 and 4.\n",
        "src/ok.cpp": f"// PyTorch {issue.lower()}s 116255 and 196975; a {session} of the profiler\n",
        "patches/0001-x.patch": f"-    # upstream's own line citing {issue.lower()} 1234\n",
    })
    proc = _run(root)
    assert proc.returncode == 1, proc.stderr
    reported = {line.split(": ", 2)[1] for line in proc.stdout.splitlines()}
    assert reported == {"src/a.py:1", "docs/b.md:1", "docs/b.md:3"}
