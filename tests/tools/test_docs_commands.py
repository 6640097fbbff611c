# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Every command shown in the guides runs: each ``console`` block of ``docs/**/*.md`` and ``CONTRIBUTING.md`` is run
in a fresh sandbox copy of this checkout (one per page, blocks in page order, so a page reads as one session), its
exit status must be the expected one (0 unless a ``doc-test: exit=N`` marker says otherwise) and the output lines the
page shows must appear in what the command prints. The rules are in :mod:`catch_tools.docs_commands`.

The first tests check the extractor and the matcher on small pages written here, so a broken rule cannot make
the page tests pass vacuously.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from catch_tools.docs_commands import check_block, extract_blocks, make_sandbox, missing_lines
from catch_tools.errors import UserError

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted(p for p in (REPO / "docs").rglob("*.md") if "_build" not in p.parts) + [REPO / "CONTRIBUTING.md"]
#: pages whose commands use the real upstream trees (release wheels, cached) or build/prove against the real torch
REAL_PAGES = {"maintainers.md", "upgrade.md", "operators.md", "troubleshooting.md"}


def _write(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text)
    return page


def test_extracts_commands_output_continuations_and_markers(tmp_path: Path) -> None:
    page = _write(tmp_path, "# t\n\n```console\n$ echo a \\\n  b\na b\n$ cat <<'EOF'\n> x\n> EOF\nx\n```\n\n"
                  "<!-- doc-test: exit=3 -->\n```console\n$ exit 3\n```\n\n```python\nprint(1)\n```\n")
    first, second, example = extract_blocks(page)
    assert example.commands[0].text == "python - <<'CATCH_DOC_EOF'\nprint(1)\nCATCH_DOC_EOF"
    assert [c.text for c in first.commands] == ["echo a \\\n  b", "cat <<'EOF'\nx\nEOF"]
    assert [c.shown for c in first.commands] == [["a b"], ["x"]]
    assert (first.line, second.line, second.exit_code) == (3, 14, 3)
    assert [check_block(b, tmp_path) for b in (first, second, example)] == [[], [], []]


def test_wrong_exit_status_and_missing_output_are_reported(tmp_path: Path) -> None:
    page = _write(tmp_path, "```console\n$ echo one\ntwo\n```\n\n```console\n$ false\n```\n")
    shown_wrong, fails = extract_blocks(page)
    assert "did not print ['two']" in check_block(shown_wrong, tmp_path)[0]
    assert "exited 1, expected 0" in check_block(fails, tmp_path)[0]


def test_instead_runs_the_bounded_command(tmp_path: Path) -> None:
    page = _write(tmp_path, '<!-- doc-test: instead="test -d ." reason="demo" -->\n```console\n$ exit 9\n```\n')
    (block,) = extract_blocks(page)
    assert check_block(block, tmp_path) == []
    bad = _write(tmp_path, '<!-- doc-test: instead="true" -->\n```console\n$ ls\n```\n')
    with pytest.raises(UserError, match="needs a reason"):
        extract_blocks(bad)


@pytest.mark.parametrize("lang", ["bash", "sh", "shell"])
def test_shell_blocks_are_refused(tmp_path: Path, lang: str) -> None:
    with pytest.raises(UserError, match=r"page.md:2: .*console"):
        extract_blocks(_write(tmp_path, f"x\n```{lang}\nls\n```\n"))


def test_matcher_keeps_order_and_elides() -> None:
    out = "header\nsaved /tmp/abc/x.md in 1.2 s\nDone  5  items\n"
    assert missing_lines(["saved .../x.md in ... s", "...", "Done 5 items"], out) == []
    assert missing_lines(["Done 5 items", "header"], out) == ["header"]
    assert missing_lines(["saved ...", "Done 5 ... items ..."], out) == []
    assert missing_lines(["... 1.2 s", "header"], out) == ["header"]


def test_sandbox_is_a_git_checkout_with_the_gitlink(tmp_path: Path) -> None:
    box = make_sandbox(REPO, tmp_path / "repo")
    assert (box / "patches" / "manifest.toml").read_bytes() == (REPO / "patches" / "manifest.toml").read_bytes()
    page = _write(tmp_path, "```console\n$ git ls-files --stage pytorch\n160000 ... 0 pytorch\n"
                  "$ git status --porcelain\n```\n")
    (block,) = extract_blocks(page)
    assert check_block(block, box) == []


def test_every_page_with_commands_is_covered() -> None:
    names = {p.name for p in PAGES if extract_blocks(p)}
    assert {"maintainers.md", "upgrade.md", "operators.md", "troubleshooting.md", "CONTRIBUTING.md"} <= names


PAGE_PARAMS = [pytest.param(p, id=str(p.relative_to(REPO)), marks=[pytest.mark.real] if p.name in REAL_PAGES else [])
               for p in PAGES]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGE_PARAMS)
def test_page_commands_run(page: Path, tmp_path: Path) -> None:
    blocks = extract_blocks(page)
    if not blocks:
        return
    if importlib.util.find_spec("torch_mlu") is None:
        pytest.skip("the guides' commands need torch_mlu installed (tox -e docs builds it)")
    box = make_sandbox(REPO, tmp_path / "repo")
    problems: list[str] = []
    for block in blocks:
        problems += check_block(block, box)
        if problems:
            break  # later blocks of a page build on earlier ones
    assert not problems, "\n\n".join(problems)
