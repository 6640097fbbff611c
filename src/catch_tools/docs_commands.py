# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The command blocks of the guides: extract them and run them in a sandbox copy of the repository.

The convention (``CONTRIBUTING.md``, "Changes to the docs"): a command a reader should type is shown in a fenced
block of language ``console``; each command line starts with ``$ `` (a trailing ``\\`` continues it on the next
line), and ``> `` lines right after a command continue it (the shell's secondary prompt: here-documents); the lines up
to the next ``$ `` are output the command prints. Shown output is checked: every shown line must occur in the
command's stdout+stderr, in order (lines may be left out); ``...`` inside a line matches any text, so paths and
timings can be elided. Blocks of language ``python`` are run as scripts (``python -``) and must exit 0. Blocks of
language ``bash``/``sh``/``shell``/``shell-session`` are refused, so no command
escapes the check by being marked differently.

An HTML comment on the line right above a block adjusts how it is run (``key=value`` words, shell quoting):

- ``<!-- doc-test: exit=1 -->``: every command of the block must exit with 1 (troubleshooting shows failures).
- ``<!-- doc-test: instead="tox config -e lint -k commands" reason="..." -->``: a command too slow for a test (a
  whole tox env, a source build) is replaced by the bounded command given, which must succeed; the reason is shown
  by the test report. Shown output is not checked then.
- ``<!-- doc-test: timeout=900 -->``: seconds per command (default 600).

:func:`make_sandbox` copies the checkout (tracked and untracked files that ``.gitignore`` does not exclude) into a
fresh git repository whose index carries the ``pytorch`` gitlink, as a clone of the project has. Commands run there
one by one with ``bash -e -o pipefail -c``, the working directory at the sandbox root, ``CATCH_ROOT`` and
``PYTHONPATH`` pointing at the sandbox (so its own ``catch_tools`` is used), ``python`` on ``PATH`` being the
interpreter running the tests, and ``COLUMNS=100`` (the width argparse wraps ``--help`` at; tables and commands are
never wrapped when the output is not a terminal, :mod:`catch_tools.output`). Relative paths such as ``../pt`` land
next to the sandbox, inside the test's temporary directory.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.git import listed_files, run_git
from catch_tools.pin import gitlink_commit

COMMAND_LANG = "console"
REFUSED_LANGS = frozenset({"bash", "sh", "shell", "shell-session", "zsh", "sh-session"})
DEFAULT_TIMEOUT = 600
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*doc-test:(?P<body>.*?)-->\s*$")
_KNOWN_KEYS = frozenset({"exit", "instead", "reason", "timeout"})
#: git author/committer of the sandbox's single commit (fixed, so the commit is the same for the same files)
SANDBOX_IDENTITY = {"GIT_AUTHOR_NAME": "Catch Docs", "GIT_AUTHOR_EMAIL": "docs@catch.invalid",
                    "GIT_COMMITTER_NAME": "Catch Docs", "GIT_COMMITTER_EMAIL": "docs@catch.invalid",
                    "GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000"}


@dataclass
class Command:
    """One ``$`` command of a block and the output lines the page shows for it."""

    text: str
    shown: list[str] = field(default_factory=list)


@dataclass
class Block:
    """A ``console`` block: where it is (``path``, 1-based ``line`` of the fence), its commands and its marker."""

    path: Path
    line: int
    commands: list[Command]
    exit_code: int = 0
    instead: str | None = None
    reason: str | None = None
    timeout: int = DEFAULT_TIMEOUT

    @property
    def where(self) -> str:
        """``path:line`` for messages."""
        return f"{self.path}:{self.line}"


def _parse_marker(text: str, path: Path, line: int) -> dict[str, str]:
    """The ``key=value`` words of a ``doc-test`` marker. Raises UserError on an unknown key or a malformed word."""
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise UserError(f"malformed doc-test marker: {err}", path=path, line=line) from None
    out: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or key not in _KNOWN_KEYS:
            raise UserError(f"doc-test marker: expected one of {sorted(_KNOWN_KEYS)} as key=value, got {word!r}",
                            path=path, line=line)
        out[key] = value
    if "instead" in out and not out.get("reason"):
        raise UserError("doc-test marker: instead= needs a reason=", path=path, line=line)
    return out


def _commands(body: list[str], path: Path, line: int) -> list[Command]:
    """Split a console block's lines into commands (``$ `` lines, ``\\`` continuations) and shown output."""
    commands: list[Command] = []
    continuing = False
    for offset, raw in enumerate(body, start=1):
        text = raw.rstrip()
        if continuing:
            commands[-1].text += "\n" + text
            continuing = text.endswith("\\")
        elif commands and not commands[-1].shown and (text.startswith("> ") or text == ">"):
            commands[-1].text += "\n" + text[2:]  # a PS2 line: here-document or multi-line command
        elif text.startswith("$ ") or text == "$":
            commands.append(Command(text[2:]))
            continuing = text.endswith("\\")
        elif commands:
            if text:
                commands[-1].shown.append(text)
        elif text:
            raise UserError("console block must start with a `$ ` command line", path=path, line=line + offset)
    if not commands:
        raise UserError("console block without a `$ ` command", path=path, line=line)
    return commands


def extract_blocks(path: Path) -> list[Block]:
    """Every ``console`` block of the Markdown file ``path``, in order.

    Raises:
        UserError: a block in a refused shell language, a console block without commands, or a bad marker.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, info = match.group("fence"), match.group("info").strip()
        lang = info.split()[0].strip("{}") if info else ""
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        if lang in REFUSED_LANGS:
            raise UserError(f"``` {lang} block: show commands in ```console blocks with `$ ` prompts",
                            path=path, line=i + 1)
        if lang == COMMAND_LANG:
            marker: dict[str, str] = {}
            prev = i - 1
            if prev >= 0 and (m := _MARKER.match(lines[prev])):
                marker = _parse_marker(m.group("body"), path, prev + 1)
            block = Block(path, i + 1, _commands(lines[i + 1:end], path, i + 1))
            block.exit_code = int(marker.get("exit", "0"))
            block.instead = marker.get("instead")
            block.reason = marker.get("reason")
            block.timeout = int(marker.get("timeout", str(DEFAULT_TIMEOUT)))
            blocks.append(block)
        elif lang == "python":  # example code runs too: it must exit 0 (it shows no output to compare)
            code = "\n".join(lines[i + 1:end])
            blocks.append(Block(path, i + 1, [Command(f"python - <<'CATCH_DOC_EOF'\n{code}\nCATCH_DOC_EOF")]))
        i = end + 1
    return blocks


def _line_pattern(shown: str) -> re.Pattern[str]:
    """A shown output line as a regex: ``...`` matches any text (a lone ``...`` also the space before it, so it may
    match nothing at the end of a line), a run of spaces matches any run of spaces."""
    pattern = ""
    for word in shown.split():
        if word == "...":
            pattern += r"(?:\s.*)?" if pattern else ".*"
            continue
        pattern += (r"\s+" if pattern else "") + ".*".join(re.escape(part) for part in word.split("..."))
    return re.compile(pattern)


def missing_lines(shown: list[str], output: str) -> list[str]:
    """The shown lines (``...``-only lines ignored) that do not occur, in order, among ``output``'s lines."""
    actual = [line.rstrip() for line in output.splitlines()]
    pos = 0
    missing = []
    for line in shown:
        if line.strip() in ("", "..."):
            continue
        pattern = _line_pattern(line)
        for k in range(pos, len(actual)):
            if pattern.fullmatch(actual[k].strip()):
                pos = k + 1
                break
        else:
            missing.append(line)
    return missing


def _copy_list(root: Path) -> list[str]:
    """Paths the sandbox gets: tracked and untracked-not-ignored files (:func:`catch_tools.git.listed_files`).

    Raises:
        UserError: ``root`` is no git work tree.
    """
    listed = listed_files(root)
    if listed is None:
        raise UserError("not a git work tree: the docs sandbox copies the checkout's files as git lists them",
                        path=root)
    return listed


def make_sandbox(root: Path, dest: Path) -> Path:
    """Copy the checkout ``root`` to ``dest`` as a fresh one-commit git repository with the ``pytorch`` gitlink.

    Returns ``dest``. Raises :class:`~catch_tools.errors.UserError` if git fails (a broken checkout).
    """
    dest.mkdir(parents=True)
    for rel in _copy_list(root):
        src = root / rel
        target = dest / rel
        if src.is_dir():  # a gitlink (the pytorch submodule) is listed as a directory
            target.mkdir(parents=True, exist_ok=True)
        elif src.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    env = dict(SANDBOX_IDENTITY)
    main = ("-c", "init.defaultBranch=main")
    run_git(dest, *main, "init", "-q", env=env)
    run_git(dest, *main, "add", "-A", env=env)
    link = gitlink_commit(root)
    if link:
        run_git(dest, *main, "update-index", "--add", "--cacheinfo", f"160000,{link},pytorch", env=env)
    run_git(dest, *main, "commit", "-q", "-m", "docs sandbox", env=env)
    return dest


def sandbox_env(sandbox: Path) -> dict[str, str]:
    """The environment commands run with (see the module docstring)."""
    env = dict(os.environ)
    env["CATCH_ROOT"] = str(sandbox)
    env["PYTHONPATH"] = os.pathsep.join([str(sandbox / "src"), *filter(None, [env.get("PYTHONPATH")])])
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["COLUMNS"] = "100"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("CATCH_FALLBACK_STRICT", None)
    for key, value in SANDBOX_IDENTITY.items():  # commits made by the guides' commands need an identity
        if not key.endswith("_DATE"):
            env.setdefault(key, value)
    return env


@dataclass
class Outcome:
    """What running one command gave."""

    command: str
    returncode: int
    output: str


def run_block(block: Block, sandbox: Path) -> list[Outcome]:
    """Run the block's commands (or its ``instead``) in ``sandbox``, in order; stop after the first unexpected exit."""
    texts = [block.instead] if block.instead else [c.text for c in block.commands]
    outcomes = []
    for text in texts:
        proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text], cwd=sandbox, env=sandbox_env(sandbox),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=block.timeout,
                              check=False)
        outcomes.append(Outcome(text, proc.returncode, proc.stdout))
        if proc.returncode != (0 if block.instead else block.exit_code):
            break
    return outcomes


def check_block(block: Block, sandbox: Path) -> list[str]:
    """Run ``block`` and return the problems found (empty: the block is right)."""
    problems = []
    outcomes = run_block(block, sandbox)
    want = 0 if block.instead else block.exit_code
    for outcome, command in zip(outcomes, block.commands if not block.instead else [None] * len(outcomes),
                                strict=False):
        if outcome.returncode != want:
            problems.append(f"{block.where}: `{outcome.command}` exited {outcome.returncode}, expected {want}:\n"
                            f"{outcome.output[-3000:]}")
            break
        if command is not None and (gone := missing_lines(command.shown, outcome.output)):
            problems.append(f"{block.where}: `{outcome.command}` did not print {gone!r}; it printed:\n"
                            f"{outcome.output[-3000:]}")
    return problems
