# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""One command-line vocabulary for every command line of the tooling (:mod:`catch_tools.cli`: ``catch <command>``
and the ``scripts/*.py`` entry points).

The same name for the same thing in every script:

============================  ===================================================================
``--patches-dir DIR``         the series directory (``patches/``)
``--pin FILE``                the pin manifest (default: ``<patches-dir>/manifest.toml``)
``--source DIR``              the PyTorch git work tree (default: the ``pytorch/`` submodule)
``--target-dir DIR``          a plain directory (an unpacked wheel) instead of a git tree
``--project DIR``             the Catch checkout (default: this repository)
``--3way`` / ``--no-3way``    fall back to a 3-way merge when a patch does not apply
``--report PATH``             also write the report to ``PATH.md`` and ``PATH.json``
``--json``                    machine-readable output on stdout
``-v`` / ``-q``               more / less logging on stderr (``logging``; ``-vv`` shows every git command)
============================  ===================================================================

``--help`` is plain text (no reStructuredText markup) and ends with examples. Long operations show progress in one
style (:mod:`catch_tools.progress`): on a terminal only, never under ``-q``.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain(text: str) -> str:
    """``text`` without reStructuredText markup: ``:func:`~a.b``` -> ``b``, ````x```` -> ``x``."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if m.group(0).count("~") else m.group(1), text)
    return _LITERAL.sub(r"\1", text)


def parser(prog: str, description: str, examples: Sequence[str], *, epilog: str = "",
           parents: Sequence[argparse.ArgumentParser] = ()) -> argparse.ArgumentParser:
    """An ``ArgumentParser`` with plain-text description, the examples (one command each) and ``-v``/``-q``."""
    text = (textwrap.fill(plain(epilog), 100) + "\n\n" if epilog else "") + "examples:\n"
    text += "".join(f"  {e}\n" for e in examples)
    p = argparse.ArgumentParser(prog=prog, description=plain(description), epilog=plain(text),
                                formatter_class=argparse.RawDescriptionHelpFormatter, parents=list(parents))
    add_verbosity(p)
    return p


def add_verbosity(p: argparse.ArgumentParser) -> None:
    """``-v/--verbose`` (repeatable) and ``-q/--quiet``."""
    p.add_argument("-v", "--verbose", action="count", default=0, help="more output on stderr (-vv: debug)")
    p.add_argument("-q", "--quiet", action="store_true", help="only errors on stderr")


def setup_logging(args: argparse.Namespace) -> None:
    """Configure the ``catch_tools`` logger from ``-v``/``-q``: WARNING by default, INFO with -v, DEBUG with -vv,
    ERROR with -q; one ``<level>: <message>`` line per record on stderr."""
    verbose, quiet = getattr(args, "verbose", 0) or 0, getattr(args, "quiet", False)
    level = logging.ERROR if quiet else logging.DEBUG if verbose >= 2 else logging.INFO if verbose else logging.WARNING
    logger = logging.getLogger("catch_tools")
    logger.setLevel(level)
    if not any(getattr(h, "_catch", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        handler._catch = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


@dataclass(frozen=True)
class Command:
    """One subcommand of a command line made of command lines (``catch``, ``catch release``): a one-line summary and
    the ``main(argv, prog)`` that runs it."""

    summary: str
    run: Callable[[Sequence[str], str], int]


def dispatch(prog: str, description: str, commands: dict[str, Command], argv: Sequence[str] | None = None) -> int:
    """Run ``prog <command> [args...]``: the ``main`` of ``commands[command]`` with the remaining arguments and the
    program name ``"<prog> <command>"``; ``--help`` lists the commands; ``-v``/``-q`` before the command are passed
    on to it.

    Raises:
        SystemExit: (argparse) no command, an unknown one, or ``--help``.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    listing = "commands:\n" + "".join(f"  {name:<11} {cmd.summary}\n" for name, cmd in commands.items())
    top = argparse.ArgumentParser(prog=prog, description=plain(description), epilog=listing + f"\nRun `{prog} "
                                  "<command> --help` for a command's options.",
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    add_verbosity(top)
    top.add_argument("command", choices=list(commands), metavar="command", help="one of the commands below")
    top.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    ns = top.parse_args(args)
    passed = ["-v"] * ns.verbose + (["-q"] if ns.quiet else [])
    return commands[ns.command].run([*passed, *ns.args], f"{prog} {ns.command}")
